//! Verifying a native journal without building its records
//! (docs/design.md §6.8): the journal is read in large blocks cut at line
//! ends; on every core, each line of a block is scanned for its RFC 8785
//! form, UTF-8 included, and hashed from its bytes ([`super::rawhash`]),
//! and its fields are checked the way [`super::parse_record`] would take
//! them, borrowed from the line. A line any of this is unsure of is parsed
//! as a load parses it ([`super::parse_line`]). The links then go to the
//! chain tracker in line order ([`super::Applier`]), so the report is the
//! one the full read gives.

use super::rawhash::{Member, RawLine, raw_scan, raw_scan_prefix};
use super::{Applier, Fate, HeldRecords, LinkRef, ParsedLine, parse_line};
#[cfg(doc)]
use crate::journal::chain::ChainTracker;
use crate::journal::chain::Run;
use crate::journal::fields::FieldResult;
use crate::journal::lines::{self, MAX_LINE};
use crate::journal::{JournalError, LineMeta, ReadCtx, too_long_message};
use crate::model::SourceRef;
use rayon::prelude::*;
use record::{Slot, Top, V, readable, unsigned};
use std::io::BufRead;

/// Bytes read at a time (more when a line is longer); small in tests, so
/// that short journals cross many blocks.
const BLOCK: usize = if cfg!(test) { 8 << 10 } else { 8 << 20 };

/// Bytes of a block one task checks: enough pieces for every core, few
/// enough that a task's overhead does not show.
const PIECE: usize = if cfg!(test) { 1 << 10 } else { 256 << 10 };

/// A UTF-8 byte order mark, which the first line may start with (not part
/// of it, as for [`lines::LineReader`]).
const BOM: &[u8] = b"\xEF\xBB\xBF";

/// A block of whole lines as read, cut into the pieces checked in
/// parallel.
#[derive(Default)]
struct Block {
    /// The buffer the block is read into, reused from block to block (its
    /// length is its room, zeroed once: reads go straight into it).
    buf: Vec<u8>,
    /// How many bytes of `buf` the block has: whole lines, the last one
    /// without a newline only at the end of the journal.
    len: usize,
    /// Where each piece is in `data` (pieces are whole lines and cover it).
    pieces: Vec<(usize, usize)>,
    /// A line longer than [`MAX_LINE`], whose bytes were skipped: its
    /// length (the whole block).
    too_long: Option<u64>,
    /// Whether the block starts the journal (its first line may carry a
    /// byte order mark).
    first: bool,
}

