//! The default key table: the bindings every screen shares (movement,
//! the global keys), and those of the contexts that belong to the app
//! rather than to a screen (loading, help, the dialogs).

use super::{Bind, Ctx, KeyTable, Part, Typing, bind, code, ctrl, k};
use crate::tui::action::Action;
use ratatui::crossterm::event::KeyCode;

/// Moving in a list.
pub const MOVE: &[Bind] = &[
    bind(
        &[k('j'), code(KeyCode::Down)],
        Action::Down,
        "next row",
        Some("move"),
    ),
    bind(
        &[k('k'), code(KeyCode::Up)],
        Action::Up,
        "previous row",
        None,
    ),
    bind(
        &[ctrl('d'), code(KeyCode::PageDown), k(' ')],
        Action::PageDown,
        "page down",
        None,
    ),
    bind(
        &[ctrl('u'), code(KeyCode::PageUp)],
        Action::PageUp,
        "page up",
        None,
    ),
    bind(
        &[k('g'), code(KeyCode::Home)],
        Action::Top,
        "first row",
        None,
    ),
    bind(
        &[k('G'), code(KeyCode::End)],
        Action::Bottom,
        "last row",
        None,
    ),
];

/// Theme, follow, help and quit, on every screen.
pub const GLOBAL: &[Bind] = &[
    bind(
        &[k('T')],
        Action::CycleTheme,
        "next theme (dark, light, high-contrast)",
        None,
    ),
    bind(
        &[k('F')],
        Action::ToggleFollow,
        "follow the journals as they grow (F again or Esc stops); ● marks a group whose verdict changed since you last had it selected",
        None,
    ),
    bind(
        &[k('?')],
        Action::ToggleHelp,
        "help: every key of this screen",
        Some("help"),
    ),
    bind(&[k('q'), ctrl('c')], Action::Quit, "quit", Some("quit")),
];

/// Back one screen.
pub const BACK: Bind = bind(
    &[code(KeyCode::Esc), k('h'), code(KeyCode::Left)],
    Action::Back,
    "back",
    Some("back"),
);

const DECIDE_CHOOSE_KEYS: &[Bind] = &[
    bind(
        &[k('j'), code(KeyCode::Down)],
        Action::Down,
        "next decision",
        Some("choose"),
    ),
    bind(
        &[k('k'), code(KeyCode::Up)],
        Action::Up,
        "previous decision",
        None,
    ),
    bind(
        &[code(KeyCode::Enter)],
        Action::Submit,
        "take this decision and write the note",
        Some("next"),
    ),
    bind(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is recorded",
        Some("cancel"),
    ),
    bind(
        &[k('?')],
        Action::ToggleHelp,
        "help: every key of this dialog",
        None,
    ),
    bind(&[ctrl('c')], Action::Quit, "quit", None),
];

const DECIDE_NOTE_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter)],
        Action::Submit,
        "done: show what will be recorded",
        Some("next"),
    ),
    bind(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is recorded",
        Some("cancel"),
    ),
    bind(
        &[code(KeyCode::Up), code(KeyCode::BackTab)],
        Action::Back,
        "back to the choice of decision",
        Some("decision"),
    ),
    bind(
        &[code(KeyCode::Backspace)],
        Action::TextBackspace,
        "delete a character",
        None,
    ),
    bind(&[ctrl('c')], Action::Quit, "quit", None),
];

const DECIDE_CONFIRM_KEYS: &[Bind] = &[
    bind(
        &[k('y')],
        Action::Confirm,
        "yes: record the decision in the case file",
        Some("record"),
    ),
    bind(
        &[k('n'), code(KeyCode::Backspace)],
        Action::Back,
        "no: back to the note",
        Some("back"),
    ),
    bind(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is recorded",
        Some("cancel"),
    ),
    bind(
        &[k('?')],
        Action::ToggleHelp,
        "help: every key of this dialog",
        None,
    ),
    bind(&[ctrl('c')], Action::Quit, "quit", None),
];

const DECIDE_BUSY_KEYS: &[Bind] = &[bind(
    &[ctrl('c')],
    Action::Quit,
    "quit (a decision being written is either recorded whole or not at all)",
    Some("quit"),
)];

const EXPORT_NAME_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter)],
        Action::Submit,
        "write the postmortem to this file",
        Some("write"),
    ),
    bind(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is written",
        Some("cancel"),
    ),
    bind(
        &[code(KeyCode::Backspace)],
        Action::TextBackspace,
        "delete a character",
        None,
    ),
    bind(&[ctrl('c')], Action::Quit, "quit", None),
];

