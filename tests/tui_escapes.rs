//! A journal whose strings hold escape sequences (a screen clear, window
//! title OSCs, a bidi override) shows them escaped on every screen: the
//! escaped text is visible, and no cell holds a control character.

mod tui_support;

use retrace::tui::Action;
use retrace::tui::theme::Theme;
use tui_support::{app, app_with_case, assert_safe, draw, text};

const FIXTURE: &[&str] = &["escape-sequences.jsonl"];

/// (screen, actions from the start, text that must show escaped)
fn screens() -> Vec<(&'static str, Vec<Action>, &'static [&'static str])> {
    let mut filtered = vec![Action::ShowGroups, Action::StartFilter];
    filtered.extend("wipe".chars().map(Action::FilterChar));
    vec![
        ("overview", vec![], &["wipe\\x1b[2Jdisk"]),
        ("groups", vec![Action::ShowGroups], &["wipe\\x1b[2Jdisk"]),
        ("groups filtered", filtered, &["wipe\\x1b[2Jdisk"]),
        (
            "detail",
            vec![Action::ShowGroups, Action::Open],
            &["wipe\\x1b[2Jdisk", "act_\\x1b[2J1", "act_\\x1b[2J2"],
        ),
        (
            "detail evidence",
            vec![Action::ShowGroups, Action::Open, Action::FocusNext],
            &["act_\\x1b[2J1"],
        ),
        (
            "execution",
            vec![Action::ShowGroups, Action::Open, Action::Open],
            &["act_\\x1b[2J1", "\\u001b[2J", "\\u{202e}evil"],
        ),
        (
            "execution outcome",
            vec![
                Action::ShowGroups,
                Action::Open,
                Action::Open,
                Action::Bottom,
            ],
            &["reset\\u001b]0;pwned\\u0007"],
        ),
        (
            "sessions",
            vec![Action::ShowSessions, Action::FocusNext],
            &[
                "ses_\\x1b[2JX",
                "evil\\x1b]2;title\\x07",
                "gone\\x1b[2J",
                "act_\\x1b[2J1",
            ],
        ),
    ]
}

#[test]
fn escape_sequences_show_escaped_on_every_screen() {
    for (w, h) in [(80, 24), (160, 48)] {
        for (name, actions, expect) in screens() {
            let mut a = app(FIXTURE, Theme::dark(), w, h);
            for act in actions {
                a.update(act);
            }
            let buf = draw(&a, w, h);
            let what = format!("{name} at {w}x{h}");
            assert_safe(&buf, &what);
            let s = text(&buf);
            for e in expect {
                assert!(s.contains(e), "{what}: {e:?} not shown escaped:\n{s}");
            }
            // With help open over the screen, too.
            a.update(Action::ToggleHelp);
            assert_safe(&draw(&a, w, h), &format!("{what} with help"));
        }
    }
}

#[test]
fn the_record_pane_shows_every_line_escaped() {
    let mut a = app(FIXTURE, Theme::dark(), 80, 24);
    for act in [
        Action::ShowGroups,
        Action::Open,
        Action::Open,
        Action::FocusNext,
    ] {
        a.update(act);
    }
    // Scroll the raw line and the action record through the pane.
    let mut seen = String::new();
    for _ in 0..60 {
        let buf = draw(&a, 80, 24);
        assert_safe(&buf, "record pane");
        seen.push_str(&text(&buf));
        a.update(Action::ScrollDown);
    }
    for e in [
        "\"tool\": \"wipe\\u001b[2Jdisk\"",
        "\\u{202e}evil",
        "run:\\u001b[2J",
    ] {
        assert!(seen.contains(e), "{e:?} not seen while scrolling");
    }
}

#[test]
fn the_review_queue_and_the_decision_dialog_show_journal_text_escaped() {
    let mut note = vec![Action::ShowReview, Action::Decide, Action::Submit];
    // A typed note with a control character is shown escaped too.
    note.extend("seen\x1b[2J".chars().map(Action::TextChar));
    let mut confirm = note.clone();
    confirm.push(Action::Submit);
    for (w, h) in [(80, 24), (160, 48)] {
        for (name, actions, expect) in [
            (
                "review queue",
                vec![Action::ShowReview],
                &["act_\\x1b[2J1", "wipe\\x1b[2Jdisk"][..],
            ),
            (
                "decide",
                vec![Action::ShowReview, Action::Decide],
                &["act_\\x1b[2J1"][..],
            ),
            ("note", note.clone(), &["seen\\x1b[2J"][..]),
            (
                "confirm",
                confirm.clone(),
                &["act_\\x1b[2J1", "seen\\x1b[2J"][..],
            ),
        ] {
            let mut a = app_with_case(FIXTURE, Theme::dark(), w, h);
            for act in actions {
                a.update(act);
            }
            let buf = draw(&a, w, h);
            let what = format!("{name} at {w}x{h}");
            assert_safe(&buf, &what);
            let s = text(&buf);
            for e in expect {
                assert!(s.contains(e), "{what}: {e:?} not shown escaped:\n{s}");
            }
        }
    }
}
