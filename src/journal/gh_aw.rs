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

use super::exchange::{self, Answer, Call, Dispatch, End, Pending};
use super::fields::{missing, parse_object, parse_time, type_name};
use super::pairing;
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

/// How answers were paired, over the whole log.
#[derive(Default)]
struct Counts {
    /// Paired by position while several requests were in flight.
    positional: u64,
    /// Of those, the ones whose answer may be another call's.
    uncertain: u64,
    /// Paired by content.
    by_content: u64,
    /// Lines of `tools/call` requests that never got an answer.
    unanswered: Vec<u32>,
}

/// One burst of a server: its calls and answers are held until it ends,
/// because which answer is whose is decided over the whole burst
/// (docs/design.md §2.5): by content where an answer names its call, the
/// rest by position, and a pairing by position is uncertain when the
/// answers its call may have got differ.
#[derive(Default)]
struct Burst {
    /// The `tools/call` requests, in the order sent.
    calls: Vec<BurstCall>,
    /// Every answer, in the order received.
    answers: Vec<BurstAnswer>,
    /// Whether requests other than `tools/call` (a `tools/list`) were in
    /// flight: their answers may name any tool, so the burst is paired by
    /// position only.
    others: bool,
    /// Answers that came with no request in flight.
    orphans: usize,
    /// When the other requests still waiting at the end of the journal
    /// were sent: an answer a call got may be theirs.
    open_others: Vec<DateTime<Utc>>,
}

/// A `tools/call` of a burst.
struct BurstCall {
    pending: Pending,
    sent: DateTime<Utc>,
    tool: String,
    arguments: Value,
}

/// An answer of a burst.
struct BurstAnswer {
    at: DateTime<Utc>,
    source: SourceRef,
    failure: bool,
    /// How it ends its call; `None` for the answer to another request or
    /// one with no request in flight.
    end: Option<End>,
    /// The call position gives it (first in, first out over every request).
    fifo: Option<usize>,
    /// The most requests in flight together while that call waited.
    in_flight: usize,
    /// What it says, for pairing by content; `None` when the burst cannot
    /// be paired by content.
    text: Option<String>,
}

impl Burst {
    /// Whether answers can still be paired by content (see [`Burst::others`]
    /// and [`pairing::MAX_BURST`]; with an answer too many, position is
    /// off and content is not tried either).
    fn by_content(&self) -> bool {
        !self.others && self.orphans == 0 && self.calls.len() <= pairing::MAX_BURST
    }

    /// For each answer, its call and, when paired by content, why.
    fn assign(&self) -> Vec<Option<(usize, Option<String>)>> {
        let texts: Option<Vec<&str>> = self.answers.iter().map(|a| a.text.as_deref()).collect();
        match texts {
            Some(texts) if self.by_content() && self.calls.len() > 1 => {
                let requests: Vec<pairing::Request<'_>> = self
                    .calls
                    .iter()
                    .map(|c| pairing::Request {
                        sent: c.sent,
                        tool: &c.tool,
                        arguments: &c.arguments,
                    })
                    .collect();
                let replies: Vec<pairing::Reply<'_>> = self
                    .answers
                    .iter()
                    .zip(texts)
                    .map(|(a, text)| pairing::Reply {
                        at: a.at,
                        failure: a.failure,
                        text,
                    })
                    .collect();
                pairing::pair(&requests, &replies)
                    .into_iter()
                    .map(|p| p.map(|p| (p.request, p.by_content)))
                    .collect()
            }
            _ => self
                .answers
                .iter()
                .map(|a| a.fifo.map(|c| (c, None)))
                .collect(),
        }
    }

