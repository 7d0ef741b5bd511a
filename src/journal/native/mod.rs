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
    /// Lines held back while they may repeat earlier ones ([`Replay`]).
    held: Option<Replay>,
    /// Runs of lines found to repeat earlier ones, for the notes: first and
    /// last line, first and last `seq`.
    repeats: Vec<(u32, u32, Option<u64>, Option<u64>)>,
    /// How many lines those runs hold.
    repeated_lines: u64,
}

/// A run of chained lines that may repeat lines already linked: a log
/// shipper that delivers at least once re-sends lines it is not sure
/// arrived, byte for byte (docs/design.md §6.9). The run starts with a
/// line that does not link to the line linked last, stores the hash
/// recomputed from it, and goes back in `seq`; each next line links to the
/// one before it in the run. When a line of the run stores the very hash
/// the chain expects (that of the line linked last), the whole run is a
/// copy of the lines that led there: each of its lines hashes to the
/// stored hash of the genuine line at its place, so by SHA-256's collision
/// resistance it is that line. Such lines are read once: the copies are
/// dropped, with a note, and the chain goes on. Any other line releases
/// the run: its lines go to the chain tracker and their records out, as
/// they would have without the wait, so a break is judged as before.
struct Replay {
    lines: Vec<HeldLine>,
    /// The stored hash of the run's last line.
    last: Vec<u8>,
}

/// A line held in a [`Replay`], with what the tracker and the journal
/// need to take it later.
struct HeldLine {
    no: u32,
    terminated: bool,
    prev: Vec<u8>,
    stored: Vec<u8>,
    computed: Vec<u8>,
    seq: Option<u64>,
    records: HeldRecords,
}

/// The records of a held line: built (a load), or counted (`verify`).
enum HeldRecords {
    None,
    Built(Records),
    Counted(u64),
}

/// What [`Applier::link`] made of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    /// Linked: its records go out now.
    Now,
    /// Held back: its records wait with it ([`Applier::hold`]).
    Held,
    /// A copy of an earlier line: its records are dropped.
    Repeat,
}

