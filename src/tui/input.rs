//! Terminal input to actions, a burst at a time.
//!
//! Characters typed into a text field (the groups filter, a decision note,
//! an export file name) are kept while more input is waiting and applied
//! as one [`Action::Paste`] before anything else happens: a burst of keys
//! (a paste into a terminal without bracketed paste arrives as one key
//! event per character) changes the field once and recomputes the filter
//! once, instead of once per character. A bracketed paste
//! ([`Event::Paste`]) is one action too.

use super::action::Action;
use super::app::App;
use super::keys::Key;
use ratatui::crossterm::event::{Event, KeyCode, KeyEventKind, MouseButton, MouseEventKind};

/// Text typed into a field, not yet applied.
#[derive(Debug, Default)]
pub struct Typed {
    text: String,
}

impl Typed {
    /// Takes one terminal event. Characters for a text field (and pasted
    /// text, where a field is being typed) are kept; any other event first
    /// applies what was kept, then itself. A key that does nothing here
    /// says so on the key line ([`App::unbound_key`]). A left click and
    /// the wheel become [`Action::Click`], [`Action::WheelDown`] and
    /// [`Action::WheelUp`] while the mouse is on ([`App::mouse`]).
    pub fn event(&mut self, app: &mut App, ev: Event) {
        match ev {
            Event::Key(k) if k.kind != KeyEventKind::Release => {
                match app.keys.lookup(app.ctx(), &k) {
                    Some(Action::FilterChar(c) | Action::TextChar(c)) => self.text.push(c),
                    Some(a) => {
                        self.flush(app);
                        app.update(a);
                    }
                    // A modifier pressed alone is no key.
                    None if matches!(k.code, KeyCode::Modifier(_) | KeyCode::Null) => {}
                    None => {
                        self.flush(app);
                        app.unbound_key(Key::of(&k));
                    }
                }
            }
            Event::Paste(s) if app.ctx().is_text_input() => self.text.push_str(&s),
            Event::Resize(w, h) => {
                self.flush(app);
                app.update(Action::Resize(w, h));
            }
            Event::Mouse(m) if app.mouse => {
                let (x, y) = (m.column, m.row);
                let action = match m.kind {
                    MouseEventKind::Down(MouseButton::Left) => Action::Click(x, y),
                    MouseEventKind::ScrollDown => Action::WheelDown(x, y),
                    MouseEventKind::ScrollUp => Action::WheelUp(x, y),
                    _ => return,
                };
                self.flush(app);
                app.update(action);
            }
            _ => {}
        }
    }

    /// Applies what was kept, as one [`Action::Paste`].
    pub fn flush(&mut self, app: &mut App) {
        if !self.text.is_empty() {
            app.update(Action::Paste(std::mem::take(&mut self.text)));
        }
    }

    /// Whether nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }
}
