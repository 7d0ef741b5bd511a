//! Typing and pasting into the TUI's text fields: a paste is one edit, a
//! burst of keys is applied at once, and the filter has a length cap (a
//! 120,000-character paste used to refilter per character for minutes).

mod tui_support;

use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use retrace::tui::Action;
use retrace::tui::input::Typed;
use retrace::tui::screens::groups::MAX_QUERY;
use retrace::tui::theme::Theme;
use tui_support::{app, app_with_case, draw, groups, text};

const FIXTURE: &[&str] = &["tui-incident.jsonl"];

fn key(c: KeyCode) -> Event {
    Event::Key(KeyEvent::new(c, KeyModifiers::NONE))
}

#[test]
fn a_huge_paste_is_one_capped_edit_and_esc_still_works() {
    let mut a = app(FIXTURE, Theme::dark(), 80, 24);
    a.update(Action::ShowGroups);
    a.update(Action::StartFilter);
    let mut typed = Typed::default();
    typed.event(&mut a, Event::Paste("x".repeat(120_000)));
    typed.flush(&mut a);
    assert_eq!(groups(&a).query.chars().count(), MAX_QUERY);
    let s = text(&draw(&a, 80, 24));
    assert!(
        s.contains(&format!("at most {MAX_QUERY} characters")),
        "{s}"
    );
    assert!(s.contains("No group matches"), "{s}");
    // Esc drops the filter at once.
    typed.event(&mut a, key(KeyCode::Esc));
    assert!(groups(&a).query.is_empty() && !groups(&a).editing);
    assert!(text(&draw(&a, 80, 24)).contains("deploy_release"));
}

#[test]
fn a_burst_of_keys_is_applied_once_and_matches_typing() {
    // One key per character, as a terminal without bracketed paste sends
    // a paste: nothing is applied until the burst ends.
    let mut a = app(FIXTURE, Theme::dark(), 80, 24);
    a.update(Action::ShowGroups);
    a.update(Action::StartFilter);
    let mut typed = Typed::default();
    for _ in 0..120_000 {
        typed.event(&mut a, key(KeyCode::Char('x')));
    }
    assert!(groups(&a).query.is_empty(), "applied per key");
    assert!(!typed.is_empty());
    typed.flush(&mut a);
    assert_eq!(groups(&a).query.chars().count(), MAX_QUERY);
    typed.event(&mut a, key(KeyCode::Esc));

    // The same keys typed one by one and as one burst end in the same table.
    let mut one = app(FIXTURE, Theme::dark(), 80, 24);
    one.update(Action::ShowGroups);
    one.update(Action::StartFilter);
    for c in "tckt".chars() {
        one.update(Action::FilterChar(c));
    }
    one.update(Action::FilterConfirm);
    a.update(Action::StartFilter);
    for c in "tckt".chars() {
        typed.event(&mut a, key(KeyCode::Char(c)));
    }
    // Enter applies the burst first, then keeps the filter.
    typed.event(&mut a, key(KeyCode::Enter));
    assert_eq!(groups(&a).query, "tckt");
    assert!(!groups(&a).editing);
    assert_eq!(groups(&a).rows, groups(&one).rows);
    assert_eq!(text(&draw(&a, 80, 24)), text(&draw(&one, 80, 24)));
}

#[test]
fn a_paste_into_a_note_or_a_file_name_is_one_line() {
    let mut a = app_with_case(FIXTURE, Theme::dark(), 160, 48);
    a.update(Action::ShowReview);
    a.update(Action::Decide);
    a.update(Action::Submit);
    let mut typed = Typed::default();
    typed.event(&mut a, Event::Paste("ticket TCK-88\nexists".into()));
    typed.event(&mut a, key(KeyCode::Char('!')));
    typed.flush(&mut a);
    let s = text(&draw(&a, 160, 48));
    assert!(s.contains("ticket TCK-88 exists!"), "{s}");
    // Outside a text field a paste does nothing.
    let mut b = app(FIXTURE, Theme::dark(), 80, 24);
    b.update(Action::ShowGroups);
    let before = text(&draw(&b, 80, 24));
    typed.event(&mut b, Event::Paste("q".into()));
    typed.flush(&mut b);
    assert!(!b.quit);
    assert_eq!(text(&draw(&b, 80, 24)), before);
}