/// How many runs of repeated lines the notes name; the rest are counted.
const NAMED_REPEATS: usize = 20;

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
    fn unreadable(&mut self, ctx: &mut ReadCtx<'_>, no: u32, terminated: bool, message: &str) {
        // A held run is judged before the line after it: were the tracker
        // to break here first, the run's lines would read as verified.
        self.release(ctx);
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
        self.held.is_none() && self.chain.as_ref().is_some_and(|t| !t.broken())
    }

    /// A run of chained lines checked against each other
    /// ([`ChainTracker::link_run`]); false when the tracker takes none.
    fn link_run(&mut self, run: crate::journal::chain::Run<'_>) -> bool {
        self.chain.as_mut().is_some_and(|t| t.link_run(run))
    }

    /// A line that was read as an object: `has_hash` when it carries
    /// `hash` (a journal is chained from its first such line on). Says
    /// what becomes of its records ([`Fate`]).
    fn link(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        no: u32,
        terminated: bool,
        has_hash: bool,
        link: LinkRef<'_>,
        ambiguous: &[crate::journal::ambiguity::Ambiguity],
    ) -> Fate {
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
        if !ambiguous.is_empty() {
            self.ambiguous_lines += 1;
            if self.ambiguous_lines <= NAMED_AMBIGUOUS {
                for a in ambiguous {
                    ctx.note(format!("line {no}: ambiguous: {}", a.without_value()));
                }
            }
        }
        if let LinkRef::Hashed {
            prev,
            stored,
            computed,
            seq,
        } = link
        {
            match self.replay(no, terminated, (prev, stored, computed, seq)) {
                Fate::Now => {}
                fate => return fate,
            }
        }
        // Anything but a line that goes on a replay ends it.
        self.release(ctx);
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
        Fate::Now
    }

    /// Whether a chained line starts, goes on or ends a [`Replay`]:
    /// [`Fate::Now`] when it does none of these.
    fn replay(
        &mut self,
        no: u32,
        terminated: bool,
        (prev, stored, computed, seq): (&[u8], &[u8], &[u8], Option<u64>),
    ) -> Fate {
        let Some(t) = self.chain.as_ref() else {
            return Fate::Now;
        };
        if stored != computed {
            return Fate::Now;
        }
        let held = |records| HeldLine {
            no,
            terminated,
            prev: prev.to_vec(),
            stored: stored.to_vec(),
            computed: computed.to_vec(),
            seq,
            records,
        };
        if let Some(r) = &mut self.held {
            if prev != r.last.as_slice() {
                return Fate::Now;
            }
            if t.expects() == Some(stored) {
                let first = r.lines.first().map_or((no, seq), |h| (h.no, h.seq));
                self.repeats.push((first.0, no, first.1, seq));
                self.repeated_lines += r.lines.len() as u64 + 1;
                self.held = None;
                return Fate::Repeat;
            }
            r.lines.push(held(HeldRecords::None));
            r.last.clear();
            r.last.extend_from_slice(stored);
            return Fate::Held;
        }
        let Some(expected) = t.expects() else {
            return Fate::Now;
        };
        let back = match (seq, t.last_seq()) {
            (Some(s), Some(last)) => s <= last,
            _ => true,
        };
        if prev == expected || !back {
            return Fate::Now;
        }
        if stored == expected {
            // The line linked last, again.
            self.repeats.push((no, no, seq, seq));
            self.repeated_lines += 1;
            return Fate::Repeat;
        }
        self.held = Some(Replay {
            lines: vec![held(HeldRecords::None)],
            last: stored.to_vec(),
        });
        Fate::Held
    }

    /// Gives the records of the line just held ([`Fate::Held`]) to wait
    /// with it.
    fn hold(&mut self, records: HeldRecords) {
        if let Some(h) = self.held.as_mut().and_then(|r| r.lines.last_mut()) {
            h.records = records;
        }
    }

    /// Ends a [`Replay`] that turned out not to be one: its lines go to
    /// the tracker, and their records out, in order.
    fn release(&mut self, ctx: &mut ReadCtx<'_>) {
        let Some(r) = self.held.take() else {
            return;
        };
        for h in r.lines {
            if let Some(t) = self.chain.as_mut() {
                t.link(LinkInput {
                    line: h.no,
                    seq: h.seq,
                    prev: &h.prev,
                    stored: Some(&h.stored),
                    computed: &h.computed,
                    terminated: h.terminated,
                    sig: SigResult::NotChecked,
                });
            }
            match h.records {
                HeldRecords::None => {}
                HeldRecords::Built(Records::One(r)) => ctx.emit(r),
                HeldRecords::Built(Records::Many(rs)) => rs.into_iter().for_each(|r| ctx.emit(r)),
                HeldRecords::Counted(n) => ctx.count_unbuilt(n),
            }
        }
    }

    /// The note on lines read once because they repeat earlier ones.
    fn repeat_notes(&self, ctx: &mut ReadCtx<'_>) {
        for &(a, z, s, e) in self.repeats.iter().take(NAMED_REPEATS) {
            let lines = if a == z {
                format!("line {a}")
            } else {
                format!("lines {a}–{z}")
            };
            let seqs = match (s, e) {
                (Some(s), Some(e)) if s != e => format!(" (seq {s}–{e})"),
                (Some(s), _) => format!(" (seq {s})"),
                _ => String::new(),
            };
            ctx.note(format!(
                "{lines}{seqs} repeat earlier lines of the chain byte for byte, as a log shipper that delivers at least once re-sends lines: read once, not as new events"
            ));
        }
        if self.repeats.len() > NAMED_REPEATS {
            ctx.note(format!(
                "{} more run(s) of repeated lines read once ({} repeated lines in all)",
                self.repeats.len() - NAMED_REPEATS,
                self.repeated_lines
            ));
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
                self.unreadable(ctx, no, terminated, &e.message);
                return Err(e);
            }
        };
        let mut hex = [0u8; 64];
        let link = line.link.resolve(bytes, &mut hex);
        let fate = self.link(ctx, no, terminated, line.has_hash, link, &line.ambiguous);
        let records = line.records?;
        match (fate, records) {
            (Fate::Now, Records::One(r)) => ctx.emit(r),
            (Fate::Now, Records::Many(rs)) => rs.into_iter().for_each(|r| ctx.emit(r)),
            (Fate::Held, records) => self.hold(HeldRecords::Built(records)),
            (Fate::Repeat, _) => {}
        }
        Ok(())
    }

    /// The notes and chain status once every line was seen.
    fn finish(mut self, ctx: &mut ReadCtx<'_>) {
        self.release(ctx);
        self.repeat_notes(ctx);
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
