//! retrace's native JSONL journal (DESIGN.md §3): `session` records,
//! `event` records (one per lifecycle transition) and seed-shaped
//! `execution` snapshot records, which are expanded into the events they
//! imply.

use super::chain::{ChainTracker, GENESIS, LinkInput, RuleParams, SigResult};
use super::fields::{
    FieldMap, FieldResult, Fields, missing, opt_bool, opt_i64, opt_object, opt_str, opt_time,
    opt_u64, parse_object, req_str, req_time,
};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, LineMeta, ReadCtx,
    for_each_line_parallel,
};
use crate::model::{
    ActionRecord, CallRef, Event, EventKind, JsonRpcId, ObservedVia, OutcomeKind, ProcessInfo,
    Record, Recovery, Session, SourceRef,
};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::io::{self, Write};

/// Reader for the native format.
pub struct NativeReader;

/// What the native journal records: everything retrace reads (DESIGN.md §3).
pub(super) const NATIVE_CAPABILITIES: Capabilities = Capabilities {
    execution_identity: true,
    authorization: true,
    delivery: true,
    sessions: true,
    authenticated_actor: true,
};

/// The native JSONL format.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "native",
    description: "retrace native JSONL (sessions, events, execution snapshots)",
    noun: "the journal",
    capabilities: NATIVE_CAPABILITIES,
    no_chain: "the journal carries no prev_hash/hash fields",
    reader: &NativeReader,
};

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
        first_lines.iter().any(|l| {
            parse_object(l).is_ok_and(|m| {
                matches!(
                    m.get("kind").and_then(Value::as_str),
                    Some("session" | "event" | "execution")
                )
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        // A journal is chained when any line carries `hash`. Lines before
        // the first chained line are remembered: if a chain follows, they
        // were inserted before it (or had their chain fields stripped), and
        // that is the first break.
        let mut chain: Option<ChainTracker> = None;
        let mut leading: Option<(u32, bool, String)> = None;
        for_each_line_parallel(ctx, parse_line, |ctx, meta, parsed| {
            let no = meta.source.position();
            let line = match parsed {
                Ok(line) => line,
                Err(e) => {
                    match chain.as_mut() {
                        Some(t) => t.unreadable(no, meta.terminated, e.message.clone()),
                        None => {
                            leading.get_or_insert((no, meta.terminated, e.message.clone()));
                        }
                    }
                    return Err(e);
                }
            };
            if chain.is_none() {
                if !line.has_hash {
                    leading.get_or_insert((no, true, String::new()));
                } else {
                    let mut t = ChainTracker::new(RuleParams::native());
                    if let Some((first, terminated, err)) = leading.take() {
                        if err.is_empty() {
                            t.unchained(first, "no prev_hash and hash, before the chain starts");
                        } else {
                            t.unreadable(first, terminated, err);
                        }
                    }
                    chain = Some(t);
                }
            }
            if let Some(t) = chain.as_mut() {
                match &line.link {
                    Link::Unchained => t.unchained(no, "no prev_hash and hash"),
                    Link::Unreadable(e) => t.unreadable(no, meta.terminated, e.clone()),
                    Link::Hashed {
                        prev,
                        stored,
                        computed,
                        seq,
                    } => t.link(LinkInput {
                        line: no,
                        seq: *seq,
                        prev,
                        stored: Some(stored),
                        computed,
                        terminated: meta.terminated,
                        sig: SigResult::NotChecked,
                    }),
                }
            }
            for r in line.records? {
                ctx.emit(r);
            }
            Ok(())
        })?;
        if let Some(t) = chain {
            ctx.set_chain(t.finish());
        }
        Ok(())
    }
}

/// What a parsing thread makes of one line: its records and its chain link,
/// ready for the tracker, which must see lines in order.
struct ParsedLine {
    has_hash: bool,
    link: Link,
    records: FieldResult<Vec<Record>>,
}

/// A line's chain fields with its recomputed hash.
enum Link {
    Unchained,
    Unreadable(String),
    Hashed {
        prev: String,
        stored: String,
        computed: String,
        seq: Option<u64>,
    },
}

/// Parses one line and recomputes its chain hash (the costly part, done in
/// parallel by [`for_each_line_parallel`]).
fn parse_line(bytes: &[u8], meta: LineMeta) -> FieldResult<ParsedLine> {
    let mut m = Fields::parse(bytes, KNOWN)?;
    let has_hash = m.contains_key("hash");
    let link = match (m.remove("prev_hash"), m.remove("hash")) {
        (Some(Value::String(prev)), Some(Value::String(stored))) => Link::Hashed {
            computed: chain_hash_of(&prev, m.members()),
            prev,
            stored,
            seq: m.seq(),
        },
        (None, None) => Link::Unchained,
        _ => Link::Unreadable("prev_hash and hash must both be present and strings".into()),
    };
    Ok(ParsedLine {
        has_hash,
        link,
        records: parse_record(m, meta.source),
    })
}

/// The native chain hash of one record (DESIGN.md §6):
/// `hex(sha256(prev_hash ‖ JCS(record)))`, where `prev_hash` is hashed as
/// its ASCII hex text and `record` is the line's object without its
/// `prev_hash` and `hash` fields, canonicalized by RFC 8785.
pub fn native_chain_hash(prev_hash: &str, record: &Map<String, Value>) -> String {
    chain_hash_of(
        prev_hash,
        record.iter().map(|(k, v)| (k.as_str(), v)).collect(),
    )
}

/// The native chain hash over an object's members (in any order).
fn chain_hash_of(prev_hash: &str, mut members: Vec<(&str, &Value)>) -> String {
    let mut buf = Vec::with_capacity(512);
    buf.extend_from_slice(prev_hash.as_bytes());
    crate::canonical::write_members(&mut members, &mut buf);
    lower_hex(&Sha256::digest(&buf))
}

/// Lowercase hex of a digest (the `hex` crate's encoder goes through a
/// char iterator, which shows in the verification benchmark).
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

/// A record whose native chain fields can be checked: a parsed line
/// ([`Fields`]) or a SQLite row mapped to an object.
pub(crate) trait ChainFields: FieldMap {
    /// The record's `seq`, if it has one.
    fn seq(&self) -> Option<u64>;
    /// Every member, in any order.
    fn members(&self) -> Vec<(&str, &Value)>;
}

/// A `seq` value: an integer, or a whole number written with a fraction
/// (`4.0` is 4 to RFC 8785 too).
fn seq_of(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 9_007_199_254_740_992.0)
            .map(|f| f as u64)
    })
}

