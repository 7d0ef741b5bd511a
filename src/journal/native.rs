//! retrace's native JSONL journal (DESIGN.md §3): `session` records,
//! `event` records (one per lifecycle transition) and seed-shaped
//! `execution` snapshot records, which are expanded into the events they
//! imply.

use super::fields::{
    FieldMap, FieldResult, Fields, opt_bool, opt_i64, opt_object, opt_str, opt_time, opt_u64,
    parse_object, req_str, req_time,
};
use super::{JournalError, JournalReader, ReadCtx, for_each_line};
use crate::model::{
    ActionRecord, CallRef, Event, EventKind, JsonRpcId, ObservedVia, OutcomeKind, ProcessInfo,
    Record, Recovery, Session, SourceRef,
};
use serde_json::{Map, Value};

/// Reader for the native format.
pub struct NativeReader;

/// Fields of the audit chain (DESIGN.md §6); verified separately, not kept
/// as unknown fields.
const CHAIN_FIELDS: [&str; 2] = ["prev_hash", "hash"];

/// Every field name the native format defines (DESIGN.md §3), for
/// one-pass parsing; anything else is kept as an unknown field.
const KNOWN: &[&str] = &[
    "kind",
    "seq",
    "at",
    "execution_id",
    "event",
    "call",
    "action",
    "fingerprint",
    "action_class",
    "idempotency_key",
    "recovery",
    "decision",
    "approver",
    "reason",
    "error",
    "outcome",
    "target_status",
    "exit_status",
    "result_reference",
    "replayed",
    "observed_via",
    "by",
    "prev_hash",
    "hash",
    "session_id",
    "actor",
    "process",
    "mcp_session_id",
    "client",
    "authorization",
    "started_at",
    "ended_at",
    "end_reason",
    "state",
    "accepted_at",
    "authorized_at",
    "dispatched_at",
    "completed_at",
    "delivered_at",
    "tool",
    "channel",
    "target",
    "credential_ref",
    "method",
    "arguments",
    "intent_scope",
];

