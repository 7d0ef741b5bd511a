//! smart-mcp-proxy/mcpproxy-go activity exports (`mcpproxy activity export
//! --output x.jsonl`, optionally `--include-bodies`), docs/formats.md#mcpproxy: one `ActivityRecord` a line, snake_case:
//! `id` (ULID), `type`, `source`, `server_name`, `tool_name`, `arguments`,
//! `response`, `response_truncated`, `status` (`success` | `error` |
//! `blocked`), `error_message`, `duration_ms`, `timestamp`, `session_id`
//! (MCP session), `request_id` (HTTP request id), `metadata`.
//!
//! * `tool_call` records become one execution each (mcpproxy has no
//!   execution identity): accepted at `timestamp - duration_ms`, then
//!   dispatched (inferred: the export does not record it) and an outcome at
//!   `timestamp` (success or failure), or rejected for `blocked`. retrace takes `timestamp` as the time the
//!   record was written, at the end of the call.
//! * `policy_decision` records (calls blocked by policy) are authorization
//!   evidence: they join the `tool_call` of the same session, HTTP request,
//!   server and tool; a decision with no such call is its own refused call.
//! * Other types (`internal_tool_call`, `system_start`, `quarantine_change`,
//!   …) are counted and not used.
//!
//! The export has no hash chain.

use super::exchange::{self, Answer, Call, Dispatch, End};
use super::fields::{missing, parse_object, parse_time};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{ActionRecord, CallRef, Event, EventKind, OutcomeKind, SourceRef};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// Reader for mcpproxy activity exports.
pub struct McpProxyReader;

/// mcpproxy activity exports: one record per call, no caller identity.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "mcpproxy",
    description: "mcpproxy activity export (mcpproxy activity export, JSONL)",
    noun: "the mcpproxy activity export",
    capabilities: Capabilities {
        execution_identity: false,
        authorization: false,
        delivery: false,
        sessions: false,
        authenticated_actor: false,
    },
    no_chain: "mcpproxy activity exports carry no hash chain",
    delivery_layer: None,
    reader: &McpProxyReader,
};

/// The actor of mcpproxy calls: records name the trigger (`mcp`, `cli`,
/// `api`), not an authenticated caller.
pub const MCPPROXY_ACTOR: &str = "mcpproxy:agent";

const TYPES: [&str; 8] = [
    "tool_call",
    "policy_decision",
    "quarantine_change",
    "server_change",
    "system_start",
    "system_stop",
    "internal_tool_call",
    "config_change",
];

