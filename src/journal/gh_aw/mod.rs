//! github/gh-aw-mcpg gateway RPC logs (`rpc-messages.jsonl`), docs/formats.md#gh-aw-mcpg.
//!
//! * v1 line: `timestamp`, `direction` (`OUT` to the server, `IN` from it),
//!   `type` (`REQUEST` | `RESPONSE`), `server_id`, `method`, `payload`.
//! * v2 line: `timestamp`, `event` (`rpc_request` | `rpc_response` | others
//!   such as `difc_filtered`), `_schema`, `direction`, `server_id`, `method`,
//!   `error`, `payload`.
//!
//! The log has no execution identity: every `tools/call` request is its own
//! execution, accepted and dispatched when the gateway sent it to the server.
//! Requests carry no JSON-RPC id and responses reuse ids, so answers are
//! paired with requests per `server_id` and per burst (a stretch in which
//! requests to the server overlapped; it ends when the next request finds
//! the server idle), as docs/design.md §2.5 says: by content where an
//! answer names its request ([`Pairing::ByContent`]; see
//! [`super::pairing`]), the rest by position, first in, first out
//! ([`Pairing::ByPosition`] when several requests were in flight, because
//! the server may have answered out of order). A pairing by position is
//! uncertain when the answers its call may have got differ (a failure among
//! successes, a request of the burst that never got an answer), for
//! successes and failures alike, and for a failure in a burst that got an
//! answer with no request in flight (its pairings are off by one): the
//! answer may be another call's, so analysis reads it as ambiguous. A
//! request with no response has an unknown outcome. A
//! response is a failure when it carries a JSON-RPC `error`, `result.isError`
//! is true, the gateway envelope has an `error` field, or a safe-outputs text
//! result says `{"result":"error"}`.

mod burst;

use super::exchange::{self, Call, Dispatch, End};
use super::fields::{missing, parse_object, parse_time, type_name};
use super::pairing;
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{ActionRecord, CallRef, JsonRpcId, OutcomeKind, Record, SourceRef, ToolHint};
use burst::{Burst, BurstAnswer, BurstCall, Counts};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, VecDeque};

/// Reader for gh-aw MCP gateway RPC logs.
pub struct GhAwReader;

/// gh-aw gateway logs: requests and responses, nothing more.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "gh-aw-mcpg",
    description: "gh-aw MCP gateway rpc-messages.jsonl (v1 and v2)",
    noun: "the gh-aw gateway log",
    capabilities: Capabilities {
        execution_identity: false,
        authorization: false,
        delivery: false,
        sessions: false,
        authenticated_actor: false,
    },
    no_chain: "gh-aw-mcpg logs carry no hash chain",
    delivery_layer: None,
    reader: &GhAwReader,
};

/// The actor recorded for gh-aw calls: the log names no caller identity.
pub const GH_AW_ACTOR: &str = "gh-aw:agent";

