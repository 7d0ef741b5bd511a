//! The default key table: the bindings every screen shares (movement,
//! the global keys), and those of the contexts that belong to the app
//! rather than to a screen (loading, help, the dialogs).

use super::{Bind, Ctx, Part, Table, Typing, bind, code, ctrl, k};
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

/// The screen jumps (`1`–`4`).
pub const SCREENS: &[Bind] = &[
    bind(&[k('1')], Action::ShowOverview, "overview", None),
    bind(&[k('2')], Action::ShowGroups, "groups table", None),
    bind(
        &[k('3')],
        Action::ShowSessions,
        "sessions (agent runs)",
        None,
    ),
    bind(
        &[k('4')],
        Action::ShowReview,
        "review queue (executions that wait for a reviewer)",
        None,
    ),
];

/// Theme, help and quit, on every screen.
pub const GLOBAL: &[Bind] = &[
    bind(
        &[k('T')],
        Action::CycleTheme,
        "next theme (dark, light, high-contrast)",
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

const OVERVIEW_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected group",
        Some("open"),
    ),
    bind(
        &[k('2')],
        Action::ShowGroups,
        "groups table",
        Some("groups"),
    ),
    bind(
        &[k('3')],
        Action::ShowSessions,
        "sessions",
        Some("sessions"),
    ),
    bind(
        &[k('4')],
        Action::ShowReview,
        "review queue (executions that wait for a reviewer)",
        Some("review"),
    ),
    bind(&[k('1')], Action::ShowOverview, "overview", None),
];

const GROUPS_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected group",
        Some("open"),
    ),
    bind(
        &[k('/')],
        Action::StartFilter,
        "filter: tool, actor, scope, target, arguments, ids",
        Some("filter"),
    ),
    bind(&[k('n')], Action::NextMatch, "next match", None),
    bind(&[k('N')], Action::PrevMatch, "previous match", None),
    bind(
        &[k('f')],
        Action::ToggleFilterMode,
        "filter hides rows / only highlights matches",
        None,
    ),
    bind(
        &[k('s')],
        Action::SortNext,
        "sort by the next column",
        Some("sort"),
    ),
    bind(&[k('S')], Action::SortReverse, "reverse the sort", None),
    bind(
        &[k('v')],
        Action::CycleVerdict,
        "show one verdict (cycles; back to all)",
        Some("verdict"),
    ),
    bind(
        &[k('t')],
        Action::CycleTool,
        "show one tool (cycles; back to all)",
        None,
    ),
    bind(
        &[k('a')],
        Action::ToggleAll,
        "every group / only those worth a look",
        None,
    ),
    bind(&[k('y')], Action::Copy, "copy the group id (OSC 52)", None),
    bind(
        &[k('E')],
        Action::Export,
        "export a Markdown postmortem of every listed group to a file",
        Some("export"),
    ),
    bind(
        &[code(KeyCode::Esc), k('h'), code(KeyCode::Left)],
        Action::Back,
        "clear filters, then back to the overview",
        None,
    ),
];

const FILTER_INPUT_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter)],
        Action::FilterConfirm,
        "keep the filter",
        Some("keep"),
    ),
    bind(
        &[code(KeyCode::Esc)],
        Action::FilterCancel,
        "drop the filter",
        Some("drop"),
    ),
    bind(
        &[code(KeyCode::Backspace)],
        Action::FilterBackspace,
        "delete a character",
        None,
    ),
    bind(&[code(KeyCode::Down)], Action::Down, "next row", None),
    bind(&[code(KeyCode::Up)], Action::Up, "previous row", None),
    bind(&[ctrl('c')], Action::Quit, "quit", None),
];

const DETAIL_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the execution, or the event the evidence cites",
        Some("open"),
    ),
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between timeline and questions",
        Some("pane"),
    ),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the execution id or the evidence citation (OSC 52)",
        None,
    ),
    bind(
        &[k('E')],
        Action::Export,
        "export a Markdown postmortem of this group to a file",
        Some("export"),
    ),
    BACK,
];

