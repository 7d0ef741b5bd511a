//! Native records as lifecycle events and sessions: `session`, `event`,
//! and seed-shaped `execution` snapshots expanded into the events they
//! imply.

use crate::journal::BadLine;
use crate::journal::fields::{
    FieldMap, FieldResult, Fields, missing, object_value, opt_bool, opt_i64, opt_object, opt_str,
    opt_time, opt_u64, req_str, req_time,
};
use crate::model::{
    Acceptance, ActionRecord, CallRef, Event, EventKind, JsonRpcId, ObservedVia, OutcomeKind,
    OutcomeTexts, ProcessInfo, Record, Recovery, Session, SourceRef,
};
use serde_json::{Map, Value};

/// Fields of the audit chain (docs/design.md §6); verified separately, not kept
/// as unknown fields.
const CHAIN_FIELDS: [&str; 2] = ["prev_hash", "hash"];

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
        "session" => Ok(vec![Record::Session(Box::new(parse_session(m, source)?))]),
        "event" => {
            let (id, ev) = parse_event(m, source)?;
            Ok(vec![Record::Event {
                execution_id: id,
                event: ev,
            }])
        }
        "execution" => parse_snapshot(m, source),
        other => Err(BadLine::in_field(
            "kind",
            format!("unknown `kind` {other:?}; expected \"session\", \"event\" or \"execution\""),
        )),
    }
}

