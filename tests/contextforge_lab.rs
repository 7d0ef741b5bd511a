//! ContextForge on the lab's fresh output (tests/lab/README.md):
//! `contextforge/mcp.db` and `contextforge/gateway.log` under
//! `RETRACE_LAB_DIR` (default `target/lab`). For every scenario of
//! `truth.json`, the group of its tool gets the verdict the journal can
//! prove, or the most cautious one where it cannot, and never one the
//! truth contradicts (`lab_support::expected`): from the database alone,
//! the log alone, and both together. Skipped with a notice when the lab
//! output is absent; a failure under `CI=true`.

mod lab_support;

use lab_support::{check, groups, lab_dir, scenarios, skip};
use retrace::journal::{JournalSource, load};
use retrace::model::Link;

fn journal(system: &str, name: &str) -> Option<String> {
    let p = lab_dir().join(system).join(name);
    if p.exists() {
        Some(p.display().to_string())
    } else {
        skip(&format!("{} is absent (run tests/lab/run.sh)", p.display()));
        None
    }
}

#[test]
fn every_scenario_gets_its_verdict_from_the_database_the_log_and_both() {
    let Some(scenarios) = scenarios("contextforge") else {
        return;
    };
    let (Some(db), Some(log)) = (
        journal("contextforge", "mcp.db"),
        journal("contextforge", "gateway.log"),
    ) else {
        return;
    };
    assert_eq!(scenarios.len(), 7, "the lab reproduces all seven scenarios");
    for (what, args) in [
        ("the database", vec![db.as_str()]),
        ("the log", vec![log.as_str()]),
        ("the database and the log", vec![db.as_str(), log.as_str()]),
    ] {
        let (found, err) = groups(&args);
        assert!(!err.contains("could not be read"), "{what}: {err}");
        check(what, &scenarios, &found);
    }
}

#[test]
fn the_database_and_the_log_join_into_one_execution_per_request() {
    let (Some(db), Some(log)) = (
        journal("contextforge", "mcp.db"),
        journal("contextforge", "gateway.log"),
    ) else {
        return;
    };
    let (_, alone) = load(vec![JournalSource::file(&log)], None, &mut |_| {}).unwrap();
    let (j, both) = load(
        vec![JournalSource::file(&db), JournalSource::file(&log)],
        None,
        &mut |_| {},
    )
    .unwrap();
    assert!(
        j.iter().all(|j| j.bad_line_count == 0),
        "{:?}",
        j[0].bad_lines
    );
    assert_eq!(both.executions.len(), alone.executions.len());
    for x in &both.executions {
        let journals: std::collections::HashSet<u32> =
            x.events.iter().map(|e| e.source.journal()).collect();
        assert_eq!(journals.len(), 2, "{} is in both journals", x.id);
    }
}

#[test]
fn the_joined_run_links_each_call_to_the_clients_span() {
    let Some(log) = journal("joined", "gateway.log") else {
        return;
    };
    let Some(traces) = journal("joined", "traces.jsonl") else {
        return;
    };
    let traces = std::fs::read_to_string(traces).unwrap();
    let (_, m) = load(vec![JournalSource::file(&log)], None, &mut |_| {}).unwrap();
    assert!(!m.executions.is_empty());
    for x in &m.executions {
        let (acc, _, _) = x.accepted().unwrap();
        let from = acc
            .facts()
            .links
            .iter()
            .find_map(|l| match l {
                Link::CalledFrom { trace, span } => Some((trace, span)),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{}: no traceparent link", x.id));
        // The client's span of the call is in the client's OTLP export.
        assert!(
            traces.contains(&format!("\"spanId\":\"{}\"", from.1))
                || traces.contains(&format!("\"spanId\": \"{}\"", from.1)),
            "{}: span {} not in traces.jsonl",
            x.id,
            from.1
        );
        assert!(traces.contains(from.0.as_str()));
    }
}
