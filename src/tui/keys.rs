//! Key bindings: per screen, a table of keys → [`Action`] with a help text.
//! The same table maps keys, fills the help screen and the key line, so
//! help lists every key a screen answers to.

use super::action::Action;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where the keys are read: which screen, or a mode over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    /// Journals are loading (or failed to).
    Loading,
    /// The overview.
    Overview,
    /// The groups table.
    Groups,
    /// Typing the groups filter.
    FilterInput,
    /// One group's detail.
    Detail,
    /// One execution's events.
    Execution,
    /// Agent runs.
    Sessions,
    /// The review queue.
    Review,
    /// Decision dialog: choosing the decision.
    DecideChoose,
    /// Decision dialog: typing the note.
    DecideNote,
    /// Decision dialog: the explicit confirmation.
    DecideConfirm,
    /// Decision dialog: the decision is being written and analysed.
    DecideBusy,
    /// Export dialog: typing the file name.
    ExportName,
    /// The help screen is open.
    Help,
}

impl Ctx {
    /// Every context.
    pub const ALL: [Ctx; 14] = [
        Ctx::Loading,
        Ctx::Overview,
        Ctx::Groups,
        Ctx::FilterInput,
        Ctx::Detail,
        Ctx::Execution,
        Ctx::Sessions,
        Ctx::Review,
        Ctx::DecideChoose,
        Ctx::DecideNote,
        Ctx::DecideConfirm,
        Ctx::DecideBusy,
        Ctx::ExportName,
        Ctx::Help,
    ];

    /// Whether every printable character is text typed into a field.
    pub fn is_text_input(self) -> bool {
        matches!(self, Ctx::FilterInput | Ctx::DecideNote | Ctx::ExportName)
    }

    /// The screen's name in titles and help.
    pub fn name(self) -> &'static str {
        match self {
            Ctx::Loading => "loading",
            Ctx::Overview => "overview",
            Ctx::Groups => "groups",
            Ctx::FilterInput => "groups filter",
            Ctx::Detail => "group detail",
            Ctx::Execution => "execution",
            Ctx::Sessions => "sessions",
            Ctx::Review => "review queue",
            Ctx::DecideChoose => "decision: choose",
            Ctx::DecideNote => "decision: note",
            Ctx::DecideConfirm => "decision: confirm",
            Ctx::DecideBusy => "decision: recording",
            Ctx::ExportName => "export: file name",
            Ctx::Help => "help",
        }
    }
}

/// One key with its modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt, ... (Shift is part of the character for letters).
    pub mods: KeyModifiers,
}

const fn k(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::NONE,
    }
}

const fn code(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

impl Key {
    /// How the key is written in help and the key line.
    pub fn label(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Enter => "Enter".into(),
            KeyCode::Esc => "Esc".into(),
            KeyCode::Tab => "Tab".into(),
            KeyCode::BackTab => "S-Tab".into(),
            KeyCode::Backspace => "Bksp".into(),
            KeyCode::Up => "↑".into(),
            KeyCode::Down => "↓".into(),
            KeyCode::Left => "←".into(),
            KeyCode::Right => "→".into(),
            KeyCode::PageUp => "PgUp".into(),
            KeyCode::PageDown => "PgDn".into(),
            KeyCode::Home => "Home".into(),
            KeyCode::End => "End".into(),
            other => format!("{other:?}"),
        };
        if self.mods.contains(KeyModifiers::CONTROL) {
            format!("C-{base}")
        } else {
            base
        }
    }

    fn matches(&self, e: &KeyEvent) -> bool {
        let mods = e.modifiers - KeyModifiers::SHIFT;
        match (self.code, e.code) {
            (KeyCode::Char(a), KeyCode::Char(b)) => a == b && mods == self.mods,
            (a, b) => a == b && mods == self.mods,
        }
    }
}

