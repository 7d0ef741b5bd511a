//! mcp-audit-gateway audit logs: the lab's fixture, each outcome on a
//! hand-written line, bad lines, and detection against the other formats.

use super::*;
use crate::journal::{Format, JournalSource, LoadedJournal, detect, load};
use crate::model::{Arguments, EventKind, Execution, Model, OutcomeKind};
use std::path::Path;

/// A real audit log of the lab (tests/lab), copied by make-fixtures.sh.
const LAB: &[u8] = include_bytes!("../../../tests/fixtures/lab/mcp-audit-gateway/audit-log.jsonl");

fn leak(text: String) -> &'static [u8] {
    Box::leak(text.into_bytes().into_boxed_slice())
}

fn read(name: &str, bytes: &'static [u8]) -> (LoadedJournal, Model) {
    let (mut j, model) = load(
        vec![JournalSource::embedded(name, bytes)],
        None,
        &mut |_| {},
    )
    .unwrap_or_else(|e| panic!("{e}"));
    (j.remove(0), model)
}

/// One record as the gateway writes it (`json.dumps` of `AuditEntry`),
/// with `fields` replacing the defaults of an `ok` call.
fn line(fields: serde_json::Value) -> String {
    let mut m = serde_json::json!({
        "id": "00000000-0000-4000-8000-000000000001",
        "timestamp": "2026-12-01T11:00:05.000000+00:00",
        "tenant": "acme",
        "principal_id": "agent-7",
        "role": "agent",
        "method": "tools/call",
        "tool": "billing.charge_card",
        "upstream": "billing",
        "outcome": "ok",
        "denial_reason": null,
        "latency_ms": 1500.0,
        "redaction_counts": {},
        "arguments": {"customer": "cus_1", "amount_cents": 100},
        "error": null
    });
    if let (Some(o), serde_json::Value::Object(f)) = (m.as_object_mut(), fields) {
        o.extend(f);
    }
    m.to_string()
}

fn one(fields: serde_json::Value) -> (LoadedJournal, Model) {
    read("audit-log.jsonl", leak(line(fields) + "\n"))
}

fn names(x: &Execution) -> Vec<&'static str> {
    x.events.iter().map(|e| e.kind.name()).collect()
}

fn only(model: &Model) -> Execution {
    let mut xs = model.to_executions();
    assert_eq!(xs.len(), 1, "{xs:?}");
    xs.remove(0)
}