const EXECUTION_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between events and the record",
        Some("pane"),
    ),
    bind(
        &[k('J')],
        Action::ScrollDown,
        "scroll the record down",
        Some("scroll"),
    ),
    bind(&[k('K')], Action::ScrollUp, "scroll the record up", None),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the selected event's raw JSON line (OSC 52)",
        Some("copy"),
    ),
    bind(
        &[k('Y')],
        Action::CopyAlt,
        "copy the execution id (OSC 52)",
        None,
    ),
    BACK,
];

const SESSIONS_KEYS: &[Bind] = &[
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected execution",
        Some("open"),
    ),
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between sessions and their executions",
        Some("pane"),
    ),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the session id (OSC 52)",
        None,
    ),
    BACK,
];

const REVIEW_KEYS: &[Bind] = &[
    bind(
        &[k('d')],
        Action::Decide,
        "decide about the selected execution (confirmed_completed, confirmed_not_executed, escalated)",
        Some("decide"),
    ),
    bind(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected execution",
        Some("open"),
    ),
    bind(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between the queue and the activity record",
        Some("pane"),
    ),
    bind(
        &[k('J')],
        Action::ScrollDown,
        "scroll the activity record down",
        None,
    ),
    bind(
        &[k('K')],
        Action::ScrollUp,
        "scroll the activity record up",
        None,
    ),
    bind(
        &[k('y')],
        Action::Copy,
        "copy the execution id (OSC 52)",
        None,
    ),
    BACK,
];

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

/// Global keys but the theme (loading has its own theme key).
const HELP_AND_QUIT: &[Bind] = GLOBAL.split_at(1).1;

/// Journals are loading (or failed to).
pub const LOADING: Table = Table {
    ctx: Ctx::new("loading", "loading"),
    parts: &[Part::Keys(LOADING_KEYS), Part::Keys(HELP_AND_QUIT)],
};

/// The overview.
pub const OVERVIEW: Table = Table {
    ctx: Ctx::new("overview", "overview"),
    parts: &[
        Part::Keys(OVERVIEW_KEYS),
        Part::Keys(MOVE),
        Part::Keys(GLOBAL),
    ],
};

