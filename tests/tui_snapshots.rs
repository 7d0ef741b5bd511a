//! Every screen at 80×24 and 160×48 in the dark and the light theme, as
//! insta snapshots of the TestBackend (text, then styles); and every screen
//! of the bundled sample at 40×10, 80×24, 120×40 and 200×50 as text, to
//! read like a user: nothing important cut off (README "In the TUI").

mod tui_support;

use retrace::journal::Progress;
use retrace::query::{Investigation, Setup};
use retrace::tui::data::LoadMsg;
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App};
use tui_support::{app, app_with_case, draw, styled, text};

const FIXTURE: &[&str] = &["tui-incident.jsonl"];

fn themes() -> [Theme; 2] {
    [Theme::dark(), Theme::light()]
}

const SIZES: [(u16, u16); 2] = [(80, 24), (160, 48)];

/// The actions that lead to each screen from the start.
fn screens() -> Vec<(&'static str, Vec<Action>)> {
    let mut filter = vec![Action::ShowGroups, Action::StartFilter];
    filter.extend("tckt".chars().map(Action::FilterChar));
    filter.push(Action::FilterConfirm);
    vec![
        ("overview", vec![]),
        ("groups", vec![Action::ShowGroups]),
        ("groups_filtered", filter),
        (
            "detail",
            vec![Action::ShowGroups, Action::Down, Action::Open],
        ),
        (
            "detail_evidence",
            vec![
                Action::ShowGroups,
                Action::Open,
                Action::FocusNext,
                Action::Down,
                Action::Down,
                Action::Down,
            ],
        ),
        (
            "execution",
            vec![
                Action::ShowGroups,
                Action::Open,
                Action::Down,
                Action::Open,
                Action::Bottom,
            ],
        ),
        ("sessions", vec![Action::ShowSessions, Action::FocusNext]),
        ("help", vec![Action::ShowGroups, Action::ToggleHelp]),
    ]
}

/// The review screens, with a case file and a reviewer.
fn review_screens() -> Vec<(&'static str, Vec<Action>)> {
    let mut confirm = vec![Action::ShowReview, Action::Decide, Action::Submit];
    confirm.extend(
        "ticket TCK-88 exists in the tracker"
            .chars()
            .map(Action::TextChar),
    );
    confirm.push(Action::Submit);
    vec![
        ("review_queue", vec![Action::ShowReview]),
        (
            "decide_choose",
            vec![Action::ShowReview, Action::Decide, Action::Down],
        ),
        ("decide_confirm", confirm),
    ]
}

#[test]
fn every_screen_in_both_themes_and_sizes() {
    for theme in themes() {
        for (w, h) in SIZES {
            for (name, actions) in screens() {
                let mut a = app(FIXTURE, theme.clone(), w, h);
                for act in actions {
                    a.update(act);
                }
                let snap = format!("{name}_{w}x{h}_{}", theme.name);
                insta::assert_snapshot!(snap, styled(&draw(&a, w, h)));
            }
            for (name, actions) in review_screens() {
                let mut a = app_with_case(FIXTURE, theme.clone(), w, h);
                for act in actions {
                    a.update(act);
                }
                let snap = format!("{name}_{w}x{h}_{}", theme.name);
                insta::assert_snapshot!(snap, styled(&draw(&a, w, h)));
            }
            // Loading: a gauge half way through the first journal.
            let mut a = App::new(
                vec![
                    "journals/activity.jsonl".into(),
                    "journals/sessions.jsonl".into(),
                ],
                theme.clone(),
                ratatui::layout::Rect::new(0, 0, w, h),
            );
            a.on_load(LoadMsg::Progress(Progress {
                journal: 0,
                bytes: 50 << 20,
                total_bytes: 50 << 20,
                total_size: Some(100 << 20),
            }));
            let snap = format!("loading_{w}x{h}_{}", theme.name);
            insta::assert_snapshot!(snap, styled(&draw(&a, w, h)));
        }
    }
}

/// The group detail of a retry whose body was rewritten (docs/design.md
/// §5.13): the near duplicate listed below the findings, selected.
#[test]
fn a_near_duplicate_in_the_group_detail() {
    for theme in themes() {
        for (w, h) in SIZES {
            let mut a = app(&["near-duplicate.jsonl"], theme.clone(), w, h);
            for act in [
                Action::ShowGroups,
                Action::Open,
                Action::FocusNext,
                Action::Bottom,
            ] {
                a.update(act);
            }
            let snap = format!("detail_near_duplicate_{w}x{h}_{}", theme.name);
            insta::assert_snapshot!(snap, styled(&draw(&a, w, h)));
        }
    }
}

/// The sizes a user's terminal has: a split pane, the classic, a laptop,
/// a wide screen.
const USER_SIZES: [(u16, u16); 4] = [(40, 10), (80, 24), (120, 40), (200, 50)];