impl Block {
    /// The block's lines.
    fn data(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// One line of a block, checked.
enum Item {
    /// Blank (counted as read, nothing else).
    Blank,
    /// Longer than [`MAX_LINE`] bytes: a bad line, outside the chain.
    TooLong(u64),
    /// Checked from its bytes: a chained line whose record is readable.
    /// Ranges are into the block's bytes.
    Raw {
        prev: (usize, usize),
        stored: (usize, usize),
        digest: [u8; 32],
        /// Whether the digest is the stored hash (in lowercase hex).
        matches: bool,
        seq: Option<u64>,
        records: u64,
        terminated: bool,
        /// Whether the line joins a run the chain tracker can take at once
        /// ([`ChainTracker::link_run`]): it and the item before it in its
        /// piece are such lines, each storing its recomputed hash and
        /// ending with a newline, and it links to that line's stored hash
        /// with the next `seq` (or without `seq`, as that line). Found
        /// where the lines were just hashed; set by [`mark_runs`].
        follows: bool,
    },
    /// Parsed as a load parses it; `at` is the range of the bytes parsed
    /// in the block.
    Parsed {
        terminated: bool,
        at: (usize, usize),
        line: Box<FieldResult<ParsedLine>>,
    },
}

/// Verifies a native JSONL journal in `ctx` (lines, bad lines, notes,
/// records counted and chain status exactly as the full read finds them).
///
/// # Errors
/// I/O errors.
pub(super) fn read(ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
    let source = ctx.source;
    let journal = ctx.journal;
    let mut input = BlockReader {
        inner: source.open()?,
        carry: Vec::new(),
        eof: false,
        first: true,
        offset: 0,
    };
    let mut ap = Applier::default();
    let mut no: u32 = 0;
    let mut current = Block::default();
    let mut next = Block::default();
    let mut more = input.fill(&mut current).map_err(|e| source.io_error(e))?;
    let mut checked: Option<(Block, Vec<Vec<Item>>)> = None;
    // The item lists of the block applied last, emptied, for the next
    // check (allocated once, not once per block).
    let mut spare_items: Vec<Vec<Item>> = Vec::new();
    while more {
        // The pool checks `current` while this thread applies the block
        // before it and reads the one after.
        let lists = std::mem::take(&mut spare_items);
        let (items, read, applied) = std::thread::scope(|s| {
            let checking = s.spawn(|| check_block(&current, journal, lists));
            let applied = checked.take().map(|(block, mut items)| {
                apply_block(ctx, &mut ap, &mut no, &block, &mut items);
                (block, items)
            });
            let read = input.fill(&mut next);
            (checking.join(), read, applied)
        });
        let items = match items {
            Ok(i) => i,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        more = read.map_err(|e| source.io_error(e))?;
        (ctx.progress)(input.offset);
        // The block just applied is reused for the read after next.
        let spare = match applied {
            Some((block, items)) => {
                spare_items = items;
                block
            }
            None => Block::default(),
        };
        let done = std::mem::replace(&mut current, std::mem::replace(&mut next, spare));
        checked = Some((done, items));
    }
    if let Some((block, mut items)) = checked {
        apply_block(ctx, &mut ap, &mut no, &block, &mut items);
    }
    ap.finish(ctx);
    Ok(())
}

/// Reads a journal in blocks of whole lines.
struct BlockReader<R> {
    inner: R,
    /// The start of a line read with the block before.
    carry: Vec<u8>,
    eof: bool,
    /// Whether no block was read yet.
    first: bool,
    /// Bytes read so far.
    offset: u64,
}

impl<R: BufRead> BlockReader<R> {
    /// Reads the next block into `block`; false at the end of the journal.
    fn fill(&mut self, block: &mut Block) -> std::io::Result<bool> {
        block.pieces.clear();
        block.too_long = None;
        block.first = self.first;
        let carried = self.carry.len();
        if block.buf.len() < BLOCK.max(carried) {
            block.buf.resize(BLOCK.max(carried), 0);
        }
        block.buf[..carried].copy_from_slice(&self.carry);
        self.carry.clear();
        let mut len = carried;
        // Where the search for a newline goes on from.
        let mut searched = 0usize;
        let mut last_newline: Option<usize> = None;
        while !self.eof {
            let end = if len < BLOCK {
                BLOCK
            } else if last_newline.is_none() {
                // One line longer than a block: read on to its end.
                len + BLOCK
            } else {
                break;
            };
            if block.buf.len() < end {
                block.buf.resize(end, 0);
            }
            let n = match self.inner.read(&mut block.buf[len..end]) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.offset += n as u64;
            if n == 0 {
                self.eof = true;
                break;
            }
            len += n;
            if let Some(i) = memchr::memrchr(b'\n', &block.buf[searched..len]) {
                last_newline = Some(searched + i);
            }
            searched = len;
            if last_newline.is_none() && len > MAX_LINE {
                // Longer than any line kept: its bytes are dropped as they
                // are read, and it is reported by its length.
                let n = len as u64 + self.skip_line()?;
                block.too_long = Some(n);
                block.len = 0;
                self.first = false;
                return Ok(true);
            }
        }
        if !self.eof {
            // The start of the next line waits for the next block.
            let end = last_newline.map_or(0, |i| i + 1);
            self.carry.extend_from_slice(&block.buf[end..len]);
            len = end;
        }
        block.len = len;
        if len == 0 {
            return Ok(false);
        }
        self.first = false;
        let data = &block.buf[..len];
        let mut start = 0;
        while start < data.len() {
            let end = match data.get(start + PIECE..) {
                Some(rest) => {
                    memchr::memchr(b'\n', rest).map_or(data.len(), |i| start + PIECE + i + 1)
                }
                None => data.len(),
            };
            block.pieces.push((start, end));
            start = end;
        }
        Ok(true)
    }

    /// Reads and drops the rest of a line; returns how many bytes it had
    /// before its newline.
    fn skip_line(&mut self) -> std::io::Result<u64> {
        let mut n = 0u64;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                self.eof = true;
                return Ok(n);
            }
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    self.inner.consume(i + 1);
                    self.offset += i as u64 + 1;
                    return Ok(n + i as u64);
                }
                None => {
                    let len = chunk.len();
                    self.inner.consume(len);
                    self.offset += len as u64;
                    n += len as u64;
                }
            }
        }
    }
}

