//! One module per screen. Each has a `State`, an `update` that applies an
//! action to it, and a `draw` that reads it.

pub mod detail;
pub mod execution;
pub mod groups;
pub mod overview;
pub mod review;
pub mod sessions;
