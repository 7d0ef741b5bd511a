//! Resizing never panics: every screen, drawn at sizes down to one cell,
//! after being driven at another size (so stored offsets are stale).

mod tui_support;

use retrace::tui::Action;
use retrace::tui::theme::Theme;
use tui_support::{app, app_with_case, draw};

const SIZES: [(u16, u16); 10] = [
    (10, 3),
    (1, 1),
    (3, 2),
    (20, 4),
    (40, 8),
    (80, 24),
    (200, 5),
    (5, 200),
    (300, 90),
    (79, 23),
];

fn journeys() -> Vec<Vec<Action>> {
    let mut filter = vec![Action::ShowGroups, Action::StartFilter];
    filter.extend("wipe".chars().map(Action::FilterChar));
    vec![
        vec![Action::Bottom],
        vec![Action::ShowGroups, Action::ToggleAll, Action::Bottom],
        filter,
        vec![Action::ShowGroups, Action::Open, Action::Bottom],
        vec![
            Action::ShowGroups,
            Action::Open,
            Action::FocusNext,
            Action::Bottom,
        ],
        vec![
            Action::ShowGroups,
            Action::Open,
            Action::Open,
            Action::Bottom,
            Action::FocusNext,
            Action::Bottom,
        ],
        vec![Action::ShowSessions, Action::FocusNext, Action::Bottom],
        vec![Action::ToggleHelp, Action::Down, Action::Down],
    ]
}

#[test]
fn every_screen_survives_every_size() {
    for fixture in ["escape-sequences.jsonl", "tui-incident.jsonl"] {
        for journey in journeys() {
            for (w0, h0) in [(160, 48), (10, 3)] {
                let mut a = app(&[fixture], Theme::dark(), w0, h0);
                for act in &journey {
                    a.update(act.clone());
                }
                for (w, h) in SIZES {
                    a.update(Action::Resize(w, h));
                    let _ = draw(&a, w, h);
                    // Keys at that size, then draw again.
                    for act in [
                        Action::Down,
                        Action::PageDown,
                        Action::Up,
                        Action::ScrollDown,
                    ] {
                        a.update(act);
                    }
                    let _ = draw(&a, w, h);
                }
            }
        }
    }
}

/// The review queue and the dialogs over it, at every size, with stale
/// offsets from another size.
fn review_journeys() -> Vec<Vec<Action>> {
    let mut note = vec![Action::ShowReview, Action::Decide, Action::Submit];
    note.extend(
        "the target shows it twice, see ticket 4711 "
            .repeat(8)
            .chars()
            .map(Action::TextChar),
    );
    let mut confirm = note.clone();
    confirm.push(Action::Submit);
    vec![
        vec![Action::ShowReview, Action::Bottom],
        vec![Action::ShowReview, Action::FocusNext, Action::Bottom],
        vec![Action::ShowReview, Action::Decide, Action::Down],
        note,
        confirm,
        vec![Action::ShowReview, Action::ToggleHelp],
        vec![Action::ShowGroups, Action::Export],
        vec![Action::ShowGroups, Action::Open, Action::Export],
    ]
}

#[test]
fn the_review_screens_survive_every_size() {
    for fixture in [
        "escape-sequences.jsonl",
        "tui-incident.jsonl",
        "hostile.jsonl",
    ] {
        for journey in review_journeys() {
            for (w0, h0) in [(160, 48), (10, 3)] {
                let mut a = app_with_case(&[fixture], Theme::dark(), w0, h0);
                for act in &journey {
                    a.update(act.clone());
                }
                for (w, h) in SIZES {
                    a.update(Action::Resize(w, h));
                    let _ = draw(&a, w, h);
                    for act in [
                        Action::Down,
                        Action::PageDown,
                        Action::Up,
                        Action::ScrollDown,
                    ] {
                        a.update(act);
                    }
                    let _ = draw(&a, w, h);
                }
            }
        }
    }
}
