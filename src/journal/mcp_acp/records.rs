//! mcp-acp records as calls: operations (one record per call), policy
//! decisions (authorization joined to the operation), and wire events
//! (a request line, then its response or error).

use super::{State, WIRE_ACTOR, jsonrpc_id, text};
use crate::journal::exchange::{self, Answer, Call, Delivery, Dispatch, End};
use crate::journal::fields::missing;
use crate::journal::{BadLine, ReadCtx};
use crate::model::{ActionRecord, Arguments, CallRef, Event, EventKind, OutcomeKind, SourceRef};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;

/// The authorization refusal a proxy error stands for, from its message
/// (mcp-acp writes `Policy denied: …`, `User denied: …`,
/// `Approval timeout: …` with JSON-RPC error code -32001).
pub(super) fn rejection(message: &str, code: Option<i64>) -> Option<&'static str> {
    if message.starts_with("Policy denied") {
        Some("policy_denied")
    } else if message.starts_with("User denied") {
        Some("user_denied")
    } else if message.starts_with("Approval timeout") {
        Some("approval_timeout")
    } else if code == Some(-32001) {
        Some("denied")
    } else {
        None
    }
}

/// How the logs show a call's dispatch: they do not. Neither has the
/// dispatch time, so an answer from the backend implies it, placed at the
/// answer (after any approval wait, never before authorization).
fn inferred_dispatch() -> Dispatch {
    Dispatch::Implied {
        why: "the log records the answer, not the dispatch; placed at the answer's time".into(),
        at_request: false,
    }
}

impl State {
    pub(super) fn operation(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        at: DateTime<Utc>,
        source: SourceRef,
    ) -> Result<(), BadLine> {
        if m.get("method").and_then(Value::as_str) != Some("tools/call") {
            self.skipped_methods += 1;
            return Ok(());
        }
        let session = text(m.get("session_id")).unwrap_or_else(|| "unknown".into());
        let request =
            text(m.get("request_id")).unwrap_or_else(|| format!("line{}", source.position()));
        let id = self.unique(format!("acp:{session}:{request}"), source.position());
        let tool = m
            .get("tool_name")
            .and_then(Value::as_str)
            .ok_or("tools/call record without `tool_name`")?;
        let mut arguments = Map::new();
        for k in ["file_path", "source_path", "dest_path"] {
            if let Some(v) = m.get(k).filter(|v| !v.is_null()) {
                arguments.insert(k.to_string(), v.clone());
            }
        }
        let actor = m
            .get("subject")
            .and_then(|s| s.get("subject_id"))
            .and_then(Value::as_str)
            .unwrap_or("mcp-acp:unauthenticated");
        let action = json!({
            "actor": actor,
            "tool": tool,
            "channel": "mcp",
            "target": m.get("backend_id").cloned().unwrap_or(Value::Null),
            "method": "tools/call",
            "arguments": arguments,
            "intent_scope": self.scope,
        });
        let duration_ms = m
            .get("duration")
            .and_then(|d| d.get("duration_ms"))
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let started = crate::journal::started_before(at, duration_ms, "duration.duration_ms")?;
        let call = CallRef {
            call_id: Some(format!("request {request}")),
            session_id: None,
            jsonrpc_id: jsonrpc_id(m.get("request_id")),
            mcp_session_id: Some(session.into()),
            transport: text(m.get("transport")).map(Into::into),
        };
        let mut c = Call::new(
            id,
            started,
            call,
            ActionRecord::from_map(action.as_object().cloned().unwrap_or_default()),
            source,
            inferred_dispatch(),
        );
        c.facts.arguments = Arguments::No("the operations log keeps file paths only".into());
        for k in ["client_id", "config_version", "file_extension"] {
            if let Some(v) = m.get(k) {
                c.extra.insert(k.into(), v.clone());
            }
        }
        let status = m.get("status").and_then(Value::as_str).unwrap_or("");
        let message = text(m.get("message"));
        let code = m.get("error_code").and_then(Value::as_i64);
        let answer = if status == "Success" {
            let body = m
                .get("response_summary")
                .and_then(|r| r.get("body_hash"))
                .and_then(Value::as_str)
                .map(|h| format!("response sha256:{h}"));
            Answer::new(at, source, End::response(OutcomeKind::Success, None, body))
        } else {
            let msg = message.unwrap_or_else(|| format!("status {status}"));
            match rejection(&msg, code) {
                Some(reason) => {
                    let mut a = Answer::new(
                        at,
                        source,
                        End::Rejected {
                            reason: reason.into(),
                        },
                    );
                    a.extra.insert("message".into(), json!(msg));
                    a
                }
                None => {
                    let mut a = Answer::new(
                        at,
                        source,
                        End::response(OutcomeKind::Failure, Some(msg), None),
                    );
                    if let Some(c) = code {
                        a.extra.insert("error_code".into(), json!(c));
                    }
                    a
                }
            }
        };
        exchange::exchange(ctx, c, Some(answer));
        Ok(())
    }

