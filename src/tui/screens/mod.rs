//! The screens, one module each, and their registry.
//!
//! A screen module holds a type implementing [`Screen`] (its state, update
//! and draw) and a `SCREEN` [`Registration`] (its key tables and, for a
//! top-level screen, its jump key). Adding a screen is its module plus one
//! line in the list below; the app, the key table and help learn of it
//! from [`REGISTRY`].

use crate::tui::keys::{Bind, KeyMap, KeyTable, table};
use crate::tui::screen::{Context, Opens, Registration, Screen};

/// Declares the screen modules and lists their registrations in order:
/// jump keys (`1`, `2`, …) are listed in this order.
macro_rules! screens {
    ($($(#[$doc:meta])* $m:ident),* $(,)?) => {
        $($(#[$doc])* pub mod $m;)*

        /// Every screen's registration, in the order of its jump key.
        pub const REGISTRY: &[&Registration] = &[$(&$m::SCREEN),*];
    };
}

screens! {
    overview,
    groups,
    sessions,
    review,
    detail,
    execution,
}

/// The keys that jump to a top-level screen, in registry order.
pub fn jumps() -> Vec<Bind> {
    REGISTRY
        .iter()
        .filter_map(|r| r.jump.as_ref().map(|j| j.bind.clone()))
        .collect()
}

/// Every context's default table: the app's (loading, the dialogs, help),
/// then each screen's.
pub fn tables() -> Vec<KeyTable> {
    table::APP
        .iter()
        .copied()
        .chain(REGISTRY.iter().flat_map(|r| r.keys.iter().copied()))
        .collect()
}

/// The shipped key table.
pub fn keymap() -> KeyMap {
    KeyMap::build(&tables(), &jumps())
}

/// The first screen, opened when the journals are loaded (the registered
/// root; the overview).
pub fn root(cx: &Context<'_>) -> Option<Box<dyn Screen>> {
    REGISTRY.iter().find_map(|r| match r.jump.as_ref()?.opens {
        Opens::Root(open) => Some(open(cx)),
        _ => None,
    })
}

/// Helpers for the screens' own tests of their key tables.
#[cfg(test)]
pub(crate) mod testing {
    use super::keymap;
    use crate::tui::action::Action;
    use crate::tui::keys::KeyTable;

    /// The movement, jump and global actions a screen answers to besides
    /// its own.
    pub(crate) fn shared() -> Vec<Action> {
        use Action::*;
        vec![
            Up,
            Down,
            PageUp,
            PageDown,
            Top,
            Bottom,
            ShowOverview,
            ShowGroups,
            ShowSessions,
            ShowReview,
            CycleTheme,
            ToggleFollow,
            ToggleHelp,
            Quit,
        ]
    }

    /// Asserts that `t`'s context, in the shipped key table, binds exactly
    /// the actions `want` (each at least once): nothing its screen handles
    /// lacks a key, and no key asks for something it ignores.
    pub(crate) fn assert_binds(t: KeyTable, want: &[Action]) {
        let m = keymap();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::Action;
    use crate::tui::keys::{Binding, KeyMap, ctrl};
    use crate::tui::theme::Theme;
    use crate::tui::widgets::keyline::{help_lines, keyline};
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn map_key(t: KeyTable, e: &KeyEvent) -> Option<Action> {
        keymap().lookup(t.ctx, e)
    }

    fn key(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
    }

    #[test]
    fn maps_vim_keys() {
        assert_eq!(map_key(groups::TABLE, &key('j')), Some(Action::Down));
        assert_eq!(map_key(groups::TABLE, &key('q')), Some(Action::Quit));
        assert_eq!(
            map_key(
                groups::TABLE,
                &KeyEvent::new(KeyCode::Char('G'), KeyModifiers::SHIFT)
            ),
            Some(Action::Bottom)
        );
        assert_eq!(
            map_key(
                detail::TABLE,
                &KeyEvent::new(KeyCode::Char('d'), KeyModifiers::CONTROL)
            ),
            Some(Action::PageDown)
        );
        assert_eq!(map_key(groups::TABLE, &key('Z')), None);
        assert_eq!(
            map_key(groups::FILTER_TABLE, &key('q')),
            Some(Action::FilterChar('q'))
        );
        assert_eq!(
            map_key(groups::FILTER_TABLE, &key('/')),
            Some(Action::FilterChar('/'))
        );
        assert_eq!(
            map_key(
                groups::FILTER_TABLE,
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
            assert_eq!(
                map_key(table::DECIDE_NOTE, &key(c)),
                Some(Action::TextChar(c))
            );
            assert_eq!(
                map_key(table::EXPORT_NAME, &key(c)),
                Some(Action::TextChar(c))
            );
        }
        assert_eq!(map_key(table::DECIDE_NOTE, &esc), Some(Action::Cancel));
        assert_eq!(map_key(table::DECIDE_NOTE, &enter), Some(Action::Submit));
        // Only y records; Enter does not.
        assert_eq!(
            map_key(table::DECIDE_CONFIRM, &key('y')),
            Some(Action::Confirm)
        );
        assert_eq!(map_key(table::DECIDE_CONFIRM, &enter), None);
        assert_eq!(map_key(table::DECIDE_CONFIRM, &esc), Some(Action::Cancel));
        // While recording, nothing but quitting.
        assert_eq!(map_key(table::DECIDE_BUSY, &key('y')), None);
        assert_eq!(map_key(table::DECIDE_BUSY, &esc), None);
        // The screens that decide and export.
        assert_eq!(map_key(review::TABLE, &key('d')), Some(Action::Decide));
        assert_eq!(map_key(groups::TABLE, &key('E')), Some(Action::Export));
        assert_eq!(map_key(detail::TABLE, &key('E')), Some(Action::Export));
        for t in [overview::TABLE, groups::TABLE, detail::TABLE, review::TABLE] {
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
        for t in tables() {
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

    /// Every context has its own id (a screen reusing another's would
    /// share its keys), and every jump key is bound once.
    #[test]
    fn context_ids_and_jumps_are_unique() {
        let ids: Vec<&str> = tables().iter().map(|t| t.ctx.id).collect();
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        assert_eq!(keymap().contexts(), ids);
        let actions: Vec<String> = jumps().iter().map(|j| format!("{:?}", j.action)).collect();
        assert_eq!(
            actions,
            ["ShowOverview", "ShowGroups", "ShowSessions", "ShowReview"]
        );
        let roots = REGISTRY
            .iter()
            .filter(|r| {
                r.jump
                    .as_ref()
                    .is_some_and(|j| matches!(j.opens, Opens::Root(_)))
            })
            .count();
        assert_eq!(roots, 1, "one first screen");
    }

    #[test]
    fn no_key_is_bound_twice_in_a_context() {
        let m: KeyMap = keymap();
        for t in tables() {
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

    #[test]
    fn a_narrow_line_keeps_help_and_quit() {
        let theme = Theme::dark();
        let m = keymap();
        for ctx in tables().iter().map(|t| t.ctx) {
            let b: Vec<&Binding> = m.bindings(ctx).collect();
            let wide = keyline(&b, &theme, 400).to_string();
            let narrow = keyline(&b, &theme, 80).to_string();
            assert!(narrow.chars().count() <= wide.chars().count(), "{ctx:?}");
            if wide.chars().count() > 80 {
                assert!(!narrow.contains("q/C-c"), "{ctx:?}: {narrow}");
            }
            // Every context's line fits 80 columns once narrowed.
            assert!(narrow.chars().count() <= 80, "{ctx:?}: {narrow}");
        }
    }

    /// Help lists exactly the table of its context: one line per binding,
    /// in order, with every key and the help text, and nothing else but
    /// what typed characters do and how to close it.
    #[test]
    fn help_lists_exactly_the_table() {
        let theme = Theme::dark();
        let m = keymap();
        for ctx in tables().iter().map(|t| t.ctx) {
            let b: Vec<&Binding> = m.bindings(ctx).collect();
            let lines: Vec<String> = help_lines(&b, ctx, &theme)
                .iter()
                .map(|l| l.to_string())
                .collect();
            let typed = usize::from(ctx.is_text_input());
            assert_eq!(lines.len(), b.len() + typed + 2, "{}", ctx.id);
            for (line, b) in lines.iter().zip(&b) {
                let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
                assert_eq!(
                    *line,
                    format!(" {:<22}{}", keys.join(" "), b.help),
                    "{}",
                    ctx.id
                );
            }
            assert_eq!(
                lines.last().map(String::as_str),
                Some(" Esc or ? closes this help")
            );
        }
    }

    /// The key line shows exactly the bindings with a short name, in order.
    #[test]
    fn the_key_line_shows_the_short_names_in_order() {
        let theme = Theme::dark();
        let m = keymap();
        for ctx in tables().iter().map(|t| t.ctx) {
            let b: Vec<&Binding> = m.bindings(ctx).collect();
            let line = keyline(&b, &theme, 400).to_string();
            let mut at = 0;
            for s in b.iter().filter_map(|b| b.short.as_deref()) {
                let found = line[at..].find(&format!("] {s}"));
                assert!(
                    found.is_some(),
                    "{}: {s} missing or out of order in {line}",
                    ctx.id
                );
                at += found.unwrap_or(0) + 1;
            }
            let shown = line.matches("] ").count();
            assert_eq!(
                shown,
                b.iter().filter(|b| b.short.is_some()).count(),
                "{line}"
            );
        }
    }

    #[test]
    fn keys_read_as_keys_not_counts() {
        let theme = Theme::dark();
        let m = keymap();
        let b: Vec<&Binding> = m.bindings(overview::TABLE.ctx).collect();
        let wide = keyline(&b, &theme, 400).to_string();
        assert!(wide.contains("[2] groups · [3] sessions"), "{wide}");
        let narrow = keyline(&b, &theme, 60).to_string();
        assert!(narrow.contains("[2]groups [3]sessions"), "{narrow}");
        assert!(!narrow.contains(" 2 groups"), "{narrow}");
    }
}
