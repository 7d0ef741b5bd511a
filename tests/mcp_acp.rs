//! mcp-acp operations and decisions logs read together: the decisions are
//! the authorization evidence of the operations they name.

use retrace::journal::{JournalSource, load};
use retrace::model::{EventKind, OutcomeKind};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp-acp");

fn names(x: &retrace::model::Execution) -> Vec<&'static str> {
    x.events.iter().map(|e| e.kind.name()).collect()
}

#[test]
fn decisions_join_the_operations_they_authorized() {
    let (journals, model) = load(
        vec![
            JournalSource::file(format!("{DIR}/operations.jsonl")),
            JournalSource::file(format!("{DIR}/decisions.jsonl")),
        ],
        None,
        &mut |_| {},
    )
    .unwrap();
    assert!(journals.iter().all(|j| j.chain.is_intact()), "{journals:?}");
    let all = model.to_executions();
    let x = |id: &str| &all[model.execution_index(id).unwrap()];

    let first = x("acp:s-1:1");
    assert_eq!(
        names(first),
        ["accepted", "authorized", "dispatched", "outcome"]
    );
    assert!(matches!(
        &first.events[1].kind,
        EventKind::Authorized { decision, .. } if &**decision == "policy_allow"
    ));
    // The human approval came 30 s after the request; the dispatch after it.
    let second = x("acp:s-1:2");
    assert_eq!(
        names(second),
        ["accepted", "authorized", "dispatched", "outcome"]
    );
    assert!(matches!(
        &second.events[1].kind,
        EventKind::Authorized { decision, approver: Some(a) }
            if &**decision == "per_use_approval" && &**a == "auth0|user-1"
    ));
    let accepted = second.accepted().unwrap().2;
    assert_eq!(accepted.tool(), Some("update_file"));
    assert_eq!(accepted.actor(), Some("auth0|user-1"));
    assert_eq!(
        accepted.arguments().unwrap()["file_path"],
        "/srv/wörk/Dashboard.tsx"
    );

    let refused = x("acp:s-1:3");
    assert!(
        refused
            .events
            .iter()
            .all(|e| !matches!(e.kind, EventKind::Dispatched { .. }))
    );
    assert!(
        refused.events.iter().any(
            |e| matches!(&e.kind, EventKind::Rejected { reason } if reason == "policy_denied")
        )
    );

    // A failure the backend reported: dispatched, then failed.
    let failed = x("acp:s-1:4");
    assert!(failed.events.iter().any(|e| matches!(
        e.kind,
        EventKind::Outcome {
            outcome: OutcomeKind::Failure,
            ..
        }
    )));
    // initialize is not a tool call.
    assert!(model.execution_index("acp:s-1:0").is_none());
}

#[test]
fn a_decisions_log_alone_holds_no_call() {
    // A decision says nothing of dispatch: alone, it must not become a
    // call that looks undispatched (or one with no action at all).
    let (journals, model) = load(
        vec![JournalSource::file(format!("{DIR}/decisions.jsonl"))],
        None,
        &mut |_| {},
    )
    .unwrap();
    assert!(journals[0].chain.is_intact());
    assert_eq!(model.execution_count(), 0);
    assert!(
        journals[0]
            .notes
            .iter()
            .any(|n| n.contains("load the operations log with it")),
        "{:?}",
        journals[0].notes
    );
}

/// The operations log keeps no tool arguments: every group of its calls
/// says so in plain words (the finding once read "arguments_not_logged: no: …").
#[test]
fn groups_of_an_operations_log_say_the_arguments_are_not_logged() {
    let inv = retrace::query::Investigation::open(
        &retrace::query::Setup::new(vec![format!("{DIR}/operations.jsonl").into()]),
        &mut |_| {},
    )
    .unwrap();
    assert!(inv.group_count() > 0);
    for g in inv.all_groups() {
        let d = g.detail();
        let f = d
            .findings
            .iter()
            .find(|f| f.kind == "arguments_not_logged")
            .unwrap_or_else(|| panic!("{:#?}", d.findings));
        assert!(
            f.detail.starts_with(
                "the journal does not log tool arguments (the operations log keeps file paths only)"
            ),
            "{}",
            f.detail
        );
    }
}
