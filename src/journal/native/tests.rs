//! Native records: unknown fields kept, bad fields named, snapshots expanded.

use super::*;
use crate::model::{EventKind, JsonRpcId, SourceRef};
use serde_json::json;

fn src() -> SourceRef {
    SourceRef::Line {
        journal: 0,
        line: 7,
        offset: crate::model::LineOffset::new(0),
        len: 0,
    }
}

fn parse(v: Value) -> FieldResult<Vec<Record>> {
    parse_record(v.as_object().cloned().unwrap(), src())
}

#[test]
fn accepted_event_keeps_unknown_fields() {
    let r = parse(json!({
        "kind":"event","seq":1,"at":"2026-07-22T14:03:18Z","execution_id":"act_1",
        "event":"accepted","call":{"call_id":"c1","jsonrpc_id":41,"session_id":"ses_1"},
        "action":{"tool":"deploy_release","actor":"a","arguments":{"service":"catalog"}},
        "fingerprint":"sha256:00","gateway_build":"7.1","hash":"ab","prev_hash":"cd"
    }))
    .unwrap();
    let Record::Event {
        execution_id,
        event,
    } = &r[0]
    else {
        panic!()
    };
    assert_eq!(execution_id, "act_1");
    assert_eq!(event.seq(), Some(1));
    assert_eq!(
        event.extra().keys().collect::<Vec<_>>(),
        vec!["gateway_build"]
    );
    let EventKind::Accepted(a) = &event.kind else {
        panic!()
    };
    let (call, action) = (&a.call, &a.action);
    assert_eq!(call.jsonrpc_id, Some(JsonRpcId::Num(41)));
    assert_eq!(action.tool(), Some("deploy_release"));
}

#[test]
fn bad_fields_are_named() {
    let e = parse(json!({"kind":"event","at":"2026-07-22T14:03:18Z","execution_id":"x","event":"outcome","outcome":"maybe"})).unwrap_err();
    assert!(
        e.message.contains("`outcome`") && e.message.contains("maybe"),
        "{e}"
    );
    assert_eq!(e.field.as_deref(), Some("outcome"));
    let e = parse(json!({"kind":"event","at":"noon","execution_id":"x","event":"delivered"}))
        .unwrap_err();
    assert!(e.message.contains("`at`"), "{e}");
    assert_eq!(e.field.as_deref(), Some("at"));
    let e = parse(json!({"kind":"nope"})).unwrap_err();
    assert!(e.message.contains("`kind`"), "{e}");
    assert_eq!(e.field.as_deref(), Some("kind"));
    let e = parse(json!({"kind":"event","at":"2026-07-22T14:03:18Z","execution_id":"x","event":"outcome","outcome":"success","target_status":9000})).unwrap_err();
    assert!(e.message.contains("target_status"), "{e}");
    assert_eq!(e.field.as_deref(), Some("target_status"));
    let e = parse(json!({"kind":"session","session_id":"s","process":{"pid":"x"}})).unwrap_err();
    assert_eq!(
        (e.message.as_str(), e.field.as_deref()),
        (
            "process: field `pid` must be an integer, found \"x\"",
            Some("process.pid")
        )
    );
}

#[test]
fn seed_snapshot_expands_to_events() {
    // The snapshot record of docs/design.md §3.4.
    let r = parse(json!({
        "kind":"execution",
        "execution_id": "act_01J4K8J7DX7V",
        "fingerprint": "hmac-sha256:4a1e",
        "tool": "deploy_release",
        "actor": "signed-process:com.example.agent",
        "target": "deploy-api.internal.example/releases",
        "state": "completed_result_not_delivered",
        "accepted_at": "2026-07-22T14:03:18Z",
        "dispatched_at": "2026-07-22T14:03:19Z",
        "completed_at": "2026-07-22T14:03:25Z",
        "target_status": 201,
        "result_reference": "result_01J4K8JFM2"
    }))
    .unwrap();
    let names: Vec<_> = r
        .iter()
        .map(|r| match r {
            Record::Event { event, .. } => event.kind.name(),
            Record::Session(_) => "session",
            Record::ToolHint(_) => "tool_hint",
        })
        .collect();
    assert_eq!(
        names,
        ["accepted", "dispatched", "outcome", "delivery_failed"]
    );
}

#[test]
fn snapshot_state_needs_its_times() {
    let e = parse(
        json!({"kind":"execution","execution_id":"x","tool":"t","state":"completed",
        "accepted_at":"2026-07-22T14:03:18Z","dispatched_at":"2026-07-22T14:03:19Z"}),
    )
    .unwrap_err();
    assert!(e.message.contains("completed_at"), "{e}");
    assert_eq!(e.field.as_deref(), Some("completed_at"));
}