/// The bundled sample, as `retrace` with no journal opens it; with a case
/// file that does not exist yet and a reviewer, so that decisions can
/// start.
fn sample(w: u16, h: u16) -> App {
    let setup = Setup {
        case: Some("does-not-exist/case.sqlite".into()),
        reviewer: Some("alice".into()),
        ..Setup::default()
    };
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    App::ready(inv, Theme::dark(), ratatui::layout::Rect::new(0, 0, w, h))
}

/// Every screen of the sample and the actions that lead to it.
fn sample_screens() -> Vec<(&'static str, Vec<Action>)> {
    let mut filter = vec![Action::ShowGroups, Action::StartFilter];
    filter.extend("dep".chars().map(Action::FilterChar));
    filter.push(Action::FilterConfirm);
    let mut confirm = vec![Action::ShowReview, Action::Decide, Action::Submit];
    confirm.extend(
        "ticket TCK-88 exists in the tracker, created once at 10:01:02"
            .chars()
            .map(Action::TextChar),
    );
    confirm.push(Action::Submit);
    vec![
        ("overview", vec![]),
        ("groups", vec![Action::ShowGroups, Action::ToggleAll]),
        ("groups_filtered", filter),
        ("detail", vec![Action::ShowGroups, Action::Open]),
        (
            "detail_evidence",
            vec![
                Action::ShowGroups,
                Action::Open,
                Action::FocusNext,
                Action::Down,
            ],
        ),
        (
            "execution",
            vec![Action::ShowGroups, Action::Open, Action::Open, Action::Down],
        ),
        ("sessions", vec![Action::ShowSessions]),
        (
            "sessions_executions",
            vec![Action::ShowSessions, Action::FocusNext, Action::Down],
        ),
        ("review_queue", vec![Action::ShowReview]),
        ("decide_choose", vec![Action::ShowReview, Action::Decide]),
        ("decide_confirm", confirm),
        ("help", vec![Action::ShowGroups, Action::ToggleHelp]),
    ]
}

#[test]
fn every_screen_of_the_sample_at_the_sizes_users_have() {
    for (w, h) in USER_SIZES {
        for (name, actions) in sample_screens() {
            // The sample has nothing waiting for a reviewer: the review
            // screens are drawn over the TUI fixture, where one waits.
            let mut a = if name.starts_with("review") || name.starts_with("decide") {
                app_with_case(FIXTURE, Theme::dark(), w, h)
            } else {
                sample(w, h)
            };
            for act in actions {
                a.update(act);
            }
            let snap = format!("sample_{name}_{w}x{h}");
            insta::assert_snapshot!(snap, text(&draw(&a, w, h)));
        }
    }
}

/// A follow thread's message, as the first start of follow mode sends it.
fn follow(kind: retrace::tui::follow::FollowKind) -> retrace::tui::follow::FollowMsg {
    retrace::tui::follow::FollowMsg {
        generation: 1,
        kind,
    }
}

/// The id of the group the groups table has selected.
fn selected_id(a: &App) -> String {
    let d = a.data().expect("loaded");
    let g = tui_support::groups(a)
        .selected_group()
        .expect("a selection");
    d.inv.group_at(g).expect("the group").id().to_string()
}

/// Follow mode (docs/design.md §7.7 "Follow mode"): the title line while
/// the journals as they were are read, then with the rate, the newest
/// event and a bad line; the groups whose verdict changed (create_ticket:
/// safe_retry → possible_duplicate) and the new one (restart_service)
/// marked with ● in the groups table and the overview; the selection on
/// the same group; a mark gone at the first key pressed with its group
/// selected, and kept by the key that moves onto it.
#[test]
fn follow_mode_header_and_changed_marks() {
    use retrace::query::FollowPoll;
    use retrace::tui::data::Data;
    use retrace::tui::follow::FollowKind;
    for (w, h) in SIZES {
        let mut a = app(&["tui-follow-before.jsonl"], Theme::dark(), w, h);
        a.update(Action::ShowGroups);
        a.update(Action::Down);
        let before = selected_id(&a);
        a.update(Action::ToggleFollow);
        assert!(a.follow.is_some());
        insta::assert_snapshot!(format!("follow_reading_{w}x{h}"), styled(&draw(&a, w, h)));
        a.on_follow(follow(FollowKind::Started));
        let newest = "2026-07-22T10:04:00.302Z".parse().unwrap();
        a.on_follow(follow(FollowKind::Poll(Box::new(FollowPoll {
            events: 18,
            rate: 12.5,
            newest: Some(newest),
            bad_lines: 1,
            bad: vec![retrace::journal::LineError {
                journal: "tests/fixtures/tui-follow-before.jsonl".into(),
                line: 33,
                message: "not JSON".into(),
                field: None,
            }],
            notes: Vec::new(),
        }))));
        let grown = Data::new(tui_support::open(FIXTURE));
        a.on_follow(follow(FollowKind::Data(Box::new(grown))));
        assert_eq!(selected_id(&a), before, "the selection stays on its group");
        assert_eq!(a.marked.len(), 2, "{:?}", a.marked);
        insta::assert_snapshot!(format!("follow_groups_{w}x{h}"), styled(&draw(&a, w, h)));
        // A key pressed with the group selected, and its mark on screen,
        // acknowledges it.
        a.update(Action::ShowOverview);
        assert!(!a.marked.contains(&before), "{:?}", a.marked);
        assert_eq!(a.marked.len(), 1);
        insta::assert_snapshot!(format!("follow_overview_{w}x{h}"), styled(&draw(&a, w, h)));
        // F stops; the marks stay.
        a.update(Action::ToggleFollow);
        assert!(a.follow.is_none());
        assert_eq!(a.marked.len(), 1, "{:?}", a.marked);
        // The key that moves onto a marked group leaves it marked: it is
        // seen selected and marked, and the next key acknowledges it.
        let other = a.marked.iter().next().cloned().unwrap();
        a.update(Action::ShowGroups);
        for _ in 0..20 {
            if selected_id(&a) == other {
                break;
            }
            a.update(Action::Down);
        }
        assert_eq!(selected_id(&a), other);
        assert!(a.marked.contains(&other), "{:?}", a.marked);
        a.update(Action::Up);
        assert!(a.marked.is_empty(), "{:?}", a.marked);
        // A late message of the stopped follow changes nothing.
        a.on_follow(follow(FollowKind::Started));
        assert!(a.follow.is_none());
    }
}

