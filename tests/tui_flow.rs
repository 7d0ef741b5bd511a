//! The TUI driven headlessly: actions in, screens out (TestBackend).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use retrace::query::{Investigation, Setup};
use retrace::tui::screens::detail::Detail;
use retrace::tui::screens::groups::Groups;
use retrace::tui::screens::sessions::{Focus, Sessions};
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App, render};

fn sample() -> Investigation {
    Investigation::open(&Setup::default(), &mut |_| {}).unwrap()
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

/// The groups table's state (kept while the user is elsewhere).
fn groups(a: &App) -> &Groups {
    a.screen::<Groups>().expect("the groups table")
}

fn app(w: u16, h: u16) -> App {
    App::ready(sample(), Theme::default(), Rect::new(0, 0, w, h))
}

#[test]
fn groups_to_detail_to_events_and_back() {
    let mut a = app(80, 24);
    let s = screen(&a, 80, 24);
    assert!(s.contains("Journals (2)"), "{s}");
    assert!(s.contains("chain: intact"), "{s}");
    a.update(Action::ShowGroups);
    let s = screen(&a, 80, 24);
    assert!(s.contains("duplicate_side_effect"), "{s}");
    assert!(s.contains("deploy_release"), "{s}");

    a.update(Action::Open);
    let s = screen(&a, 80, 24);
    assert!(s.contains("DUPLICATE_SIDE_EFFECT"), "{s}");
    assert!(s.contains("act_01J4K8J7DX7V"), "{s}");
    // At 80×24 the questions keep their room: the failed delivery shows
    // as ✗ on the lane's bar (the stage times are on the execution screen).
    assert!(s.contains("O✗"), "{s}");
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
    assert!(s.contains("raw line activity.jsonl:7 seq 7"), "{s}");
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

#[test]
fn a_bad_theme_file_is_named_with_its_key() {
    let out = assert_cmd::Command::cargo_bin("retrace")
        .unwrap()
        .args(["--theme", "tests/fixtures/bad-theme.toml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("theme tests/fixtures/bad-theme.toml: unknown role `roles.critcal`"),
        "{err}"
    );
    let out = assert_cmd::Command::cargo_bin("retrace")
        .unwrap()
        .args(["--theme", "solarized"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("dark, light, high-contrast"));
}

#[test]
fn theme_key_cycles_and_filter_keys_work() {
    let mut a = app(80, 24);
    assert_eq!(a.theme.name, "dark");
    a.update(Action::CycleTheme);
    assert_eq!(a.theme.name, "light");
    a.update(Action::ShowGroups);
    a.update(Action::ToggleAll);
    assert_eq!(groups(&a).rows.len(), 3);
    a.update(Action::StartFilter);
    for c in "list".chars() {
        a.update(Action::FilterChar(c));
    }
    assert_eq!(groups(&a).rows.len(), 1, "{:?}", groups(&a).rows);
    a.update(Action::FilterBackspace);
    a.update(Action::FilterConfirm);
    a.update(Action::ToggleFilterMode);
    assert_eq!(groups(&a).rows.len(), 3, "highlight mode shows every row");
    let before = groups(&a).cursor.selected;
    a.update(Action::NextMatch);
    let m = &groups(&a).matches;
    assert!(m.contains(&groups(&a).cursor.selected), "{m:?}");
    assert!(!m.is_empty() && (m.len() == 1 || groups(&a).cursor.selected != before));
    a.update(Action::Back);
    assert!(groups(&a).query.is_empty(), "Esc clears the filter");
}

#[test]
fn sort_and_verdict_filter() {
    let mut a = app(80, 24);
    a.update(Action::ShowGroups);
    a.update(Action::ToggleAll);
    let worst_first = groups(&a).rows.clone();
    let inv = &a.data().unwrap().inv;
    let sev: Vec<_> = worst_first
        .iter()
        .map(|&i| inv.group_at(i).unwrap().severity())
        .collect();
    assert!(sev.windows(2).all(|w| w[0] <= w[1]), "{sev:?}");
    a.update(Action::SortNext); // calls, most first
    let inv = &a.data().unwrap().inv;
    let calls: Vec<usize> = groups(&a)
        .rows
        .iter()
        .map(|&i| inv.group_at(i).unwrap().calls())
        .collect();
    assert!(calls.windows(2).all(|w| w[0] >= w[1]), "{calls:?}");
    a.update(Action::SortReverse);
    let inv = &a.data().unwrap().inv;
    let calls: Vec<usize> = groups(&a)
        .rows
        .iter()
        .map(|&i| inv.group_at(i).unwrap().calls())
        .collect();
    assert!(calls.windows(2).all(|w| w[0] <= w[1]), "{calls:?}");
    a.update(Action::CycleVerdict);
    let inv = &a.data().unwrap().inv;
    let v = groups(&a).verdict.unwrap();
    assert!(
        groups(&a)
            .rows
            .iter()
            .all(|&i| inv.group_at(i).unwrap().verdict() == v)
    );
    assert!(!groups(&a).rows.is_empty());
}

/// The execution screen's LINE column keeps the line number at every
/// width: the file name gives way from the left (`…tivity.jsonl:10`).
#[test]
fn execution_lines_keep_their_line_numbers() {
    for (w, h) in [(80, 24), (100, 30), (160, 48)] {
        let mut a = app(w, h);
        a.update(Action::ShowGroups);
        a.update(Action::Open);
        a.update(Action::Down);
        a.update(Action::Open);
        let s = screen(&a, w, h);
        let rows: Vec<&str> = s
            .lines()
            .filter(|l| {
                l.contains("accepted  ") || l.contains("dispatched  ") || l.contains("delivered")
            })
            .filter(|l| {
                l.trim_start_matches('│')
                    .trim_start()
                    .starts_with(char::is_numeric)
            })
            .collect();
        assert!(!rows.is_empty(), "{w}x{h}:\n{s}");
        for r in rows {
            // The events pane is the first box on the line.
            let cell = r.split('│').nth(1).unwrap().trim_end();
            let last = cell.rsplit(' ').next().unwrap();
            let (name, line) = last
                .rsplit_once(':')
                .unwrap_or_else(|| panic!("{w}x{h}: {r}"));
            assert!(
                line.parse::<u32>().is_ok() && name.ends_with("jsonl"),
                "{w}x{h}: {r}"
            );
        }
    }
}

/// At 80×24 the group detail shows the verdict's whole reason, and both
/// executions whichever pane has the focus.
#[test]
fn detail_at_80x24_keeps_the_reason_and_every_lane() {
    let mut a = app(80, 24);
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    let reason = match a.current::<Detail>() {
        Some(st) => st.detail.reason.clone(),
        None => panic!("not on the detail"),
    };
    let s = screen(&a, 80, 24);
    let header: String = s
        .lines()
        .skip(2)
        .take_while(|l| !l.starts_with('└'))
        .map(|l| l.trim_matches('│').trim())
        .collect::<Vec<_>>()
        .join(" ");
    assert!(header.contains(&reason), "{reason:?} not whole in:\n{s}");
    assert!(s.contains("acted on both"), "{s}");
    for focus_questions in [false, true] {
        if focus_questions {
            a.update(Action::FocusNext);
        }
        let s = screen(&a, 80, 24);
        for x in ["act_01J4K8J7DX7V", "act_01J4K8M3QF2Z"] {
            assert!(
                s.contains(x),
                "{x} hidden (questions focused: {focus_questions}):\n{s}"
            );
        }
        assert!(!s.contains("(1–1)"), "{s}");
    }
}

/// The group detail heads with what `retrace investigate` shows about the
/// group, and the groups table names each group's id at 80 columns.
#[test]
fn the_group_is_named_in_full() {
    let mut a = app(160, 48);
    a.update(Action::ShowGroups);
    let s = screen(&a, 80, 24);
    assert!(s.contains("gfc4a6c60d4"), "{s}");
    a.update(Action::Open);
    let s = screen(&a, 160, 48);
    let header: Vec<&str> = s
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('└'))
        .collect();
    let header = header.join("\n");
    for part in [
        "Group gfc4a6c60d4",
        "actor signed-process:com.example.agent",
        "intent scope run:5f8097",
        "target deploy-api.internal.example/releases",
        "fingerprint hmac-sha256:",
        "contract recoverable_by_status · attach window 2h",
    ] {
        assert!(header.contains(part), "{part:?} not in:\n{header}");
    }
    let mut b = app(80, 24);
    b.update(Action::ShowGroups);
    b.update(Action::Open);
    let s = screen(&b, 80, 24);
    assert!(s.contains("Group gfc4a6c60d4"), "{s}");
    assert!(
        s.contains("actor signed-process:com.example.agent · scope run:5f8097"),
        "{s}"
    );
}

/// With nothing worth a look, hiding clean groups says so and how to list
/// them again (it once said the journals held no tool call).
#[test]
fn hiding_clean_groups_says_what_is_hidden() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/sample-journals/scenarios/clean.jsonl"
    );
    let inv = Investigation::open(&Setup::new(vec![path.into()]), &mut |_| {}).unwrap();
    let mut a = App::ready(inv, Theme::default(), Rect::new(0, 0, 120, 24));
    a.update(Action::ShowGroups);
    let s = screen(&a, 120, 24);
    assert!(s.contains("Groups: 1 (all)"), "{s}");
    a.update(Action::ToggleAll);
    let s = screen(&a, 120, 24);
    assert!(
        s.contains(
            "No group worth a look: 1 group(s), each one call with a clean verdict. Press a"
        ),
        "{s}"
    );
    assert!(!s.contains("hold no tool call"), "{s}");
}

/// On a narrow terminal the header keeps the current place before a chain
/// status that raises no alarm (it once cut `overview` to `ov`).
#[test]
fn a_narrow_header_keeps_the_current_place() {
    let mut a = app(36, 24);
    let s = screen(&a, 36, 24);
    assert!(s.lines().next().unwrap().contains("overview"), "{s}");
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    let s = screen(&a, 36, 24);
    let first = s.lines().next().unwrap();
    assert!(first.contains("group g"), "{first}");
    assert!(!first.contains("[chain"), "{first}");
}

/// The groups table keeps its filters, sort and selection while the user
/// is elsewhere (the overview, a group, back), as `2` finds it again; the
/// other top-level screens open afresh.
#[test]
fn the_groups_table_keeps_its_state_between_visits() {
    let mut a = app(80, 24);
    a.update(Action::ShowGroups);
    a.update(Action::ToggleAll);
    a.update(Action::SortNext);
    a.update(Action::Down);
    let (rows, selected) = (groups(&a).rows.clone(), groups(&a).cursor.selected);
    assert!(selected > 0);
    for away in [
        vec![Action::ShowOverview],
        vec![Action::Back],
        vec![Action::Open, Action::Back, Action::Back],
        vec![Action::ShowSessions, Action::ShowReview],
    ] {
        for act in away {
            a.update(act);
        }
        a.update(Action::ShowGroups);
        assert!(a.current::<Groups>().is_some());
        assert_eq!(groups(&a).rows, rows);
        assert_eq!(groups(&a).cursor.selected, selected);
        assert!(groups(&a).all);
    }
    // Sessions open afresh, with the sessions list focused, each time.
    let focus = |a: &App| a.current::<Sessions>().map(|s| s.focus);
    a.update(Action::ShowSessions);
    a.update(Action::FocusNext);
    assert_eq!(focus(&a), Some(Focus::Executions));
    a.update(Action::ShowOverview);
    a.update(Action::ShowSessions);
    assert_eq!(focus(&a), Some(Focus::Sessions));
}

/// On every screen, help shows the key table of the screen's context: one
/// line per binding, with its keys and help, in table order, and nothing
/// else but what typed characters do and how to close it.
#[test]
fn help_on_every_screen_lists_its_key_table() {
    let (w, h) = (160, 48);
    let walks: Vec<Vec<Action>> = vec![
        vec![],
        vec![Action::ShowGroups],
        vec![Action::ShowGroups, Action::StartFilter],
        vec![Action::ShowGroups, Action::Open],
        vec![Action::ShowGroups, Action::Open, Action::Open],
        vec![Action::ShowSessions],
        vec![Action::ShowReview],
    ];
    let mut seen = Vec::new();
    for walk in walks {
        let mut a = app(w, h);
        for act in walk {
            a.update(act);
        }
        let ctx = a.screen_ctx();
        seen.push(ctx.id);
        let want: Vec<String> = a
            .keys
            .bindings(ctx)
            .map(|b| {
                let keys: Vec<String> = b.keys.iter().map(|k| k.label()).collect();
                format!(" {:<22}{}", keys.join(" "), b.help)
            })
            .collect();
        a.update(Action::ToggleHelp);
        let s = screen(&a, w, h);
        let title = format!(" Keys: {} ", ctx.name);
        let lines: Vec<Vec<char>> = s.lines().map(|l| l.chars().collect()).collect();
        let top = s.lines().position(|l| l.contains(&title)).expect("help");
        // The popup's columns: from its top-left corner to its top-right.
        let head: String = lines[top].iter().collect();
        let at = head.find(&title).expect("title");
        let left = head[..at].chars().count() - 1;
        let right = left
            + lines[top][left..]
                .iter()
                .position(|&c| c == '┐')
                .expect("corner");
        let rows: Vec<String> = lines[top + 1..]
            .iter()
            .take_while(|l| l.get(left) == Some(&'│'))
            .map(|l| {
                l[left + 1..right]
                    .iter()
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .fold(Vec::<String>::new(), |mut rows, l| {
                // A help text too long for the popup goes on below itself.
                let indent = " ".repeat(23);
                match (l.strip_prefix(&indent), rows.last_mut()) {
                    (Some(more), Some(prev)) if !more.trim().is_empty() => {
                        prev.push(' ');
                        prev.push_str(more.trim());
                    }
                    _ => rows.push(l),
                }
                rows
            });
        let typed = usize::from(ctx.is_text_input());
        assert_eq!(rows.len(), want.len() + typed + 2, "{}:\n{s}", ctx.id);
        for (row, want) in rows.iter().zip(&want) {
            let shown: String = want.chars().take(row.chars().count()).collect();
            assert!(
                !row.is_empty() && *row == shown.trim_end(),
                "{}: {row:?} for {want:?}",
                ctx.id
            );
        }
    }
    assert_eq!(
        seen,
        [
            "overview",
            "groups",
            "groups_filter",
            "detail",
            "execution",
            "sessions",
            "review"
        ]
    );
}

/// docs/design.md §5.13: Enter on a near duplicate in the group detail
/// opens that group; `y` there would copy its id.
#[test]
fn enter_on_a_near_duplicate_opens_its_group() {
    let setup = Setup::new(vec!["tests/fixtures/near-duplicate.jsonl".into()]);
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let mut a = App::ready(inv, Theme::default(), Rect::new(0, 0, 120, 40));
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    let first = a.current::<Detail>().unwrap();
    assert_eq!(first.detail.summary.verdict.as_str(), "safe_retry");
    let other = first.detail.near_duplicates[0].group_id.clone();
    a.update(Action::FocusNext);
    a.update(Action::Bottom);
    let s = screen(&a, 120, 40);
    let line = s
        .lines()
        .find(|l| l.contains(&other) && l.contains("differs in body"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(line.contains("▶"), "{line}");
    a.update(Action::Open);
    let d = a.current::<Detail>().unwrap();
    assert_eq!(d.detail.summary.group_id, other);
    assert_eq!(d.detail.near_duplicates[0].field, "body");
    a.update(Action::Back);
    assert_eq!(
        a.current::<Detail>()
            .unwrap()
            .detail
            .summary
            .verdict
            .as_str(),
        "safe_retry"
    );
}

/// `--since`/`--until` narrow the TUI as they narrow the commands: the
/// overview says which executions are shown, and the groups are theirs.
#[test]
fn a_time_window_narrows_the_tui_and_the_overview_says_so() {
    let at = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    let setup = Setup {
        window: retrace::query::TimeWindow {
            since: Some(at("2026-07-22T14:04:00Z")),
            until: None,
        },
        ..Setup::default()
    };
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let mut a = App::ready(inv, Theme::default(), Rect::new(0, 0, 120, 40));
    let s = screen(&a, 120, 40);
    assert!(
        s.contains(
            "window: only the 2 of 4 executions that began at or after 2026-07-22 14:04:00Z"
        ),
        "{s}"
    );
    // The second deploy_release is judged with the first, read from
    // before the window (docs/design.md §7.2): still the duplicate.
    assert!(s.contains("duplicate_side_effect"), "{s}");
    a.update(Action::ShowGroups);
    let s = screen(&a, 120, 40);
    // The duplicate is worth a look; get_release_status, clean, is hidden,
    // and list_releases, begun before the window and not repeated in it,
    // is not read.
    assert!(s.contains("Groups: 1 worth a look"), "{s}");
    assert!(!s.contains("list_releases"), "{s}");
}

/// Below 60×18 the screen says what size it needs (and keeps the chain
/// status in the title); from 60×18 the screens draw.
#[test]
fn a_terminal_too_small_says_what_size_it_needs() {
    for (w, h) in [(59, 18), (60, 17), (40, 10), (20, 5)] {
        let a = app(w, h);
        let s = screen(&a, w, h);
        assert!(
            s.contains("[intact]") || s.contains("[chain intact]"),
            "{w}×{h}:\n{s}"
        );
        let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains("too small"), "{w}×{h}:\n{s}");
        if w >= 40 {
            assert!(
                flat.contains(&format!("need at least 60×18, have {w}×{h}")),
                "{w}×{h}:\n{s}"
            );
        }
    }
    let mut a = app(60, 18);
    let s = screen(&a, 60, 18);
    assert!(!s.contains("too small"), "{s}");
    assert!(s.contains("Journals (2)"), "{s}");
    // The group detail at the minimum: a lane, the legend in the border
    // (cut with …), and the questions saying there is more.
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    let s = screen(&a, 60, 18);
    assert!(s.contains("▶ act_01J4K8J7DX7V"), "{s}");
    assert!(s.contains("deliver ✗ failed …┘"), "{s}");
    assert!(s.contains("The five questions: 1 of 5"), "{s}");
    assert!(s.contains("↓ Tab, PgDn"), "{s}");
}

/// The overview's worst groups once cut every tool name at 18 characters
/// ("create_pull_reque…") however wide the terminal: the column is as wide
/// as the widest tool shown, as far as the pane allows.
#[test]
fn the_worst_groups_show_whole_tool_names_when_there_is_room() {
    let setup = Setup::new(vec!["tests/fixtures/near-duplicate.jsonl".into()]);
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let a = App::ready(inv, Theme::default(), Rect::new(0, 0, 120, 40));
    let s = screen(&a, 120, 40);
    let line = s
        .lines()
        .find(|l| l.contains("safe_retry") && l.contains("calls"))
        .unwrap_or_else(|| panic!("{s}"));
    assert!(line.contains("create_pull_request "), "{line}");
}

/// A window that holds no execution once read "every group is one call
/// with a clean verdict" on the overview and "the journals hold no tool
/// call" on the groups: both false. They say the window is empty.
#[test]
fn an_empty_time_window_is_not_read_as_all_clean() {
    let at = |s: &str| {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&chrono::Utc)
    };
    let setup = Setup {
        window: retrace::query::TimeWindow {
            since: Some(at("2030-01-01T00:00:00Z")),
            until: None,
        },
        ..Setup::default()
    };
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let mut a = App::ready(inv, Theme::default(), Rect::new(0, 0, 160, 48));
    for s in [screen(&a, 160, 48), {
        a.update(Action::ShowGroups);
        screen(&a, 160, 48)
    }] {
        assert!(
            s.contains("No execution began at or after 2030-01-01"),
            "{s}"
        );
        assert!(
            !s.contains("clean verdict") && !s.contains("no tool call"),
            "{s}"
        );
    }
}

/// At 60×18 the worst groups' counts were cut silently ("2 calls · 2 e"):
/// what does not fit ends with an ellipsis.
#[test]
fn the_worst_groups_end_cut_text_with_an_ellipsis() {
    let a = app(60, 18);
    let s = screen(&a, 60, 18);
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("▌") && l.contains("call"))
        .collect();
    assert!(!rows.is_empty(), "{s}");
    for l in rows {
        let inner = l.trim_end_matches('│').trim_end();
        assert!(
            inner.ends_with('…')
                || inner
                    .split(' ')
                    .next_back()
                    .is_some_and(|w| w.starts_with('g')),
            "{l}\n{s}"
        );
    }
}

/// An empty journal (a gateway that has just begun writing) opens, and the
/// overview and the groups table say that it holds no call yet and how to
/// follow it, not that every group is clean.
#[test]
fn an_empty_journal_opens_and_says_how_to_follow_it() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("gateway.jsonl");
    std::fs::File::create(&p).unwrap();
    let mut setup = Setup::new(vec![p]);
    setup.case = Some(d.path().join("none.sqlite"));
    let inv = Investigation::open(&setup, &mut |_| {}).unwrap();
    let mut a = App::ready(inv, Theme::default(), Rect::new(0, 0, 120, 30));
    for s in [screen(&a, 120, 30), {
        a.update(Action::ShowGroups);
        screen(&a, 120, 30)
    }] {
        assert!(
            s.contains("No tool call in the journals yet: press F to follow them"),
            "{s}"
        );
        assert!(!s.contains("clean verdict"), "{s}");
    }
}