    /// Pairs the burst's answers with its calls and emits them; `server`
    /// names the server in the words of a pairing. The calls left without
    /// an answer (at the end of the journal) go to `counts.unanswered`.
    ///
    /// A call paired by position while others were in flight may have got
    /// any answer of the burst not paired by content that came after it
    /// was sent (docs/design.md §2.5); when those differ (a failure among
    /// successes, or a call of the burst never answered), its pairing is
    /// uncertain, whether its own answer is a success or a failure. After
    /// an answer that came with no request in flight, every failure paired
    /// by position is uncertain (the pairings are off by one).
    fn flush(self, ctx: &mut ReadCtx<'_>, server: &str, counts: &mut Counts) {
        let assigned = self.assign();
        let Burst {
            calls,
            answers,
            others: _,
            orphans,
            open_others,
        } = self;
        let n = answers.len();
        let times: Vec<DateTime<Utc>> = answers.iter().map(|a| a.at).collect();
        // From each answer on: the failures and successes not paired by
        // content.
        let (mut failed_from, mut ok_from) = (vec![0usize; n + 1], vec![0usize; n + 1]);
        for j in (0..n).rev() {
            let free = assigned[j].as_ref().is_none_or(|(_, why)| why.is_none());
            failed_from[j] = failed_from[j + 1] + usize::from(free && answers[j].failure);
            ok_from[j] = ok_from[j + 1] + usize::from(free && !answers[j].failure);
        }
        let mut answered = vec![false; calls.len()];
        for (c, _) in assigned.iter().flatten() {
            if let Some(a) = answered.get_mut(*c) {
                *a = true;
            }
        }
        // Calls never answered (the journal ended first): an answer another
        // call got may be theirs.
        let open: Vec<DateTime<Utc>> = calls
            .iter()
            .zip(&answered)
            .filter(|(_, done)| !**done)
            .map(|(c, _)| c.sent)
            .chain(open_others)
            .collect();
        let mut calls: Vec<Option<BurstCall>> = calls.into_iter().map(Some).collect();
        for (a, assigned) in answers.into_iter().zip(assigned) {
            let (Some((c, content)), Some(end)) = (assigned, a.end) else {
                continue;
            };
            let Some(call) = calls.get_mut(c).and_then(Option::take) else {
                continue;
            };
            let mut answer = Answer::new(a.at, a.source, end);
            answer.pairing = match content {
                Some(why) => {
                    counts.by_content += 1;
                    Pairing::ByContent { why }
                }
                None if a.in_flight > 1 || orphans > 0 => {
                    // The answers this call may have got: every one from
                    // the first that came after it was sent.
                    let from = times.partition_point(|t| *t < call.sent);
                    let doubt = Doubt {
                        server,
                        in_flight: a.in_flight,
                        failure: a.failure,
                        orphans,
                        failed: failed_from[from],
                        ok: ok_from[from],
                        open: open.iter().filter(|t| **t <= a.at).count(),
                    };
                    match doubt.why() {
                        Some(why) => {
                            counts.positional += 1;
                            counts.uncertain += 1;
                            Pairing::ByPosition {
                                why,
                                uncertain: true,
                            }
                        }
                        None if a.in_flight > 1 => {
                            counts.positional += 1;
                            Pairing::ByPosition {
                                why: format!(
                                    "{} requests to {server} were in flight; the server may have answered out of order",
                                    a.in_flight
                                ),
                                uncertain: false,
                            }
                        }
                        None => Pairing::ById,
                    }
                }
                None => Pairing::ById,
            };
            call.pending.answer(ctx, answer);
        }
        counts.unanswered.extend(
            calls
                .into_iter()
                .flatten()
                .map(|c| c.pending.source().position()),
        );
    }
}

/// What a call paired by position may have got instead of its answer.
struct Doubt<'a> {
    server: &'a str,
    in_flight: usize,
    /// Whether its own answer is a failure.
    failure: bool,
    /// Answers of the burst that came with no request in flight.
    orphans: usize,
    /// Answers it may have got (not paired by content, after it was sent)
    /// that failed, and that succeeded (its own among them).
    failed: usize,
    ok: usize,
    /// Calls of the burst never answered, sent before its answer came.
    open: usize,
}