impl JournalReader for GhAwReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.iter().any(|l| {
            parse_object(l).is_ok_and(|m| {
                m.contains_key("server_id")
                    && m.contains_key("direction")
                    && (matches!(
                        m.get("type").and_then(Value::as_str),
                        Some("REQUEST" | "RESPONSE")
                    ) || m
                        .get("_schema")
                        .and_then(Value::as_str)
                        .is_some_and(|s| s.starts_with("rpc-message/")))
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let mut st = State {
            scope: ctx.journal_scope(),
            pending: HashMap::new(),
            other_events: 0,
            counts: Counts::default(),
            bursts: HashMap::new(),
        };
        for_each_line(ctx, |ctx, line| {
            let m = parse_object(line.bytes)?;
            st.line(ctx, m, line.source, line.bytes)
        })?;
        st.finish(ctx);
        Ok(())
    }
}

/// A request waiting for its answer: a `tools/call` (its place among the
/// calls of its server's burst), or another request, sent at that time,
/// that keeps the queue aligned (the server answers it too).
enum Slot {
    Call(usize),
    Other(DateTime<Utc>),
}

/// The requests to one server waiting for their answers, oldest first.
#[derive(Default)]
struct Waiting {
    queue: VecDeque<Slot>,
    /// The most requests in flight together since the queue was last empty.
    /// When a request is answered, this is the most that were in flight
    /// together while it waited: a request queued behind others saw at
    /// least 2, and the one that found the queue empty started the count.
    /// Above 1, its response may be another's. (Kept in O(1) per request:
    /// updating every waiting request on each push took quadratic time for
    /// large bursts.)
    peak: usize,
}

impl Waiting {
    /// Queues a request.
    fn push(&mut self, slot: Slot) {
        if self.queue.is_empty() {
            self.peak = 0;
        }
        self.queue.push_back(slot);
        self.peak = self.peak.max(self.queue.len());
    }
}

struct State {
    scope: String,
    pending: HashMap<String, Waiting>,
    other_events: u64,
    /// What the bursts' pairings came to, for the load notes.
    counts: Counts,
    /// Per server, the current burst (a stretch in which requests to that
    /// server were in flight without a break).
    bursts: HashMap<String, Burst>,
}

enum Kind {
    Request,
    Response,
    Other,
}

impl State {
    fn line(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        mut m: Map<String, Value>,
        source: SourceRef,
        bytes: &[u8],
    ) -> Result<(), BadLine> {
        let kind = match (
            m.get("type").and_then(Value::as_str),
            m.get("event").and_then(Value::as_str),
        ) {
            (Some("REQUEST"), _) | (_, Some("rpc_request")) => Kind::Request,
            (Some("RESPONSE"), _) | (_, Some("rpc_response")) => Kind::Response,
            (None, Some(_)) => Kind::Other,
            (Some(t), _) => {
                return Err(BadLine::in_field(
                    "type",
                    format!("field `type`: unknown value {t:?}"),
                ));
            }
            (None, None) => return Err("missing field `type` (v1) or `event` (v2)".into()),
        };
        if let Kind::Other = kind {
            self.other_events += 1;
            return Ok(());
        }
        let at = match m.get("timestamp") {
            Some(Value::String(s)) => parse_time("timestamp", s)?,
            Some(v) => {
                return Err(BadLine::in_field(
                    "timestamp",
                    format!("field `timestamp` must be a string, found {}", type_name(v)),
                ));
            }
            None => return Err(missing("timestamp")),
        };
        let server = match m.get("server_id") {
            Some(Value::String(s)) => s.clone(),
            _ => return Err(missing("server_id")),
        };
        let payload = match m.remove("payload") {
            Some(Value::String(s)) => serde_json::from_str(&s).map_err(|e| {
                BadLine::in_field(
                    "payload",
                    format!("field `payload` holds a string that is not JSON: {e}"),
                )
            })?,
            Some(v) => v,
            None => Value::Null,
        };
        match kind {
            Kind::Request => self.request(ctx, &m, payload, server, at, (source, bytes)),
            Kind::Response => {
                self.response(ctx, &m, &payload, &server, at, source);
                Ok(())
            }
            Kind::Other => Ok(()),
        }
    }

    fn request(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: &Map<String, Value>,
        payload: Value,
        server: String,
        at: DateTime<Utc>,
        (source, bytes): (SourceRef, &[u8]),
    ) -> Result<(), BadLine> {
        let method = m
            .get("method")
            .and_then(Value::as_str)
            .or_else(|| payload.get("method").and_then(Value::as_str))
            .unwrap_or("")
            .to_string();
        // A request to an idle server starts a new burst: the last one is
        // complete (an answer with no request in flight still joins it).
        if self.pending.get(&server).is_none_or(|w| w.queue.is_empty())
            && let Some(b) = self.bursts.remove(&server)
        {
            b.flush(ctx, &server, &mut self.counts);
        }
        let queue = self.pending.entry(server.clone()).or_default();
        let burst = self.bursts.entry(server.clone()).or_default();
        if method != "tools/call" {
            queue.push(Slot::Other(at));
            burst.others = true;
            return Ok(());
        }
        let params = payload.get("params").cloned().unwrap_or(Value::Null);
        let Some(tool) = params.get("name").and_then(Value::as_str) else {
            // Keep the queue aligned: the server will still answer it.
            queue.push(Slot::Other(at));
            burst.others = true;
            return Err("tools/call request without `payload.params.name`".into());
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(v) => json!({ "_value": v }),
        };
        let execution_id = format!("gh-aw:{}", ctx.line_id(bytes));
        let action = ActionRecord::from_map(
            json!({
                "actor": GH_AW_ACTOR,
                "tool": tool,
                "channel": "mcp",
                "target": server,
                "method": "tools/call",
                "arguments": arguments,
                "intent_scope": self.scope,
            })
            .as_object()
            .cloned()
            .unwrap_or_default(),
        );
        let call = CallRef {
            call_id: Some(format!("line {}", source.position())),
            session_id: None,
            jsonrpc_id: payload.get("id").and_then(JsonRpcId::from_value),
            mcp_session_id: None,
            transport: Some("gh-aw-mcpg".into()),
        };
        let mut c = Call::new(
            execution_id,
            at,
            call,
            action,
            source,
            Dispatch::WithRequest {
                inferred: Some(
                    "the request line is the gateway sending the call to the server".into(),
                ),
            },
        );
        for k in ["agent_secrecy", "agent_integrity", "_schema"] {
            if let Some(v) = m.get(k) {
                c.extra.insert(k.to_string(), v.clone());
            }
        }
        let arguments = c.action.arguments().map(Value::Object);
        queue.push(Slot::Call(burst.calls.len()));
        burst.calls.push(BurstCall {
            pending: exchange::request(ctx, c),
            sent: at,
            tool: tool.to_string(),
            arguments: arguments.unwrap_or(Value::Null),
        });
        Ok(())
    }

    fn response(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: &Map<String, Value>,
        payload: &Value,
        server: &str,
        at: DateTime<Utc>,
        source: SourceRef,
    ) {
        // A tools/list answer names itself by its content: what the server
        // declares about its tools (docs/design.md §4.5).
        if let Some(tools) = payload.pointer("/result/tools").and_then(Value::as_array) {
            for h in ToolHint::from_tools_list(tools, Some(server), at, source) {
                ctx.emit(Record::ToolHint(h));
            }
        }
        let queue = self.pending.entry(server.to_string()).or_default();
        let in_flight = queue.peak;
        let popped = queue.queue.pop_front();
        let (outcome, error) = classify(m, payload);
        let failure = outcome == OutcomeKind::Failure;
        let burst = self.bursts.entry(server.to_string()).or_default();
        let fifo = match popped {
            Some(Slot::Call(i)) => Some(i),
            Some(Slot::Other(_)) => None,
            None => {
                // One answer too many: the burst's pairings are off by one.
                burst.orphans += 1;
                ctx.note(format!(
                    "line {}: response from {server:?} with no request in flight; the failures answered to {server:?} just before it are read as ambiguous",
                    source.position()
                ));
                None
            }
        };
        let text = burst
            .by_content()
            .then(|| answer_text(payload, error.as_deref()));
        let end = fifo
            .map(|_| End::response(outcome, error, Some(format!("line {}", source.position()))));
        burst.answers.push(BurstAnswer {
            at,
            source,
            failure,
            end,
            fifo,
            in_flight,
            text,
        });
    }

    fn finish(mut self, ctx: &mut ReadCtx<'_>) {
        // In server order, so that a load is the same every time.
        let mut bursts: Vec<_> = self.bursts.into_iter().collect();
        bursts.sort_by(|a, b| a.0.cmp(&b.0));
        for (server, mut b) in bursts {
            if let Some(w) = self.pending.get(&server) {
                b.open_others.extend(w.queue.iter().filter_map(|s| match s {
                    Slot::Other(at) => Some(*at),
                    Slot::Call(_) => None,
                }));
            }
            b.flush(ctx, &server, &mut self.counts);
        }
        let c = &mut self.counts;
        c.unanswered.sort_unstable();
        if !c.unanswered.is_empty() {
            ctx.note(format!(
                "{} tools/call request(s) never got a response (lines {}): outcome unknown",
                c.unanswered.len(),
                c.unanswered
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if c.by_content > 0 {
            ctx.note(format!(
                "{} response(s) paired by content: the answer names its request",
                c.by_content
            ));
        }
        if c.positional > 0 {
            ctx.note(format!(
                "{} response(s) paired by position while several requests were in flight",
                c.positional
            ));
        }
        if c.uncertain > 0 {
            ctx.note(format!(
                "{} of them may be another call's answer (the answers of their burst differ) and are read as ambiguous",
                c.uncertain
            ));
        }
        if self.other_events > 0 {
            ctx.note(format!(
                "{} non-RPC event line(s) (for example difc_filtered) not used",
                self.other_events
            ));
        }
    }
}

/// What an answer says, for pairing by content (at most
/// [`pairing::MAX_TEXT`] bytes): the error of a failure, else the texts of
/// the result's content, else the result as JSON.
fn answer_text(payload: &Value, error: Option<&str>) -> String {
    let mut s = match error {
        Some(e) => e.to_string(),
        None => {
            let result = payload.get("result");
            let texts: Vec<&str> = result
                .and_then(|r| r.get("content"))
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(|b| b.get("text").and_then(Value::as_str))
                        .collect()
                })
                .unwrap_or_default();
            if texts.is_empty() {
                result.map(Value::to_string).unwrap_or_default()
            } else {
                texts.join("\n")
            }
        }
    };
    if s.len() > pairing::MAX_TEXT {
        let mut end = pairing::MAX_TEXT;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
    s
}

/// Success or failure of a response, with the error text when it failed.
fn classify(envelope: &Map<String, Value>, payload: &Value) -> (OutcomeKind, Option<String>) {
    if let Some(err) = envelope.get("error").filter(|v| !v.is_null()) {
        return (OutcomeKind::Failure, Some(text_of(err)));
    }
    if let Some(err) = payload.get("error").filter(|v| !v.is_null()) {
        let msg = err
            .get("message")
            .map(text_of)
            .unwrap_or_else(|| text_of(err));
        return (OutcomeKind::Failure, Some(msg));
    }
    let result = payload.get("result");
    let first_text = result
        .and_then(|r| r.get("content"))
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find_map(|b| b.get("text").and_then(Value::as_str)));
    if result
        .and_then(|r| r.get("isError"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        return (OutcomeKind::Failure, first_text.map(str::to_string));
    }
    // gh-aw safe-outputs report their own errors inside a text result.
    if let Some(Ok(Value::Object(o))) = first_text.map(serde_json::from_str::<Value>)
        && o.get("result").and_then(Value::as_str) == Some("error")
    {
        let msg = o.get("error").map(text_of);
        return (OutcomeKind::Failure, msg);
    }
    (OutcomeKind::Success, None)
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
