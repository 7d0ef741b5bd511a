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

/// `y` once put raw escape sequences on the clipboard (OSC 52): pasting a
/// copied execution id ran them. What is copied is escaped as what is
/// shown, on every screen, and the raw journal line stays the same JSON.
#[test]
fn what_y_copies_is_escaped_as_shown() {
    use base64::Engine;
    use retrace::tui::app::Effect;
    // The fixture's lines hold JSON escapes (`\u001b`); a copy of them with
    // the characters written raw (valid JSON for C1, bidi and zero-width
    // characters) tests the raw line too.
    let dir = tempfile::tempdir().unwrap();
    let raw = std::fs::read_to_string("tests/fixtures/escape-sequences.jsonl")
        .unwrap()
        .replace("\\u202e", "\u{202e}\u{9b}2J\u{200b}");
    let rawfile = dir.path().join("raw.jsonl");
    std::fs::write(&rawfile, raw).unwrap();
    let opens: Vec<Box<dyn Fn() -> retrace::tui::App>> = vec![
        Box::new(|| app(FIXTURE, Theme::dark(), 160, 48)),
        Box::new(|| {
            let inv = retrace::query::Investigation::open(
                &retrace::query::Setup::new(vec![rawfile.clone()]),
                &mut |_| {},
            )
            .unwrap();
            retrace::tui::App::ready(
                inv,
                Theme::dark(),
                ratatui::layout::Rect::new(0, 0, 160, 48),
            )
        }),
    ];
    let mut copies = 0;
    for open in &opens {
        let mut navs = screens()
            .into_iter()
            .map(|(name, actions, _)| (name, actions))
            .collect::<Vec<_>>();
        navs.push(("review", vec![Action::ShowReview]));
        for (name, actions) in navs {
            for copy in [Action::Copy, Action::CopyAlt] {
                let mut a = open();
                for act in actions.clone() {
                    a.update(act);
                }
                a.effects.clear();
                a.update(copy.clone());
                for e in a.effects.drain(..) {
                    let Effect::Clipboard(text) = e else { continue };
                    copies += 1;
                    assert!(
                        !text.chars().any(retrace::sanitize::is_unsafe),
                        "{name}, {copy:?}: the copy holds a raw control: {text:?}"
                    );
                    if text.starts_with('{') {
                        // The raw line: the same JSON as the journal's.
                        let v: serde_json::Value = serde_json::from_str(&text)
                            .unwrap_or_else(|e| panic!("{name}: {e}: {text}"));
                        assert!(v.is_object());
                    }
                    let osc = retrace::tui::clipboard::osc52(&text);
                    let b64 = &osc["\x1b]52;c;".len()..osc.len() - 1];
                    let pasted = String::from_utf8(
                        base64::engine::general_purpose::STANDARD
                            .decode(b64)
                            .unwrap(),
                    )
                    .unwrap();
                    assert!(!pasted.chars().any(retrace::sanitize::is_unsafe));
                }
            }
        }
    }
    assert!(copies >= 10, "only {copies} copies were made");
}
