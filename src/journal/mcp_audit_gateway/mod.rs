//! mcp-audit-gateway (PyPI `mcp-audit-gateway` 0.1.0, module `mcp_gateway`)
//! `audit-log.jsonl`, docs/formats.md#mcp-audit-gateway. Not elang2's
//! hash-chained `audit.jsonl` ([`super::mcp_audit`]): another project of
//! the same name, with another format.
//!
//! One JSON object a line (`mcp_gateway/audit.py` `AuditEntry`), written
//! when the request has finished, in order of completion: `id` (a UUID of
//! the record), `timestamp` (the end, ISO 8601 with `+00:00`), `tenant`,
//! `principal_id`, `role`, `method`, `tool` (exposed as `<upstream>.<tool>`),
//! `upstream`, `outcome`, `denial_reason`, `latency_ms` (the upstream call
//! only; 0 when there was none), `redaction_counts` (redactions in the
//! *result*), `arguments` (as `audit.argument_logging` left them),
//! `error`.
//!
//! * Each `tools/call` record is one execution (the log has no execution
//!   identity, no JSON-RPC id, no session): accepted and dispatched at
//!   `timestamp − latency_ms`, its end at `timestamp` ([`outcome::read`]).
//!   Delivery is never recorded: a call whose client had gone is written
//!   `ok` like one that was delivered.
//! * A `tools/call` record that names no tool (an internal error, a refused
//!   authentication) is still a call, of tool `?`, each in a group of its
//!   own.
//! * Records of other methods (`tools/list`, and `initialize` or others
//!   refused at authentication) are counted in a note, not used.
//! * Actor: `principal_id` (`anonymous` for a refused authentication, whose
//!   `principal_id` is only what the client claimed); intent scope
//!   `tenant:<tenant>` (`unscoped` without one).
//!
//! The log has no hash chain.

mod arguments;
mod outcome;

use super::exchange::{self, Answer, Call, Dispatch, End};
use super::fields::{missing, parse_object, parse_time, type_name};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{ActionRecord, CallRef, Layer, SourceRef};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};

/// Reader for mcp-audit-gateway audit logs.
pub struct McpAuditGatewayReader;

/// mcp-audit-gateway audit logs: one record per finished request, with its
/// principal and tenant; no delivery, no session, no chain.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "mcp-audit-gateway",
    description: "mcp-audit-gateway (Python, mcp_gateway) audit-log.jsonl: one record per finished request",
    noun: "the mcp-audit-gateway audit log",
    capabilities: Capabilities {
        execution_identity: false,
        // Refusals only: an allowed call carries no decision of its own.
        authorization: false,
        delivery: false,
        sessions: false,
        authenticated_actor: true,
    },
    no_chain: "mcp-audit-gateway audit logs carry no hash chain",
    delivery_layer: None,
    reader: &McpAuditGatewayReader,
};

/// The tool of a `tools/call` record that names none.
pub const UNNAMED_TOOL: &str = "?";

/// The actor of a record with no accepted principal.
pub const ANONYMOUS: &str = "anonymous";