fn rfc(x: &Execution, i: usize) -> String {
    x.events[i]
        .at
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

#[test]
fn the_lab_log_reads_one_execution_per_tool_call() {
    let (j, model) = read("audit-log.jsonl", LAB);
    assert_eq!(j.format, Format::McpAuditGateway);
    assert!(j.detected);
    assert_eq!(j.bad_line_count, 0, "{:?}", j.bad_lines);
    // 18 lines: 2 tools/list, 16 tools/call.
    assert_eq!(j.lines, 18);
    assert_eq!(model.execution_count(), 16);
    assert!(
        j.notes.iter().any(|n| n.contains("tools/list ×2")),
        "{:?}",
        j.notes
    );
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("1 tools/call record(s) name no tool"))
    );
    assert!(!j.capabilities.delivery);

    let x = |id: &str| {
        // The record's id, in the journal's content namespace.
        model
            .to_executions()
            .into_iter()
            .find(|x| {
                let x = &x.id;
                x.starts_with("mcp-audit-gateway:") && x.ends_with(&format!(":{id}"))
            })
            .unwrap_or_else(|| panic!("no execution {id}"))
    };
    // drop_then_retry, the dropped call: written third, after the retry,
    // begun 5 s before its record; ok, and nothing says it was not delivered.
    let dropped = x("5ca4ea06-e20b-4b56-a515-3ed43215b0a6");
    assert_eq!(names(&dropped), ["accepted", "dispatched", "outcome"]);
    assert_eq!(rfc(&dropped, 0), "2026-12-01T11:00:48.317296Z");
    assert_eq!(rfc(&dropped, 1), rfc(&dropped, 0));
    assert_eq!(rfc(&dropped, 2), "2026-12-01T11:00:53.346258Z");
    assert!(matches!(
        dropped.events[2].kind,
        EventKind::Outcome {
            outcome: OutcomeKind::Success,
            ..
        }
    ));
    assert!(dropped.events[1].facts().inferred.is_some());
    assert!(
        dropped
            .events
            .iter()
            .all(|e| e.facts().layer == Some(Layer::Gateway))
    );
    let (_, call, action) = dropped.accepted().unwrap();
    assert_eq!(
        call.call_id.as_deref(),
        Some("5ca4ea06-e20b-4b56-a515-3ed43215b0a6")
    );
    assert_eq!(action.actor(), Some("lab-agent"));
    assert_eq!(action.tool(), Some("lab-tools.deploy_release"));
    assert_eq!(action.target(), Some("lab-tools"));
    assert_eq!(action.intent_scope(), Some("tenant:lab"));
    assert_eq!(dropped.events[0].facts().arguments, Arguments::Full);
    assert_eq!(
        action.arguments().and_then(|a| a.get("service").cloned()),
        Some(Value::from("catalog"))
    );
    // The retry began after the dropped call and ended before it.
    let retry = x("48fc43fc-c0bc-461c-80b2-568d71e6e6ca");
    assert!(retry.events[0].at > dropped.events[0].at);
    assert!(retry.events[2].at < dropped.events[2].at);

    // target_down_then_retry: refused connection, nothing sent.
    let down = x("91184d6b-4996-4941-9084-4a0df7bdf50f");
    assert_eq!(names(&down), ["accepted", "dispatch_failed"]);

    // gateway_timeout_then_retry: the timeout names no tool.
    let timeout = x("48dc82d9-ac60-49cb-900e-3a3c7e20284a");
    assert_eq!(names(&timeout), ["accepted", "dispatched", "outcome"]);
    // The client sent it at 11:01:04.331664 (truth.json); the record came 15 s later.
    assert_eq!(rfc(&timeout, 0), "2026-12-01T11:01:04.358518Z");
    let (_, _, action) = timeout.accepted().unwrap();
    assert_eq!(action.tool(), Some(UNNAMED_TOOL));
    assert_eq!(action.target(), None);
    assert!(matches!(
        &timeout.events[2].kind,
        EventKind::Outcome { outcome: OutcomeKind::Unknown, texts, .. }
            if texts.error().is_some_and(|e| e.starts_with("TimeoutError('timed out')"))
    ));
    assert!(matches!(
        &timeout.events[0].facts().arguments,
        Arguments::No(_)
    ));
}

#[test]
fn ok_is_an_outcome_with_no_delivery() {
    let (j, model) = one(serde_json::json!({}));
    let x = only(&model);
    assert_eq!(names(&x), ["accepted", "dispatched", "outcome"]);
    assert_eq!(rfc(&x, 0), "2026-12-01T11:00:03.500000Z");
    assert_eq!(rfc(&x, 2), "2026-12-01T11:00:05.000000Z");
    assert_eq!(x.events[2].extra().get("outcome"), Some(&"ok".into()));
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("isError") && n.contains("received")),
        "{:?}",
        j.notes
    );
    let f = x.events[0].facts();
    assert_eq!(f.notes, vec![("tenant", Value::from("acme"))]);
    assert_eq!(x.events[0].extra().get("role"), Some(&"agent".into()));
}

#[test]
fn refusals_are_rejected_before_dispatch() {
    for (outcome, denial, upstream) in [
        (
            "tool_not_found",
            "tool is not visible to this tenant",
            Value::Null,
        ),
        (
            "denied_policy",
            "tenant policy denies 'billing.charge_card'",
            "billing".into(),
        ),
        (
            "rate_limited",
            "tenant rate limit exceeded",
            "billing".into(),
        ),
    ] {
        let (_, model) = one(serde_json::json!({
            "outcome": outcome, "denial_reason": denial, "upstream": upstream, "latency_ms": 0.0
        }));
        let x = only(&model);
        assert_eq!(names(&x), ["accepted", "rejected"], "{outcome}");
        assert_eq!(
            x.events[1].kind,
            EventKind::Rejected {
                reason: format!("{outcome}: {denial}")
            }
        );
    }
}

#[test]
fn a_refused_authentication_has_no_actor_and_no_tool() {
    let (j, model) = one(serde_json::json!({
        "outcome": "unauthenticated", "tenant": null, "role": null, "tool": null,
        "upstream": null, "principal_id": "mallory", "arguments": null, "latency_ms": 0.0,
        "denial_reason": "unknown or missing principal"
    }));
    let x = only(&model);
    assert_eq!(names(&x), ["accepted", "rejected"]);
    let (_, _, action) = x.accepted().unwrap();
    assert_eq!(action.actor(), Some(ANONYMOUS));
    assert_eq!(action.tool(), Some(UNNAMED_TOOL));
    assert_eq!(action.intent_scope(), None);
    assert_eq!(
        x.events[0].extra().get("principal_id"),
        Some(&"mallory".into())
    );
    assert!(j.notes.iter().any(|n| n.contains("name no tool")));
}

