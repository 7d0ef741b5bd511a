//! retrace's native JSONL journal (docs/design.md §3): `session` records,
//! `event` records (one per lifecycle transition) and `execution` snapshot records (docs/design.md §3.4), which are expanded into the events they
//! imply.

mod borrowed;
mod chain;
mod fast;
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

/// Fields of a native line kept as their text by the line's parser (see
/// [`parse_line`]).
const RAW: &[&str] = &["action"];

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
        if ctx.records_unused() && ctx.window.is_unbounded() {
            // `retrace verify`: no record is kept, so lines in RFC 8785
            // form are checked from their bytes (docs/design.md §6.8).
            return fast::read(ctx);
        }
        let mut ap = Applier::default();
        for_each_line_parallel(ctx, parse_line, |ctx, meta, bytes, parsed| {
            ap.parsed(ctx, meta.source.position(), meta.terminated, bytes, parsed)
        })?;
        ap.finish(ctx);
        Ok(())
    }
}

/// The part of reading that must see lines in journal order: the chain
/// tracker and the notes on ambiguous lines. Both ways of reading (every
/// line parsed, or lines in RFC 8785 form checked from their bytes) feed
/// it alike.
#[derive(Default)]
struct Applier {
    chain: Option<ChainTracker>,
    /// The first line before the first chained line: its number, whether
    /// it ends with a newline, and why it cannot be read (empty when it
    /// was read and has no chain fields).
    leading: Option<(u32, bool, String)>,
    ambiguous_lines: u32,
}

/// A line's chain fields, borrowed ([`Link`] or a line checked from its
/// bytes); hashes as the tracker compares them, as bytes.
enum LinkRef<'a> {
    Unchained,
    Unreadable(&'a str),
    Hashed {
        prev: &'a [u8],
        stored: &'a [u8],
        computed: &'a [u8],
        seq: Option<u64>,
    },
}

impl Applier {
    /// A line that is not JSON (or not an object): it goes to the chain as
    /// unreadable, and is a bad line.
    fn unreadable(&mut self, no: u32, terminated: bool, message: &str) {
        match self.chain.as_mut() {
            Some(t) => t.unreadable(no, terminated, message),
            None => {
                self.leading
                    .get_or_insert((no, terminated, message.to_string()));
            }
        }
    }

    /// Whether the chain has started and not broken: lines that follow
    /// each other can then be taken as a run.
    fn intact(&self) -> bool {
        self.chain.as_ref().is_some_and(|t| !t.broken())
    }

    /// A run of chained lines checked against each other
    /// ([`ChainTracker::link_run`]); false when the tracker takes none.
    fn link_run(&mut self, run: crate::journal::chain::Run<'_>) -> bool {
        self.chain.as_mut().is_some_and(|t| t.link_run(run))
    }

    /// A line that was read as an object: `has_hash` when it carries
    /// `hash` (a journal is chained from its first such line on).
    fn link(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        no: u32,
        terminated: bool,
        has_hash: bool,
        link: LinkRef<'_>,
        ambiguous: &[crate::journal::ambiguity::Ambiguity],
    ) {
        if self.chain.is_none() {
            if !has_hash {
                self.leading.get_or_insert((no, true, String::new()));
            } else {
                let mut t = ChainTracker::new(RuleParams::native());
                if let Some((first, terminated, err)) = self.leading.take() {
                    if err.is_empty() {
                        t.unchained(first, "no prev_hash and hash, before the chain starts");
                    } else {
                        t.unreadable(first, terminated, err);
                    }
                }
                self.chain = Some(t);
            }
        }
        if let Some(t) = self.chain.as_mut() {
            match link {
                LinkRef::Unchained => t.unchained(no, "no prev_hash and hash"),
                LinkRef::Unreadable(e) => t.unreadable(no, terminated, e),
                LinkRef::Hashed {
                    prev,
                    stored,
                    computed,
                    seq,
                } => t.link(LinkInput {
                    line: no,
                    seq,
                    prev,
                    stored: Some(stored),
                    computed,
                    terminated,
                    sig: SigResult::NotChecked,
                }),
            }
        }
        if !ambiguous.is_empty() {
            self.ambiguous_lines += 1;
            if self.ambiguous_lines <= NAMED_AMBIGUOUS {
                for a in ambiguous {
                    ctx.note(format!("line {no}: ambiguous: {}", a.without_value()));
                }
            }
        }
    }

