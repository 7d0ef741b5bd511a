//! retrace's native JSONL journal (docs/design.md §3): `session` records,
//! `event` records (one per lifecycle transition) and `execution` snapshot records (docs/design.md §3.4), which are expanded into the events they
//! imply.

mod chain;
mod rawhash;
mod records;

pub(crate) use chain::{ChainFields, check_link};
pub use chain::{NativeChainWriter, native_chain_hash};
pub use records::parse_record;

use super::chain::{ChainTracker, LinkInput, RuleParams, SigResult};
use super::fields::{FieldMap, FieldResult, Fields, parse_object};
use super::{
    Capabilities, FormatFacts, JournalError, JournalReader, LineMeta, ReadCtx,
    for_each_line_parallel,
};
use crate::model::Record;
use chain::chain_hash_of;
use serde_json::Value;

/// Reader for the native format.
pub struct NativeReader;

/// What the native journal records: everything retrace reads (docs/design.md §3).
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
    delivery_layer: None,
    reader: &NativeReader,
};

/// Every field name the native format defines (docs/design.md §3), for
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
        let mut ambiguous_lines = 0u32;
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
            if !line.ambiguous.is_empty() {
                ambiguous_lines += 1;
                if ambiguous_lines <= NAMED_AMBIGUOUS {
                    for a in &line.ambiguous {
                        ctx.note(format!("line {no}: ambiguous: {}", a.without_value()));
                    }
                }
            }
            for r in line.records? {
                ctx.emit(r);
            }
            Ok(())
        })?;
        if ambiguous_lines > NAMED_AMBIGUOUS {
            ctx.note(format!(
                "{} more line(s) with ambiguous JSON (a repeated key or an integer beyond ±2^53) not named",
                ambiguous_lines - NAMED_AMBIGUOUS
            ));
        }
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
    /// What the line's hash does not pin down (docs/design.md §6.4).
    ambiguous: Vec<crate::journal::ambiguity::Ambiguity>,
}

/// How many lines with ambiguities a journal's notes name; the rest are
/// counted.
const NAMED_AMBIGUOUS: u32 = 20;

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
    // A line in its canonical form has no repeated key and no integer
    // beyond 2^53 (`raw_chain_hash`): it needs no scan for them.
    let mut canonical = false;
    let link = match (m.remove("prev_hash"), m.remove("hash")) {
        (Some(Value::String(prev)), Some(Value::String(stored))) => Link::Hashed {
            // Most lines are written in their canonical form: hashed from
            // their bytes, without writing the record back out.
            computed: match rawhash::raw_chain_hash(bytes) {
                Some(h) => {
                    canonical = true;
                    h
                }
                None => chain_hash_of(&prev, m.members()),
            },
            prev,
            stored,
            seq: m.seq(),
        },
        (None, None) => Link::Unchained,
        _ => Link::Unreadable("prev_hash and hash must both be present and strings".into()),
    };
    let ambiguous = if canonical {
        Vec::new()
    } else {
        crate::journal::ambiguity::scan(bytes)
    };
    let mut records = parse_record(m, meta.source);
    if !ambiguous.is_empty()
        && let Ok(rs) = records.as_mut()
    {
        // Every view of the event says so (docs/design.md §6.4).
        let words = ambiguous
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        for r in rs.iter_mut() {
            if let Record::Event { event, .. } = r {
                let mut f = event.facts().clone();
                f.notes
                    .push(("ambiguous", serde_json::Value::String(words.clone())));
                event.facts = f.boxed();
            }
        }
    }
    Ok(ParsedLine {
        has_hash,
        link,
        records,
        ambiguous,
    })
}

#[cfg(test)]
mod tests;
