//! ContextForge on the lab's fresh output (tests/lab/README.md):
//! `contextforge/mcp.db` and `contextforge/gateway.log` under
//! `RETRACE_LAB_DIR` (default `target/lab`). For every scenario of
//! `truth.json`, the group of its tool gets the verdict the journal can
//! prove, or the most cautious one where it cannot, and never one the
//! truth contradicts (`common::lab::CONTEXTFORGE`): from the database alone,
//! the log alone, and both together. Skipped with a notice when the lab
//! output is absent; a failure under `CI=true`.

mod common;

use common::lab;
use retrace::journal::{JournalSource, load};
use retrace::model::Link;

/// A journal of the lab run, or `None` (with a notice) without one.
fn journal(system: &str, name: &str, test: &str) -> Option<String> {
    let dir = lab::lab_dir(test)?;
    lab::system_truth(&dir, system, test)?;
    Some(dir.join(system).join(name).display().to_string())
}

#[test]
fn every_scenario_gets_its_verdict_from_the_database_the_log_and_both() {
    const T: &str = "every_scenario_gets_its_verdict_from_the_database_the_log_and_both";
    let Some(dir) = lab::lab_dir(T) else { return };
    if lab::system_truth(&dir, "contextforge", T).is_none() {
        return;
    }
    let truth = dir.join("truth.json");
    let (db, log) = (
        dir.join("contextforge/mcp.db"),
        dir.join("contextforge/gateway.log"),
    );
    let reproduced = lab::scenarios(&truth, "contextforge")
        .values()
        .filter(|s| s["reproduced"] == true)
        .count();
    assert_eq!(reproduced, 7, "the lab reproduces all seven scenarios");
    for journals in [
        vec![db.clone()],
        vec![log.clone()],
        vec![db.clone(), log.clone()],
    ] {
        let groups = lab::groups(&journals, &[]);
        lab::check("contextforge", &truth, &groups, lab::CONTEXTFORGE);
        lab::one_group_per_scenario("contextforge", &truth, &groups);
    }
}

#[test]
fn the_database_and_the_log_join_into_one_execution_per_request() {
    const T: &str = "the_database_and_the_log_join_into_one_execution_per_request";
    let (Some(db), Some(log)) = (
        journal("contextforge", "mcp.db", T),
        journal("contextforge", "gateway.log", T),
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
    assert_eq!(both.execution_count(), alone.execution_count());
    for x in &both.to_executions() {
        let journals: std::collections::HashSet<retrace::model::JournalId> =
            x.events.iter().map(|e| e.source.journal()).collect();
        assert_eq!(journals.len(), 2, "{} is in both journals", x.id);
    }
}

#[test]
fn the_joined_run_links_each_call_to_the_clients_span() {
    const T: &str = "the_joined_run_links_each_call_to_the_clients_span";
    let Some(log) = journal("joined", "gateway.log", T) else {
        return;
    };
    let Some(traces) = journal("joined", "traces.jsonl", T) else {
        return;
    };
    let traces = std::fs::read_to_string(traces).unwrap();
    let (_, m) = load(vec![JournalSource::file(&log)], None, &mut |_| {}).unwrap();
    assert!(m.execution_count() != 0);
    for x in &m.to_executions() {
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
