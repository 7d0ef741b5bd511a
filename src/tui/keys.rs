//! Key bindings: per screen, a table of keys → [`Action`] with a help text.
//! The same table maps keys, fills the help screen and the key line, so
//! help lists every key a screen answers to.

use super::action::Action;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// Where the keys are read: which screen, or a mode over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    /// Journals are loading.
    Loading,
    /// The groups table.
    Groups,
    /// One group's detail.
    Detail,
    /// One execution's events.
    Execution,
    /// The help screen is open.
    Help,
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
#[derive(Debug, Clone, Copy)]
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

const GLOBAL: &[Binding] = &[
    b(
        &[k('?')],
        Action::ToggleHelp,
        "help: every key of this screen",
        Some("help"),
    ),
    b(&[k('q'), ctrl('c')], Action::Quit, "quit", Some("quit")),
];

const GROUPS: &[Binding] = &[b(
    &[code(KeyCode::Enter), k('l')],
    Action::Open,
    "open the selected group",
    Some("open"),
)];

const DETAIL: &[Binding] = &[
    b(
        &[code(KeyCode::Enter), k('l')],
        Action::Open,
        "open the selected execution, or jump to the selected evidence",
        Some("open"),
    ),
    b(
        &[code(KeyCode::Tab)],
        Action::FocusNext,
        "switch between executions and evidence",
        Some("pane"),
    ),
    b(
        &[code(KeyCode::Esc), k('h')],
        Action::Back,
        "back to the groups",
        Some("back"),
    ),
];

const EXECUTION: &[Binding] = &[b(
    &[code(KeyCode::Esc), k('h')],
    Action::Back,
    "back",
    Some("back"),
)];

const HELP: &[Binding] = &[b(
    &[code(KeyCode::Esc), k('?'), k('q')],
    Action::Back,
    "close help",
    Some("close"),
)];

/// The bindings of a context, screen-specific ones first.
pub fn bindings(ctx: Ctx) -> Vec<&'static Binding> {
    let parts: &[&[Binding]] = match ctx {
        Ctx::Loading => &[GLOBAL],
        Ctx::Groups => &[GROUPS, MOVE, GLOBAL],
        Ctx::Detail => &[DETAIL, MOVE, GLOBAL],
        Ctx::Execution => &[EXECUTION, MOVE, GLOBAL],
        Ctx::Help => &[HELP, MOVE],
    };
    parts.iter().flat_map(|p| p.iter()).collect()
}

/// The action a key asks for in a context, if any.
pub fn map_key(ctx: Ctx, e: &KeyEvent) -> Option<Action> {
    bindings(ctx)
        .into_iter()
        .find(|b| b.keys.iter().any(|k| k.matches(e)))
        .map(|b| b.action)
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
    }

    #[test]
    fn no_key_is_bound_twice_in_a_context() {
        for ctx in [
            Ctx::Loading,
            Ctx::Groups,
            Ctx::Detail,
            Ctx::Execution,
            Ctx::Help,
        ] {
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