/// `/cat` used to match every group (c…a…t in the actor
/// `signed-process:com.example.agent`); the group whose arguments hold
/// `catalog` is the one it means.
#[test]
fn the_filter_prefers_letters_side_by_side() {
    let mut a = app(FIXTURE, Theme::dark(), 160, 48);
    a.update(Action::ShowGroups);
    let all = groups(&a).rows.len();
    assert!(all >= 3);
    a.update(Action::StartFilter);
    for c in "cat".chars() {
        a.update(Action::FilterChar(c));
    }
    a.update(Action::FilterConfirm);
    let inv = &a.data().unwrap().inv;
    let tools: Vec<&str> = groups(&a)
        .rows
        .iter()
        .map(|&g| inv.group_at(g).unwrap().tool())
        .collect();
    assert_eq!(tools, vec!["deploy_release"]);
    let buf = draw(&a, 160, 48);
    let s = text(&buf);
    assert!(s.contains("1 match "), "{s}");
    assert!(
        s.contains(&format!("{} looser matches left out", all - 1)),
        "{s}"
    );
    // The actor cell is not highlighted letter by letter.
    let row = s
        .lines()
        .position(|l| l.contains("deploy_release") && l.contains("signed-process"))
        .unwrap();
    let col = s.lines().nth(row).unwrap().find("signed-process").unwrap();
    let line: Vec<_> = (0..160u16).map(|x| buf[(x, row as u16)].style()).collect();
    let actor_col = s.lines().nth(row).unwrap()[..col].chars().count();
    let styles: std::collections::HashSet<_> = line[actor_col..actor_col + 14].iter().collect();
    assert_eq!(styles.len(), 1, "the actor is highlighted in part");

    // Highlight-only mode: every row stays, n/N visit the one match.
    a.update(Action::ToggleFilterMode);
    assert_eq!(groups(&a).rows.len(), all);
    assert_eq!(groups(&a).matches.len(), 1);
    a.update(Action::NextMatch);
    let g = groups(&a).selected_group().unwrap();
    assert_eq!(
        a.data().unwrap().inv.group_at(g).unwrap().tool(),
        "deploy_release"
    );

    // With no side-by-side match anywhere, scattered matches still count.
    let mut b = app(FIXTURE, Theme::dark(), 80, 24);
    b.update(Action::ShowGroups);
    b.update(Action::StartFilter);
    for c in "tckt".chars() {
        b.update(Action::FilterChar(c));
    }
    assert_eq!(groups(&b).rows.len(), 1);
    assert_eq!(groups(&b).looser, 0);
}

/// Counts agree in number ("1 call", not "1 calls").
#[test]
fn counts_read_in_the_right_number() {
    let a = app(FIXTURE, Theme::dark(), 160, 48);
    let s = text(&draw(&a, 160, 48));
    assert!(s.contains("2 calls · 1 exec · "), "{s}");
    assert!(s.contains("2 calls · 2 execs · "), "{s}");
    for wrong in ["1 execs", "1 calls", "1 matches", "1 decisions"] {
        assert!(!s.contains(wrong), "{wrong}: {s}");
    }
}

/// A key that does nothing says so on the key line, and the next key
/// clears it; it once did nothing at all, so that a mistyped key looked
/// like a frozen screen.
#[test]
fn an_unknown_key_says_so_until_the_next_key() {
    let mut a = app(FIXTURE, Theme::dark(), 100, 24);
    a.update(Action::ShowGroups);
    let mut typed = Typed::default();
    let keyline = |a: &retrace::tui::App| {
        text(&draw(a, 100, 24))
            .lines()
            .last()
            .unwrap_or("")
            .to_string()
    };
    assert!(!keyline(&a).contains("no such key"));
    typed.event(&mut a, key(KeyCode::Char('x')));
    assert_eq!(keyline(&a).trim(), "▸ x: no such key here, ? for help");
    typed.event(
        &mut a,
        Event::Key(KeyEvent::new(KeyCode::Char('z'), KeyModifiers::CONTROL)),
    );
    assert!(
        keyline(&a).contains("C-z: no such key here"),
        "{}",
        keyline(&a)
    );
    // A modifier alone is not a key.
    typed.event(
        &mut a,
        key(KeyCode::Modifier(
            ratatui::crossterm::event::ModifierKeyCode::LeftShift,
        )),
    );
    assert!(keyline(&a).contains("C-z: no such key here"));
    typed.event(&mut a, key(KeyCode::Char('j')));
    assert!(!keyline(&a).contains("no such key"), "{}", keyline(&a));
    assert!(keyline(&a).contains("[?]"), "{}", keyline(&a));
    // Where the filter is typed, a letter is text, and a key with no use
    // names no help key (there is none there).
    a.update(Action::StartFilter);
    typed.event(&mut a, key(KeyCode::F(5)));
    assert_eq!(keyline(&a).trim(), "▸ F5: no such key here");
}