/// The groups table.
pub const GROUPS: Table = Table {
    ctx: Ctx::new("groups", "groups"),
    parts: &[
        Part::Keys(GROUPS_KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// Typing the groups filter.
pub const FILTER_INPUT: Table = Table {
    ctx: Ctx::new("groups_filter", "groups filter").typing(Typing::Filter),
    parts: &[Part::Keys(FILTER_INPUT_KEYS)],
};

/// One group's detail.
pub const DETAIL: Table = Table {
    ctx: Ctx::new("detail", "group detail"),
    parts: &[
        Part::Keys(DETAIL_KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// One execution's events.
pub const EXECUTION: Table = Table {
    ctx: Ctx::new("execution", "execution"),
    parts: &[
        Part::Keys(EXECUTION_KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// Agent runs.
pub const SESSIONS: Table = Table {
    ctx: Ctx::new("sessions", "sessions"),
    parts: &[
        Part::Keys(SESSIONS_KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// The review queue.
pub const REVIEW: Table = Table {
    ctx: Ctx::new("review", "review queue"),
    parts: &[
        Part::Keys(REVIEW_KEYS),
        Part::Keys(MOVE),
        Part::Jumps,
        Part::Keys(GLOBAL),
    ],
};

/// Decision dialog: choosing the decision.
pub const DECIDE_CHOOSE: Table = Table {
    ctx: Ctx::new("decide_choose", "decision: choose"),
    parts: &[Part::Keys(DECIDE_CHOOSE_KEYS)],
};

/// Decision dialog: typing the note.
pub const DECIDE_NOTE: Table = Table {
    ctx: Ctx::new("decide_note", "decision: note").typing(Typing::Field),
    parts: &[Part::Keys(DECIDE_NOTE_KEYS)],
};

/// Decision dialog: the explicit confirmation.
pub const DECIDE_CONFIRM: Table = Table {
    ctx: Ctx::new("decide_confirm", "decision: confirm"),
    parts: &[Part::Keys(DECIDE_CONFIRM_KEYS)],
};

/// Decision dialog: the decision is being written and analysed.
pub const DECIDE_BUSY: Table = Table {
    ctx: Ctx::new("decide_busy", "decision: recording"),
    parts: &[Part::Keys(DECIDE_BUSY_KEYS)],
};

/// Export dialog: typing the file name.
pub const EXPORT_NAME: Table = Table {
    ctx: Ctx::new("export_name", "export: file name").typing(Typing::Field),
    parts: &[Part::Keys(EXPORT_NAME_KEYS)],
};

/// The help screen is open.
pub const HELP: Table = Table {
    ctx: Ctx::new("help", "help"),
    parts: &[Part::Keys(HELP_KEYS)],
};

/// Every context's default table.
pub const ALL: [Table; 14] = [
    LOADING,
    OVERVIEW,
    GROUPS,
    FILTER_INPUT,
    DETAIL,
    EXECUTION,
    SESSIONS,
    REVIEW,
    DECIDE_CHOOSE,
    DECIDE_NOTE,
    DECIDE_CONFIRM,
    DECIDE_BUSY,
    EXPORT_NAME,
    HELP,
];

/// The shipped key table.
pub fn keymap() -> super::KeyMap {
    super::KeyMap::build(&ALL, SCREENS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::keys::KeyMap;
    use ratatui::crossterm::event::{KeyEvent, KeyModifiers};

    fn map_key(t: Table, e: &KeyEvent) -> Option<Action> {
        keymap().lookup(t.ctx, e)
    }

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn maps_vim_keys() {
        assert_eq!(map_key(GROUPS, &key('j')), Some(Action::Down));
        assert_eq!(map_key(GROUPS, &key('q')), Some(Action::Quit));
        assert_eq!(
            map_key(
                GROUPS,
                &KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT)
            ),
            Some(Action::Bottom)
        );
        assert_eq!(
            map_key(
                DETAIL,
                &KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)
            ),
            Some(Action::PageDown)
        );
        assert_eq!(map_key(GROUPS, &key('Z')), None);
        assert_eq!(
            map_key(FILTER_INPUT, &key('q')),
            Some(Action::FilterChar('q'))
        );
        assert_eq!(
            map_key(FILTER_INPUT, &key('/')),
            Some(Action::FilterChar('/'))
        );
        assert_eq!(
            map_key(
                FILTER_INPUT,
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
            assert_eq!(map_key(DECIDE_NOTE, &key(c)), Some(Action::TextChar(c)));
            assert_eq!(map_key(EXPORT_NAME, &key(c)), Some(Action::TextChar(c)));
        }
        assert_eq!(map_key(DECIDE_NOTE, &esc), Some(Action::Cancel));
        assert_eq!(map_key(DECIDE_NOTE, &enter), Some(Action::Submit));
        // Only y records; Enter does not.
        assert_eq!(map_key(DECIDE_CONFIRM, &key('y')), Some(Action::Confirm));
        assert_eq!(map_key(DECIDE_CONFIRM, &enter), None);
        assert_eq!(map_key(DECIDE_CONFIRM, &esc), Some(Action::Cancel));
        // While recording, nothing but quitting.
        assert_eq!(map_key(DECIDE_BUSY, &key('y')), None);
        assert_eq!(map_key(DECIDE_BUSY, &esc), None);
        // The screens that decide and export.
        assert_eq!(map_key(REVIEW, &key('d')), Some(Action::Decide));
        assert_eq!(map_key(GROUPS, &key('E')), Some(Action::Export));
        assert_eq!(map_key(DETAIL, &key('E')), Some(Action::Export));
        for t in [OVERVIEW, GROUPS, DETAIL, REVIEW] {
            assert_eq!(
                map_key(t, &key('4')),
                Some(Action::ShowReview),
                "{:?}",
                t.ctx
            );
        }
    }

    fn event(k: &crate::tui::keys::Key) -> KeyEvent {
        KeyEvent::new(k.code, k.mods)
    }

    /// Every key of every binding reaches its action: nothing in a table
    /// is shadowed by an earlier binding or lost by the lookup.
    #[test]
    fn every_binding_is_reachable_by_each_of_its_keys() {
        let m = keymap();
        for t in ALL {
            let bindings: Vec<_> = m.bindings(t.ctx).collect();
            assert!(!bindings.is_empty(), "{}: no keys", t.ctx.id);
            for b in bindings {
                for k in &b.keys {
                    assert_eq!(
                        m.lookup(t.ctx, &event(k)),
                        Some(b.action.clone()),
                        "{}: {}",
                        t.ctx.id,
                        k.label()
                    );
                }
            }
        }
    }

    /// Each context binds exactly the actions its screen (or dialog, or
    /// mode) answers to: nothing it handles lacks a key, and no key asks
    /// for something it ignores.
    #[test]
    fn every_context_binds_what_its_screen_answers_to() {
        use Action::*;
        let moves = [Up, Down, PageUp, PageDown, Top, Bottom];
        let jumps = [ShowOverview, ShowGroups, ShowSessions, ShowReview];
        let global = [CycleTheme, ToggleHelp, Quit];
        let screen = |own: &[Action]| -> Vec<Action> {
            own.iter()
                .chain(&moves)
                .chain(&jumps)
                .chain(&global)
                .cloned()
                .collect()
        };
        let expected: Vec<(Table, Vec<Action>)> = vec![
            (LOADING, global.to_vec()),
            (OVERVIEW, screen(&[Open])),
            (
                GROUPS,
                screen(&[
                    Open,
                    StartFilter,
                    NextMatch,
                    PrevMatch,
                    ToggleFilterMode,
                    SortNext,
                    SortReverse,
                    CycleVerdict,
                    CycleTool,
                    ToggleAll,
                    Copy,
                    Export,
                    Back,
                ]),
            ),
            (
                FILTER_INPUT,
                vec![FilterConfirm, FilterCancel, FilterBackspace, Down, Up, Quit],
            ),
            (DETAIL, screen(&[Open, FocusNext, Copy, Export, Back])),
            (
                EXECUTION,
                screen(&[FocusNext, ScrollDown, ScrollUp, Copy, CopyAlt, Back]),
            ),
            (SESSIONS, screen(&[Open, FocusNext, Copy, Back])),
            (
                REVIEW,
                screen(&[Decide, Open, FocusNext, ScrollDown, ScrollUp, Copy, Back]),
            ),
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
        assert_eq!(expected.len(), ALL.len());
        let m = keymap();
        for (t, want) in expected {
            let mut got: Vec<String> = m
                .bindings(t.ctx)
                .map(|b| format!("{:?}", b.action))
                .collect();
            let mut want: Vec<String> = want.iter().map(|a| format!("{a:?}")).collect();
            got.sort();
            got.dedup();
            want.sort();
            want.dedup();
            assert_eq!(got, want, "{}", t.ctx.id);
        }
    }

    /// The table is data: written out and read back (as a user's key
    /// configuration will be), it is the same table.
    #[test]
    fn the_table_reads_back_from_toml() {
        let m = keymap();
        let text = toml::to_string(&m).unwrap();
        assert!(text.contains("[[bindings]]"), "{text}");
        let back: KeyMap = toml::from_str(&text).unwrap();
        assert_eq!(back, m);
        let one: KeyMap = toml::from_str(
            "[[bindings]]\nctx = \"groups\"\nkeys = [\"x\", \"C-s\"]\naction = \"sort_next\"\n",
        )
        .unwrap();
        assert_eq!(one.bindings[0].keys[1], ctrl('s'));
        assert_eq!(one.bindings[0].action, Action::SortNext);
        assert!(
            toml::from_str::<KeyMap>(
                "[[bindings]]\nctx = \"groups\"\nkeys = [\"Hyper-x\"]\naction = \"quit\"\n"
            )
            .is_err()
        );
    }

    #[test]
    fn no_key_is_bound_twice_in_a_context() {
        let m: KeyMap = keymap();
        for t in ALL {
            let ctx = t.ctx;
            let mut seen = Vec::new();
            for b in m.bindings(ctx) {
                for k in &b.keys {
                    assert!(!seen.contains(k), "{ctx:?}: {} bound twice", k.label());
                    seen.push(*k);
                }
            }
        }
    }
}
