//! The terminal UI (ratatui).

use crate::cli::{Common, Inputs};

/// Runs the TUI until the user quits.
///
/// # Errors
/// Terminal or input errors.
pub fn run(_inputs: Inputs, _common: &Common) -> Result<(), std::io::Error> {
    Err(std::io::Error::other("the TUI is not built yet"))
}