#[test]
fn upstream_errors_by_their_text() {
    let (_, model) = one(serde_json::json!({
        "outcome": "upstream_error", "latency_ms": 0.4,
        "error": "upstream 'billing' is unreachable: [Errno 111] Connection refused"
    }));
    assert_eq!(names(&only(&model)), ["accepted", "dispatch_failed"]);

    let (_, model) = one(serde_json::json!({
        "outcome": "upstream_error", "latency_ms": 12.0,
        "error": "upstream 'billing' returned HTTP 503: busy"
    }));
    let x = only(&model);
    assert_eq!(names(&x), ["accepted", "dispatched", "outcome"]);
    assert!(matches!(
        x.events[2].kind,
        EventKind::Outcome {
            outcome: OutcomeKind::Failure,
            target_status: Some(503),
            ..
        }
    ));

    // A connection reset while sending: whether it was sent is unknown,
    // and no dispatch is read into it.
    let (_, model) = one(serde_json::json!({
        "outcome": "upstream_error", "latency_ms": 3.0,
        "error": "upstream 'billing' is unreachable: [Errno 104] Connection reset by peer"
    }));
    let x = only(&model);
    assert_eq!(names(&x), ["accepted", "outcome"]);
    assert!(matches!(
        x.events[1].kind,
        EventKind::Outcome {
            outcome: OutcomeKind::Unknown,
            ..
        }
    ));

    // Resolving the tool failed: no upstream named, nothing sent.
    let (_, model) = one(serde_json::json!({
        "outcome": "upstream_error", "latency_ms": 0.0, "upstream": null,
        "error": "upstream 'billing' is unreachable: timed out"
    }));
    assert_eq!(names(&only(&model)), ["accepted", "dispatch_failed"]);
}

#[test]
fn an_internal_timeout_is_dispatched_with_an_unknown_outcome() {
    let (_, model) = one(serde_json::json!({
        "outcome": "internal_error", "tool": null, "upstream": null, "arguments": null,
        "latency_ms": 0.0, "error": "TimeoutError('timed out')"
    }));
    let x = only(&model);
    assert_eq!(names(&x), ["accepted", "dispatched", "outcome"]);
    // Sent at least the 15 s upstream timeout before the record.
    assert_eq!(rfc(&x, 0), "2026-12-01T10:59:50.000000Z");
    assert_eq!(rfc(&x, 2), "2026-12-01T11:00:05.000000Z");
    assert!(
        x.events[0]
            .facts()
            .notes
            .iter()
            .any(|(k, _)| *k == "started")
    );
    assert!(x.events[1].facts().inferred.as_deref() == Some(outcome::TIMEOUT_WHY));
    // Another internal error may have come before the call was sent.
    let (_, model) = one(serde_json::json!({
        "outcome": "internal_error", "tool": null, "upstream": null, "arguments": null,
        "latency_ms": 0.0, "error": "JSONDecodeError('Expecting value: line 1 column 1 (char 0)')"
    }));
    let x = only(&model);
    assert_eq!(names(&x), ["accepted", "outcome"]);
    assert_eq!(rfc(&x, 0), "2026-12-01T11:00:05.000000Z");
}

#[test]
fn calls_of_unnamed_tools_are_each_their_own_intent() {
    let timeout = |id: &str| {
        line(serde_json::json!({
            "id": id, "outcome": "internal_error", "tool": null, "upstream": null,
            "arguments": null, "latency_ms": 0.0, "error": "TimeoutError('timed out')"
        }))
    };
    let text = format!("{}\n{}\n", timeout("a"), timeout("b"));
    let (_, model) = read("audit-log.jsonl", leak(text));
    assert_eq!(model.execution_count(), 2);
    let action = |i: usize| {
        model
            .execution_at(i)
            .and_then(|x| x.action().cloned())
            .unwrap_or_default()
    };
    assert_ne!(
        action(0),
        action(1),
        "nothing in common but the unknown tool"
    );
    assert_eq!(action(0).get("unnamed_tool_record"), Some("a".into()));
}