impl JournalReader for NativeReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.iter().take(4).any(|l| {
            parse_object(l).is_ok_and(|m| {
                matches!(
                    m.get("kind").and_then(Value::as_str),
                    Some("session" | "event" | "execution")
                )
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        for_each_line(ctx, |ctx, line| {
            let m = Fields::parse(line.bytes, KNOWN)?;
            for r in parse_record(m, line.source)? {
                ctx.emit(r);
            }
            Ok(())
        })
    }
}

/// Parses one native line into the records it stands for.
///
/// # Errors
/// A message naming the field at fault.
pub fn parse_record(m: impl Into<Fields>, source: SourceRef) -> FieldResult<Vec<Record>> {
    let mut m: Fields = m.into();
    let kind = req_str(&mut m, "kind")?;
    for f in CHAIN_FIELDS {
        m.remove(f);
    }
    match kind.as_str() {
        "session" => Ok(vec![Record::Session(parse_session(m, source)?)]),
        "event" => {
            let (id, ev) = parse_event(m, source)?;
            Ok(vec![Record::Event {
                execution_id: id,
                event: ev,
            }])
        }
        "execution" => parse_snapshot(m, source),
        other => Err(format!(
            "unknown `kind` {other:?}; expected \"session\", \"event\" or \"execution\""
        )),
    }
}

fn parse_session(mut m: Fields, source: SourceRef) -> FieldResult<Session> {
    let session_id = req_str(&mut m, "session_id")?;
    let process = match opt_object(&mut m, "process")? {
        None => None,
        Some(mut p) => Some(ProcessInfo {
            pid: opt_i64(&mut p, "pid").map_err(|e| format!("process: {e}"))?,
            name: opt_str(&mut p, "name").map_err(|e| format!("process: {e}"))?,
            started_at: opt_time(&mut p, "started_at").map_err(|e| format!("process: {e}"))?,
        }),
    };
    Ok(Session {
        session_id,
        actor: opt_str(&mut m, "actor")?,
        process,
        mcp_session_id: opt_str(&mut m, "mcp_session_id")?,
        client: opt_str(&mut m, "client")?,
        authorization: opt_str(&mut m, "authorization")?,
        started_at: opt_time(&mut m, "started_at")?,
        ended_at: opt_time(&mut m, "ended_at")?,
        end_reason: opt_str(&mut m, "end_reason")?,
        extra: m.into_extra(),
        source,
    })
}

fn parse_call(m: &mut impl FieldMap) -> FieldResult<CallRef> {
    let mut c = opt_object(m, "call")?.ok_or("missing field `call`")?;
    let jsonrpc_id =
        match c.remove("jsonrpc_id") {
            None | Some(Value::Null) => None,
            Some(v) => Some(JsonRpcId::from_value(&v).ok_or_else(|| {
                format!("call.jsonrpc_id must be a string or an integer, found {v}")
            })?),
        };
    let f = |e: String| format!("call: {e}");
    Ok(CallRef {
        call_id: opt_str(&mut c, "call_id").map_err(f)?,
        session_id: opt_str(&mut c, "session_id").map_err(f)?,
        jsonrpc_id,
        mcp_session_id: opt_str(&mut c, "mcp_session_id").map_err(f)?,
        transport: opt_str(&mut c, "transport").map_err(f)?,
    })
}

fn parse_event(mut m: Fields, source: SourceRef) -> FieldResult<(String, Event)> {
    let seq = opt_u64(&mut m, "seq")?;
    let at = req_time(&mut m, "at")?;
    let execution_id = req_str(&mut m, "execution_id")?;
    let name = req_str(&mut m, "event")?;
    let kind = match name.as_str() {
        "accepted" => {
            let call = parse_call(&mut m)?;
            let action = opt_object(&mut m, "action")?.ok_or("missing field `action`")?;
            EventKind::Accepted {
                call,
                action: ActionRecord(action),
                fingerprint: opt_str(&mut m, "fingerprint")?,
                action_class: opt_str(&mut m, "action_class")?,
                idempotency_key: opt_str(&mut m, "idempotency_key")?,
            }
        }
        "attached" => {
            let call = parse_call(&mut m)?;
            let r = req_str(&mut m, "recovery")?;
            let recovery = Recovery::parse(&r).ok_or_else(|| {
                format!(
                    "field `recovery`: unknown value {r:?}; expected continued, queried_status, \
                     returned_stored_result, returned_rejection or awaiting_review"
                )
            })?;
            EventKind::Attached { call, recovery }
        }
        "authorized" => EventKind::Authorized {
            decision: req_str(&mut m, "decision")?,
            approver: opt_str(&mut m, "approver")?,
        },
        "rejected" => EventKind::Rejected {
            reason: req_str(&mut m, "reason")?,
        },
        "dispatched" => EventKind::Dispatched {
            idempotency_key: opt_str(&mut m, "idempotency_key")?,
        },
        "dispatch_failed" => EventKind::DispatchFailed {
            error: opt_str(&mut m, "error")?.unwrap_or_default(),
        },
        "outcome" => parse_outcome(&mut m)?,
        "delivered" => EventKind::Delivered,
        "delivery_failed" => EventKind::DeliveryFailed {
            error: opt_str(&mut m, "error")?.unwrap_or_default(),
        },
        "cancelled" => EventKind::Cancelled {
            by: opt_str(&mut m, "by")?.unwrap_or_else(|| "client".into()),
        },
        other => {
            return Err(format!(
                "unknown `event` {other:?}; expected accepted, attached, authorized, rejected, \
                 dispatched, dispatch_failed, outcome, delivered, delivery_failed or cancelled"
            ));
        }
    };
    Ok((
        execution_id,
        Event {
            seq,
            at,
            kind,
            extra: m.into_extra(),
            source,
        },
    ))
}

fn parse_status(m: &mut impl FieldMap) -> FieldResult<Option<u16>> {
    opt_u64(m, "target_status")?
        .map(|s| {
            u16::try_from(s)
                .ok()
                .filter(|s| (100..=599).contains(s))
                .ok_or_else(|| format!("field `target_status` must be an HTTP status, found {s}"))
        })
        .transpose()
}

fn parse_outcome(m: &mut impl FieldMap) -> FieldResult<EventKind> {
    let o = req_str(m, "outcome")?;
    let outcome = OutcomeKind::parse(&o).ok_or_else(|| {
        format!(
            "field `outcome`: unknown value {o:?}; expected success, failure, not_executed or unknown"
        )
    })?;
    let observed_via = match opt_str(m, "observed_via")? {
        None => ObservedVia::Response,
        Some(v) => ObservedVia::parse(&v).ok_or_else(|| {
            format!(
                "field `observed_via`: unknown value {v:?}; expected response, status_query, \
                 durable_marker or late_response"
            )
        })?,
    };
    Ok(EventKind::Outcome {
        outcome,
        target_status: parse_status(m)?,
        exit_status: opt_i64(m, "exit_status")?,
        error: opt_str(m, "error")?,
        result_reference: opt_str(m, "result_reference")?,
        replayed: opt_bool(m, "replayed")?,
        observed_via,
    })
}

/// Expands a seed-shaped snapshot (`"kind":"execution"`, the record in the
/// seed's "The activity record needs states") into the events it implies.
/// States understood: `accepted`, `authorized`, `rejected`, `dispatched`,
/// `dispatch_failed`, `outcome_unknown`, `pending_verification`,
/// `completed`, `completed_result_not_delivered`, `failed`, `not_executed`.
fn parse_snapshot(mut m: Fields, source: SourceRef) -> FieldResult<Vec<Record>> {
    let execution_id = req_str(&mut m, "execution_id")?;
    let state = req_str(&mut m, "state")?;
    let accepted_at = req_time(&mut m, "accepted_at")?;
    let authorized_at = opt_time(&mut m, "authorized_at")?;
    let dispatched_at = opt_time(&mut m, "dispatched_at")?;
    let completed_at = opt_time(&mut m, "completed_at")?;
    let delivered_at = opt_time(&mut m, "delivered_at")?;
    let fingerprint = opt_str(&mut m, "fingerprint")?;
    let target_status = parse_status(&mut m)?;
    let result_reference = opt_str(&mut m, "result_reference")?;
    let idempotency_key = opt_str(&mut m, "idempotency_key")?;
    let action_class = opt_str(&mut m, "action_class")?;
    let reason = opt_str(&mut m, "reason")?;
    let error = opt_str(&mut m, "error")?;
    let call = if m.contains_key("call") {
        parse_call(&mut m)?
    } else {
        CallRef::default()
    };
    // The action record: explicit, or assembled from the snapshot's own
    // top-level fields as in the seed's example.
    let action = match opt_object(&mut m, "action")? {
        Some(a) => a,
        None => {
            let mut a = Map::new();
            for k in [
                "actor",
                "tool",
                "channel",
                "target",
                "credential_ref",
                "method",
                "arguments",
                "intent_scope",
            ] {
                if let Some(v) = m.remove(k) {
                    a.insert(k.to_string(), v);
                }
            }
            a
        }
    };
    if action.get("tool").and_then(Value::as_str).is_none() {
        return Err("missing field `tool` (or `action.tool`)".into());
    }

    const STATES: &[&str] = &[
        "accepted",
        "authorized",
        "rejected",
        "dispatched",
        "dispatch_failed",
        "outcome_unknown",
        "pending_verification",
        "completed",
        "completed_result_not_delivered",
        "failed",
        "not_executed",
    ];
    if !STATES.contains(&state.as_str()) {
        return Err(format!(
            "field `state`: unknown value {state:?}; expected one of {}",
            STATES.join(", ")
        ));
    }
    let past_authorization = !matches!(state.as_str(), "accepted" | "rejected");
    let past_dispatch = !matches!(
        state.as_str(),
        "accepted" | "authorized" | "rejected" | "dispatch_failed"
    );
    if past_dispatch && dispatched_at.is_none() {
        return Err(format!("state {state:?} needs field `dispatched_at`"));
    }
    let has_outcome = matches!(
        state.as_str(),
        "completed" | "completed_result_not_delivered" | "failed" | "not_executed"
    );
    if has_outcome && completed_at.is_none() {
        return Err(format!("state {state:?} needs field `completed_at`"));
    }

    let mut out = Vec::new();
    let mut push = |at, kind| {
        out.push(Record::Event {
            execution_id: execution_id.clone(),
            event: Event {
                seq: None,
                at,
                kind,
                extra: Map::new(),
                source,
            },
        })
    };
    push(
        accepted_at,
        EventKind::Accepted {
            call,
            action: ActionRecord(action),
            fingerprint,
            action_class,
            idempotency_key: idempotency_key.clone(),
        },
    );
    if state == "rejected" {
        push(
            authorized_at.unwrap_or(accepted_at),
            EventKind::Rejected {
                reason: reason.unwrap_or_else(|| "denied".into()),
            },
        );
    } else if past_authorization && let Some(t) = authorized_at {
        push(
            t,
            EventKind::Authorized {
                decision: "unspecified".into(),
                approver: None,
            },
        );
    }
    if state == "dispatch_failed" {
        push(
            dispatched_at.unwrap_or(accepted_at),
            EventKind::DispatchFailed {
                error: error.clone().unwrap_or_default(),
            },
        );
    }
    if let (true, Some(t)) = (past_dispatch, dispatched_at) {
        push(t, EventKind::Dispatched { idempotency_key });
    }
    if let (true, Some(t)) = (has_outcome, completed_at) {
        let outcome = match state.as_str() {
            "failed" => OutcomeKind::Failure,
            "not_executed" => OutcomeKind::NotExecuted,
            _ => OutcomeKind::Success,
        };
        push(
            t,
            EventKind::Outcome {
                outcome,
                target_status,
                exit_status: None,
                error: error.clone(),
                result_reference,
                replayed: false,
                observed_via: ObservedVia::Response,
            },
        );
        if state == "completed_result_not_delivered" {
            push(
                t,
                EventKind::DeliveryFailed {
                    error: error.unwrap_or_else(|| "result not delivered".into()),
                },
            );
        } else if let Some(d) = delivered_at {
            push(d, EventKind::Delivered);
        } else if state == "completed" {
            push(t, EventKind::Delivered);
        }
    }
    // Unknown snapshot fields stay visible on the accepted event.
    if let Some(Record::Event { event, .. }) = out.first_mut() {
        event.extra = m.into_extra();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn src() -> SourceRef {
        SourceRef {
            journal: 0,
            line: 7,
            offset: 0,
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
        assert_eq!(event.seq, Some(1));
        assert_eq!(
            event.extra.keys().collect::<Vec<_>>(),
            vec!["gateway_build"]
        );
        let EventKind::Accepted { call, action, .. } = &event.kind else {
            panic!()
        };
        assert_eq!(call.jsonrpc_id, Some(JsonRpcId::Num(41)));
        assert_eq!(action.tool(), Some("deploy_release"));
    }

    #[test]
    fn bad_fields_are_named() {
        let e = parse(json!({"kind":"event","at":"2026-07-22T14:03:18Z","execution_id":"x","event":"outcome","outcome":"maybe"})).unwrap_err();
        assert!(e.contains("`outcome`") && e.contains("maybe"), "{e}");
        let e = parse(json!({"kind":"event","at":"noon","execution_id":"x","event":"delivered"}))
            .unwrap_err();
        assert!(e.contains("`at`"), "{e}");
        let e = parse(json!({"kind":"nope"})).unwrap_err();
        assert!(e.contains("`kind`"), "{e}");
        let e = parse(json!({"kind":"event","at":"2026-07-22T14:03:18Z","execution_id":"x","event":"outcome","outcome":"success","target_status":9000})).unwrap_err();
        assert!(e.contains("target_status"), "{e}");
    }

    #[test]
    fn seed_snapshot_expands_to_events() {
        // The record from the seed's "The activity record needs states".
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
        assert!(e.contains("completed_at"), "{e}");
    }
}
