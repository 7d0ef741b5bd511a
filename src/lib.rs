//! retrace: a terminal incident investigator for duplicate MCP tool calls.
//!
//! Data flows one way (docs/design.md §9):
//! [`journal`] (readers, one module per format) → [`model`] (calls,
//! executions, sessions) → [`analysis`] (fingerprints, contracts, grouping,
//! the five questions, verdicts) → [`query`] (the one place front ends ask)
//! → front ends: [`cli`], [`tui`], [`export`] and [`review`] (the case file).
//!
//! The core knows nothing of terminals; front ends hold no domain logic.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod analysis;
pub mod canonical;
pub mod cli;
pub mod export;
pub mod journal;
pub mod model;
pub mod query;
pub mod review;
pub mod sample;
pub mod sanitize;
#[cfg(test)]
mod testing;
pub mod toml_file;
pub mod tui;