/// Checks every line of a block, piece by piece on rayon's pool; the items
/// come back in line order.
/// `lists` are empty item lists to fill (more are made when they are too
/// few).
fn check_block(
    block: &Block,
    journal: crate::model::JournalId,
    mut lists: Vec<Vec<Item>>,
) -> Vec<Vec<Item>> {
    let n = if block.too_long.is_some() {
        1
    } else {
        block.pieces.len()
    };
    lists.resize_with(n.max(lists.len()), Vec::new);
    if let Some(n) = block.too_long {
        lists[0].push(Item::TooLong(n));
        return lists;
    }
    lists
        .par_iter_mut()
        .zip(block.pieces.par_iter())
        .enumerate()
        .for_each(|(k, (items, &(a, z)))| {
            check_piece(block.data(), (a, z), block.first && k == 0, journal, items);
        });
    lists
}

/// Checks the lines of one piece of a block.
fn check_piece(
    data: &[u8],
    (a, z): (usize, usize),
    journal_start: bool,
    journal: crate::model::JournalId,
    items: &mut Vec<Item>,
) {
    items.reserve((z - a) / 256 + 1);
    let mut scratch = Scratch::default();
    let mut start = a;
    while start < z {
        let first_line = journal_start && start == a;
        // Most lines are scanned from their start before their end is
        // known: the object's end is the line's (the newline need not be
        // searched for first). The journal's first line may start with a
        // byte order mark: it takes the common way.
        let pre = if first_line || data[start] != b'{' {
            Pre::NotTried
        } else {
            scan_from(data, (start, z), &mut scratch)
        };
        let (end, terminated, next) = match pre {
            Pre::Found { end, next, .. } => (end, next > end, next),
            _ => match memchr::memchr(b'\n', &data[start..z]) {
                Some(i) => (start + i, true, start + i + 1),
                None => (z, false, z),
            },
        };
        items.push(check_line(
            data,
            (start, end),
            (terminated, first_line),
            journal,
            &mut scratch,
            pre,
        ));
        start = next;
    }
    mark_runs(data, items);
}

/// Sets [`Item::Raw`]'s `follows` on the items of one piece.
fn mark_runs(data: &[u8], items: &mut [Item]) {
    // The stored hash and seq of the item before, when it is a line that
    // stores its recomputed hash and ends with a newline.
    let mut before: Option<((usize, usize), Option<u64>)> = None;
    for item in items {
        let Item::Raw {
            prev,
            stored,
            matches,
            seq,
            terminated,
            follows,
            ..
        } = item
        else {
            before = None;
            continue;
        };
        let sound = *matches && *terminated;
        *follows = sound
            && before.is_some_and(|(b, bseq)| {
                let next_seq = match (bseq, *seq) {
                    (Some(b), Some(s)) => b.checked_add(1) == Some(s),
                    (None, None) => true,
                    _ => false,
                };
                next_seq && data[prev.0..prev.1] == data[b.0..b.1]
            });
        before = sound.then_some((*stored, *seq));
    }
}

/// What the scan from a line's start found.
enum Pre {
    /// Not scanned yet.
    NotTried,
    /// Not an object in RFC 8785 form followed by the line's end: the
    /// scan of the line alone declines it too.
    Declined,
    /// The line's object, its chain hash, and where the line ends: `end`
    /// is where its newline is (or the piece's end), `next` where the
    /// next line starts (after the newline, or the piece's end).
    Found {
        raw: RawLine,
        end: usize,
        next: usize,
    },
}

