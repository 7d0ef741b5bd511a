//! Key bindings as data: a [`KeyMap`] is a table of (context, keys,
//! action, help, short name) rows, the [`Binding`]s. The same table maps a
//! key to an [`Action`] ([`KeyMap::lookup`]), fills the help screen and
//! the key line, so help lists every key a screen answers to and nothing
//! else.
//!
//! The table is serde data (a later user configuration can replace or
//! extend it); the default one is built from per-context [`KeyTable`]s of
//! [`Bind`] constants (the contexts of the app in [`table`], each screen's
//! in its own module), expanded in order: a context's own keys first, then
//! the shared ones (movement, the screen jumps, the global keys).

pub mod table;

use super::action::Action;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What printable characters do in a context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Typing {
    /// They are keys like any other.
    Keys,
    /// Every printable character is added to the groups filter
    /// ([`Action::FilterChar`]).
    Filter,
    /// Every printable character is typed into a dialog's text field
    /// ([`Action::TextChar`]).
    Field,
}

/// Where the keys are read: a screen, or a mode over it (the groups filter
/// being typed, a dialog step, help). Its `id` names it in a [`KeyMap`]
/// (`"groups"`, `"decide_note"`), its `name` in the help title.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ctx {
    /// The id rows of a [`KeyMap`] name (snake_case).
    pub id: &'static str,
    /// The name in help titles (`group detail`).
    pub name: &'static str,
    /// What printable characters do here.
    pub typing: Typing,
}

impl Ctx {
    /// A context where printable characters are keys.
    pub const fn new(id: &'static str, name: &'static str) -> Ctx {
        Ctx {
            id,
            name,
            typing: Typing::Keys,
        }
    }

    /// The same context with printable characters typed as `typing` says.
    pub const fn typing(self, typing: Typing) -> Ctx {
        Ctx { typing, ..self }
    }

    /// Whether every printable character is text typed into a field.
    pub fn is_text_input(self) -> bool {
        self.typing != Typing::Keys
    }
}

/// One key with its modifiers. Written (in help, on the key line, and as
/// serde data) as the character, or a name: `j`, `G`, `?`, `Space`,
/// `Enter`, `Esc`, `Tab`, `S-Tab`, `Backspace`, `Up`, `Down`, `Left`,
/// `Right`, `PageUp`, `PageDown`, `Home`, `End`, `F1`…; `C-` in front for
/// Ctrl, `M-` for Alt (`C-d`). Help and the key line use the shorter
/// labels of [`Key::label`] (`↓`, `PgDn`, `Bksp`); both forms parse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Ctrl, Alt, ... (Shift is part of the character for letters).
    pub mods: KeyModifiers,
}

/// A key name that names no key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown key {0:?} (a key is a character, or Space, Enter, Esc, Tab, S-Tab, Backspace, Up, Down, Left, Right, PageUp, PageDown, Home, End, F1-F12; C- in front for Ctrl, M- for Alt)"
)]
pub struct KeyError(pub String);

/// A printable character as a key.
pub const fn k(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::NONE,
    }
}

/// A named key (Enter, Esc, the arrows, …) without modifiers.
pub const fn code(code: KeyCode) -> Key {
    Key {
        code,
        mods: KeyModifiers::NONE,
    }
}

/// Ctrl and a character.
pub const fn ctrl(c: char) -> Key {
    Key {
        code: KeyCode::Char(c),
        mods: KeyModifiers::CONTROL,
    }
}

impl Key {
    /// The key of a terminal key event (Shift left out: it is part of the
    /// character).
    pub fn of(e: &KeyEvent) -> Key {
        Key {
            code: e.code,
            mods: e.modifiers - KeyModifiers::SHIFT,
        }
    }