impl ChainFields for Map<String, Value> {
    fn seq(&self) -> Option<u64> {
        self.get("seq").and_then(seq_of)
    }
    fn members(&self) -> Vec<(&str, &Value)> {
        self.iter().map(|(k, v)| (k.as_str(), v)).collect()
    }
}

impl ChainFields for Fields {
    fn seq(&self) -> Option<u64> {
        self.get("seq").and_then(seq_of)
    }
    fn members(&self) -> Vec<(&str, &Value)> {
        self.iter().collect()
    }
}

/// Feeds one parsed native line to the chain tracker, removing its chain
/// fields from `m`.
pub(crate) fn check_link(
    t: &mut ChainTracker,
    m: &mut impl ChainFields,
    no: u32,
    terminated: bool,
) {
    let prev = m.remove("prev_hash");
    let hash = m.remove("hash");
    let (prev, hash) = match (prev, hash) {
        (Some(Value::String(p)), Some(Value::String(h))) => (p, h),
        (None, None) => {
            t.unchained(no, "no prev_hash and hash");
            return;
        }
        _ => {
            t.unreadable(
                no,
                terminated,
                "prev_hash and hash must both be present and strings",
            );
            return;
        }
    };
    let seq = m.seq();
    let computed = chain_hash_of(&prev, m.members());
    t.link(LinkInput {
        line: no,
        seq,
        prev: &prev,
        stored: Some(&hash),
        computed: &computed,
        terminated,
        sig: SigResult::NotChecked,
    });
}

/// Writes a chained native journal (DESIGN.md §6): each appended record gets
/// `prev_hash` (the previous line's `hash`, or [`GENESIS`]) and its own
/// `hash`, then is written as one JSON line. Used by tests and by the
/// benchmark generator; any producer can use it to emit verifiable journals.
pub struct NativeChainWriter<W: Write> {
    out: W,
    prev: String,
}

impl<W: Write> NativeChainWriter<W> {
    /// A writer at genesis.
    pub fn new(out: W) -> Self {
        NativeChainWriter {
            out,
            prev: GENESIS.to_string(),
        }
    }

    /// The hash the next line will link to.
    pub fn head(&self) -> &str {
        &self.prev
    }

    /// Chains and writes one record (any `prev_hash`/`hash` in it are
    /// replaced). Returns the line as written, without its newline.
    ///
    /// # Errors
    /// I/O errors.
    pub fn append(&mut self, mut record: Map<String, Value>) -> io::Result<String> {
        record.remove("prev_hash");
        record.remove("hash");
        let hash = native_chain_hash(&self.prev, &record);
        record.insert("prev_hash".into(), Value::String(self.prev.clone()));
        record.insert("hash".into(), Value::String(hash.clone()));
        let line = serde_json::to_string(&record).map_err(io::Error::other)?;
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.prev = hash;
        Ok(line)
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
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
            let action = opt_object(&mut m, "action")?.ok_or_else(|| missing("action"))?;
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
                BadLine::in_field("recovery", format!(
                    "field `recovery`: unknown value {r:?}; expected continued, queried_status, \
                     returned_stored_result, returned_rejection or awaiting_review"
                ))
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
        Event {
            seq,
            at,
            kind,
            extra: m.into_extra(),
            facts: None,
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
        SourceRef::Line {
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
        assert!(
            e.message.contains("`outcome`") && e.message.contains("maybe"),
            "{e}"
        );
        assert_eq!(e.field.as_deref(), Some("outcome"));
        let e = parse(json!({"kind":"event","at":"noon","execution_id":"x","event":"delivered"}))
            .unwrap_err();
        assert!(e.message.contains("`at`"), "{e}");
        assert_eq!(e.field.as_deref(), Some("at"));
        let e = parse(json!({"kind":"nope"})).unwrap_err();
        assert!(e.message.contains("`kind`"), "{e}");
        assert_eq!(e.field.as_deref(), Some("kind"));
        let e = parse(json!({"kind":"event","at":"2026-07-22T14:03:18Z","execution_id":"x","event":"outcome","outcome":"success","target_status":9000})).unwrap_err();
        assert!(e.message.contains("target_status"), "{e}");
        assert_eq!(e.field.as_deref(), Some("target_status"));
        let e =
            parse(json!({"kind":"session","session_id":"s","process":{"pid":"x"}})).unwrap_err();
        assert_eq!(
            (e.message.as_str(), e.field.as_deref()),
            (
                "process: field `pid` must be an integer, found \"x\"",
                Some("process.pid")
            )
        );
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
        assert!(e.message.contains("completed_at"), "{e}");
        assert_eq!(e.field.as_deref(), Some("completed_at"));
    }
}