/// Follow mode keeps the selection on its group when a new group comes
/// in above it (the table sorted newest first: restart_service, new, goes
/// to the top, and create_ticket moves down a row), and a refresh that
/// comes while a background job reads the data waits for it: applied
/// after an export, dropped after a decision (and asked for again, so that
/// the decision is in it).
#[test]
fn follow_keeps_the_group_selected_and_waits_for_a_job() {
    use retrace::tui::data::Data;
    use retrace::tui::follow::FollowKind;
    use retrace::tui::jobs::{ExportError, JobMsg};
    use std::sync::atomic::Ordering;
    let (w, h) = (120, 30);
    let mut a = app(&["tui-follow-before.jsonl"], Theme::dark(), w, h);
    a.update(Action::ShowGroups);
    // FIRST (UTC), newest first.
    for _ in 0..4 {
        a.update(Action::SortNext);
    }
    a.update(Action::SortReverse);
    a.update(Action::Top);
    let before = selected_id(&a);
    let row = tui_support::groups(&a).cursor.selected;
    assert!(text(&draw(&a, w, h)).contains("create_ticket"));
    a.update(Action::ToggleFollow);
    a.on_follow(follow(FollowKind::Started));
    // An export is being written: the refresh waits.
    a.job = Some("writing postmortem.md".into());
    let grown = || Box::new(Data::new(tui_support::open(FIXTURE)));
    a.on_follow(follow(FollowKind::Data(grown())));
    assert_eq!(a.data().unwrap().inv.group_count(), 2, "not yet applied");
    a.on_job(JobMsg::Exported(Err(ExportError::Write(
        std::io::Error::other("disk full"),
    ))));
    assert_eq!(a.data().unwrap().inv.group_count(), 4, "applied after it");
    assert_eq!(selected_id(&a), before, "the selection stays on its group");
    assert_eq!(
        tui_support::groups(&a).cursor.selected,
        row + 1,
        "a row down"
    );
    // A decision is being written: the refresh is dropped and asked for
    // again once it is.
    a.job = Some("recording a decision".into());
    a.on_follow(follow(FollowKind::Data(grown())));
    a.on_job(JobMsg::Failed("stopped".into()));
    let f = a.follow.as_ref().expect("still following");
    assert!(f.control.refresh.load(Ordering::Relaxed));
}

/// Below 96 columns the groups' first times lose their year; calls on two
/// days keep month and day, and a single day is said once, below the
/// table (it was dropped: 23:58 and 00:03 read as the same night's).
#[test]
fn first_times_keep_their_day_on_a_narrow_terminal() {
    for (fixture, name) in [
        ("two-days.jsonl", "two_days"),
        ("three-calls-two-processes.jsonl", "one_day"),
    ] {
        let mut a = app(&[fixture], Theme::dark(), 80, 18);
        a.update(Action::ShowGroups);
        a.update(Action::ToggleAll);
        insta::assert_snapshot!(format!("groups_first_{name}_80"), styled(&draw(&a, 80, 18)));
    }
}

/// A journal's note longer than the overview's box ends with `…`: it was
/// cut mid-word ("… and were"), which read as the whole note.
#[test]
fn a_long_note_on_the_overview_ends_with_an_ellipsis() {
    let a = app(&["mcp-acp/decisions.jsonl"], Theme::dark(), 80, 24);
    let screen = text(&draw(&a, 80, 24));
    let note = screen
        .lines()
        .find(|l| l.contains("note: 3 tools/call policy decision"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(
        note.trim_end().trim_end_matches('│').ends_with('…'),
        "{note}"
    );
}
