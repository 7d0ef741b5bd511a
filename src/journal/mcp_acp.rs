//! mcp-acp (alandra-v/mcp-acp-nexus and mcp-acp-core) logs, research notes
//! `journal-formats.md` §2.3:
//!
//! * `audit/operations.jsonl`: one hash-chained record per completed
//!   operation (`session_id`, `request_id`, `method`, `status`, `tool_name`,
//!   `file_path`, `message`, `error_code`, `duration.duration_ms`,
//!   `subject.subject_id`, `backend_id`). Tool arguments are not logged:
//!   only file paths.
//! * `audit/decisions.jsonl`: one hash-chained policy decision per request
//!   (`event: "policy_decision"`, `decision` allow | deny | hitl,
//!   `hitl_outcome`, `hitl_approver_id`, `final_rule`, `request_id`,
//!   `session_id`). Read as authorization evidence for the operations of
//!   the same (`session_id`, `request_id`) when an mcp-acp log is loaded
//!   with it; alone it holds no call (a decision says nothing of dispatch),
//!   so its chain is verified and its decisions are only counted.
//! * `debug/client_wire.jsonl`: one line per wire event (`client_request`
//!   with the JSON-RPC params as a string `payload`, `proxy_response`,
//!   `proxy_error`), paired by (`session_id`, `request_id`, `method`).
//!
//! None of them has an execution identity: every `tools/call` is its own
//! execution. Operations and decisions records name their execution
//! `acp:<session_id>:<request_id>`, so the two logs merge into one
//! lifecycle; wire events name theirs after the wire log.
//!
//! Chain (operations, decisions and the other audit logs): `entry_hash =
//! sha256(json.dumps(entry without entry_hash, sort_keys=True,
//! separators=(",", ":")))` with Python's default ASCII escaping, first
//! `prev_hash = "GENESIS"`, `sequence` contiguous (mcp-acp
//! `security/integrity/hash_chain.py`). Lines without chain fields before
//! the chain starts are pre-upgrade lines and are skipped, as mcp-acp's own
//! verifier does; inside the chain such a line is an inserted line.

use super::chain::{ChainRule, ChainTracker, LinkInput, RuleParams, SigResult, SignatureCheck};
use super::exchange::{self, Answer, Call, Delivery, Dispatch, End, Pending};
use super::fields::{missing, parse_object, parse_time};
use super::rawjson;
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{
    ActionRecord, Arguments, CallRef, Event, EventKind, JsonRpcId, OutcomeKind, SourceRef,
};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet, VecDeque};

/// Reader for mcp-acp logs.
pub struct McpAcpReader;

/// mcp-acp logs. What a journal can show depends on which log it is; the
/// reader narrows it ([`Kind::capabilities`]); the operations log's is
/// stated here.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "mcp-acp",
    description: "mcp-acp operations.jsonl, decisions.jsonl (hash-chained) and client_wire.jsonl",
    noun: "the mcp-acp log",
    capabilities: Kind::Operations.capabilities(),
    no_chain: "no line carries sequence/entry_hash (mcp-acp debug wire logs are not chained)",
    reader: &McpAcpReader,
};

/// The actor of wire-log calls: the wire log names no authenticated subject.
pub const WIRE_ACTOR: &str = "mcp-acp:client";

/// Which mcp-acp log a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Operations,
    Decisions,
    Wire,
}

impl Kind {
    /// What a log of this kind can show.
    const fn capabilities(self) -> Capabilities {
        match self {
            Kind::Operations => Capabilities {
                execution_identity: false,
                authorization: false,
                delivery: false,
                sessions: false,
                authenticated_actor: true,
            },
            Kind::Decisions => Capabilities {
                execution_identity: false,
                authorization: true,
                delivery: false,
                sessions: false,
                authenticated_actor: true,
            },
            Kind::Wire => Capabilities {
                execution_identity: false,
                authorization: false,
                delivery: true,
                sessions: false,
                authenticated_actor: false,
            },
        }
    }
}

fn kind_of(m: &Map<String, Value>) -> Option<Kind> {
    match m.get("event").and_then(Value::as_str) {
        Some("policy_decision") => Some(Kind::Decisions),
        Some("client_request" | "proxy_response" | "proxy_error") => Some(Kind::Wire),
        Some(_) => None,
        None if m.contains_key("method") && m.contains_key("status") => Some(Kind::Operations),
        None => None,
    }
}