    /// A line parsed by [`parse_line`] from `bytes`; its records are
    /// emitted.
    fn parsed(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        no: u32,
        terminated: bool,
        bytes: &[u8],
        parsed: FieldResult<ParsedLine>,
    ) -> FieldResult<()> {
        let line = match parsed {
            Ok(line) => line,
            Err(e) => {
                self.unreadable(no, terminated, &e.message);
                return Err(e);
            }
        };
        let mut hex = [0u8; 64];
        let link = line.link.resolve(bytes, &mut hex);
        self.link(ctx, no, terminated, line.has_hash, link, &line.ambiguous);
        match line.records? {
            Records::One(r) => ctx.emit(r),
            Records::Many(rs) => rs.into_iter().for_each(|r| ctx.emit(r)),
        }
        Ok(())
    }

    /// The notes and chain status once every line was seen.
    fn finish(self, ctx: &mut ReadCtx<'_>) {
        if self.ambiguous_lines > NAMED_AMBIGUOUS {
            ctx.note(format!(
                "{} more line(s) with ambiguous JSON (a repeated key or an integer beyond ±2^53) not named",
                self.ambiguous_lines - NAMED_AMBIGUOUS
            ));
        }
        if let Some(t) = self.chain {
            ctx.set_chain(t.finish());
        }
    }
}

/// What a parsing thread makes of one line: its records and its chain link,
/// ready for the tracker, which must see lines in order.
struct ParsedLine {
    has_hash: bool,
    link: Link,
    records: FieldResult<Records>,
    /// What the line's hash does not pin down (docs/design.md §6.4).
    ambiguous: Vec<crate::journal::ambiguity::Ambiguity>,
}

/// How many lines with ambiguities a journal's notes name; the rest are
/// counted.
const NAMED_AMBIGUOUS: u32 = 20;

/// The records of one line: most lines stand for one, held in place (a
/// record is the size of an event's: no allocation per line), a snapshot
/// for several.
enum Records {
    One(Record),
    Many(Vec<Record>),
}

/// A line's chain fields with its recomputed hash.
///
/// A line is parsed on one thread and applied on another, and moved on
/// the way: its link is kept small. A line in RFC 8785 form (nearly every
/// line) names its hashes by where they are in its bytes, which the
/// applying thread has too; only a line the full parse read holds them as
/// text.
enum Link {
    Unchained,
    Unreadable(String),
    /// Chain fields that are plain strings of the line, by their byte
    /// ranges in it (contents, without quotes).
    InLine {
        prev: (u32, u32),
        stored: (u32, u32),
        /// sha256(prev_hash ‖ JCS(record)).
        digest: [u8; 32],
        /// Whether the digest in lowercase hex is the stored hash.
        matches: bool,
        seq: Option<u64>,
    },
    /// Chain fields as the full parse read them.
    Parsed(Box<ParsedLink>),
}

/// [`Link::Parsed`]'s fields.
struct ParsedLink {
    prev: String,
    stored: String,
    /// The recomputed hash; `None` when it is the stored one.
    computed: Option<String>,
    seq: Option<u64>,
}

