//! mcpproxy activity exports: tool calls into executions, policy decisions
//! as the authorization evidence of the calls they blocked.

use retrace::journal::chain::ChainStatus;
use retrace::journal::{Format, JournalSource, load};
use retrace::model::{EventKind, OutcomeKind};

const EXPORT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/mcpproxy/activity-export.jsonl"
);

#[test]
fn tool_calls_and_policy_decisions() {
    let (j, model) = load(vec![JournalSource::file(EXPORT)], None, &mut |_| {}).unwrap();
    assert_eq!(j[0].format, Format::McpProxy);
    assert!(matches!(j[0].chain, ChainStatus::NoChain { .. }));
    assert_eq!(j[0].bad_line_count, 0, "{:?}", j[0].bad_lines);
    // Five tool calls plus the decision that blocked a call of its own.
    assert_eq!(model.calls.len(), 6);
    let names = |id: &str| -> Vec<&'static str> {
        let x = &model.to_executions()[model.execution_index(id).unwrap()];
        x.events.iter().map(|e| e.kind.name()).collect()
    };
    // The export's ids, in the journal's content namespace (not its name).
    let id = |n: u32| {
        let want = format!(":01JQ000000000000000000000{n}");
        model
            .to_executions()
            .into_iter()
            .map(|x| x.id.clone())
            .find(|x| x.starts_with("mcpproxy:") && x.ends_with(&want))
            .unwrap_or_else(|| panic!("no execution {want}"))
    };
    assert_eq!(names(&id(2)), ["accepted", "dispatched", "outcome"]);
    // The blocked call and its policy decision are one refused execution.
    assert_eq!(names(&id(7)), ["accepted", "rejected"]);
    let x = &model.to_executions()[model.execution_index(&id(7)).unwrap()];
    assert!(matches!(
        &x.events[1].kind,
        EventKind::Rejected { reason } if reason == "blocked: destructive tools are not allowed"
    ));
    assert_eq!(
        x.events[1].source.position(),
        8,
        "the evidence is the decision line"
    );
    // A blocked call with no decision: the record says why.
    let x = &model.to_executions()[model.execution_index(&id(9)).unwrap()];
    assert!(matches!(
        &x.events[1].kind,
        EventKind::Rejected { reason } if reason == "blocked: server is quarantined"
    ));
    // A decision without a call record stands for its own refused call.
    assert_eq!(names(&id(3)), ["accepted", "rejected"]);
    // The timed-out attempt: accepted 30 s before its record. Its error
    // says the proxy stopped waiting: the call went out, what the target
    // did is unknown (not a failure that shows it did not act).
    let x = &model.to_executions()[model.execution_index(&id(5)).unwrap()];
    assert_eq!(x.events[0].at.to_rfc3339(), "2026-03-02T09:03:00+00:00");
    assert!(matches!(
        &x.events[2].kind,
        EventKind::Outcome { outcome: OutcomeKind::Unknown, texts, .. }
            if texts.error() == Some("context deadline exceeded")
    ));
    assert!(
        j[0].notes
            .iter()
            .any(|n| n.contains("internal_tool_call ×1")),
        "{:?}",
        j[0].notes
    );
}