/// One binding: keys, the action, what it does, and its short name on the
/// key line (when it is shown there).
#[derive(Debug, Clone)]
pub struct Binding {
    /// Keys that trigger it.
    pub keys: &'static [Key],
    /// What it does.
    pub action: Action,
    /// Help text.
    pub help: &'static str,
    /// Short name on the key line, if shown there.
    pub short: Option<&'static str>,
}

const fn b(
    keys: &'static [Key],
    action: Action,
    help: &'static str,
    short: Option<&'static str>,
) -> Binding {
    Binding {
        keys,
        action,
        help,
        short,
    }
}

const MOVE: &[Binding] = &[
    b(
        &[k('j'), code(KeyCode::Down)],
        Action::Down,
        "next row",
        Some("move"),
    ),
    b(
        &[k('k'), code(KeyCode::Up)],
        Action::Up,
        "previous row",
        None,
    ),
    b(
        &[ctrl('d'), code(KeyCode::PageDown), k(' ')],
        Action::PageDown,
        "page down",
        None,
    ),
    b(
        &[ctrl('u'), code(KeyCode::PageUp)],
        Action::PageUp,
        "page up",
        None,
    ),
    b(
        &[k('g'), code(KeyCode::Home)],
        Action::Top,
        "first row",
        None,
    ),
    b(
        &[k('G'), code(KeyCode::End)],
        Action::Bottom,
        "last row",
        None,
    ),
];

const SCREENS: &[Binding] = &[
    b(&[k('1')], Action::ShowOverview, "overview", None),
    b(&[k('2')], Action::ShowGroups, "groups table", None),
    b(
        &[k('3')],
        Action::ShowSessions,
        "sessions (agent runs)",
        None,
    ),
    b(
        &[k('4')],
        Action::ShowReview,
        "review queue (executions that wait for a reviewer)",
        None,
    ),
];

const GLOBAL: &[Binding] = &[
    b(
        &[k('T')],
        Action::CycleTheme,
        "next theme (dark, light, high-contrast)",
        None,
    ),
    b(
        &[k('?')],
        Action::ToggleHelp,
        "help: every key of this screen",
        Some("help"),
    ),
    b(&[k('q'), ctrl('c')], Action::Quit, "quit", Some("quit")),
];

const BACK: Binding = b(
    &[code(KeyCode::Esc), k('h'), code(KeyCode::Left)],
    Action::Back,
    "back",
    Some("back"),
);

const OVERVIEW: &[Binding] = &[
    b(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected group",
        Some("open"),
    ),
    b(
        &[k('2')],
        Action::ShowGroups,
        "groups table",
        Some("groups"),
    ),
    b(
        &[k('3')],
        Action::ShowSessions,
        "sessions",
        Some("sessions"),
    ),
    b(
        &[k('4')],
        Action::ShowReview,
        "review queue (executions that wait for a reviewer)",
        Some("review"),
    ),
    b(&[k('1')], Action::ShowOverview, "overview", None),
];

const GROUPS: &[Binding] = &[
    b(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected group",
        Some("open"),
    ),
    b(
        &[k('/')],
        Action::StartFilter,
        "filter: tool, actor, scope, target, arguments, ids",
        Some("filter"),
    ),
    b(&[k('n')], Action::NextMatch, "next match", None),
    b(&[k('N')], Action::PrevMatch, "previous match", None),
    b(
        &[k('f')],
        Action::ToggleFilterMode,
        "filter hides rows / only highlights matches",
        None,
    ),
    b(
        &[k('s')],
        Action::SortNext,
        "sort by the next column",
        Some("sort"),
    ),
    b(&[k('S')], Action::SortReverse, "reverse the sort", None),
    b(
        &[k('v')],
        Action::CycleVerdict,
        "show one verdict (cycles; back to all)",
        Some("verdict"),
    ),
    b(
        &[k('t')],
        Action::CycleTool,
        "show one tool (cycles; back to all)",
        None,
    ),
    b(
        &[k('a')],
        Action::ToggleAll,
        "every group / only those worth a look",
        None,
    ),
    b(&[k('y')], Action::Copy, "copy the group id (OSC 52)", None),
    b(
        &[k('E')],
        Action::Export,
        "export a Markdown postmortem of every listed group to a file",
        Some("export"),
    ),
    b(
        &[code(KeyCode::Esc), k('h'), code(KeyCode::Left)],
        Action::Back,
        "clear filters, then back to the overview",
        None,
    ),
];