fn parse_session(mut m: Fields, source: SourceRef) -> FieldResult<Session> {
    let session_id = req_str(&mut m, "session_id")?;
    let process = match opt_object(&mut m, "process")? {
        None => None,
        Some(mut p) => Some(ProcessInfo {
            pid: opt_i64(&mut p, "pid").map_err(|e| e.within("process"))?,
            name: opt_str(&mut p, "name").map_err(|e| e.within("process"))?,
            started_at: opt_time(&mut p, "started_at").map_err(|e| e.within("process"))?,
            instance: None,
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
    let mut c = opt_object(m, "call")?.ok_or_else(|| missing("call"))?;
    let jsonrpc_id = match c.remove("jsonrpc_id") {
        None | Some(Value::Null) => None,
        Some(v) => Some(JsonRpcId::from_value(&v).ok_or_else(|| {
            BadLine::in_field(
                "call.jsonrpc_id",
                format!("call.jsonrpc_id must be a string or an integer, found {v}"),
            )
        })?),
    };
    let f = |e: BadLine| e.within("call");
    Ok(CallRef {
        call_id: opt_str(&mut c, "call_id").map_err(f)?,
        session_id: opt_str(&mut c, "session_id").map_err(f)?.map(Into::into),
        jsonrpc_id,
        mcp_session_id: opt_str(&mut c, "mcp_session_id")
            .map_err(f)?
            .map(Into::into),
        transport: opt_str(&mut c, "transport").map_err(f)?.map(Into::into),
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
            // Still its text only when the line is in its canonical form
            // (`super::parse_line`).
            let action = match m.take_raw("action") {
                Some(raw) => match ActionRecord::from_canonical_json(raw.get()) {
                    Some(a) => a,
                    None => ActionRecord::from_map(
                        object_value("action", serde_json::from_str(raw.get()).ok())?
                            .ok_or_else(|| missing("action"))?,
                    ),
                },
                None => ActionRecord::from_map(
                    opt_object(&mut m, "action")?.ok_or_else(|| missing("action"))?,
                ),
            };
            EventKind::Accepted(Box::new(Acceptance {
                call,
                action,
                fingerprint: opt_str(&mut m, "fingerprint")?.as_deref().map(Into::into),
                action_class: opt_str(&mut m, "action_class")?.map(Into::into),
                idempotency_key: opt_str(&mut m, "idempotency_key")?,
            }))
        }
        "attached" => {
            let call = parse_call(&mut m)?;
            let r = req_str(&mut m, "recovery")?;
            let recovery = Recovery::parse(&r).ok_or_else(|| {
                BadLine::in_field("recovery", format!(
                    "field `recovery`: unknown value {r:?}; expected continued, queried_status, \
                     returned_stored_result, returned_rejection or awaiting_review"
                ))
            })?;
            EventKind::Attached {
                call: Box::new(call),
                recovery,
            }
        }
        "authorized" => EventKind::Authorized {
            decision: req_str(&mut m, "decision")?.into(),
            approver: opt_str(&mut m, "approver")?.map(Box::new),
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
            return Err(BadLine::in_field(
                "event",
                format!(
                    "unknown `event` {other:?}; expected accepted, attached, authorized, rejected, \
                     dispatched, dispatch_failed, outcome, delivered, delivery_failed or cancelled"
                ),
            ));
        }
    };
    Ok((
        execution_id,
        Event::new(at, kind, source)
            .with_seq(seq)
            .with_extra(m.into_extra()),
    ))
}

fn parse_status(m: &mut impl FieldMap) -> FieldResult<Option<u16>> {
    opt_u64(m, "target_status")?
        .map(|s| {
            u16::try_from(s)
                .ok()
                .filter(|s| (100..=599).contains(s))
                .ok_or_else(|| {
                    BadLine::in_field(
                        "target_status",
                        format!("field `target_status` must be an HTTP status, found {s}"),
                    )
                })
        })
        .transpose()
}

fn parse_outcome(m: &mut impl FieldMap) -> FieldResult<EventKind> {
    let o = req_str(m, "outcome")?;
    let outcome = OutcomeKind::parse(&o).ok_or_else(|| {
        BadLine::in_field("outcome", format!(
            "field `outcome`: unknown value {o:?}; expected success, failure, not_executed or unknown"
        ))
    })?;
    let observed_via = match opt_str(m, "observed_via")? {
        None => ObservedVia::Response,
        Some(v) => ObservedVia::parse(&v).ok_or_else(|| {
            BadLine::in_field(
                "observed_via",
                format!(
                    "field `observed_via`: unknown value {v:?}; expected response, status_query, \
                 durable_marker or late_response"
                ),
            )
        })?,
    };
    Ok(EventKind::Outcome {
        outcome,
        target_status: parse_status(m)?,
        exit_status: opt_i64(m, "exit_status")?,
        texts: OutcomeTexts::new(opt_str(m, "error")?, opt_str(m, "result_reference")?),
        replayed: opt_bool(m, "replayed")?,
        observed_via,
    })
}

/// Expands a snapshot (`"kind":"execution"`, docs/design.md §3.4) into the events it implies.
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
    // top-level fields as in docs/design.md §3.4.
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
        return Err(BadLine::in_field(
            "state",
            format!(
                "field `state`: unknown value {state:?}; expected one of {}",
                STATES.join(", ")
            ),
        ));
    }
    let past_authorization = !matches!(state.as_str(), "accepted" | "rejected");
    let past_dispatch = !matches!(
        state.as_str(),
        "accepted" | "authorized" | "rejected" | "dispatch_failed"
    );
    if past_dispatch && dispatched_at.is_none() {
        return Err(BadLine::in_field(
            "dispatched_at",
            format!("state {state:?} needs field `dispatched_at`"),
        ));
    }
    let has_outcome = matches!(
        state.as_str(),
        "completed" | "completed_result_not_delivered" | "failed" | "not_executed"
    );
    if has_outcome && completed_at.is_none() {
        return Err(BadLine::in_field(
            "completed_at",
            format!("state {state:?} needs field `completed_at`"),
        ));
    }

    let mut out = Vec::new();
    let mut push = |at, kind| {
        out.push(Record::Event {
            execution_id: execution_id.clone(),
            event: Event::new(at, kind, source),
        })
    };
    push(
        accepted_at,
        EventKind::Accepted(Box::new(Acceptance {
            call,
            action: ActionRecord::from_map(action),
            fingerprint: fingerprint.as_deref().map(Into::into),
            action_class: action_class.map(Into::into),
            idempotency_key: idempotency_key.clone(),
        })),
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
                texts: OutcomeTexts::new(error.clone(), result_reference),
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
        event.set_extra(m.into_extra());
    }
    Ok(out)
}