    pub(super) fn decision(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        at: DateTime<Utc>,
        source: SourceRef,
    ) -> Result<(), BadLine> {
        if m.get("mcp_method").and_then(Value::as_str) != Some("tools/call") {
            self.skipped_methods += 1;
            return Ok(());
        }
        self.decisions += 1;
        if self.standalone {
            return Ok(());
        }
        let session = text(m.get("session_id")).unwrap_or_else(|| "unknown".into());
        let request = text(m.get("request_id")).ok_or_else(|| missing("request_id"))?;
        let id = format!("acp:{session}:{request}");
        let decision = m
            .get("decision")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("decision"))?;
        let hitl = m.get("hitl_outcome").and_then(Value::as_str);
        let cached = m.get("hitl_cache_hit").and_then(Value::as_bool) == Some(true);
        let approver = text(m.get("hitl_approver_id"));
        let kind = match (decision, hitl) {
            ("allow", _) => EventKind::Authorized {
                decision: "policy_allow".into(),
                approver: None,
            },
            ("hitl", Some("user_allowed")) => EventKind::Authorized {
                decision: if cached {
                    "session_grant".into()
                } else {
                    "per_use_approval".into()
                },
                approver: approver
                    .or_else(|| cached.then(|| "cached approval".into()))
                    .map(Box::new),
            },
            ("hitl", Some("user_denied")) => EventKind::Rejected {
                reason: "user_denied".into(),
            },
            ("hitl", Some("timeout")) => EventKind::Rejected {
                reason: "approval_timeout".into(),
            },
            ("deny", _) => EventKind::Rejected {
                reason: "policy_denied".into(),
            },
            (d, h) => {
                return Err(BadLine::in_field(
                    "decision",
                    format!(
                        "field `decision`: unknown value {d:?}{}",
                        h.map(|h| format!(" with hitl_outcome {h:?}"))
                            .unwrap_or_default()
                    ),
                ));
            }
        };
        let mut extra = Map::new();
        for k in [
            "final_rule",
            "matched_rules",
            "policy_version",
            "side_effects",
            "tool_name",
            "path",
            "policy_hitl_ms",
            "subject_id",
        ] {
            if let Some(v) = m.get(k).filter(|v| !v.is_null()) {
                extra.insert(k.into(), v.clone());
            }
        }
        ctx.event(&id, Event::new(at, kind, source).with_extra(extra));
        Ok(())
    }

    pub(super) fn wire(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        at: DateTime<Utc>,
        source: SourceRef,
    ) -> Result<(), BadLine> {
        let method = m.get("method").and_then(Value::as_str).unwrap_or("");
        if method != "tools/call" {
            self.skipped_methods += 1;
            return Ok(());
        }
        let session = text(m.get("session_id")).unwrap_or_else(|| "none".into());
        let request = text(m.get("request_id")).unwrap_or_else(|| "none".into());
        let key = (session.clone(), request.clone(), method.to_string());
        match m.get("event").and_then(Value::as_str) {
            Some("client_request") => {
                let payload: Value = match m.get("payload") {
                    Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
                        BadLine::in_field("payload", format!("field `payload` is not JSON: {e}"))
                    })?,
                    Some(v) => v.clone(),
                    None => Value::Null,
                };
                let params = payload.get("params").unwrap_or(&payload);
                let tool = params
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("tools/call request without a tool name in `payload`")?;
                let arguments = match params.get("arguments") {
                    None | Some(Value::Null) => json!({}),
                    Some(v @ Value::Object(_)) => v.clone(),
                    Some(v) => json!({ "_value": v }),
                };
                let id = self.unique(
                    format!("acp-wire:{}:{session}:{request}", self.label),
                    source.position(),
                );
                let action = json!({
                    "actor": WIRE_ACTOR,
                    "tool": tool,
                    "channel": "mcp",
                    "target": "mcp-acp backend",
                    "method": "tools/call",
                    "arguments": arguments,
                    "intent_scope": self.scope,
                });
                let call = CallRef {
                    call_id: Some(format!("line {}", source.position())),
                    session_id: None,
                    jsonrpc_id: jsonrpc_id(m.get("request_id")),
                    mcp_session_id: text(m.get("session_id")).map(Into::into),
                    transport: text(m.get("transport")).map(Into::into),
                };
                let pending = exchange::request(
                    ctx,
                    Call::new(
                        id,
                        at,
                        call,
                        ActionRecord::from_map(action.as_object().cloned().unwrap_or_default()),
                        source,
                        inferred_dispatch(),
                    ),
                );
                self.wire.entry(key).or_default().push_back(pending);
                Ok(())
            }
            Some(ev @ ("proxy_response" | "proxy_error")) => {
                let Some(p) = self.wire.get_mut(&key).and_then(VecDeque::pop_front) else {
                    ctx.note(format!(
                        "line {}: {ev} for session {session} request {request} with no request before it",
                        source.position()
                    ));
                    return Ok(());
                };
                let here = Some(format!("line {}", source.position()));
                let answer = if ev == "proxy_response" {
                    let mut a =
                        Answer::new(at, source, End::response(OutcomeKind::Success, None, here));
                    a.delivery = Delivery::Delivered;
                    a
                } else {
                    let msg = text(m.get("error")).unwrap_or_else(|| "proxy error".into());
                    let code = m.get("error_code").and_then(Value::as_i64);
                    if let Some(reason) = rejection(&msg, code) {
                        let mut a = Answer::new(
                            at,
                            source,
                            End::Rejected {
                                reason: reason.into(),
                            },
                        );
                        a.extra.insert("message".into(), json!(msg));
                        a
                    } else if msg.starts_with("Client failed to connect") {
                        Answer::new(at, source, End::DispatchFailed { error: msg })
                    } else {
                        let mut a = Answer::new(
                            at,
                            source,
                            End::response(OutcomeKind::Failure, Some(msg), here),
                        );
                        if let Some(t) = m.get("error_type") {
                            a.extra.insert("error_type".into(), t.clone());
                        }
                        a.delivery = Delivery::Delivered;
                        a
                    }
                };
                p.answer(ctx, answer);
                Ok(())
            }
            _ => {
                self.other_lines += 1;
                Ok(())
            }
        }
    }
}
