//! Without colour (`NO_COLOR`, `--color never`, a theme without colours)
//! moving the cursor still visibly moves the selection: in every list the
//! selected row is reverse video, and after a move another row is.

mod tui_support;

use ratatui::buffer::Buffer;
use ratatui::style::{Color, Modifier};
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App};
use tui_support::{app, app_with_case, draw, text};

const FIXTURE: &[&str] = &["tui-incident.jsonl"];
const W: u16 = 120;
const H: u16 = 40;

/// The body rows (the title line left out) with at least `min` reversed
/// cells.
fn reversed_rows(buf: &Buffer) -> Vec<u16> {
    let a = buf.area;
    (a.top() + 1..a.bottom().saturating_sub(1))
        .filter(|&y| {
            (a.left()..a.right())
                .filter(|&x| buf[(x, y)].modifier.contains(Modifier::REVERSED))
                .count()
                >= 6
        })
        .collect()
}

fn no_color(buf: &Buffer) {
    for c in buf.content() {
        for col in [c.fg, c.bg] {
            assert!(col == Color::Reset, "a coloured cell: {c:?}");
        }
    }
}

/// Drives `a` with `to`, then checks that the selection shows and that
/// `step` moves it to another row.
fn moves(name: &str, mut a: App, to: &[Action], step: Action) {
    for act in to {
        a.update(act.clone());
    }
    let before = draw(&a, W, H);
    no_color(&before);
    let rows = reversed_rows(&before);
    assert!(
        !rows.is_empty(),
        "{name}: no selected row\n{}",
        text(&before)
    );
    a.update(step);
    let after = draw(&a, W, H);
    let moved = reversed_rows(&after);
    assert!(!moved.is_empty(), "{name}: no selected row after the move");
    assert_ne!(
        rows,
        moved,
        "{name}: the selection did not visibly move\n{}",
        text(&after)
    );
}

fn mono() -> Theme {
    Theme::dark().without_color()
}

#[test]
fn every_list_shows_its_selection_without_colour() {
    let plain = || app(FIXTURE, mono(), W, H);
    moves("overview", plain(), &[], Action::Down);
    moves("groups", plain(), &[Action::ShowGroups], Action::Down);
    moves(
        "group detail lanes",
        plain(),
        &[Action::ShowGroups, Action::Open],
        Action::Down,
    );
    moves(
        "group detail evidence",
        plain(),
        &[Action::ShowGroups, Action::Open, Action::FocusNext],
        Action::Down,
    );
    moves(
        "execution events",
        plain(),
        &[Action::ShowGroups, Action::Open, Action::Open],
        Action::Down,
    );
    moves("sessions", plain(), &[Action::ShowSessions], Action::Down);
    moves(
        "session executions",
        plain(),
        &[Action::ShowSessions, Action::FocusNext],
        Action::Down,
    );
    // A scenario in which two executions wait for a reviewer.
    const TWO_WAIT: &str = "../../sample-journals/scenarios/findings-late-and-cancel.jsonl";
    let case = || app_with_case(&[TWO_WAIT], mono(), W, H);
    moves("review queue", case(), &[Action::ShowReview], Action::Down);
    moves(
        "decision choices",
        case(),
        &[Action::ShowReview, Action::Decide],
        Action::Down,
    );
}

/// The theme key keeps the colour off.
#[test]
fn the_theme_key_keeps_colour_off() {
    let mut a = app(FIXTURE, mono(), W, H);
    a.color = false;
    for _ in 0..4 {
        a.update(Action::CycleTheme);
        assert!(!a.theme.has_color(), "{}", a.theme.name);
        no_color(&draw(&a, W, H));
    }
}