const HELP_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Esc), k('?'), k('q')],
        Action::Back,
        "close help",
        Some("close"),
    ),
    bind(
        &[k('j'), code(KeyCode::Down)],
        Action::Down,
        "scroll down",
        Some("scroll"),
    ),
    bind(&[k('k'), code(KeyCode::Up)], Action::Up, "scroll up", None),
];

const LOADING_KEYS: &[Bind] = &[bind(&[k('T')], Action::CycleTheme, "next theme", None)];

/// Global keys but the theme and follow (loading has its own theme key,
/// and there is nothing to follow yet).
const HELP_AND_QUIT: &[Bind] = GLOBAL.split_at(2).1;

/// Journals are loading (or failed to).
pub const LOADING: KeyTable = KeyTable {
    ctx: Ctx::new("loading", "loading"),
    parts: &[Part::Keys(LOADING_KEYS), Part::Keys(HELP_AND_QUIT)],
};

/// Decision dialog: choosing the decision.
pub const DECIDE_CHOOSE: KeyTable = KeyTable {
    ctx: Ctx::new("decide_choose", "decision: choose"),
    parts: &[Part::Keys(DECIDE_CHOOSE_KEYS)],
};

/// Decision dialog: typing the note.
pub const DECIDE_NOTE: KeyTable = KeyTable {
    ctx: Ctx::new("decide_note", "decision: note").typing(Typing::Field),
    parts: &[Part::Keys(DECIDE_NOTE_KEYS)],
};

/// Decision dialog: the explicit confirmation.
pub const DECIDE_CONFIRM: KeyTable = KeyTable {
    ctx: Ctx::new("decide_confirm", "decision: confirm"),
    parts: &[Part::Keys(DECIDE_CONFIRM_KEYS)],
};

/// Decision dialog: the decision is being written and analysed.
pub const DECIDE_BUSY: KeyTable = KeyTable {
    ctx: Ctx::new("decide_busy", "decision: recording"),
    parts: &[Part::Keys(DECIDE_BUSY_KEYS)],
};

/// Export dialog: typing the file name.
pub const EXPORT_NAME: KeyTable = KeyTable {
    ctx: Ctx::new("export_name", "export: file name").typing(Typing::Field),
    parts: &[Part::Keys(EXPORT_NAME_KEYS)],
};

/// The help screen is open.
pub const HELP: KeyTable = KeyTable {
    ctx: Ctx::new("help", "help"),
    parts: &[Part::Keys(HELP_KEYS)],
};

/// The contexts of the app rather than of a screen: loading, the dialogs
/// and help.
pub const APP: [KeyTable; 7] = [
    LOADING,
    DECIDE_CHOOSE,
    DECIDE_NOTE,
    DECIDE_CONFIRM,
    DECIDE_BUSY,
    EXPORT_NAME,
    HELP,
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keys::KeyMap;

    /// Each of the app's contexts binds exactly the actions it answers to
    /// (the dialogs in tui::dialog, help and loading in tui::app).
    #[test]
    fn every_app_context_binds_what_it_answers_to() {
        use Action::*;
        let expected: Vec<(KeyTable, Vec<Action>)> = vec![
            (LOADING, vec![CycleTheme, ToggleHelp, Quit]),
            (
                DECIDE_CHOOSE,
                vec![Down, Up, Submit, Cancel, ToggleHelp, Quit],
            ),
            (DECIDE_NOTE, vec![Submit, Cancel, Back, TextBackspace, Quit]),
            (
                DECIDE_CONFIRM,
                vec![Confirm, Back, Cancel, ToggleHelp, Quit],
            ),
            (DECIDE_BUSY, vec![Quit]),
            (EXPORT_NAME, vec![Submit, Cancel, TextBackspace, Quit]),
            (HELP, vec![Back, Down, Up]),
        ];
        assert_eq!(expected.len(), APP.len());
        let m = KeyMap::build(&APP, &[]);
        for (t, want) in expected {
            let mut got: Vec<String> = m
                .bindings(t.ctx)
                .map(|b| format!("{:?}", b.action))
                .collect();
            let mut want: Vec<String> = want.iter().map(|a| format!("{a:?}")).collect();
            for v in [&mut got, &mut want] {
                v.sort();
                v.dedup();
            }
            assert_eq!(got, want, "{}", t.ctx.id);
        }
    }
}