impl JournalReader for McpProxyReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.iter().any(|l| {
            parse_object(l).is_ok_and(|m| {
                m.get("type")
                    .and_then(Value::as_str)
                    .is_some_and(|t| TYPES.contains(&t))
                    && m.contains_key("id")
                    && m.contains_key("timestamp")
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let mut st = State {
            scope: ctx.journal_scope(),
            calls: HashMap::new(),
            blocked: HashMap::new(),
            decisions: HashMap::new(),
            other: HashMap::new(),
        };
        for_each_line(ctx, |ctx, line| {
            let m = parse_object(line.bytes)?;
            st.line(ctx, m, line.source, line.bytes)
        })?;
        st.finish(ctx);
        Ok(())
    }
}

/// (session, HTTP request, server, tool): what ties a policy decision to
/// the call it blocked.
type Key = (String, String, String, String);

struct Decision {
    at: DateTime<Utc>,
    reason: String,
    record: Map<String, Value>,
    source: SourceRef,
    /// The execution id a decision with no tool call stands for.
    execution_id: String,
}

struct State {
    scope: String,
    /// Execution ids of tool calls by key.
    calls: HashMap<Key, String>,
    /// Blocked calls whose policy decision has not been seen yet: their own
    /// refusal is emitted at the end unless a decision says why first.
    blocked: HashMap<Key, (String, DateTime<Utc>, String, SourceRef)>,
    /// Decisions waiting for their call.
    decisions: HashMap<Key, Vec<Decision>>,
    other: HashMap<String, u64>,
}

fn s(m: &Map<String, Value>, k: &str) -> String {
    m.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn key(m: &Map<String, Value>) -> Option<Key> {
    let k = (
        s(m, "session_id"),
        s(m, "request_id"),
        s(m, "server_name"),
        s(m, "tool_name"),
    );
    (!k.1.is_empty()).then_some(k)
}
fn block_reason(m: &Map<String, Value>) -> String {
    let meta = m.get("metadata");
    meta.and_then(|x| x.get("reason").or_else(|| x.get("policy")))
        .and_then(Value::as_str)
        .map(|r| format!("blocked: {r}"))
        .or_else(|| {
            m.get("error_message")
                .and_then(Value::as_str)
                .filter(|e| !e.is_empty())
                .map(|e| format!("blocked: {e}"))
        })
        .unwrap_or_else(|| "blocked".into())
}

impl State {
    fn line(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        source: SourceRef,
        bytes: &[u8],
    ) -> Result<(), BadLine> {
        let ty = m
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| missing("type"))?
            .to_string();
        let at = match m.get("timestamp") {
            Some(Value::String(t)) => parse_time("timestamp", t)?,
            _ => return Err(missing("timestamp")),
        };
        match ty.as_str() {
            "tool_call" => self.tool_call(ctx, m, at, (source, bytes)),
            "policy_decision" => {
                let d = Decision {
                    at,
                    reason: block_reason(&m),
                    execution_id: Self::execution_id(ctx, &m, bytes),
                    record: m,
                    source,
                };
                match key(&d.record) {
                    Some(k) => match self.calls.get(&k) {
                        Some(id) => {
                            let id = id.clone();
                            self.blocked.remove(&k);
                            Self::reject(ctx, &id, d);
                        }
                        None => self.decisions.entry(k).or_default().push(d),
                    },
                    None => self.lone_decision(ctx, d)?,
                }
                Ok(())
            }
            other => {
                *self.other.entry(other.to_string()).or_default() += 1;
                Ok(())
            }
        }
    }

    /// The export's `id` in the journal's namespace, else an id from the
    /// line's content (docs/design.md §2.6).
    fn execution_id(ctx: &mut ReadCtx<'_>, m: &Map<String, Value>, bytes: &[u8]) -> String {
        match m.get("id").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => format!("mcpproxy:{}:{id}", ctx.identity),
            _ => format!("mcpproxy:{}", ctx.line_id(bytes)),
        }
    }

    /// The call a record stands for, accepted at `at`. The export records
    /// a call when it ends: the dispatch is implied by its outcome.
    fn call(
        &self,
        m: &Map<String, Value>,
        at: DateTime<Utc>,
        source: SourceRef,
        execution_id: String,
    ) -> Result<Call, BadLine> {
        let tool = m
            .get("tool_name")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .ok_or("tool call without `tool_name`")?;
        let arguments = match m.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(v) => json!({ "_value": v }),
        };
        let action = json!({
            "actor": MCPPROXY_ACTOR,
            "tool": tool,
            "channel": "mcp",
            "target": m.get("server_name").cloned().unwrap_or(Value::Null),
            "method": "tools/call",
            "arguments": arguments,
            "intent_scope": self.scope,
        });
        let call = CallRef {
            call_id: m.get("id").and_then(Value::as_str).map(str::to_string),
            session_id: None,
            jsonrpc_id: None,
            mcp_session_id: m
                .get("session_id")
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(Into::into),
            transport: m
                .get("source")
                .and_then(Value::as_str)
                .map(|s| format!("mcpproxy:{s}").into()),
        };
        let mut c = Call::new(
            execution_id,
            at,
            call,
            ActionRecord::from_map(action.as_object().cloned().unwrap_or_default()),
            source,
            Dispatch::Implied {
                why: "the export records the call when it ends; placed at its end".into(),
                at_request: false,
            },
        );
        for k in ["request_id", "tool_variant", "intent", "metadata"] {
            if let Some(v) = m.get(k).filter(|v| !v.is_null()) {
                c.extra.insert(k.into(), v.clone());
            }
        }
        Ok(c)
    }

    fn tool_call(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        at: DateTime<Utc>,
        (source, bytes): (SourceRef, &[u8]),
    ) -> Result<(), BadLine> {
        let duration = m.get("duration_ms").and_then(Value::as_f64).unwrap_or(0.0);
        let started = super::started_before(at, duration, "duration_ms")?;
        let execution_id = Self::execution_id(ctx, &m, bytes);
        let call = exchange::request(ctx, self.call(&m, started, source, execution_id)?);
        let id = call.execution_id().to_string();
        let status = m.get("status").and_then(Value::as_str).unwrap_or("");
        let error = m
            .get("error_message")
            .and_then(Value::as_str)
            .filter(|e| !e.is_empty())
            .map(str::to_string);
        let k = key(&m);
        let pending = k.as_ref().and_then(|k| {
            self.calls.insert(k.clone(), id.clone());
            self.decisions.remove(k)
        });
        match status {
            "blocked" => {
                // A policy decision for it says why; without one, the record does.
                match pending {
                    Some(ds) if !ds.is_empty() => {
                        for d in ds {
                            Self::reject(ctx, &id, d);
                        }
                    }
                    _ => match k {
                        Some(k) => {
                            self.blocked
                                .insert(k, (id.clone(), at, block_reason(&m), source));
                        }
                        None => call.answer(
                            ctx,
                            Answer::new(
                                at,
                                source,
                                End::Rejected {
                                    reason: block_reason(&m),
                                },
                            ),
                        ),
                    },
                }
            }
            "success" | "error" => {
                for d in pending.into_iter().flatten() {
                    Self::reject(ctx, &id, d);
                }
                let outcome = if status == "success" {
                    OutcomeKind::Success
                } else {
                    OutcomeKind::Failure
                };
                let result = m
                    .get("response")
                    .and_then(Value::as_str)
                    .filter(|r| !r.is_empty())
                    .map(|_| format!("response in line {}", source.position()));
                let mut a = Answer::new(at, source, End::response(outcome, error, result));
                if let Some(t) = m.get("response_truncated") {
                    a.extra.insert("response_truncated".into(), t.clone());
                }
                call.answer(ctx, a);
            }
            other => {
                return Err(BadLine::in_field(
                    "status",
                    format!(
                        "field `status`: unknown value {other:?}; expected success, error or blocked"
                    ),
                ));
            }
        }
        Ok(())
    }

    fn reject(ctx: &mut ReadCtx<'_>, id: &str, d: Decision) {
        let mut extra = Map::new();
        extra.insert("policy_decision".into(), json!(d.record.get("id")));
        if let Some(meta) = d.record.get("metadata") {
            extra.insert("metadata".into(), meta.clone());
        }
        ctx.event(
            id,
            Event::new(d.at, EventKind::Rejected { reason: d.reason }, d.source).with_extra(extra),
        );
    }

    fn lone_decision(&mut self, ctx: &mut ReadCtx<'_>, d: Decision) -> Result<(), BadLine> {
        let call = exchange::request(
            ctx,
            self.call(&d.record, d.at, d.source, d.execution_id.clone())?,
        );
        Self::reject(ctx, call.execution_id(), d);
        Ok(())
    }

    fn finish(mut self, ctx: &mut ReadCtx<'_>) {
        let mut blocked: Vec<_> = self.blocked.drain().map(|(_, v)| v).collect();
        blocked.sort_by_key(|b| b.3.position());
        for (id, at, reason, source) in blocked {
            ctx.event(&id, Event::new(at, EventKind::Rejected { reason }, source));
        }
        let mut waiting: Vec<Decision> = self.decisions.drain().flat_map(|(_, v)| v).collect();
        waiting.sort_by_key(|d| d.source.position());
        for d in waiting {
            let line = d.source.position();
            if let Err(e) = self.lone_decision(ctx, d) {
                ctx.bad_line(line, e);
            }
        }
        if !self.other.is_empty() {
            let mut o: Vec<String> = self
                .other
                .iter()
                .map(|(k, v)| format!("{k} ×{v}"))
                .collect();
            o.sort();
            ctx.note(format!("records not used: {}", o.join(", ")));
        }
    }
}