const FILTER_INPUT: &[Binding] = &[
    b(
        &[code(KeyCode::Enter)],
        Action::FilterConfirm,
        "keep the filter",
        Some("keep"),
    ),
    b(
        &[code(KeyCode::Esc)],
        Action::FilterCancel,
        "drop the filter",
        Some("drop"),
    ),
    b(
        &[code(KeyCode::Backspace)],
        Action::FilterBackspace,
        "delete a character",
        None,
    ),
    b(&[code(KeyCode::Down)], Action::Down, "next row", None),
    b(&[code(KeyCode::Up)], Action::Up, "previous row", None),
    b(&[ctrl('c')], Action::Quit, "quit", None),
];

const DETAIL: &[Binding] = &[
    b(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the execution, or the event the evidence cites",
        Some("open"),
    ),
    b(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between timeline and questions",
        Some("pane"),
    ),
    b(
        &[k('y')],
        Action::Copy,
        "copy the execution id or the evidence citation (OSC 52)",
        None,
    ),
    b(
        &[k('E')],
        Action::Export,
        "export a Markdown postmortem of this group to a file",
        Some("export"),
    ),
    BACK,
];

const EXECUTION: &[Binding] = &[
    b(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between events and the record",
        Some("pane"),
    ),
    b(
        &[k('J')],
        Action::ScrollDown,
        "scroll the record down",
        Some("scroll"),
    ),
    b(&[k('K')], Action::ScrollUp, "scroll the record up", None),
    b(
        &[k('y')],
        Action::Copy,
        "copy the selected event's raw JSON line (OSC 52)",
        Some("copy"),
    ),
    b(
        &[k('Y')],
        Action::CopyAlt,
        "copy the execution id (OSC 52)",
        None,
    ),
    BACK,
];

const SESSIONS: &[Binding] = &[
    b(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected execution",
        Some("open"),
    ),
    b(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between sessions and their executions",
        Some("pane"),
    ),
    b(
        &[k('y')],
        Action::Copy,
        "copy the session id (OSC 52)",
        None,
    ),
    BACK,
];

const REVIEW: &[Binding] = &[
    b(
        &[k('d')],
        Action::Decide,
        "decide about the selected execution (confirmed_completed, confirmed_not_executed, escalated)",
        Some("decide"),
    ),
    b(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected execution",
        Some("open"),
    ),
    b(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between the queue and the activity record",
        Some("pane"),
    ),
    b(
        &[k('J')],
        Action::ScrollDown,
        "scroll the activity record down",
        None,
    ),
    b(
        &[k('K')],
        Action::ScrollUp,
        "scroll the activity record up",
        None,
    ),
    b(
        &[k('y')],
        Action::Copy,
        "copy the execution id (OSC 52)",
        None,
    ),
    BACK,
];

const DECIDE_CHOOSE: &[Binding] = &[
    b(
        &[k('j'), code(KeyCode::Down)],
        Action::Down,
        "next decision",
        Some("choose"),
    ),
    b(
        &[k('k'), code(KeyCode::Up)],
        Action::Up,
        "previous decision",
        None,
    ),
    b(
        &[code(KeyCode::Enter)],
        Action::Submit,
        "take this decision and write the note",
        Some("next"),
    ),
    b(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is recorded",
        Some("cancel"),
    ),
    b(
        &[k('?')],
        Action::ToggleHelp,
        "help: every key of this dialog",
        None,
    ),
    b(&[ctrl('c')], Action::Quit, "quit", None),
];

