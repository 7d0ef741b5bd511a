//! The one vocabulary of the TUI: key bindings map to an [`Action`], the
//! event loop applies actions to the [`super::App`], and tests and benches
//! send them.
//!
//! Actions are serde values in snake_case (`"down"`, `{"resize":[80,24]}`,
//! `{"filter_char":"d"}`), so a test or a script is a list of them.

use serde::{Deserialize, Serialize};

/// Something the user (or a test) asks the TUI to do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// Leave the TUI.
    Quit,
    /// Go back one screen (or close help, or clear the groups filters).
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
    /// Scroll the text pane (raw JSON, record) down.
    ScrollDown,
    /// Scroll the text pane up.
    ScrollUp,
    /// Show or hide the help listing every key of the screen.
    ToggleHelp,
    /// The overview screen.
    ShowOverview,
    /// The groups table.
    ShowGroups,
    /// The sessions screen.
    ShowSessions,
    /// The review queue: executions that wait for a reviewer.
    ShowReview,
    /// Start a decision about the selected queue item.
    Decide,
    /// Write a Markdown postmortem (of the group, or of the listed groups).
    Export,
    /// In a dialog: go on (choose the decision, submit the note, write
    /// the file).
    Submit,
    /// In a dialog: give up; nothing is written.
    Cancel,
    /// In the confirmation dialog: record the decision.
    Confirm,
    /// A character typed into a dialog's text field.
    TextChar(char),
    /// Delete the last character of a dialog's text field.
    TextBackspace,
    /// Start typing a fuzzy filter.
    StartFilter,
    /// A character typed into the filter.
    FilterChar(char),
    /// Text pasted (a bracketed paste, or keys typed faster than the
    /// screen redraws, coalesced): into the filter or a dialog's text
    /// field, as one edit.
    Paste(String),
    /// Delete the last character of the filter.
    FilterBackspace,
    /// Keep the filter and leave typing.
    FilterConfirm,
    /// Drop the filter and leave typing.
    FilterCancel,
    /// Select the next row that matches the filter.
    NextMatch,
    /// Select the previous row that matches the filter.
    PrevMatch,
    /// Hide rows that do not match, or only highlight matches.
    ToggleFilterMode,
    /// Sort by the next column.
    SortNext,
    /// Reverse the sort.
    SortReverse,
    /// Show only the next verdict (cycling back to every verdict).
    CycleVerdict,
    /// Show only the next tool (cycling back to every tool).
    CycleTool,
    /// List every group, or only those worth a look.
    ToggleAll,
    /// Copy the selected value to the clipboard (OSC 52).
    Copy,
    /// Copy a second value (the execution id on the execution screen).
    CopyAlt,
    /// Switch to the next shipped theme.
    CycleTheme,
    /// Start following the loaded journals as they grow, or stop
    /// (docs/design.md §7.7 "Follow mode").
    ToggleFollow,
    /// The terminal now has this many columns and rows.
    Resize(u16, u16),
    /// The left mouse button was pressed at this column and row of the
    /// terminal: selects the row under it (and opens it when it was
    /// selected already; a cited evidence line jumps at once).
    Click(u16, u16),
    /// The mouse wheel turned towards the user over this column and row:
    /// the list or text under it scrolls down.
    WheelDown(u16, u16),
    /// The mouse wheel turned away from the user over this column and
    /// row: the list or text under it scrolls up.
    WheelUp(u16, u16),
}
