//! The mouse, fed as crossterm events through the app's event handling
//! (as the terminal sends them): a click selects a row and a second click
//! opens it, the wheel scrolls, a click on a cited evidence line jumps to
//! the event as Enter on it does, and with the mouse off nothing happens.

mod tui_support;

use ratatui::crossterm::event::{Event, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use retrace::query::{Investigation, Setup};
use retrace::tui::input::Typed;
use retrace::tui::screens::detail::{Detail, Focus};
use retrace::tui::screens::execution::Execution;
use retrace::tui::screens::sessions::{self, Sessions};
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App};
use tui_support::{draw, groups, text};

const W: u16 = 120;
const H: u16 = 40;

/// The bundled sample incident.
fn app() -> App {
    let inv = Investigation::open(&Setup::default(), &mut |_| {}).unwrap();
    App::ready(inv, Theme::dark(), ratatui::layout::Rect::new(0, 0, W, H))
}

fn mouse(kind: MouseEventKind, x: u16, y: u16) -> Event {
    Event::Mouse(MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    })
}

fn click(a: &mut App, x: u16, y: u16) {
    let mut t = Typed::default();
    t.event(a, mouse(MouseEventKind::Down(MouseButton::Left), x, y));
    // A release and a move are no clicks.
    t.event(a, mouse(MouseEventKind::Up(MouseButton::Left), x, y));
    t.event(a, mouse(MouseEventKind::Moved, x + 1, y));
}

fn wheel(a: &mut App, down: bool, x: u16, y: u16) {
    let kind = if down {
        MouseEventKind::ScrollDown
    } else {
        MouseEventKind::ScrollUp
    };
    Typed::default().event(a, mouse(kind, x, y));
}

/// The first screen row, and its column, whose text holds `needle` left
/// of column `to`.
fn find(a: &App, needle: &str, to: u16) -> (u16, u16) {
    let s = text(&draw(a, W, H));
    for (y, line) in s.lines().enumerate() {
        let tail: String = line.chars().take(usize::from(to)).collect();
        let from = 0u16;
        if let Some(at) = tail.find(needle) {
            let x = from + u16::try_from(tail[..at].chars().count()).unwrap();
            return (x, u16::try_from(y).unwrap());
        }
    }
    panic!("{needle:?} is not on screen:\n{s}");
}

#[test]
fn a_click_selects_a_group_and_a_second_click_opens_it() {
    let mut a = app();
    a.update(Action::ShowGroups);
    a.update(Action::ToggleAll);
    let n = groups(&a).rows.len();
    assert!(n >= 3, "{n}");
    // Title line, border, header: the second row is at y = 4.
    click(&mut a, 20, 4);
    assert_eq!(groups(&a).cursor.selected, 1);
    assert!(a.current::<Detail>().is_none(), "one click only selects");
    // The header and the border select nothing.
    click(&mut a, 20, 2);
    click(&mut a, 20, 1);
    assert_eq!(groups(&a).cursor.selected, 1);
    wheel(&mut a, true, 20, 10);
    assert_eq!(groups(&a).cursor.selected, 2);
    wheel(&mut a, false, 20, 10);
    wheel(&mut a, false, 20, 10);
    assert_eq!(groups(&a).cursor.selected, 0);
    click(&mut a, 20, 5);
    click(&mut a, 20, 5);
    let d = a
        .current::<Detail>()
        .expect("the second click opens the group");
    let want = groups(&a).rows[2];
    assert_eq!(d.group, want);
}

#[test]
fn a_click_on_a_cited_evidence_line_jumps_as_enter_does() {
    // By the keys: the second piece of evidence, Enter.
    let mut keys = app();
    for act in [
        Action::ShowGroups,
        Action::Open,
        Action::FocusNext,
        Action::Down,
        Action::Open,
    ] {
        keys.update(act);
    }
    let by_keys = keys.current::<Execution>().expect("Enter jumps");
    // By the mouse: the second evidence line of the questions pane (the
    // right half at 120 columns).
    let mut m = app();
    m.update(Action::ShowGroups);
    m.update(Action::Open);
    let s = text(&draw(&m, W, H));
    let cites: Vec<(u16, u16)> = s
        .lines()
        .enumerate()
        .filter_map(|(y, l)| {
            let right: String = l.chars().skip(usize::from(W * 55 / 100)).collect();
            right.find(".jsonl:").map(|_| (W * 55 / 100 + 8, y as u16))
        })
        .collect();
    assert!(cites.len() >= 2, "{s}");
    click(&mut m, cites[1].0, cites[1].1);
    let by_mouse = m
        .current::<Execution>()
        .unwrap_or_else(|| panic!("the click did not jump:\n{}", text(&draw(&m, W, H))));
    assert_eq!(by_mouse.xi, by_keys.xi);
    assert_eq!(by_mouse.cursor.selected, by_keys.cursor.selected);
    // Back on the group, the clicked evidence is the selected one.
    m.update(Action::Back);
    let d = m.current::<Detail>().unwrap();
    assert_eq!((d.focus, d.ev.selected), (Focus::Evidence, 1));
}