const DECIDE_NOTE: &[Binding] = &[
    b(
        &[code(KeyCode::Enter)],
        Action::Submit,
        "done: show what will be recorded",
        Some("next"),
    ),
    b(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is recorded",
        Some("cancel"),
    ),
    b(
        &[code(KeyCode::Up), code(KeyCode::BackTab)],
        Action::Back,
        "back to the choice of decision",
        Some("decision"),
    ),
    b(
        &[code(KeyCode::Backspace)],
        Action::TextBackspace,
        "delete a character",
        None,
    ),
    b(&[ctrl('c')], Action::Quit, "quit", None),
];

const DECIDE_CONFIRM: &[Binding] = &[
    b(
        &[k('y')],
        Action::Confirm,
        "yes: record the decision in the case file",
        Some("record"),
    ),
    b(
        &[k('n'), code(KeyCode::Backspace)],
        Action::Back,
        "no: back to the note",
        Some("back"),
    ),
    b(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is recorded",
        Some("cancel"),
    ),
    b(
        &[k('?')],
        Action::ToggleHelp,
        "help: every key of this dialog",
        None,
    ),
    b(&[ctrl('c')], Action::Quit, "quit", None),
];

const DECIDE_BUSY: &[Binding] = &[b(
    &[ctrl('c')],
    Action::Quit,
    "quit (a decision being written is either recorded whole or not at all)",
    Some("quit"),
)];

const EXPORT_NAME: &[Binding] = &[
    b(
        &[code(KeyCode::Enter)],
        Action::Submit,
        "write the postmortem to this file",
        Some("write"),
    ),
    b(
        &[code(KeyCode::Esc)],
        Action::Cancel,
        "cancel: nothing is written",
        Some("cancel"),
    ),
    b(
        &[code(KeyCode::Backspace)],
        Action::TextBackspace,
        "delete a character",
        None,
    ),
    b(&[ctrl('c')], Action::Quit, "quit", None),
];

const HELP: &[Binding] = &[
    b(
        &[code(KeyCode::Esc), k('?'), k('q')],
        Action::Back,
        "close help",
        Some("close"),
    ),
    b(
        &[k('j'), code(KeyCode::Down)],
        Action::Down,
        "scroll down",
        Some("scroll"),
    ),
    b(&[k('k'), code(KeyCode::Up)], Action::Up, "scroll up", None),
];

const LOADING: &[Binding] = &[b(&[k('T')], Action::CycleTheme, "next theme", None)];

/// The bindings of a context, screen-specific ones first.
pub fn bindings(ctx: Ctx) -> Vec<&'static Binding> {
    let parts: &[&[Binding]] = match ctx {
        Ctx::Loading => &[LOADING, &GLOBAL[1..]],
        Ctx::Overview => &[OVERVIEW, MOVE, GLOBAL],
        Ctx::Groups => &[GROUPS, MOVE, SCREENS, GLOBAL],
        Ctx::FilterInput => &[FILTER_INPUT],
        Ctx::Detail => &[DETAIL, MOVE, SCREENS, GLOBAL],
        Ctx::Execution => &[EXECUTION, MOVE, SCREENS, GLOBAL],
        Ctx::Sessions => &[SESSIONS, MOVE, SCREENS, GLOBAL],
        Ctx::Review => &[REVIEW, MOVE, SCREENS, GLOBAL],
        Ctx::DecideChoose => &[DECIDE_CHOOSE],
        Ctx::DecideNote => &[DECIDE_NOTE],
        Ctx::DecideConfirm => &[DECIDE_CONFIRM],
        Ctx::DecideBusy => &[DECIDE_BUSY],
        Ctx::ExportName => &[EXPORT_NAME],
        Ctx::Help => &[HELP],
    };
    parts.iter().flat_map(|p| p.iter()).collect()
}

