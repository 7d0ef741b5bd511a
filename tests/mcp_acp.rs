//! mcp-acp operations and decisions logs read together: the decisions are
//! the authorization evidence of the operations they name.

mod common;

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

/// A wire-log line of a `tools/call` request, of JSON-RPC id `id`, at
/// `time`, writing "hello" to one file (the real wire log's shape).
fn wire_request(time: &str, id: u32) -> String {
    let payload = r#"{"_meta":null,"name":"write_file","arguments":{"path":"/w/report.txt","content":"hello"}}"#;
    serde_json::json!({
        "time": time, "event": "client_request", "source": "client",
        "direction": "ingress", "transport": "streamablehttp",
        "method": "tools/call", "request_id": id.to_string(),
        "session_id": "b33708f6-ca0a-4e31-9ea2-9de7405c9bd3",
        "payload": payload, "payload_type": "CallToolRequestParams",
    })
    .to_string()
}

/// The wire-log line of the proxy's answer to request `id`, at `time`.
fn wire_response(time: &str, id: u32, duration_ms: f64) -> String {
    serde_json::json!({
        "time": time, "event": "proxy_response",
        "source": "proxy", "direction": "egress", "transport": "streamablehttp",
        "method": "tools/call", "duration_ms": duration_ms, "request_id": id.to_string(),
        "session_id": "b33708f6-ca0a-4e31-9ea2-9de7405c9bd3",
    })
    .to_string()
}

/// `retrace investigate` of the journal's only group (the first one, by
/// `groups --all --json`), as text.
fn investigate_first(dir: &std::path::Path, journal: &std::path::Path) -> String {
    let j = journal.to_str().unwrap();
    let g = common::json(&common::run(dir, &["groups", "--all", "--json", j]));
    let group = g[0]["group_id"].as_str().unwrap();
    common::stdout(&common::run(dir, &["investigate", "--group", group, j]))
}

/// The wire log records requests and answers, never the dispatch: a
/// request that got no answer may have reached the backend, so its repeat
/// is a possible duplicate and, alone, it awaits verification; never a
/// safe retry of a call that "never crossed the dispatch boundary".
#[test]
fn an_unanswered_wire_request_may_have_been_dispatched() {
    let d = tempfile::tempdir().unwrap();
    let response = wire_response("2025-12-23T18:27:02.422Z", 6, 1422.0);
    let retried = d.path().join("retried.jsonl");
    std::fs::write(
        &retried,
        format!(
            "{}\n{}\n{response}\n",
            wire_request("2025-12-23T18:25:58.234Z", 5),
            wire_request("2025-12-23T18:27:01.000Z", 6)
        ),
    )
    .unwrap();
    let alone = d.path().join("alone.jsonl");
    std::fs::write(
        &alone,
        format!("{}\n", wire_request("2025-12-23T18:25:58.234Z", 5)),
    )
    .unwrap();

    let groups = |path: &std::path::Path| {
        let o = common::run(
            d.path(),
            &["groups", "--all", "--json", path.to_str().unwrap()],
        );
        common::json(&o)
    };
    let g = groups(&retried);
    assert_eq!(g.as_array().unwrap().len(), 1, "{g:#}");
    assert_eq!(g[0]["verdict"], "possible_duplicate", "{g:#}");
    let g = groups(&alone);
    assert_eq!(g[0]["verdict"], "pending_verification", "{g:#}");

    let text = investigate_first(d.path(), &alone);
    assert!(text.contains("unanswered"), "{text}");
    assert!(
        text.contains("Unknown: the journal records requests and answers, not dispatches"),
        "{text}"
    );
    assert!(!text.contains("nothing was sent"), "{text}");
}

/// Question 2 says when the dispatch it cites is the reader's inference:
/// the wire log records the answer, and the dispatch is placed at it.
#[test]
fn an_inferred_dispatch_is_said_to_be_one() {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join("wire.jsonl");
    std::fs::write(
        &j,
        format!(
            "{}\n{}\n",
            wire_request("2025-12-23T18:25:58.234Z", 5),
            wire_response("2025-12-23T18:26:02.422Z", 5, 4222.0)
        ),
    )
    .unwrap();
    let text = investigate_first(d.path(), &j);
    assert!(
        text.contains(
            "dispatched at 18:26:02.422 (inferred: the log records the answer, not the dispatch"
        ),
        "{text}"
    );
}