impl JournalReader for McpAcpReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.iter().any(|l| {
            parse_object(l).is_ok_and(|m| {
                let chained = m.contains_key("entry_hash") && m.contains_key("sequence");
                let wire = matches!(kind_of(&m), Some(Kind::Wire))
                    && m.contains_key("direction")
                    && m.contains_key("time");
                let ops =
                    matches!(kind_of(&m), Some(Kind::Operations)) && m.contains_key("backend_id");
                chained || wire || ops
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let label = ctx.label.clone();
        let mut st = State {
            scope: format!("journal:{label}"),
            label,
            kind: None,
            chain: None,
            used: HashSet::new(),
            wire: HashMap::new(),
            skipped_methods: 0,
            other_lines: 0,
            decisions: 0,
            standalone: !ctx.companions.contains(&crate::journal::Format::McpAcp),
        };
        for_each_line(ctx, |ctx, line| {
            let m = match parse_object(line.bytes) {
                Ok(m) => m,
                Err(e) => {
                    if let Some(t) = st.chain.as_mut() {
                        t.unreadable(line.source.position(), line.terminated, e.message.clone());
                    }
                    return Err(e);
                }
            };
            st.chain_line(&m, line.bytes, line.source.position(), line.terminated);
            st.line(ctx, m, line.source)
        })?;
        st.finish(ctx);
        Ok(())
    }
}

struct State {
    label: String,
    scope: String,
    kind: Option<Kind>,
    chain: Option<ChainTracker>,
    used: HashSet<String>,
    wire: HashMap<(String, String, String), VecDeque<Pending>>,
    skipped_methods: u64,
    other_lines: u64,
    decisions: u64,
    /// No other mcp-acp log is loaded: decisions have no call to join.
    standalone: bool,
}

/// The mcp-acp chain rule's parameters.
fn rule() -> RuleParams {
    RuleParams {
        rule: ChainRule::McpAcp,
        genesis: "GENESIS".into(),
        first_seq: None,
        signatures: SignatureCheck::NotApplicable,
        require_newline: false,
    }
}

/// `entry_hash` as mcp-acp computes it: SHA-256 of Python's
/// `json.dumps(entry_without_entry_hash, sort_keys=True,
/// separators=(",", ":"))`, hex.
pub fn entry_hash(entry: &rawjson::Raw) -> String {
    let mut s = String::new();
    entry.write_python_sorted(&mut s);
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// A JSON-RPC id as mcp-acp logs it (a string): digits become a number.
fn jsonrpc_id(v: Option<&Value>) -> Option<JsonRpcId> {
    match v? {
        Value::String(s) => Some(
            s.parse::<i64>()
                .map(JsonRpcId::Num)
                .unwrap_or_else(|_| JsonRpcId::Str(s.clone())),
        ),
        other => JsonRpcId::from_value(other),
    }
}

fn text(v: Option<&Value>) -> Option<String> {
    match v? {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// The authorization refusal a proxy error stands for, from its message
/// (mcp-acp writes `Policy denied: …`, `User denied: …`,
/// `Approval timeout: …` with JSON-RPC error code -32001).
fn rejection(message: &str, code: Option<i64>) -> Option<&'static str> {
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
    fn chain_line(&mut self, m: &Map<String, Value>, bytes: &[u8], no: u32, terminated: bool) {
        let chained = m.contains_key("entry_hash") && m.contains_key("sequence");
        if !chained {
            if let Some(t) = self.chain.as_mut() {
                t.unchained(no, "no sequence/entry_hash");
            }
            return;
        }
        let t = self.chain.get_or_insert_with(|| ChainTracker::new(rule()));
        let text = match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(_) => {
                t.unreadable(no, terminated, "not UTF-8");
                return;
            }
        };
        let mut raw = match rawjson::parse(text) {
            Ok(r) => r,
            Err(e) => {
                t.unreadable(no, terminated, e.to_string());
                return;
            }
        };
        let stored = raw.remove("entry_hash");
        let (Some(stored), Some(prev)) = (
            stored.as_ref().and_then(rawjson::Raw::as_str),
            raw.get("prev_hash").and_then(rawjson::Raw::as_str),
        ) else {
            t.unreadable(no, terminated, "entry_hash and prev_hash must be strings");
            return;
        };
        let seq = raw.get("sequence").and_then(rawjson::Raw::as_u64);
        let computed = entry_hash(&raw);
        t.link(LinkInput {
            line: no,
            seq,
            prev,
            stored: Some(stored),
            computed: &computed,
            terminated,
            sig: SigResult::NotChecked,
        });
    }

    fn unique(&mut self, base: String, line: u32) -> String {
        if self.used.insert(base.clone()) {
            base
        } else {
            let id = format!("{base}#L{line}");
            self.used.insert(id.clone());
            id
        }
    }

    fn line(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        source: SourceRef,
    ) -> Result<(), BadLine> {
        let Some(kind) = kind_of(&m) else {
            self.other_lines += 1;
            return Ok(());
        };
        if self.kind.is_none() {
            self.kind = Some(kind);
            ctx.set_capabilities(kind.capabilities());
        }
        let at = match m.get("time") {
            Some(Value::String(s)) => parse_time("time", s)?,
            _ => return Err(missing("time")),
        };
        match kind {
            Kind::Operations => self.operation(ctx, m, at, source),
            Kind::Decisions => self.decision(ctx, m, at, source),
            Kind::Wire => self.wire(ctx, m, at, source),
        }
    }
    fn operation(
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
        let started = super::started_before(at, duration_ms, "duration.duration_ms")?;
        let call = CallRef {
            call_id: Some(format!("request {request}")),
            session_id: None,
            jsonrpc_id: jsonrpc_id(m.get("request_id")),
            mcp_session_id: Some(session),
            transport: text(m.get("transport")),
        };
        let mut c = Call::new(
            id,
            started,
            call,
            ActionRecord(action.as_object().cloned().unwrap_or_default()),
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

    fn decision(
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
                approver: approver.or_else(|| cached.then(|| "cached approval".into())),
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

    fn wire(
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
                    mcp_session_id: text(m.get("session_id")),
                    transport: text(m.get("transport")),
                };
                let pending = exchange::request(
                    ctx,
                    Call::new(
                        id,
                        at,
                        call,
                        ActionRecord(action.as_object().cloned().unwrap_or_default()),
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

    fn finish(self, ctx: &mut ReadCtx<'_>) {
        let mut open: Vec<u32> = self
            .wire
            .values()
            .flatten()
            .map(|p| p.source().position())
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
        if self.kind == Some(Kind::Decisions) && self.decisions > 0 {
            ctx.note(if self.standalone {
                format!(
                    "{} tools/call policy decision(s) not used: a decisions log holds authorization, not calls; load the operations log with it",
                    self.decisions
                )
            } else {
                format!(
                    "{} tools/call policy decision(s) read as authorization evidence for the operations log loaded with this one",
                    self.decisions
                )
            });
        }
        if self.other_lines > 0 {
            ctx.note(format!(
                "{} line(s) of other mcp-acp events not used",
                self.other_lines
            ));
        }
        if let Some(t) = self.chain {
            ctx.set_chain(t.finish());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::chain::{ChainStatus, FailureKind};
    use crate::journal::{JournalSource, LoadOptions, verify};

    /// Written by tests/fixtures/mcp-acp/generate.py with mcp-acp's own rule.
    const OPS: &str = include_str!("../../tests/fixtures/mcp-acp/operations.jsonl");

    fn run(lines: &[String], newline: bool) -> ChainStatus {
        let mut text = lines.join("\n");
        if newline {
            text.push('\n');
        }
        let bytes: &'static [u8] = Box::leak(text.into_bytes().into_boxed_slice());
        verify(
            JournalSource::embedded("operations.jsonl", bytes),
            &LoadOptions::default(),
        )
        .unwrap()
        .chain
    }

    fn lines() -> Vec<String> {
        OPS.lines().map(str::to_string).collect()
    }

    fn failure(st: &ChainStatus) -> (FailureKind, u32, Option<u64>) {
        let f = st.failure().unwrap_or_else(|| panic!("{st:?}"));
        (f.kind, f.line, f.seq)
    }

    /// Re-chains line `i` (0-based) after an edit, as a forger who knows the
    /// rule would: a new entry_hash over the edited content.
    fn rehash(line: &str) -> String {
        let mut raw = rawjson::parse(line).unwrap();
        raw.remove("entry_hash");
        let h = entry_hash(&raw);
        if let rawjson::Raw::Obj(m) = &mut raw {
            m.push(("entry_hash".into(), rawjson::Raw::Str(h)));
        }
        let mut out = String::new();
        raw.write_python_sorted(&mut out);
        out
    }

    #[test]
    fn python_written_chain_verifies() {
        match run(&lines(), true) {
            ChainStatus::Intact { lines, .. } => assert_eq!(lines, 5),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_tampering_kind_at_its_line() {
        let mut l = lines();
        l[2] = l[2].replace("30300.25", "300.25");
        assert_eq!(
            failure(&run(&l, true)),
            (FailureKind::ChangedLine, 3, Some(3))
        );

        let mut l = lines();
        l.remove(2);
        assert_eq!(
            failure(&run(&l, true)),
            (FailureKind::DeletedLine, 3, Some(4))
        );

        let mut l = lines();
        l.swap(2, 3);
        assert_eq!(
            failure(&run(&l, true)),
            (FailureKind::ReorderedLines, 3, Some(4))
        );

        let mut l = lines();
        l[2] = rehash(&l[2].replace("update_file", "delete_file"));
        assert_eq!(
            failure(&run(&l, true)),
            (FailureKind::BrokenLink, 4, Some(4))
        );

        let mut l = lines();
        l[2] = l[2].replace("\"prev_hash\": \"", "\"prev_hash\": \"0");
        assert_eq!(
            failure(&run(&l, true)),
            (FailureKind::BrokenLink, 3, Some(3))
        );

        let mut l = lines();
        for (i, line) in l.iter_mut().enumerate().skip(3) {
            let edited = line.replace(
                &format!("\"sequence\": {}", i + 1),
                &format!("\"sequence\": {}", i + 2),
            );
            *line = edited;
        }
        // Renumbered without re-chaining: the line no longer matches its hash.
        assert_eq!(
            failure(&run(&l, true)),
            (FailureKind::ChangedLine, 4, Some(5))
        );

        let mut l = lines();
        let dup = l[1].clone();
        l.insert(2, dup);
        assert_eq!(
            failure(&run(&l, true)),
            (FailureKind::InsertedLine, 3, Some(2))
        );

        let mut l = lines();
        let last = l.pop().unwrap();
        l.push(last[..last.len() - 20].to_string());
        assert_eq!(
            failure(&run(&l, false)),
            (FailureKind::TruncatedLastLine, 5, None)
        );
    }

    #[test]
    fn seq_gap_with_intact_links() {
        // A producer that skipped sequence 3 but chained every line.
        let mut l = lines();
        let mut prev = "GENESIS".to_string();
        for (i, line) in l.iter_mut().enumerate() {
            let mut raw = rawjson::parse(line).unwrap();
            raw.remove("entry_hash");
            if let rawjson::Raw::Obj(m) = &mut raw {
                for (k, v) in m.iter_mut() {
                    if k == "prev_hash" {
                        *v = rawjson::Raw::Str(prev.clone());
                    }
                    if k == "sequence" && i >= 2 {
                        *v = rawjson::Raw::Num((i + 2).to_string());
                    }
                }
            }
            let h = entry_hash(&raw);
            if let rawjson::Raw::Obj(m) = &mut raw {
                m.push(("entry_hash".into(), rawjson::Raw::Str(h.clone())));
            }
            let mut out = String::new();
            raw.write_python_sorted(&mut out);
            *line = out;
            prev = h;
        }
        assert_eq!(failure(&run(&l, true)), (FailureKind::SeqGap, 3, Some(4)));
    }

    #[test]
    fn classifies_refusals() {
        assert_eq!(
            rejection("Policy denied: tools/call on /x", Some(-32001)),
            Some("policy_denied")
        );
        assert_eq!(
            rejection("User denied: tools/call on /x", Some(-32001)),
            Some("user_denied")
        );
        assert_eq!(
            rejection("Approval timeout: tools/call", Some(-32001)),
            Some("approval_timeout")
        );
        assert_eq!(
            rejection("Access denied: outside the base directory", None),
            None
        );
    }

    #[test]
    fn entry_hash_is_pythons() {
        // sha256 of the bytes Python prints for
        // json.dumps({"a": "é", "b": 1.5}, sort_keys=True, separators=(",", ":")),
        // i.e. of `{"a":"\u00e9","b":1.5}`.
        let raw = rawjson::parse(r#"{"b": 1.5, "a": "é"}"#).unwrap();
        assert_eq!(
            entry_hash(&raw),
            hex::encode(Sha256::digest(br#"{"a":"\u00e9","b":1.5}"#))
        );
    }
}
