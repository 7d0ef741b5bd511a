//! Every real journal in ../shared/real-journals loads, and `verify` says
//! what its README entry says about it. Each test says `SKIPPED <test>:
//! <why>` when the folder is absent, and fails then under `CI=true`
//! (tests/common/skip.rs).

use retrace::journal::chain::{ChainStatus, FailureKind};
use retrace::journal::{Format, JournalSource, LoadOptions, load, verify};
use retrace::model::EventKind;
use std::path::PathBuf;

mod common;

use common::skip::{real_journal as real, real_journals_dir, skip};

fn all_files(test: &str) -> Vec<PathBuf> {
    let root = real_journals_dir();
    let mut out = Vec::new();
    let Ok(dirs) = std::fs::read_dir(&root) else {
        skip(test, &format!("{} is absent", root.display()));
        return out;
    };
    for d in dirs.flatten() {
        if let Ok(files) = std::fs::read_dir(d.path()) {
            for f in files.flatten() {
                if f.path().extension().is_some_and(|e| e == "jsonl") {
                    out.push(f.path());
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_real_journal_loads_and_verifies_as_its_readme_says() {
    for p in all_files("every_real_journal_loads_and_verifies_as_its_readme_says") {
        let j = verify(JournalSource::file(&p), &LoadOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert_eq!(j.bad_line_count, 0, "{}: {:?}", p.display(), j.bad_lines);
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        match (j.format, name.as_str()) {
            (Format::GhAwMcpg, _) => {
                assert!(
                    matches!(j.chain, ChainStatus::NoChain { .. }),
                    "{name}: {:?}",
                    j.chain
                )
            }
            (Format::McpAcp, "nexus-filesystem-operations.jsonl") => {
                // README: the backend id was scrubbed and the hash fields
                // left as they were, so line 1 is the first changed line.
                let f = j.chain.failure().expect("broken");
                assert_eq!(
                    (f.kind, f.line, f.seq),
                    (FailureKind::ChangedLine, 1, Some(1))
                );
            }
            (Format::McpAcp, "core-client-wire-e2e.jsonl") => {
                assert!(matches!(j.chain, ChainStatus::NoChain { .. }))
            }
            (f, n) => panic!("unexpected format {f} for {n}"),
        }
    }
}

#[test]
fn nexus_operations_read_into_calls() {
    let Some(p) = real(
        "nexus_operations_read_into_calls",
        "mcp-acp/nexus-filesystem-operations.jsonl",
    ) else {
        return;
    };
    let (_, model) = load(vec![JournalSource::file(&p)], None, &mut |_| {}).unwrap();
    // README: 22 tools/call records, 5 failures (4 refused by policy or user).
    assert_eq!(model.calls.len(), 22);
    let rejected = model
        .to_executions()
        .into_iter()
        .filter(|x| {
            x.events
                .iter()
                .any(|e| matches!(e.kind, EventKind::Rejected { .. }))
        })
        .count();
    assert_eq!(rejected, 4);
    let failed = model
        .to_executions()
        .into_iter()
        .filter(|x| {
            x.events.iter().any(|e| {
                matches!(
                    e.kind,
                    EventKind::Outcome {
                        outcome: retrace::model::OutcomeKind::Failure,
                        ..
                    }
                )
            })
        })
        .count();
    assert_eq!(failed, 1, "line 5: the backend's access denied");
}

#[test]
fn core_wire_log_pairs_requests_with_answers() {
    let Some(p) = real(
        "core_wire_log_pairs_requests_with_answers",
        "mcp-acp/core-client-wire-e2e.jsonl",
    ) else {
        return;
    };
    let (j, model) = load(vec![JournalSource::file(&p)], None, &mut |_| {}).unwrap();
    // README: 33 tools/call, 18 proxy_response and 15 proxy_error; of the
    // errors 14 are refusals and one a failed backend connection.
    assert_eq!(model.calls.len(), 33);
    let count = |f: &dyn Fn(&EventKind) -> bool| {
        model
            .to_executions()
            .into_iter()
            .flat_map(|x| x.events)
            .filter(|e| f(&e.kind))
            .count()
    };
    assert_eq!(count(&|k| matches!(k, EventKind::Rejected { .. })), 14);
    assert_eq!(count(&|k| matches!(k, EventKind::DispatchFailed { .. })), 1);
    assert_eq!(count(&|k| matches!(k, EventKind::Outcome { .. })), 18);
    assert_eq!(count(&|k| matches!(k, EventKind::Delivered)), 18);
    assert!(j[0].capabilities.delivery);
    assert!(
        j[0].notes
            .iter()
            .all(|n| !n.contains("never got a response")),
        "{:?}",
        j[0].notes
    );
}

/// The gh-aw CI journal's group of three pull_request_read calls: at
/// 80×24 its detail shows all three lanes, whichever pane has the focus.
#[test]
fn three_lanes_fit_at_80x24() {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use retrace::tui::{Action, App, render, theme::Theme};
    let Some(p) = real(
        "three_lanes_fit_at_80x24",
        "gh-aw-mcpg/ci-failure-analysis-repeated-pr-reads.jsonl",
    ) else {
        return;
    };
    let inv =
        retrace::query::Investigation::open(&retrace::query::Setup::new(vec![p]), &mut |_| {})
            .unwrap();
    let mut a = App::ready(inv, Theme::dark(), ratatui::layout::Rect::new(0, 0, 80, 24));
    a.update(Action::ShowGroups);
    a.update(Action::Open);
    let n = match a.current::<retrace::tui::screens::detail::Detail>() {
        Some(st) => st.detail.executions_detail.len(),
        None => panic!("not on the detail"),
    };
    assert_eq!(n, 3);
    for _ in 0..2 {
        let mut t = Terminal::new(TestBackend::new(80, 24)).unwrap();
        t.draw(|f| render::render(&a, f)).unwrap();
        let s: String = t
            .backend()
            .buffer()
            .content()
            .iter()
            .map(|c| c.symbol())
            .collect();
        let detail = &a
            .current::<retrace::tui::screens::detail::Detail>()
            .unwrap()
            .detail;
        for x in &detail.executions_detail {
            let tail = x.execution_id.rsplit(':').next().unwrap();
            let line = format!("{tail} completed");
            assert!(s.contains(&line), "{line} hidden");
        }
        a.update(Action::FocusNext);
    }
}
