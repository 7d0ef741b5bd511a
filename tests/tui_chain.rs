//! The TUI shows the chain status in its journal list and marks evidence
//! at or after a break (docs/design.md §6).

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use retrace::journal::NativeChainWriter;
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

    let inv =
        Investigation::open(&retrace::query::Setup::new(vec![path.clone()]), &mut |_| {}).unwrap();
    let mut app = App::ready(inv, Theme::default(), Rect::new(0, 0, 160, 48));
    let s = screen(&app, 160, 48);
    assert!(s.contains("chain: BROKEN at line 9"), "{s}");
    app.update(Action::ShowGroups);
    let s = screen(&app, 160, 48);
    assert!(
        s.lines().next().unwrap().contains("[chain BROKEN: 1 of 1]"),
        "{s}"
    );
    app.update(Action::Open);
    // Every screen's header says the chain broke, and evidence after the
    // break is marked at the start of its line, where a narrow pane cannot
    // cut it off (it once came last, and a long path hid it).
    for (w, h) in [(160, 48), (80, 24)] {
        app.update(Action::Resize(w, h));
        let s = screen(&app, w, h);
        assert!(
            s.lines().next().unwrap().contains("[chain BROKEN: 1 of 1]"),
            "{s}"
        );
    }
    // Narrower still, the badge shrinks but never goes (it was once cut to
    // `[chain BRO`).
    for w in [40, 30, 20] {
        app.update(Action::Resize(w, 24));
        let s = screen(&app, w, 24);
        let first = s.lines().next().unwrap();
        assert!(
            first.contains("[BROKEN]") || first.contains("[chain BROKEN: 1 of 1]"),
            "{first}"
        );
    }
    app.update(Action::Resize(160, 48));
    let s = screen(&app, 160, 48);
    let marked: Vec<&str> = s
        .lines()
        .filter(|l| l.contains("activity.jsonl:"))
        .filter(|l| {
            l.contains("│   unverified activity.jsonl:")
                || l.contains("▶ unverified activity.jsonl:")
        })
        .collect();
    assert!(!marked.is_empty(), "{s}");
    // Evidence before the break is not marked: a broken link at line 9
    // leaves line 8 in doubt too (either side may have changed), so line 7
    // is the last verified line.
    assert!(
        s.lines()
            .any(|l| l.contains("   activity.jsonl:7 ") && !l.contains("unverified")),
        "{s}"
    );
    // The execution screen marks its events and the raw line.
    app.update(Action::Open);
    let s = screen(&app, 160, 48);
    assert!(
        s.lines().next().unwrap().contains("[chain BROKEN: 1 of 1]"),
        "{s}"
    );
    // act_01J4K8J7DX7V has events on lines 6 to 10; lines 8 on are unverified.
    assert!(
        s.contains("Events (5) · ✗ 3 unverified (after a chain break)"),
        "{s}"
    );
    // The LINE cell of an unverified event starts with ✗ (a narrow column
    // loses the start of the file name, never the mark or the line number).
    let cell = |n: u32| {
        s.lines()
            .find(|l| l.contains(&format!("jsonl:{n}│")))
            .map(|l| l.split('│').nth(1).unwrap_or("").to_string())
            .unwrap_or_default()
    };
    for n in [8, 9, 10] {
        assert!(cell(n).contains(" ✗"), "line {n}: {s}");
    }
    for n in [6, 7] {
        assert!(
            !cell(n).is_empty() && !cell(n).contains('✗'),
            "line {n}: {s}"
        );
    }
}

const SALLYPORT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sallyport");

/// The TUI loads through the same setup as the CLI: with the audit
/// identity and the signer key, a Sallyport journal's sealed events are
/// decrypted and read, and its row signatures checked (the TUI once dropped
/// both keys and showed an empty journal).
#[test]
fn a_sallyport_journal_opens_with_its_keys() {
    let journal = std::path::PathBuf::from(format!("{SALLYPORT}/audit-000001.jsonl"));
    let with_keys = retrace::query::Setup {
        signer_key: Some(format!("{SALLYPORT}/signer.pub.hex").into()),
        audit_identity: Some(format!("{SALLYPORT}/audit-identity.hex").into()),
        ..retrace::query::Setup::new(vec![journal.clone()])
    };
    let inv = Investigation::open(&with_keys, &mut |_| {}).unwrap();
    let mut app = App::ready(inv, Theme::default(), Rect::new(0, 0, 160, 48));
    let s = screen(&app, 160, 48);
    assert!(s.contains("chain: intact, signed"), "{s}");
    app.update(Action::ShowGroups);
    app.update(Action::ToggleAll);
    let s = screen(&app, 160, 48);
    assert!(
        s.contains("github.create_issue") && s.contains("ssh.exec"),
        "{s}"
    );

    // Without them, the chain is checked but nothing can be read.
    let inv = Investigation::open(&retrace::query::Setup::new(vec![journal]), &mut |_| {}).unwrap();
    let app = App::ready(inv, Theme::default(), Rect::new(0, 0, 160, 48));
    let s = screen(&app, 160, 48);
    assert!(
        !s.contains("intact, signed") && !s.contains("github.create_issue"),
        "{s}"
    );
}

/// The header tells journals without a chain from verified ones: with a
/// broken native journal and a gateway log that has no chain, "1 of 2"
/// alone read as if the other had verified.
#[test]
fn the_header_counts_journals_without_a_chain_apart() {
    let text = std::fs::read_to_string(SAMPLE).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("activity.jsonl");
    // Two lines swapped: the chain breaks.
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.swap(3, 4);
    std::fs::write(&broken, lines.join("\n") + "\n").unwrap();
    let unchained = dir.path().join("gateway.jsonl");
    std::fs::copy(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/lab/mcp-audit-gateway/audit-log.jsonl"
        ),
        &unchained,
    )
    .unwrap();
    for (journals, want) in [
        (
            vec![broken.clone(), unchained.clone()],
            "[chain BROKEN: 1 of 2, 1 without a chain]",
        ),
        (
            vec![SAMPLE.into(), unchained.clone()],
            "[chain intact: 1 of 2, 1 without a chain]",
        ),
    ] {
        let inv = Investigation::open(&retrace::query::Setup::new(journals), &mut |_| {}).unwrap();
        let mut app = App::ready(inv, Theme::default(), Rect::new(0, 0, 160, 48));
        app.update(Action::ShowGroups);
        let s = screen(&app, 160, 48);
        assert!(s.lines().next().unwrap().contains(want), "{want}\n{s}");
    }
}
