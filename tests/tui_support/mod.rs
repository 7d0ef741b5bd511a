//! Shared helpers of the TUI tests: open a fixture, drive an App with
//! actions, render it into a TestBackend, and print the screen with its
//! styles for snapshots.

#![allow(dead_code)]

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use retrace::query::{Investigation, Setup};
use retrace::tui::screens::groups::Groups;
use retrace::tui::theme::Theme;
use retrace::tui::{App, render};
use std::fmt::Write;

/// A fixture under tests/fixtures.
pub fn fixture(name: &str) -> String {
    // Relative (tests run in the package root) so that names in snapshots
    // do not depend on where the checkout lives.
    format!("tests/fixtures/{name}")
}

/// Loads and analyses fixture journals (no contracts, no key).
pub fn open(names: &[&str]) -> Investigation {
    Investigation::open(&setup(names), &mut |_| {}).unwrap()
}

/// The setup of fixture journals (no contracts, no key).
pub fn setup(names: &[&str]) -> Setup {
    Setup::new(names.iter().map(|n| fixture(n).into()).collect())
}

/// A ready App over the fixture.
pub fn app(names: &[&str], theme: Theme, w: u16, h: u16) -> App {
    App::ready(open(names), theme, Rect::new(0, 0, w, h))
}

/// A ready App over the fixture with a case file that does not exist yet
/// (`case.sqlite`, relative, so that snapshots do not depend on a temporary
/// folder) and reviewer `alice`: decisions can be started, and the first
/// one would create the file.
pub fn app_with_case(names: &[&str], theme: Theme, w: u16, h: u16) -> App {
    let setup = Setup {
        case: Some("does-not-exist/case.sqlite".into()),
        reviewer: Some("alice".into()),
        ..setup(names)
    };
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    App::ready(inv, theme, Rect::new(0, 0, w, h))
}

/// The groups table's state (kept while the user is elsewhere).
pub fn groups(a: &App) -> &Groups {
    a.screen::<Groups>().expect("the groups table")
}

/// Draws the app into a fresh TestBackend of `w`×`h`.
pub fn draw(app: &App, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render::render(app, f)).unwrap();
    t.backend().buffer().clone()
}

/// The screen's text, one line per row.
pub fn text(buf: &Buffer) -> String {
    let a = buf.area;
    (a.top()..a.bottom())
        .map(|y| {
            (a.left()..a.right())
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn describe(s: Style) -> String {
    let mut out = String::new();
    if let Some(fg) = s.fg {
        let _ = write!(out, "fg={fg} ");
    }
    if let Some(bg) = s.bg {
        let _ = write!(out, "bg={bg} ");
    }
    if !s.add_modifier.is_empty() {
        let _ = write!(out, "{:?}", s.add_modifier);
    }
    out.trim_end().to_string()
}

/// The screen as text, then the same grid with one letter per distinct
/// style, then what each letter means: a snapshot that changes when a
/// theme's colors do.
pub fn styled(buf: &Buffer) -> String {
    let a = buf.area;
    let mut styles: Vec<Style> = Vec::new();
    let mut grid = String::new();
    const KEYS: &[u8] = b".abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    for y in a.top()..a.bottom() {
        let mut row = String::new();
        for x in a.left()..a.right() {
            let s = buf[(x, y)].style();
            let i = match styles.iter().position(|t| *t == s) {
                Some(i) => i,
                None => {
                    styles.push(s);
                    styles.len() - 1
                }
            };
            row.push(KEYS.get(i).map_or('#', |&b| b as char));
        }
        grid.push_str(row.trim_end_matches('.'));
        grid.push('\n');
    }
    let mut legend = String::new();
    for (i, s) in styles.iter().enumerate() {
        let k = KEYS.get(i).map_or('#', |&b| b as char);
        let _ = writeln!(legend, "{k} {}", describe(*s));
    }
    format!("{}\n\n{grid}\n{legend}", text(buf))
}

/// Every cell's text is free of characters that must not reach a terminal.
pub fn assert_safe(buf: &Buffer, what: &str) {
    for c in buf.content() {
        assert!(
            !c.symbol().chars().any(retrace::sanitize::is_unsafe),
            "{what}: a cell holds an unsafe character {:?}",
            c.symbol()
        );
    }
}
