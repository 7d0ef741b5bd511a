//! mcp-acp (alandra-v/mcp-acp-nexus and mcp-acp-core) logs, docs/formats.md#mcp-acp:
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

mod chain;
mod records;

use super::chain::ChainTracker;
use super::exchange::Pending;
use super::fields::{missing, parse_object, parse_time};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{JsonRpcId, SourceRef};
use serde_json::{Map, Value};
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
    delivery_layer: None,
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
        let mut st = State {
            scope: ctx.journal_scope(),
            label: ctx.identity.clone(),
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

impl State {
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
mod tests;
