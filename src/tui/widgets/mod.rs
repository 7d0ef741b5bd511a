//! Small building blocks shared by the screens.

pub mod cursor;
pub mod keyline;
pub mod lanes;
pub mod mouse;
pub mod stages;
pub mod text;

pub use cursor::{Cursor, Move, scroll};