/// The action a key asks for in a context, if any. While a text field is
/// being typed (the filter, a decision note, an export file name), every
/// printable character goes to it.
pub fn map_key(ctx: Ctx, e: &KeyEvent) -> Option<Action> {
    let found = bindings(ctx)
        .into_iter()
        .find(|b| b.keys.iter().any(|k| k.matches(e)))
        .map(|b| b.action.clone());
    if found.is_none()
        && ctx.is_text_input()
        && let KeyCode::Char(c) = e.code
        && !e
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT)
    {
        return Some(if ctx == Ctx::FilterInput {
            Action::FilterChar(c)
        } else {
            Action::TextChar(c)
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn maps_vim_keys() {
        assert_eq!(map_key(Ctx::Groups, &key('j')), Some(Action::Down));
        assert_eq!(map_key(Ctx::Groups, &key('q')), Some(Action::Quit));
        assert_eq!(
            map_key(
                Ctx::Groups,
                &KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT)
            ),
            Some(Action::Bottom)
        );
        assert_eq!(
            map_key(
                Ctx::Detail,
                &KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)
            ),
            Some(Action::PageDown)
        );
        assert_eq!(map_key(Ctx::Groups, &key('Z')), None);
        assert_eq!(
            map_key(Ctx::FilterInput, &key('q')),
            Some(Action::FilterChar('q'))
        );
        assert_eq!(
            map_key(Ctx::FilterInput, &key('/')),
            Some(Action::FilterChar('/'))
        );
        assert_eq!(
            map_key(
                Ctx::FilterInput,
                &KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)
            ),
            Some(Action::FilterCancel)
        );
    }

    #[test]
    fn dialogs_take_text_and_need_an_explicit_confirmation() {
        let esc = KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE);
        let enter = KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE);
        // Every printable character is part of the note, even y, q and ?.
        for c in ['y', 'q', '?', 'd', 'E', 'T', ' '] {
            assert_eq!(map_key(Ctx::DecideNote, &key(c)), Some(Action::TextChar(c)));
            assert_eq!(map_key(Ctx::ExportName, &key(c)), Some(Action::TextChar(c)));
        }
        assert_eq!(map_key(Ctx::DecideNote, &esc), Some(Action::Cancel));
        assert_eq!(map_key(Ctx::DecideNote, &enter), Some(Action::Submit));
        // Only y records; Enter does not.
        assert_eq!(
            map_key(Ctx::DecideConfirm, &key('y')),
            Some(Action::Confirm)
        );
        assert_eq!(map_key(Ctx::DecideConfirm, &enter), None);
        assert_eq!(map_key(Ctx::DecideConfirm, &esc), Some(Action::Cancel));
        // While recording, nothing but quitting.
        assert_eq!(map_key(Ctx::DecideBusy, &key('y')), None);
        assert_eq!(map_key(Ctx::DecideBusy, &esc), None);
        // The screens that decide and export.
        assert_eq!(map_key(Ctx::Review, &key('d')), Some(Action::Decide));
        assert_eq!(map_key(Ctx::Groups, &key('E')), Some(Action::Export));
        assert_eq!(map_key(Ctx::Detail, &key('E')), Some(Action::Export));
        for ctx in [Ctx::Overview, Ctx::Groups, Ctx::Detail, Ctx::Review] {
            assert_eq!(map_key(ctx, &key('4')), Some(Action::ShowReview), "{ctx:?}");
        }
    }

    #[test]
    fn no_key_is_bound_twice_in_a_context() {
        for ctx in Ctx::ALL {
            let mut seen = Vec::new();
            for b in bindings(ctx) {
                for k in b.keys {
                    assert!(!seen.contains(k), "{ctx:?}: {} bound twice", k.label());
                    seen.push(*k);
                }
            }
        }
    }
}