/// Scans the object at `start` in `data[..z]` and finds the line's end
/// right after it: a newline, `\r\n`, or the end of the piece `z`.
/// Anything else after it (spaces, a second value) is [`Pre::Declined`],
/// as [`raw_scan`] of the line would be: the scan reads no byte past the
/// object, and no newline.
fn scan_from(data: &[u8], (start, z): (usize, usize), scratch: &mut Scratch) -> Pre {
    let rest = &data[start..z];
    let Some((raw, end)) = raw_scan_prefix(rest, &mut scratch.members) else {
        return Pre::Declined;
    };
    let (end, next) = match &rest[end..] {
        [] => (end, end),
        [b'\n', ..] => (end, end + 1),
        [b'\r', b'\n', ..] => (end + 1, end + 2),
        _ => return Pre::Declined,
    };
    Pre::Found {
        raw,
        end: start + end,
        next: start + next,
    }
}

/// Buffers reused from line to line.
#[derive(Default)]
struct Scratch {
    members: Vec<Member>,
    nested: Vec<Member>,
}

/// Checks one line: `(a, z)` is its range in `data` without its newline.
fn check_line(
    data: &[u8],
    (a, z): (usize, usize),
    (terminated, first_line): (bool, bool),
    journal: crate::model::JournalId,
    scratch: &mut Scratch,
    pre: Pre,
) -> Item {
    if z - a > MAX_LINE {
        return Item::TooLong((z - a) as u64);
    }
    let mut z = z;
    if terminated && z > a && data[z - 1] == b'\r' {
        z -= 1;
    }
    let mut a = a;
    if first_line && data[a..z].starts_with(BOM) {
        a += BOM.len();
    }
    let bytes = &data[a..z];
    if lines::is_blank(bytes) {
        return Item::Blank;
    }
    let checked = match pre {
        Pre::NotTried => raw_scan(bytes, &mut scratch.members)
            .and_then(|raw| raw_item(data, (a, z), terminated, raw, scratch)),
        Pre::Declined => None,
        Pre::Found { raw, .. } => raw_item(data, (a, z), terminated, raw, scratch),
    };
    if let Some(item) = checked {
        return item;
    }
    // The line number and offset are not known here; they only place the
    // records, which are dropped.
    let meta = LineMeta {
        source: SourceRef::Line {
            journal,
            line: 0,
            offset: crate::model::LineOffset::default(),
            len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        },
        terminated,
    };
    Item::Parsed {
        terminated,
        at: (a, z),
        line: Box::new(parse_line(bytes, meta)),
    }
}

/// The line at `(a, z)` checked from its bytes, given what [`raw_scan`]
/// found in it (UTF-8 included: the scan checks it) and left in
/// `scratch.members`, or `None` when the full parse must decide.
fn raw_item(
    data: &[u8],
    (a, z): (usize, usize),
    terminated: bool,
    raw: RawLine,
    scratch: &mut Scratch,
) -> Option<Item> {
    let line = &data[a..z];
    let RawLine {
        digest,
        prev,
        stored,
    } = raw;
    let f = Top::new(line, &scratch.members);
    let records = readable(&f, &mut scratch.nested)?;
    let seq = match f.get(Slot::seq) {
        V::Num(n) => unsigned(n),
        _ => None,
    };
    Some(Item::Raw {
        prev: (a + prev.0, a + prev.1),
        stored: (a + stored.0, a + stored.1),
        digest,
        matches: line[stored.0..stored.1] == hex_digest(&digest),
        seq,
        records,
        terminated,
        follows: false,
    })
}

/// Feeds a checked block to the context and the chain, in line order.
/// Lines marked `follows` while the chain is intact are given to the
/// tracker as runs ([`ChainTracker::link_run`]): this thread, to which the
/// block's bytes are cold, reads only each run's last two hashes.
fn apply_block(
    ctx: &mut ReadCtx<'_>,
    ap: &mut Applier,
    no: &mut u32,
    block: &Block,
    items: &mut [Vec<Item>],
) {
    let data = block.data();
    for list in items.iter_mut() {
        let mut run = RunSoFar::default();
        for k in 0..list.len() {
            *no = no.saturating_add(1);
            let no = *no;
            ctx.count_line();
            match list[k] {
                Item::Raw {
                    stored,
                    seq,
                    records,
                    follows: true,
                    ..
                } if run.lines > 0 || ap.intact() => {
                    if run.lines == 0 {
                        run.first = (k, no);
                    }
                    run.lines += 1;
                    run.before_last = run.last.2;
                    run.last = (no, seq, stored);
                    ctx.count_unbuilt(records);
                    continue;
                }
                _ => {}
            }
            run.flush(ctx, ap, data, list);
            // Taken, not copied (a parsed line holds its records); the
            // list is cleared below, keeping its room for the next block.
            match std::mem::replace(&mut list[k], Item::Blank) {
                Item::Blank => {}
                Item::TooLong(n) => ctx.bad_line(no, too_long_message(n)),
                raw @ Item::Raw {
                    records,
                    stored,
                    seq,
                    ..
                } => {
                    match link_alone(ctx, ap, data, no, &raw) {
                        Fate::Now => ctx.count_unbuilt(records),
                        Fate::Held => ap.hold(HeldRecords::Counted(records)),
                        Fate::Repeat => {}
                    }
                    run.last = (no, seq, stored);
                }
                Item::Parsed {
                    terminated,
                    at: (a, z),
                    line,
                } => {
                    if let Err(e) = ap.parsed(ctx, no, terminated, &data[a..z], *line) {
                        ctx.bad_line(no, e);
                    }
                }
            }
        }
        // A run ends with its piece: the next piece's first line is
        // linked alone.
        run.flush(ctx, ap, data, list);
        list.clear();
    }
}

