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
//! Requests carry no JSON-RPC id and responses reuse ids, so responses are
//! paired with requests by position per `server_id` (first in, first out).
//! When several requests to one server were in flight, the outcome event's
//! pairing is [`Pairing::ByPosition`], because the server may have answered
//! out of order. Outcomes are held per burst (a burst ends when the next
//! request finds the server idle). A failure's pairing is marked uncertain
//! when it was paired by position in a burst whose answers differ, or when
//! its burst got an answer with no request in flight (its pairings are off
//! by one): it may be another call's, so analysis reads it as ambiguous, the
//! cautious side (a success already reads as "acted"). A request with no
//! response has an unknown outcome. A
//! response is a failure when it carries a JSON-RPC `error`, `result.isError`
//! is true, the gateway envelope has an `error` field, or a safe-outputs text
//! result says `{"result":"error"}`.

use super::exchange::{self, Answer, Call, Dispatch, End, Pending};
use super::fields::{missing, parse_object, parse_time, type_name};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{
    ActionRecord, CallRef, JsonRpcId, OutcomeKind, Pairing, Record, SourceRef, ToolHint,
};
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
            positional: 0,
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

/// A request waiting for its answer: a `tools/call`, or another request
/// that keeps the queue aligned (the server answers it too).
enum Slot {
    Call(Pending),
    Other,
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
    positional: u64,
    /// Per server, the responses of the current burst (a stretch in which
    /// requests to that server were in flight without a break).
    bursts: HashMap<String, Burst>,
}

/// The responses of one burst: outcome events are held until the burst
/// ends, because whether a positional pairing can be trusted depends on
/// whether the burst's answers differ.
#[derive(Default)]
struct Burst {
    failures: usize,
    successes: usize,
    /// Answers that came with no request in flight.
    orphans: usize,
    held: Vec<Held>,
}

/// An answer held until its burst ends, with the call it answers.
struct Held {
    call: Pending,
    answer: Answer,
}

impl Burst {
    /// Emits the held answers, marking as uncertain the pairing of the
    /// failures paired by position in a burst whose answers differ, and of
    /// every failure of a burst that had an answer with no request (its
    /// pairings are off).
    fn flush(self, ctx: &mut ReadCtx<'_>) {
        let mixed = self.failures > 0 && self.successes > 0;
        for Held { call, mut answer } in self.held {
            let failure = matches!(
                answer.end,
                End::Outcome {
                    outcome: OutcomeKind::Failure,
                    ..
                }
            );
            let why = if !failure {
                None
            } else if self.orphans > 0 {
                Some(format!(
                    "{} answer(s) to this server came with no request in flight: the pairing is off, and this failure may be another call's",
                    self.orphans
                ))
            } else if mixed && matches!(answer.pairing, Pairing::ByPosition { .. }) {
                Some(format!(
                    "the {} answers to overlapping requests differ ({} failed, {} succeeded): this failure may be another call's",
                    self.failures + self.successes,
                    self.failures,
                    self.successes
                ))
            } else {
                None
            };
            if let Some(why) = why {
                answer.pairing = Pairing::ByPosition {
                    why,
                    uncertain: true,
                };
            }
            call.answer(ctx, answer);
        }
    }
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
            b.flush(ctx);
        }
        let queue = self.pending.entry(server.clone()).or_default();
        if method != "tools/call" {
            queue.push(Slot::Other);
            return Ok(());
        }
        let params = payload.get("params").cloned().unwrap_or(Value::Null);
        let Some(tool) = params.get("name").and_then(Value::as_str) else {
            // Keep the queue aligned: the server will still answer it.
            queue.push(Slot::Other);
            return Err("tools/call request without `payload.params.name`".into());
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(v @ Value::Object(_)) => v.clone(),
            Some(v) => json!({ "_value": v }),
        };
        let execution_id = format!("gh-aw:{}", ctx.line_id(bytes));
        let action = ActionRecord(
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
        queue.push(Slot::Call(exchange::request(ctx, c)));
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
        let burst = self.bursts.entry(server.to_string()).or_default();
        if outcome == OutcomeKind::Failure {
            burst.failures += 1;
        } else {
            burst.successes += 1;
        }
        let Some(p) = popped else {
            // One answer too many: the burst's pairings are off by one.
            burst.orphans += 1;
            ctx.note(format!(
                "line {}: response from {server:?} with no request in flight; the failures answered to {server:?} just before it are read as ambiguous",
                source.position()
            ));
            return;
        };
        if let Slot::Call(call) = p {
            let mut answer = Answer::new(
                at,
                source,
                End::response(outcome, error, Some(format!("line {}", source.position()))),
            );
            if in_flight > 1 {
                self.positional += 1;
                answer.pairing = Pairing::ByPosition {
                    why: format!(
                        "{in_flight} requests to {server} were in flight; the server may have answered out of order"
                    ),
                    uncertain: false,
                };
            }
            burst.held.push(Held { call, answer });
        }
    }

    fn finish(self, ctx: &mut ReadCtx<'_>) {
        // In server order, so that a load is the same every time.
        let mut bursts: Vec<_> = self.bursts.into_iter().collect();
        bursts.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, b) in bursts {
            b.flush(ctx);
        }
        let mut open: Vec<u32> = self
            .pending
            .values()
            .flat_map(|w| &w.queue)
            .filter_map(|p| match p {
                Slot::Call(c) => Some(c.source().position()),
                Slot::Other => None,
            })
            .collect();
        open.sort_unstable();
        if !open.is_empty() {
            ctx.note(format!(
                "{} tools/call request(s) never got a response (lines {}): outcome unknown",
                open.len(),
                open.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.positional > 0 {
            ctx.note(format!(
                "{} response(s) paired by position while several requests were in flight",
                self.positional
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
mod tests {
    use super::*;

    #[test]
    fn classifies_errors() {
        let env = Map::new();
        let ok = json!({"result":{"content":[{"type":"text","text":"{}"}]}});
        assert_eq!(classify(&env, &ok).0, OutcomeKind::Success);
        let tool_err = json!({"result":{"isError":true,"content":[{"type":"text","text":"403"}]}});
        assert_eq!(
            classify(&env, &tool_err),
            (OutcomeKind::Failure, Some("403".into()))
        );
        let rpc_err = json!({"error":{"code":-32602,"message":"unknown tool"}});
        assert_eq!(
            classify(&env, &rpc_err),
            (OutcomeKind::Failure, Some("unknown tool".into()))
        );
        let safe = json!({"result":{"content":[{"type":"text","text":"{\"result\":\"error\",\"error\":\"No changes\"}"}]}});
        assert_eq!(
            classify(&env, &safe),
            (OutcomeKind::Failure, Some("No changes".into()))
        );
        let mut env = Map::new();
        env.insert("error".into(), json!("calling tools/call: empty"));
        assert_eq!(classify(&env, &Value::Null).0, OutcomeKind::Failure);
    }
}
