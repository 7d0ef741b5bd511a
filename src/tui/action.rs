//! The one vocabulary of the TUI: key bindings map to an [`Action`], the
//! event loop applies actions to the [`super::App`], and tests send them.
//!
//! Actions are serde values in snake_case (`"down"`, `{"resize":[80,24]}`),
//! so a test or a script can be written as a list of them.

use serde::{Deserialize, Serialize};

/// Something the user (or a test) asks the TUI to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Leave the TUI.
    Quit,
    /// Go back one screen (or close help).
    Back,
    /// Move the selection up one row.
    Up,
    /// Move the selection down one row.
    Down,
    /// Move the selection up one page.
    PageUp,
    /// Move the selection down one page.
    PageDown,
    /// Select the first row.
    Top,
    /// Select the last row.
    Bottom,
    /// Open what is selected.
    Open,
    /// Move the focus to the next pane of the screen.
    FocusNext,
    /// Show or hide the help listing every key of the screen.
    ToggleHelp,
    /// The terminal now has this many columns and rows.
    Resize(u16, u16),
}