#[test]
fn lanes_select_and_open_and_the_questions_scroll() {
    let mut a = app();
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    let second = a.current::<Detail>().unwrap().detail.executions_detail[1]
        .execution_id
        .clone();
    let (x, y) = find(&a, &format!("{second} completed"), W / 2);
    click(&mut a, x, y);
    assert_eq!(a.current::<Detail>().unwrap().lanes.selected, 1);
    click(&mut a, x, y);
    let e = a
        .current::<Execution>()
        .expect("a second click opens the lane");
    assert_eq!(e.summary.execution_id, second);
    a.update(Action::Back);
    let (qx, qy) = find(&a, "The five questions", W);
    wheel(&mut a, true, qx, qy + 3);
    assert_eq!(a.current::<Detail>().unwrap().qscroll, 3);
    wheel(&mut a, false, qx, qy + 3);
    assert_eq!(a.current::<Detail>().unwrap().qscroll, 0);
}

#[test]
fn the_overview_the_sessions_and_the_record_take_the_mouse() {
    let mut a = app();
    // The first worst group is selected: a click on it opens it.
    let (x, y) = find(&a, "Worst groups", W);
    click(&mut a, x + 5, y + 1);
    assert!(a.current::<Detail>().is_some(), "the worst group opens");
    // Sessions: a first click on the executions of the run focuses them
    // and selects the row, a second one opens it.
    a.update(Action::ShowSessions);
    let st = |a: &App| a.current::<Sessions>().unwrap().clone();
    let (x, y) = find(&a, "act_01J4K8M3Q", W);
    click(&mut a, x, y);
    assert_eq!(st(&a).focus, sessions::Focus::Executions);
    assert_eq!(st(&a).execs.selected, 2);
    let (x, y) = find(&a, "act_01J4K8J7D", W);
    click(&mut a, x, y);
    assert_eq!(st(&a).execs.selected, 1);
    assert!(a.current::<Execution>().is_none(), "one click only selects");
    click(&mut a, x, y);
    assert!(a.current::<Execution>().is_some(), "the execution opens");
    // The record pane scrolls under the wheel.
    let (x, y) = find(&a, "Record: raw JSON", W);
    let lines = a.current::<Execution>().unwrap().record.len();
    assert!(lines > 12, "{lines}");
    wheel(&mut a, true, x, y + 2);
    assert_eq!(a.current::<Execution>().unwrap().scroll, 3);
    // Help scrolls too, and a click in it does nothing.
    a.update(Action::ToggleHelp);
    wheel(&mut a, true, 40, 20);
    assert_eq!(a.help, Some(3));
    click(&mut a, 40, 20);
    assert_eq!(a.help, Some(3));
}

#[test]
fn with_the_mouse_off_clicks_and_the_wheel_do_nothing() {
    let mut a = app();
    a.mouse = false;
    a.update(Action::ShowGroups);
    a.update(Action::ToggleAll);
    click(&mut a, 20, 5);
    wheel(&mut a, true, 20, 5);
    assert_eq!(groups(&a).cursor.selected, 0);
}

/// A long message wraps onto more lines at the bottom and the panes above
/// make room; a click lands on what is drawn: on the message, it is no
/// click on the evidence the panes would show there without it.
#[test]
fn a_click_lands_on_the_screen_as_drawn_with_a_long_message() {
    let (w, h) = (80, 24);
    let inv = Investigation::open(&Setup::default(), &mut |_| {}).unwrap();
    let mut a = App::ready(inv, Theme::dark(), ratatui::layout::Rect::new(0, 0, w, h));
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    // Without a message, the second evidence line is on row 21.
    let s = text(&draw(&a, w, h));
    let row = s
        .lines()
        .position(|l| l.contains("activity.jsonl:11"))
        .unwrap_or_else(|| panic!("no second evidence line:\n{s}"));
    assert_eq!(row, 21, "{s}");
    a.status = Some(format!(
        "{} the end",
        "a message long enough to wrap ".repeat(6)
    ));
    let s = text(&draw(&a, w, h));
    assert!(s.contains("the end"), "the message is whole:\n{s}");
    assert!(
        s.lines()
            .nth(row)
            .is_some_and(|l| l.contains("enough to wrap")),
        "{s}"
    );
    click(&mut a, 10, 21);
    assert!(
        a.current::<Execution>().is_none(),
        "a click on the message opened the evidence hidden under it"
    );
    assert!(a.current::<Detail>().is_some());
}