impl Doubt<'_> {
    /// Why the answer may be another call's, or `None` when whichever it
    /// got says the same.
    fn why(&self) -> Option<String> {
        if self.orphans > 0 && self.failure {
            return Some(format!(
                "{} answer(s) to this server came with no request in flight: the pairing is off, and this failure may be another call's",
                self.orphans
            ));
        }
        let differ = if self.failure {
            self.ok > 0
        } else {
            self.failed > 0
        };
        if !differ && self.open == 0 {
            return None;
        }
        let never = match self.open {
            0 => String::new(),
            1 => ", and 1 request sent before it never got an answer".to_string(),
            k => format!(", and {k} requests sent before it never got an answer"),
        };
        Some(format!(
            "{} requests to {} were in flight and the answers this call may have got differ ({} failed, {} succeeded{never}): this answer may be another call's",
            self.in_flight, self.server, self.failed, self.ok
        ))
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
        let arguments = c.action.arguments().cloned().map(Value::Object);
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
mod tests {
    use super::*;
    use crate::journal::{JournalSource, LoadedJournal, load};
    use crate::model::{EventKind, Model};

    fn req(ms: u32, tool: &str, args: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-05-21T21:36:{:02}.{:03}Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/call","payload":{{"jsonrpc":"2.0","method":"tools/call","params":{{"arguments":{args},"name":"{tool}"}}}}}}"#,
            ms / 1000,
            ms % 1000
        )
    }

    fn resp(ms: u32, error: bool, text: &str) -> String {
        format!(
            r#"{{"timestamp":"2026-05-21T21:36:{:02}.{:03}Z","direction":"IN","type":"RESPONSE","server_id":"github","payload":{{"id":1,"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":{}}}],"isError":{error}}}}}}}"#,
            ms / 1000,
            ms % 1000,
            serde_json::to_string(text).unwrap()
        )
    }

    fn read(lines: &[String]) -> (LoadedJournal, Model) {
        let text = lines.join("\n") + "\n";
        let (mut j, m) = load(
            vec![JournalSource::memory(
                "rpc-messages.jsonl",
                text.into_bytes(),
            )],
            None,
            &mut |_| {},
        )
        .unwrap();
        (j.remove(0), m)
    }

    /// Per request line: the answer's line and how it was paired
    /// (`id`, `position`, `uncertain`, `content`), or `None` without one.
    fn pairings(m: &Model) -> Vec<(u32, Option<(u32, &'static str)>)> {
        let mut out: Vec<_> = m
            .executions
            .iter()
            .map(|x| {
                let request = x.events[0].source.position();
                let answer = x.events.iter().find_map(|e| match e.kind {
                    EventKind::Outcome { .. } => Some((
                        e.source.position(),
                        match &e.facts().pairing {
                            Pairing::ById => "id",
                            Pairing::ByPosition {
                                uncertain: false, ..
                            } => "position",
                            Pairing::ByPosition { .. } => "uncertain",
                            Pairing::ByContent { .. } => "content",
                        },
                    )),
                    _ => None,
                });
                (request, answer)
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// docs/design.md §2.5: answers that differ within a burst make every
    /// pairing by position uncertain, the successes too.
    #[test]
    fn differing_answers_make_every_positional_pairing_uncertain() {
        let (_, m) = read(&[
            req(1000, "list_releases", r#"{"n":1}"#),
            req(1100, "list_tags", r#"{"n":2}"#),
            resp(1200, true, "403 Forbidden"),
            resp(1300, false, "[]"),
        ]);
        assert_eq!(
            pairings(&m),
            [(1, Some((3, "uncertain"))), (2, Some((4, "uncertain")))]
        );
        // Like answers: position cannot mislead.
        let (j, m) = read(&[
            req(1000, "list_releases", r#"{"n":1}"#),
            req(1100, "list_tags", r#"{"n":2}"#),
            resp(1200, true, "403 Forbidden"),
            resp(1300, true, "403 Forbidden"),
        ]);
        assert_eq!(
            pairings(&m),
            [(1, Some((3, "position"))), (2, Some((4, "position")))]
        );
        assert!(
            j.notes
                .iter()
                .any(|n| n
                    == "2 response(s) paired by position while several requests were in flight"),
            "{:?}",
            j.notes
        );
    }

    /// The error names one call's operation: it pairs by content, and the
    /// successes left are alike, so nothing is uncertain.
    #[test]
    fn an_error_naming_its_call_pairs_by_content() {
        let repo = r#"{"owner":"acme","repo":"widgets"}"#;
        let (j, m) = read(&[
            req(1000, "list_releases", repo),
            req(1010, "get_me", "{}"),
            req(1020, "list_issues", repo),
            resp(
                1100,
                true,
                "failed to get user: GET https://api.example/user: 403",
            ),
            resp(1110, false, "[]"),
            resp(1120, false, r#"{"issues":[]}"#),
        ]);
        assert_eq!(
            pairings(&m),
            [
                (1, Some((5, "position"))),
                (2, Some((4, "content"))),
                (3, Some((6, "position")))
            ]
        );
        assert!(
            j.notes
                .iter()
                .any(|n| n == "1 response(s) paired by content: the answer names its request"),
            "{:?}",
            j.notes
        );
    }

    /// A call sent after the failure came cannot have got it.
    #[test]
    fn a_call_sent_after_an_answer_cannot_have_got_it() {
        let (_, m) = read(&[
            req(1000, "list_releases", r#"{"n":1}"#),
            req(1100, "list_tags", r#"{"n":2}"#),
            resp(1200, true, "403 Forbidden"),
            req(1300, "list_forks", r#"{"n":3}"#),
            resp(1400, false, "[]"),
            resp(1500, false, "[]"),
        ]);
        assert_eq!(
            pairings(&m),
            [
                (1, Some((3, "uncertain"))),
                (2, Some((5, "uncertain"))),
                (4, Some((6, "position")))
            ]
        );
    }

    /// At the end of the journal a call is still waiting: the answer
    /// another call got may be its.
    #[test]
    fn an_answer_may_be_that_of_a_call_never_answered() {
        let (j, m) = read(&[
            req(1000, "list_releases", r#"{"n":1}"#),
            req(1100, "list_tags", r#"{"n":2}"#),
            resp(1200, false, "[]"),
        ]);
        assert_eq!(pairings(&m), [(1, Some((3, "uncertain"))), (2, None)]);
        assert!(
            j.notes
                .iter()
                .any(|n| n.contains("never got a response (lines 2)")),
            "{:?}",
            j.notes
        );
    }

    /// A tools/list in flight: its answer may name any tool, so the burst
    /// goes by position.
    #[test]
    fn a_burst_with_other_requests_is_paired_by_position() {
        let list = r#"{"timestamp":"2026-05-21T21:36:00.900Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/list","payload":{"jsonrpc":"2.0","method":"tools/list"}}"#;
        let (_, m) = read(&[
            list.to_string(),
            req(1000, "list_releases", "{}"),
            req(1010, "get_me", "{}"),
            resp(1100, false, r#"{"tools":[]}"#),
            resp(1110, true, "failed to get user"),
            resp(1120, false, "[]"),
        ]);
        assert_eq!(
            pairings(&m),
            [(2, Some((5, "uncertain"))), (3, Some((6, "uncertain")))]
        );
    }

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