impl Link {
    /// The link of a line whose bytes are `line`, borrowed; `hex` holds a
    /// recomputed hash that differs from the stored one while it is read.
    /// A range outside the line (which the scan that found it rules out)
    /// makes the link unreadable rather than wrong.
    fn resolve<'a>(&'a self, line: &'a [u8], hex: &'a mut [u8; 64]) -> LinkRef<'a> {
        match self {
            Link::Unchained => LinkRef::Unchained,
            Link::Unreadable(e) => LinkRef::Unreadable(e),
            Link::InLine {
                prev,
                stored,
                digest,
                matches,
                seq,
            } => {
                let bytes = |(a, z): (u32, u32)| line.get(a as usize..z as usize);
                let (Some(prev), Some(stored)) = (bytes(*prev), bytes(*stored)) else {
                    return LinkRef::Unreadable("prev_hash or hash lies outside the line");
                };
                let computed = if *matches {
                    stored
                } else {
                    *hex = fast::hex_digest(digest);
                    &hex[..]
                };
                LinkRef::Hashed {
                    prev,
                    stored,
                    computed,
                    seq: *seq,
                }
            }
            Link::Parsed(p) => LinkRef::Hashed {
                prev: p.prev.as_bytes(),
                stored: p.stored.as_bytes(),
                computed: p.computed.as_deref().unwrap_or(&p.stored).as_bytes(),
                seq: p.seq,
            },
        }
    }
}

thread_local! {
    /// Buffers of the line-by-line reading from bytes, one set per
    /// parsing thread.
    static SCRATCH: std::cell::RefCell<borrowed::Scratch> = Default::default();
}

/// Reads a line in RFC 8785 form from its bytes ([`borrowed`]): its record
/// and its link, the hash compared as bytes and written out only when it
/// differs from the stored one. `None` when the full parse must decide.
fn read_canonical(bytes: &[u8], meta: LineMeta) -> Option<ParsedLine> {
    let c = SCRATCH.with(|s| {
        let mut s = s.try_borrow_mut().ok()?;
        borrowed::read(bytes, meta.source, &mut s)
    })?;
    let range = |(a, z): (usize, usize)| Some((u32::try_from(a).ok()?, u32::try_from(z).ok()?));
    let stored = bytes.get(c.raw.stored.0..c.raw.stored.1)?;
    Some(ParsedLine {
        has_hash: true,
        link: Link::InLine {
            prev: range(c.raw.prev)?,
            stored: range(c.raw.stored)?,
            matches: fast::hex_digest(&c.raw.digest)[..] == *stored,
            digest: c.raw.digest,
            seq: c.seq,
        },
        records: Ok(Records::One(c.record)),
        ambiguous: Vec::new(),
    })
}

/// Parses one line and recomputes its chain hash (the costly part, done in
/// parallel by [`for_each_line_parallel`]).
fn parse_line(bytes: &[u8], meta: LineMeta) -> FieldResult<ParsedLine> {
    if let Some(line) = read_canonical(bytes, meta) {
        return Ok(line);
    }
    parse_line_fully(bytes, meta)
}

/// [`parse_line`] through the parsed fields, for any line.
fn parse_line_fully(bytes: &[u8], meta: LineMeta) -> FieldResult<ParsedLine> {
    // The action record is kept as its text until the line is known to be
    // in its canonical form: then that text is the record's RFC 8785 form
    // as it stands (`ActionRecord::from_canonical_json`), and no value tree
    // is built for it.
    let mut m = Fields::parse(bytes, KNOWN, RAW)?;
    let has_hash = m.contains_key("hash");
    // A line in its canonical form has no repeated key and no integer
    // beyond 2^53 (`raw_chain_hash`): it needs no scan for them.
    let mut canonical = false;
    let link = match (m.remove("prev_hash"), m.remove("hash")) {
        (Some(Value::String(prev)), Some(Value::String(stored))) => {
            // Most lines are written in their canonical form: hashed from
            // their bytes, without writing the record back out.
            let computed = match rawhash::raw_chain_hash(bytes) {
                Some(h) => {
                    canonical = true;
                    h
                }
                None => {
                    m.materialize()?;
                    chain_hash_of(&prev, m.members())
                }
            };
            Link::Parsed(Box::new(ParsedLink {
                computed: (computed != stored).then_some(computed),
                seq: m.seq(),
                prev,
                stored,
            }))
        }
        (None, None) => Link::Unchained,
        _ => Link::Unreadable("prev_hash and hash must both be present and strings".into()),
    };
    if !canonical {
        m.materialize()?;
    }
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
                event.set_facts(f);
            }
        }
    }
    Ok(ParsedLine {
        has_hash,
        link,
        records: records.map(Records::Many),
        ambiguous,
    })
}

#[cfg(test)]
mod tests;