impl JournalReader for McpAuditGatewayReader {
    /// A line is this format's when it has the fields of `AuditEntry` that
    /// elang2's `mcp-audit` records lack (`tenant`, `principal_id`,
    /// `latency_ms`, `redaction_counts`), an `outcome` of its vocabulary,
    /// and no hash-chain field.
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.iter().any(|l| {
            parse_object(l).is_ok_and(|m| {
                ["tenant", "principal_id", "method", "latency_ms"]
                    .iter()
                    .all(|k| m.contains_key(*k))
                    && (m.contains_key("redaction_counts") || m.contains_key("denial_reason"))
                    && m.get("outcome")
                        .and_then(Value::as_str)
                        .is_some_and(|o| outcome::OUTCOMES.contains(&o))
                    && ![
                        "previousHash",
                        "priorHead",
                        "hash",
                        "prev_hash",
                        "entry_hash",
                    ]
                    .iter()
                    .any(|k| m.contains_key(*k))
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let mut st = State {
            label: ctx.identity.clone(),
            ids: HashSet::new(),
            repeated_ids: 0,
            other: BTreeMap::new(),
            unnamed: 0,
            ok: 0,
        };
        for_each_line(ctx, |ctx, line| {
            let m = parse_object(line.bytes)?;
            st.record(ctx, &m, (line.source, line.bytes))
        })?;
        st.finish(ctx);
        Ok(())
    }
}

/// What the reader counts while it reads, for its notes.
struct State {
    label: String,
    /// Record ids seen, so that a repeated one still makes its own
    /// execution.
    ids: HashSet<String>,
    repeated_ids: u64,
    /// Records of other methods, by method.
    other: BTreeMap<String, u64>,
    /// `tools/call` records that name no tool.
    unnamed: u64,
    /// `ok` calls.
    ok: u64,
}

/// A field that must be a string when present: `null` and absence are
/// `None`.
fn opt_str<'a>(m: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, BadLine> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(BadLine::in_field(
            key,
            format!(
                "field `{key}` must be a string or null, found {}",
                type_name(other)
            ),
        )),
    }
}

fn req_str<'a>(m: &'a Map<String, Value>, key: &str) -> Result<&'a str, BadLine> {
    opt_str(m, key)?.ok_or_else(|| missing(key))
}