    /// How the key is written in help and the key line (`j`, `↓`, `PgDn`,
    /// `C-d`).
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
            KeyCode::F(n) => format!("F{n}"),
            other => format!("{other:?}"),
        };
        self.with_mods(base)
    }

    /// How the key is written as data (`j`, `Down`, `PageDown`, `C-d`): a
    /// name that [`Key::from_str`] reads back.
    pub fn name(&self) -> String {
        let base = match self.code {
            KeyCode::Char(' ') => "Space".to_string(),
            KeyCode::Char(c) => c.to_string(),
            KeyCode::Backspace => "Backspace".into(),
            KeyCode::Up => "Up".into(),
            KeyCode::Down => "Down".into(),
            KeyCode::Left => "Left".into(),
            KeyCode::Right => "Right".into(),
            KeyCode::PageUp => "PageUp".into(),
            KeyCode::PageDown => "PageDown".into(),
            _ => return self.label(),
        };
        self.with_mods(base)
    }

    fn with_mods(&self, base: String) -> String {
        let mut out = String::new();
        if self.mods.contains(KeyModifiers::CONTROL) {
            out.push_str("C-");
        }
        if self.mods.contains(KeyModifiers::ALT) {
            out.push_str("M-");
        }
        out.push_str(&base);
        out
    }

    /// Whether a terminal key event is this key (Shift is ignored: it is
    /// part of the character).
    pub fn matches(&self, e: &KeyEvent) -> bool {
        let mods = e.modifiers - KeyModifiers::SHIFT;
        self.code == e.code && mods == self.mods
    }
}

impl FromStr for Key {
    type Err = KeyError;

    fn from_str(s: &str) -> Result<Key, KeyError> {
        let bad = || KeyError(s.to_string());
        let mut mods = KeyModifiers::NONE;
        let mut rest = s;
        loop {
            if rest.chars().count() > 2 {
                if let Some(r) = rest.strip_prefix("C-") {
                    mods |= KeyModifiers::CONTROL;
                    rest = r;
                    continue;
                }
                if let Some(r) = rest.strip_prefix("M-") {
                    mods |= KeyModifiers::ALT;
                    rest = r;
                    continue;
                }
            }
            break;
        }
        let mut chars = rest.chars();
        let code = match (chars.next(), chars.next()) {
            // The arrows as help writes them.
            (Some('↑'), None) => KeyCode::Up,
            (Some('↓'), None) => KeyCode::Down,
            (Some('←'), None) => KeyCode::Left,
            (Some('→'), None) => KeyCode::Right,
            (Some(c), None) => KeyCode::Char(c),
            (None, _) => return Err(bad()),
            _ => match rest.to_ascii_lowercase().as_str() {
                "space" => KeyCode::Char(' '),
                "enter" | "return" => KeyCode::Enter,
                "esc" | "escape" => KeyCode::Esc,
                "tab" => KeyCode::Tab,
                "s-tab" | "backtab" => KeyCode::BackTab,
                "backspace" | "bksp" => KeyCode::Backspace,
                "up" => KeyCode::Up,
                "down" => KeyCode::Down,
                "left" => KeyCode::Left,
                "right" => KeyCode::Right,
                "pageup" | "pgup" => KeyCode::PageUp,
                "pagedown" | "pgdn" => KeyCode::PageDown,
                "home" => KeyCode::Home,
                "end" => KeyCode::End,
                f => match f.strip_prefix('f').and_then(|n| n.parse::<u8>().ok()) {
                    Some(n @ 1..=12) => KeyCode::F(n),
                    _ => return Err(bad()),
                },
            },
        };
        Ok(Key { code, mods })
    }
}

impl TryFrom<String> for Key {
    type Error = KeyError;

    fn try_from(s: String) -> Result<Key, KeyError> {
        s.parse()
    }
}