#[test]
fn redacted_arguments_are_partly_logged() {
    let (_, model) = one(serde_json::json!({
        "arguments": {"customer": "cus_1", "email": "[REDACTED_EMAIL]"},
        "redaction_counts": {"email": 1}
    }));
    let x = only(&model);
    assert!(matches!(
        &x.events[0].facts().arguments,
        Arguments::Partly(w) if w.contains("email ×1")
    ));
    // redaction_counts counts the result's redactions: shown on the outcome.
    assert_eq!(
        x.events[2].extra().get("redaction_counts"),
        Some(&serde_json::json!({"email": 1}))
    );
    let (_, model) = one(serde_json::json!({"arguments": ["amount_cents", "customer"]}));
    assert!(matches!(
        &only(&model).events[0].facts().arguments,
        Arguments::Partly(w) if w.contains("keys_only")
    ));
    let (_, model) = one(serde_json::json!({ "arguments": null }));
    assert!(matches!(
        &only(&model).events[0].facts().arguments,
        Arguments::No(_)
    ));
}

#[test]
fn a_bad_line_is_reported_with_its_file_and_line_and_the_rest_is_read() {
    let good = line(serde_json::json!({}));
    let second = line(serde_json::json!({"id": "00000000-0000-4000-8000-000000000002"}));
    let text = [
        good.clone(),
        "{\"timestamp\": \"2026-12-01T11:00:06+00:00\", \"method\": \"tools/call\"".to_string(),
        line(serde_json::json!({"id": "x3", "latency_ms": "fast"})),
        line(serde_json::json!({"id": "x4", "timestamp": "yesterday"})),
        line(serde_json::json!({"id": "x5", "latency_ms": -1.0})),
        line(serde_json::json!({"id": "x6", "tool": 7})),
        String::new(),
        second,
    ]
    .join("\n");
    let (j, model) = read("logs/audit-log.jsonl", leak(text));
    assert_eq!(model.execution_count(), 2);
    let bad: Vec<(u32, Option<&str>)> = j
        .bad_lines
        .iter()
        .map(|b| (b.line, b.field.as_deref()))
        .collect();
    assert_eq!(
        bad,
        [
            (2, None),
            (3, Some("latency_ms")),
            (4, Some("timestamp")),
            (5, Some("latency_ms")),
            (6, Some("tool")),
        ]
    );
    assert!(
        j.bad_lines
            .iter()
            .all(|b| b.journal == "logs/audit-log.jsonl")
    );
    assert_eq!(
        j.bad_lines[1].to_string(),
        "logs/audit-log.jsonl:3: field `latency_ms` must be a number of milliseconds, found a string"
    );
}

#[test]
fn a_repeated_record_id_is_still_its_own_call() {
    let l = line(serde_json::json!({}));
    let (j, model) = read("audit-log.jsonl", leak(format!("{l}\n{l}\n")));
    assert_eq!(model.execution_count(), 2);
    assert!(j.notes.iter().any(|n| n.contains("repeat the id")));
}

#[test]
fn detection_tells_it_from_elang2s_mcp_audit_and_every_other_fixture() {
    assert_eq!(
        detect(&JournalSource::embedded("audit-log.jsonl", LAB)).unwrap(),
        Format::McpAuditGateway
    );
    // A lone refused request and a lone tools/list are enough.
    for l in [
        line(serde_json::json!({"outcome": "unauthenticated", "tool": null, "tenant": null})),
        line(serde_json::json!({"method": "tools/list", "tool": null, "arguments": null})),
    ] {
        assert_eq!(
            detect(&JournalSource::embedded("a.jsonl", leak(l))).unwrap(),
            Format::McpAuditGateway
        );
    }
    // With a hash chain a line is not this format's.
    let chained = line(serde_json::json!({"previousHash": "genesis"}));
    assert!(!McpAuditGatewayReader.sniff(&[chained.as_bytes()]));
    // elang2's mcp-audit, and every other fixture of the repository.
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let mut seen = 0;
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let ours = p.ends_with("mcp-audit-gateway/audit-log.jsonl");
            let Ok(f) = detect(&JournalSource::file(&p)) else {
                continue;
            };
            seen += 1;
            if ours {
                assert_eq!(f, Format::McpAuditGateway, "{}", p.display());
            } else {
                assert_ne!(f, Format::McpAuditGateway, "{}", p.display());
            }
            if p.parent().is_some_and(|d| d.ends_with("mcp-audit"))
                && p.extension().is_some_and(|e| e == "jsonl")
            {
                assert_eq!(f, Format::McpAudit, "{}", p.display());
            }
        }
    }
    assert!(seen > 10, "only {seen} fixtures detected");
}