impl State {
    /// Reads one record: a `tools/call` becomes one execution; another
    /// method is counted.
    ///
    /// # Errors
    /// A [`BadLine`] naming the field when `method`, `outcome`,
    /// `timestamp` or `latency_ms` is missing or of the wrong type, or
    /// another field is of the wrong type.
    fn record(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: &Map<String, Value>,
        (source, bytes): (SourceRef, &[u8]),
    ) -> Result<(), BadLine> {
        let method = req_str(m, "method")?;
        if method != "tools/call" {
            *self.other.entry(method.to_string()).or_default() += 1;
            return Ok(());
        }
        let at = parse_time("timestamp", req_str(m, "timestamp")?)?;
        let outcome = req_str(m, "outcome")?;
        let latency = match m.get("latency_ms") {
            Some(Value::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            None | Some(Value::Null) => return Err(missing("latency_ms")),
            Some(other) => {
                return Err(BadLine::in_field(
                    "latency_ms",
                    format!(
                        "field `latency_ms` must be a number of milliseconds, found {}",
                        type_name(other)
                    ),
                ));
            }
        };
        let tool = opt_str(m, "tool")?.filter(|t| !t.is_empty());
        let upstream = opt_str(m, "upstream")?;
        let tenant = opt_str(m, "tenant")?;
        let role = opt_str(m, "role")?;
        let principal = opt_str(m, "principal_id")?;
        let denial = opt_str(m, "denial_reason")?;
        let error = opt_str(m, "error")?;
        let record_id = opt_str(m, "id")?.filter(|i| !i.is_empty());

        let reading = outcome::read(outcome, error, denial, upstream);
        // A gateway timeout is written with latency 0: its call began at
        // least the upstream timeout before.
        let timed_out = matches!(reading.end, End::TimedOut { .. }) && latency == 0.0;
        let duration = if timed_out {
            outcome::UPSTREAM_TIMEOUT_MS
        } else {
            latency
        };
        let started = super::started_before(at, duration, "latency_ms")?;

        let logged = arguments::logged(m.get("arguments"), tool.is_some());
        // A refused authentication names the principal the client claimed,
        // not one the gateway accepted.
        let authenticated = outcome != "unauthenticated";
        let actor = principal.filter(|_| authenticated).unwrap_or(ANONYMOUS);
        let mut action = Map::new();
        action.insert("actor".into(), actor.into());
        action.insert("tool".into(), tool.unwrap_or(UNNAMED_TOOL).into());
        action.insert("channel".into(), "mcp".into());
        action.insert("target".into(), upstream.into());
        action.insert("method".into(), "tools/call".into());
        action.insert("arguments".into(), logged.value);
        if let Some(t) = tenant {
            action.insert("intent_scope".into(), format!("tenant:{t}").into());
        }
        let place = format!("L{}", source.position());
        if tool.is_none() {
            // Nothing ties a call of an unnamed tool to another call: the
            // record itself is its intent.
            self.unnamed += 1;
            action.insert(
                "unnamed_tool_record".into(),
                record_id.unwrap_or(&place).into(),
            );
        }
        let execution_id = match record_id {
            Some(i) if self.ids.insert(i.to_string()) => {
                format!("mcp-audit-gateway:{}:{i}", self.label)
            }
            Some(i) => {
                self.repeated_ids += 1;
                format!(
                    "mcp-audit-gateway:{}:{i}~{}",
                    self.label,
                    ctx.line_id(bytes)
                )
            }
            None => format!("mcp-audit-gateway:{}", ctx.line_id(bytes)),
        };
        let mut c = Call::new(
            execution_id,
            started,
            CallRef {
                call_id: record_id.map(str::to_string),
                ..CallRef::default()
            },
            ActionRecord::from_map(action),
            source,
            Dispatch::Implied {
                why: reading.dispatch_why.into(),
                at_request: true,
            },
        );
        c.layer = Some(Layer::Gateway);
        c.facts.arguments = logged.arguments;
        if let Some(t) = tenant {
            c.facts.notes.push(("tenant", t.into()));
        }
        if timed_out {
            c.facts.notes.push((
                "started",
                "not recorded (latency_ms is 0 with an internal error): placed 15 s, the upstream timeout, before the record".into(),
            ));
        } else if outcome == "internal_error" {
            c.facts.notes.push((
                "started",
                "not recorded (latency_ms is 0 with an internal error): placed at the record's time".into(),
            ));
        }
        if let Some(r) = role {
            c.extra.insert("role".into(), r.into());
        }
        if let (false, Some(p)) = (authenticated, principal) {
            c.extra.insert("principal_id".into(), p.into());
        }
        let mut a = Answer::new(at, source, reading.end);
        a.extra.insert("outcome".into(), outcome.into());
        if let Some(l) = m.get("latency_ms") {
            a.extra.insert("latency_ms".into(), l.clone());
        }
        if let Some(r) = m
            .get("redaction_counts")
            .filter(|r| r.as_object().is_some_and(|o| !o.is_empty()))
        {
            a.extra.insert("redaction_counts".into(), r.clone());
        }
        if outcome == "ok" {
            self.ok += 1;
        }
        exchange::exchange(ctx, c, Some(a));
        Ok(())
    }

    /// The journal's notes: what was not used, what `ok` means, calls of
    /// unnamed tools, repeated record ids.
    fn finish(self, ctx: &mut ReadCtx<'_>) {
        if self.ok > 0 {
            ctx.note(
                "`ok` means the upstream answered with a JSON-RPC result: a tool error (isError) is `ok` too, and the log does not record whether the client received it (a call whose client had gone is `ok` as well)",
            );
        }
        if self.unnamed > 0 {
            ctx.note(format!(
                "{} tools/call record(s) name no tool (an internal error or a refused authentication): each is a call of tool `{UNNAMED_TOOL}` in a group of its own",
                self.unnamed
            ));
        }
        if self.repeated_ids > 0 {
            ctx.note(format!(
                "{} record(s) repeat the id of an earlier record: each is its own call, named by its line",
                self.repeated_ids
            ));
        }
        if !self.other.is_empty() {
            let o: Vec<String> = self
                .other
                .iter()
                .map(|(k, v)| format!("{k} ×{v}"))
                .collect();
            ctx.note(format!(
                "records of other methods, not tool calls: {}",
                o.join(", ")
            ));
        }
    }
}

#[cfg(test)]
mod tests;