impl From<Key> for String {
    fn from(k: Key) -> String {
        k.name()
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

/// A default binding, as a constant: keys, the action, what it does, and
/// its short name on the key line (when it is shown there). A [`KeyTable`]
/// gives it its context.
#[derive(Debug, Clone)]
pub struct Bind {
    /// Keys that trigger it.
    pub keys: &'static [Key],
    /// What it does.
    pub action: Action,
    /// Help text.
    pub help: &'static str,
    /// Short name on the key line, if shown there.
    pub short: Option<&'static str>,
}

/// A [`Bind`] (a `const fn`, for tables).
pub const fn bind(
    keys: &'static [Key],
    action: Action,
    help: &'static str,
    short: Option<&'static str>,
) -> Bind {
    Bind {
        keys,
        action,
        help,
        short,
    }
}

/// A part of a context's default table.
#[derive(Debug, Clone, Copy)]
pub enum Part {
    /// These bindings.
    Keys(&'static [Bind]),
    /// The keys that jump to a top-level screen (`1` overview, `2`
    /// groups, …), as the screens registered them.
    Jumps,
}

/// A context's default bindings, in the order lookup, help and the key
/// line take them (a context's own keys first, shared ones after).
#[derive(Debug, Clone, Copy)]
pub struct KeyTable {
    /// The context.
    pub ctx: Ctx,
    /// Its bindings, part by part.
    pub parts: &'static [Part],
}

/// One row of a [`KeyMap`]: in context `ctx`, any of `keys` asks for
/// `action`; `help` says what it does on the help screen, and `short`,
/// when set, names it on the key line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The [`Ctx::id`] it applies in.
    pub ctx: String,
    /// Keys that trigger it.
    pub keys: Vec<Key>,
    /// What it does.
    pub action: Action,
    /// Help text.
    #[serde(default)]
    pub help: String,
    /// Short name on the key line, if shown there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short: Option<String>,
}

/// The key table: every binding of every context, in order. The first
/// binding of a context that holds a key wins.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyMap {
    /// The rows, in lookup order.
    pub bindings: Vec<Binding>,
}

impl KeyMap {
    /// The table of `tables`, expanded in order; [`Part::Jumps`] stands
    /// for `jumps`.
    pub fn build(tables: &[KeyTable], jumps: &[Bind]) -> KeyMap {
        let mut bindings = Vec::new();
        for t in tables {
            for part in t.parts {
                let binds = match part {
                    Part::Keys(b) => b,
                    Part::Jumps => jumps,
                };
                bindings.extend(binds.iter().map(|b| Binding {
                    ctx: t.ctx.id.to_string(),
                    keys: b.keys.to_vec(),
                    action: b.action.clone(),
                    help: b.help.to_string(),
                    short: b.short.map(str::to_string),
                }));
            }
        }
        KeyMap { bindings }
    }

    /// The bindings of a context, in table order.
    pub fn bindings(&self, ctx: Ctx) -> impl Iterator<Item = &Binding> {
        self.bindings.iter().filter(move |b| b.ctx == ctx.id)
    }

    /// The ids of the contexts the table holds, in order of first
    /// appearance.
    pub fn contexts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for b in &self.bindings {
            if !out.contains(&b.ctx.as_str()) {
                out.push(&b.ctx);
            }
        }
        out
    }

    /// The action a key asks for in a context, if any. While a text field
    /// is being typed (the filter, a decision note, an export file name),
    /// every printable character without Ctrl or Alt that no binding takes
    /// goes to it.
    pub fn lookup(&self, ctx: Ctx, e: &KeyEvent) -> Option<Action> {
        let found = self
            .bindings(ctx)
            .find(|b| b.keys.iter().any(|k| k.matches(e)))
            .map(|b| b.action.clone());
        if found.is_some() {
            return found;
        }
        match (ctx.typing, e.code) {
            (Typing::Keys, _) => None,
            (_, KeyCode::Char(_))
                if e.modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
            {
                None
            }
            (Typing::Filter, KeyCode::Char(c)) => Some(Action::FilterChar(c)),
            (Typing::Field, KeyCode::Char(c)) => Some(Action::TextChar(c)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_read_back() {
        for (s, key) in [
            ("j", k('j')),
            ("G", k('G')),
            ("?", k('?')),
            ("-", k('-')),
            ("C", k('C')),
            ("Space", k(' ')),
            ("C-d", ctrl('d')),
            ("C--", ctrl('-')),
            ("Enter", code(KeyCode::Enter)),
            ("esc", code(KeyCode::Esc)),
            ("S-Tab", code(KeyCode::BackTab)),
            ("PgDn", code(KeyCode::PageDown)),
            ("PageDown", code(KeyCode::PageDown)),
            ("↓", code(KeyCode::Down)),
            ("Bksp", code(KeyCode::Backspace)),
            ("F5", code(KeyCode::F(5))),
        ] {
            assert_eq!(s.parse::<Key>(), Ok(key), "{s}");
            assert_eq!(key.name().parse::<Key>(), Ok(key), "{s}");
            assert_eq!(key.label().parse::<Key>(), Ok(key), "{s}");
        }
        assert_eq!("M-x".parse::<Key>().map(|k| k.mods), Ok(KeyModifiers::ALT));
        for bad in ["", "Hyper", "F13", "C-"] {
            assert!(bad.parse::<Key>().is_err(), "{bad:?}");
        }
    }
}
