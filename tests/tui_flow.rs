//! The TUI driven headlessly: actions in, screens out (TestBackend).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use retrace::query::Investigation;
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App, render};

fn sample() -> Investigation {
    Investigation::open(
        retrace::sample::sources(),
        None,
        &retrace::sample::config(),
        &mut |_| {},
    )
    .unwrap()
}

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render::render(app, f)).unwrap();
    let buf = t.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

fn app(w: u16, h: u16) -> App {
    App::ready(sample(), Theme::default(), Rect::new(0, 0, w, h))
}

#[test]
fn groups_to_detail_to_events_and_back() {
    let mut a = app(80, 24);
    let s = screen(&a, 80, 24);
    assert!(s.contains("Journals (2)"), "{s}");
    assert!(s.contains("chain: not checked"), "{s}");
    a.update(Action::ShowGroups);
    let s = screen(&a, 80, 24);
    assert!(s.contains("duplicate_side_effect"), "{s}");
    assert!(s.contains("deploy_release"), "{s}");

    a.update(Action::Open);
    let s = screen(&a, 80, 24);
    assert!(s.contains("DUPLICATE_SIDE_EFFECT"), "{s}");
    assert!(s.contains("act_01J4K8J7DX7V"), "{s}");
    assert!(s.contains("delivery_failed"), "{s}");
    assert!(s.contains("1. Did one agent process"), "{s}");

    a.update(Action::Down);
    a.update(Action::Open);
    let s = screen(&a, 80, 24);
    assert!(s.contains("execution act_01J4K8M3QF2Z"), "{s}");
    assert!(s.contains("Events (5)"), "{s}");

    a.update(Action::Back);
    a.update(Action::Back);
    let s = screen(&a, 80, 24);
    assert!(s.contains("Groups"), "{s}");
    a.update(Action::Back);
    let s = screen(&a, 80, 24);
    assert!(s.contains("Worst groups"), "{s}");
    a.update(Action::Quit);
    assert!(a.quit);
}

#[test]
fn evidence_jumps_to_the_cited_event() {
    let mut a = app(80, 24);
    a.update(Action::Open);
    a.update(Action::FocusNext);
    // Third piece of evidence of question 1 is the session; the fourth is
    // question 2's `authorized` at seq 7.
    for _ in 0..3 {
        a.update(Action::Down);
    }
    a.update(Action::Open);
    let s = screen(&a, 80, 24);
    assert!(s.contains("execution act_01J4K8J7DX7V"), "{s}");
    let selected_row = s
        .lines()
        .find(|l| l.contains("authorized") && l.contains("session_grant"))
        .unwrap();
    assert!(selected_row.contains("    7 "), "{selected_row}");
    assert!(s.contains("raw line <sample>/activity.jsonl:7 seq 7"), "{s}");
}

#[test]
fn any_size_draws_without_panic() {
    let mut a = app(80, 24);
    a.update(Action::Open);
    for (w, h) in [
        (10, 3),
        (1, 1),
        (0, 0),
        (20, 5),
        (40, 10),
        (80, 24),
        (200, 60),
    ] {
        a.update(Action::Resize(w, h));
        for act in [
            Action::Down,
            Action::PageDown,
            Action::Up,
            Action::FocusNext,
        ] {
            a.update(act);
            let _ = screen(&a, w.max(1), h.max(1));
        }
        a.update(Action::ToggleHelp);
        let _ = screen(&a, w.max(1), h.max(1));
        a.update(Action::ToggleHelp);
    }
}
