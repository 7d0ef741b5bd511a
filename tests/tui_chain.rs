//! The TUI shows the chain status in its journal list and marks evidence
//! at or after a break (DESIGN.md §6).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use retrace::journal::{JournalSource, NativeChainWriter};
use retrace::query::Investigation;
use retrace::tui::theme::Theme;
use retrace::tui::{Action, App, render};
use serde_json::{Map, Value};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/sample-journals/deploy-release-incident/activity.jsonl"
);

fn screen(app: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| render::render(app, f)).unwrap();
    let buf = t.backend().buffer();
    (0..h)
        .map(|y| (0..w).map(|x| buf[(x, y)].symbol()).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn broken_chain_in_the_journal_list_and_on_evidence() {
    let text = std::fs::read_to_string(SAMPLE).unwrap();
    let mut w = NativeChainWriter::new(Vec::new());
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            w.append(serde_json::from_str::<Map<String, Value>>(l).unwrap())
                .unwrap()
        })
        .collect();
    let mut m: Map<String, Value> = serde_json::from_str(&lines[8]).unwrap();
    m.insert("prev_hash".into(), Value::String("ab".repeat(32)));
    lines[8] = serde_json::to_string(&m).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activity.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let inv = Investigation::open(
        vec![JournalSource::file(&path)],
        None,
        &Default::default(),
        &mut |_| {},
    )
    .unwrap();
    let mut app = App::ready(inv, Theme::default(), Rect::new(0, 0, 160, 48));
    let s = screen(&app, 160, 48);
    assert!(s.contains("chain: BROKEN at line 9"), "{s}");
    app.update(Action::ShowGroups);
    app.update(Action::Open);
    let s = screen(&app, 160, 48);
    assert!(s.contains("unverified"), "{s}");
}