/// Links one [`Item::Raw`] line, numbered `no`, by itself.
fn link_alone(ctx: &mut ReadCtx<'_>, ap: &mut Applier, data: &[u8], no: u32, item: &Item) -> Fate {
    let Item::Raw {
        prev,
        stored,
        digest,
        matches,
        seq,
        terminated,
        ..
    } = *item
    else {
        return Fate::Now;
    };
    // The hash as recomputed is the stored one when they match (compared
    // on the pool); written out only when not.
    let hex = (!matches).then(|| hex_digest(&digest));
    let stored = &data[stored.0..stored.1];
    ap.link(
        ctx,
        no,
        terminated,
        true,
        LinkRef::Hashed {
            prev: &data[prev.0..prev.1],
            stored,
            computed: hex.as_ref().map_or(stored, |h| &h[..]),
            seq,
        },
        &[],
    )
}

/// The run of `follows` lines being gathered by [`apply_block`] in one
/// piece's items, and the last line linked (which the run's first line
/// follows).
#[derive(Default)]
struct RunSoFar {
    lines: u64,
    /// Where the run starts in the piece's items, and its first line's
    /// number.
    first: (usize, u32),
    /// The last line: its number, seq and stored hash's range.
    last: (u32, Option<u64>, (usize, usize)),
    /// The stored hash's range of the line before it.
    before_last: (usize, usize),
}

impl RunSoFar {
    /// Gives the run gathered so far, whose items are in `items`, to the
    /// tracker.
    fn flush(&mut self, ctx: &mut ReadCtx<'_>, ap: &mut Applier, data: &[u8], items: &[Item]) {
        if self.lines == 0 {
            return;
        }
        let (last_line, last_seq, last) = self.last;
        let before_last = self.before_last;
        let took = ap.link_run(Run {
            lines: self.lines,
            last_line,
            last_seq,
            last: &data[last.0..last.1],
            before_last: &data[before_last.0..before_last.1],
        });
        if !took {
            // A run is gathered only while the chain is intact, and nothing
            // reaches the tracker while it is: never refused. Were it, its
            // lines would still be linked, each alone.
            let (k, first_line) = self.first;
            let run = items
                .iter()
                .skip(k)
                .take_while(|i| matches!(i, Item::Raw { .. }));
            for (n, item) in (first_line..=last_line).zip(run) {
                link_alone(ctx, ap, data, n, item);
            }
        }
        self.lines = 0;
    }
}

/// Lowercase hex of a digest, on the stack: nibbles first, then each
/// turned into its digit without a branch or a table (a loop the compiler
/// runs on vector registers).
pub(super) fn hex_digest(d: &[u8; 32]) -> [u8; 64] {
    let mut out = [0u8; 64];
    for (pair, &b) in out.chunks_exact_mut(2).zip(d) {
        pair[0] = b >> 4;
        pair[1] = b & 15;
    }
    for x in &mut out {
        // 9 - x wraps to 0xF6 and above for the nibbles 10..=15, which
        // are letters: 'a' is '0' + 10 + 39.
        *x += b'0' + (9u8.wrapping_sub(*x) >> 7) * 39;
    }
    out
}

pub(super) mod record;
#[cfg(test)]
mod tests;
