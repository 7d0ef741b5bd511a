//! Reading one journal: the context a reader writes into, the reader
//! interface, and the line loops readers share.

use super::{
    BadLine, Capabilities, ChainKeys, Format, JournalError, JournalSource, LineError,
    MAX_KEPT_BAD_LINES, lines,
};
use crate::journal::chain::ChainStatus;
use crate::model::{JournalId, Record, SourceRef};
use rayon::prelude::*;

/// Everything a reader needs while it reads one journal.
pub struct ReadCtx<'a> {
    /// Index of this journal.
    pub journal: JournalId,
    /// The journal being read.
    pub source: &'a JournalSource,
    /// The journal's content identity ([`JournalSource::identity`]), with
    /// `~N` when another loaded journal has the same one: the namespace of
    /// the execution ids and intent scopes a format does not carry itself
    /// (docs/design.md §2.6).
    pub identity: String,
    /// Where records go.
    pub sink: &'a mut dyn FnMut(Record),
    /// Called now and then with bytes read so far in this journal.
    pub progress: &'a mut dyn FnMut(u64),
    /// Keys for chain checks and decryption.
    pub keys: &'a ChainKeys,
    /// Formats of the other journals loaded with this one (empty for
    /// `retrace verify`, which reads each journal on its own).
    pub companions: Vec<Format>,
    /// The part of the journal to read: readers that query a database put
    /// it in their queries; [`ReadCtx::emit`] applies it to every record.
    /// With a lookback it starts before the investigation's window
    /// ([`super::LoadOptions::read_window`]).
    pub window: super::TimeWindow,
    /// With a lookback: the investigation's own start (executions that
    /// began before it are context), and the executions of the reach to
    /// leave out ([`super::Lookback`]).
    lookback: Option<(chrono::DateTime<chrono::Utc>, super::Lookback)>,
    /// The spans of the other OpenTelemetry journals loaded with this one
    /// (none for a single one, for `retrace verify` and for `watch`).
    pub(crate) traces: Option<&'a super::otlp::Spans<'a>>,
    /// Sound lines or spans that give no record of this journal
    /// ([`ReadCtx::usable_without_records`]).
    usable_without_records: u64,
    /// Whether the records read are dropped unseen (`retrace verify`), so
    /// that a reader may count them instead of building them
    /// ([`ReadCtx::count_unbuilt`]).
    records_unused: bool,
    /// How often each line hash was seen ([`ReadCtx::line_id`]).
    line_ids: std::collections::HashMap<[u8; 4], u32>,
    /// Executions seen so far, and whether the window keeps them.
    in_window: std::collections::HashMap<String, Kept>,
    left_out: u64,
    chain: ChainStatus,
    capabilities: Capabilities,
    lines: u64,
    records: u64,
    bad: Vec<LineError>,
    bad_count: u64,
    notes: Vec<String>,
}

/// Whether the time window keeps an execution ([`ReadCtx::emit`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kept {
    /// It began in the window.
    Yes,
    /// It began in the lookback before the window ([`super::Lookback`]).
    Context,
    /// It is left out.
    No,
}

/// What a reader found, once it is done: [`ReadCtx::finish`].
pub(super) struct Read {
    pub lines: u64,
    /// Sound lines or spans that gave no record of this journal.
    pub usable_without_records: u64,
    pub left_out_executions: u64,
    pub records: u64,
    pub bad: Vec<LineError>,
    pub bad_count: u64,
    pub notes: Vec<String>,
    pub chain: ChainStatus,
    pub capabilities: Capabilities,
}

impl<'a> ReadCtx<'a> {
    /// A context for reading `source` (journal `journal`) as `format`, at
    /// the format's capabilities and default chain status.
    pub(super) fn new(
        journal: JournalId,
        source: &'a JournalSource,
        identity: String,
        format: Format,
        (sink, progress): (&'a mut dyn FnMut(Record), &'a mut dyn FnMut(u64)),
        keys: &'a ChainKeys,
        companions: Vec<Format>,
    ) -> ReadCtx<'a> {
        ReadCtx {
            journal,
            source,
            identity,
            sink,
            line_ids: std::collections::HashMap::new(),
            progress,
            keys,
            companions,
            window: super::TimeWindow::default(),
            lookback: None,
            traces: None,
            usable_without_records: 0,
            records_unused: false,
            in_window: std::collections::HashMap::new(),
            left_out: 0,
            chain: format.default_chain(),
            capabilities: format.capabilities(),
            lines: 0,
            records: 0,
            bad: Vec::new(),
            bad_count: 0,
            notes: Vec::new(),
        }
    }

    /// A content-derived id for the record on a line, for formats that give
    /// it none: `<identity>:<8 hex of SHA-256 over the line's bytes>`,
    /// with `~N` on the Nth line of the journal with that hash (an
    /// identical line, or, rarely, a collision: either way two lines never
    /// share an id). Never a line
    /// number, a file name or a load order: the same line keeps its id in
    /// a renamed or copied journal, and after lines before it were cut
    /// (docs/design.md §2.6).
    pub fn line_id(&mut self, bytes: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        let digest = Sha256::digest(bytes);
        let mut key = [0u8; 4];
        key.copy_from_slice(&digest[..4]);
        let n = self.line_ids.entry(key).or_insert(0);
        *n += 1;
        let hash = hex::encode(key);
        if *n == 1 {
            format!("{}:{hash}", self.identity)
        } else {
            format!("{}:{hash}~{n}", self.identity)
        }
    }

    /// The intent scope of a journal whose format names none: the
    /// journal itself, by content (`journal:<identity>`; docs/design.md
    /// §2.6).
    pub fn journal_scope(&self) -> String {
        format!("journal:{}", self.identity)
    }

    /// Continues the count of identical lines of an earlier read of the
    /// same journal ([`ReadCtx::line_id`]; a followed journal is read a
    /// poll at a time, docs/design.md §7.7).
    pub(super) fn carry_line_ids(&mut self, ids: std::collections::HashMap<[u8; 4], u32>) {
        self.line_ids = ids;
    }

    /// The count of identical lines so far, for the next read of the same
    /// journal ([`ReadCtx::carry_line_ids`]).
    pub(super) fn take_line_ids(&mut self) -> std::collections::HashMap<[u8; 4], u32> {
        std::mem::take(&mut self.line_ids)
    }

    /// What the reader found.
    pub(super) fn finish(mut self) -> Read {
        let executions = self.in_window.values().filter(|&&k| k == Kept::No).count();
        let context = self
            .in_window
            .values()
            .filter(|&&k| k == Kept::Context)
            .count();
        if self.left_out > 0 || context > 0 {
            // The window the investigation asked for, which the lookback
            // widened for reading.
            let window = match &self.lookback {
                Some((since, _)) => super::TimeWindow {
                    since: Some(*since),
                    until: self.window.until,
                },
                None => self.window,
            };
            let earlier = if context > 0 {
                format!("; {context} earlier call(s) of intents called in it were read with them")
            } else {
                String::new()
            };
            self.notes.push(format!(
                "the time window ({}) left out {} of {} records ({} call(s) that began outside it{earlier})",
                window.describe(),
                self.left_out,
                self.records + self.left_out,
                executions
            ));
        }
        Read {
            lines: self.lines,
            usable_without_records: self.usable_without_records,
            left_out_executions: executions as u64,
            records: self.records,
            bad: self.bad,
            bad_count: self.bad_count,
            notes: self.notes,
            chain: self.chain,
            capabilities: self.capabilities,
        }
    }
}

impl ReadCtx<'_> {
    /// Says that the records are dropped unseen (`retrace verify`): a
    /// reader may count them ([`ReadCtx::count_unbuilt`]) without building
    /// them.
    pub(super) fn drop_records(&mut self) {
        self.records_unused = true;
    }

    /// Whether the records are dropped unseen ([`ReadCtx::drop_records`]).
    pub(crate) fn records_unused(&self) -> bool {
        self.records_unused
    }

    /// Counts `n` records a line stands for without building them, as
    /// [`ReadCtx::emit`] would count them: only when the records are
    /// dropped unseen and the time window is unbounded (it would need each
    /// record to decide).
    pub(crate) fn count_unbuilt(&mut self, n: u64) {
        debug_assert!(self.records_unused && self.window.is_unbounded());
        self.records += n;
    }

    /// How many records were emitted (or counted) so far.
    pub(crate) fn records(&self) -> u64 {
        self.records
    }

    /// Says that `n` of this journal's lines or spans were read and are
    /// sound, though no record of this journal comes of them: spans that
    /// are no tool call, or that another journal's reader reads (an
    /// OpenLLMetry server write, with its client's span). The journal is
    /// then not refused as having no usable line.
    pub(crate) fn usable_without_records(&mut self, n: u64) {
        self.usable_without_records += n;
    }

    /// Applies `opts`' window to what is read: [`super::LoadOptions::read_window`],
    /// and its lookback's `leave_out`.
    pub(super) fn set_window(&mut self, opts: &super::LoadOptions) {
        self.window = opts.read_window();
        self.lookback = match (&opts.lookback, opts.window.since) {
            (Some(l), Some(since)) => Some((since, l.clone())),
            _ => None,
        };
    }

    /// Emits one record, unless the time window leaves it out
    /// ([`super::TimeWindow`]: an execution goes with the first record of
    /// it, a session by whether its run overlaps the window, a tool hint is
    /// always kept); records left
    /// out are counted, and `ReadCtx::finish` notes how many.
    pub fn emit(&mut self, r: Record) {
        if !self.window.is_unbounded() && !self.admits(&r) {
            self.left_out += 1;
            return;
        }
        self.records += 1;
        (self.sink)(r);
    }

    fn admits(&mut self, r: &Record) -> bool {
        match r {
            Record::Session(s) => self.window.overlaps(s.started_at, s.ended_at),
            // What a server declares about its tools holds whenever its
            // calls were made.
            Record::ToolHint(_) => true,
            Record::Event {
                execution_id,
                event,
            } => {
                if let Some(&keep) = self.in_window.get(execution_id) {
                    return keep != Kept::No;
                }
                let keep = match &self.lookback {
                    _ if !self.window.contains(event.at) => Kept::No,
                    Some((since, l)) if event.at < *since => {
                        if l.leave_out.contains(execution_id.as_str()) {
                            Kept::No
                        } else {
                            Kept::Context
                        }
                    }
                    _ => Kept::Yes,
                };
                self.in_window.insert(execution_id.clone(), keep);
                keep != Kept::No
            }
        }
    }

    /// Emits one lifecycle event of the named execution.
    pub fn event(&mut self, execution_id: &str, event: crate::model::Event) {
        self.emit(Record::Event {
            execution_id: execution_id.to_string(),
            event,
        });
    }
    /// Counts a line read.
    pub fn count_line(&mut self) {
        self.lines += 1;
    }
    /// Records a bad line; it is skipped, counted, and shown.
    pub fn bad_line(&mut self, line: u32, error: impl Into<BadLine>) {
        self.bad_count += 1;
        if self.bad.len() < MAX_KEPT_BAD_LINES {
            let BadLine { message, field } = error.into();
            self.bad.push(LineError {
                journal: self.source.name.clone(),
                line,
                message,
                field,
            });
        }
    }
    /// Adds a note about the journal as a whole.
    pub fn note(&mut self, n: impl Into<String>) {
        self.notes.push(n.into());
    }
    /// Records what verifying the journal's chain found. Readers of chained
    /// formats call it once, at the end of the read.
    pub fn set_chain(&mut self, status: ChainStatus) {
        self.chain = status;
    }
    /// Narrows or widens what this journal can show, for formats whose
    /// files differ (an mcp-acp decisions log versus its wire log).
    pub fn set_capabilities(&mut self, caps: Capabilities) {
        self.capabilities = caps;
    }
}

/// One input format. Implementations stream: they must not hold the whole
/// journal in memory.
pub trait JournalReader: Sync {
    /// Whether the first non-blank lines look like this format.
    fn sniff(&self, first_lines: &[&[u8]]) -> bool;
    /// Whether the journal is of this format, for formats that cannot be
    /// told from their first lines (a database file, told by its tables).
    /// Every format is asked this before any is asked
    /// [`JournalReader::sniff`]; the default says no.
    fn sniff_source(&self, _source: &JournalSource) -> bool {
        false
    }
    /// Reads the journal, emitting records and reporting bad lines.
    ///
    /// # Errors
    /// Only for failures that stop reading (I/O); bad lines go to
    /// [`ReadCtx::bad_line`].
    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError>;
}

/// When a call began, from when it ended and how long it took (formats that
/// record only the end time and a duration).
///
/// # Errors
/// A [`BadLine`] naming `field` when the duration is negative, not finite, or
/// so large that the start would be before any representable time.
pub(crate) fn started_before(
    end: chrono::DateTime<chrono::Utc>,
    duration_ms: f64,
    field: &str,
) -> Result<chrono::DateTime<chrono::Utc>, BadLine> {
    if !duration_ms.is_finite() || duration_ms < 0.0 {
        return Err(BadLine::in_field(
            field,
            format!(
                "field `{field}` must be a non-negative number of milliseconds, found {duration_ms}"
            ),
        ));
    }
    // No tool call runs for a month: such a number is a corrupt field, and
    // taking it would place the call years away from its neighbours.
    const MONTH_MS: f64 = 31.0 * 24.0 * 3600.0 * 1000.0;
    if duration_ms > MONTH_MS {
        return Err(BadLine::in_field(
            field,
            format!(
                "field `{field}` says the call took {duration_ms:.3e} ms, more than a month: not a plausible duration"
            ),
        ));
    }
    // Microseconds of a u64/f64 far out of range saturate in the cast and
    // are then refused by the checked arithmetic.
    let micros = (duration_ms * 1000.0).round() as i64;
    Some(chrono::TimeDelta::microseconds(micros.min(i64::MAX / 2)))
        .and_then(|d| end.checked_sub_signed(d))
        .ok_or_else(|| {
            BadLine::in_field(
                field,
                format!("field `{field}` ({duration_ms} ms) puts the call's start before any representable time"),
            )
        })
}

/// Runs `f` with a reading context over an empty embedded journal and
/// returns the records it emitted (unit tests of reader helpers).
#[cfg(test)]
pub(crate) fn with_test_ctx(f: impl FnOnce(&mut ReadCtx<'_>)) -> Vec<Record> {
    let source = JournalSource::embedded("test.jsonl", b"");
    let keys = ChainKeys::default();
    let mut records = Vec::new();
    let mut sink = |r: Record| records.push(r);
    let mut progress = |_: u64| {};
    let mut ctx = ReadCtx::new(
        0,
        &source,
        "test".into(),
        Format::Native,
        (&mut sink, &mut progress),
        &keys,
        Vec::new(),
    );
    f(&mut ctx);
    drop(ctx);
    records
}

/// Shared loop of line-based readers: reads lines, skips blank ones, reports
/// progress every 4 MiB, and hands each line to `f`. `f` returns
/// `Err` for a bad line.
///
/// # Errors
/// I/O errors.
pub(crate) fn for_each_line(
    ctx: &mut ReadCtx<'_>,
    mut f: impl FnMut(&mut ReadCtx<'_>, lines::Line<'_>) -> Result<(), BadLine>,
) -> Result<(), JournalError> {
    let source = ctx.source;
    let input = source.open()?;
    let mut reader = lines::LineReader::new(input, ctx.journal);
    let mut next_report = 0u64;
    loop {
        let line = match reader.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => return Err(source.io_error(e)),
        };
        ctx.count_line();
        if line.offset() >= next_report {
            (ctx.progress)(line.offset());
            next_report = line.offset() + (4 << 20);
        }
        let no = line.source.position();
        if let Some(n) = line.too_long {
            ctx.bad_line(no, too_long_message(n));
            continue;
        }
        if lines::is_blank(line.bytes) {
            continue;
        }
        if let Err(e) = f(ctx, line) {
            ctx.bad_line(no, e);
        }
    }
    (ctx.progress)(reader.offset());
    Ok(())
}

pub(crate) fn too_long_message(n: u64) -> String {
    format!(
        "line of {n} bytes is longer than the {} MiB retrace reads; skipped",
        lines::MAX_LINE >> 20
    )
}

/// Where a line is, without its bytes: what [`for_each_line_parallel`]'s
/// second step gets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LineMeta {
    /// Position.
    pub source: SourceRef,
    /// False for a final line with no newline.
    pub terminated: bool,
}

/// Lines per batch handed to the parsing threads, and bytes (a batch ends
/// with the line that reaches either); small in tests, so that short
/// journals cross many batches. The lines bound what a batch's results
/// hold when its lines are short.
const BATCH_LINES: usize = if cfg!(test) { 16 } else { 8192 };
const BATCH_BYTES: usize = if cfg!(test) { 1 << 10 } else { 8 << 20 };
/// Batches with fewer lines are parsed on the reading thread.
const PARALLEL_MIN_LINES: usize = if cfg!(test) { 4 } else { 256 };

/// One line of a batch: its bytes' place in the batch's buffer, or a line
/// too long to keep (reported when the batch is applied, so that bad lines
/// stay in journal order).
enum Slot {
    Line(usize, usize, LineMeta),
    TooLong(u32, u64),
}

/// A batch of lines read and not yet parsed.
#[derive(Default)]
struct Batch {
    /// The lines' bytes, one after another.
    arena: Vec<u8>,
    /// The lines, in journal order.
    slots: Vec<Slot>,
    /// Lines read into this batch, blank and too long ones included.
    lines_read: u64,
    /// Bytes of the journal read once this batch was.
    offset: u64,
}

impl Batch {
    /// Reads the next lines of `reader` into the batch, emptied first:
    /// [`BATCH_LINES`] lines or [`BATCH_BYTES`] bytes of them, or to the
    /// end. False once the journal has no more lines (the batch may still
    /// hold some).
    ///
    /// # Errors
    /// The reader's I/O errors.
    fn fill<R: std::io::Read>(
        &mut self,
        reader: &mut lines::BlockLines<R>,
    ) -> std::io::Result<bool> {
        self.slots.clear();
        self.lines_read = 0;
        let (slots, lines_read) = (&mut self.slots, &mut self.lines_read);
        let more = reader.fill(
            &mut self.arena,
            (BATCH_BYTES, BATCH_LINES),
            |bytes, line| {
                *lines_read += 1;
                if let Some(n) = line.too_long {
                    slots.push(Slot::TooLong(line.source.position(), n));
                } else if !lines::is_blank(bytes) {
                    let meta = LineMeta {
                        source: line.source,
                        terminated: line.terminated,
                    };
                    slots.push(Slot::Line(line.span.0, line.span.1, meta));
                }
            },
        )?;
        self.offset = reader.offset();
        Ok(more)
    }

    /// Parses the batch's lines, in order (on rayon's pool when the batch
    /// is large enough), into `out` (cleared first; its room is reused
    /// from batch to batch, so that no batch's results need memory fresh
    /// from the system).
    fn parse<T: Send>(
        &self,
        parse: &(impl Fn(&[u8], LineMeta) -> T + Sync),
        out: &mut Vec<Option<T>>,
    ) {
        let one = |slot: &Slot| match *slot {
            Slot::Line(a, b, meta) => Some(parse(&self.arena[a..b], meta)),
            Slot::TooLong(..) => None,
        };
        // Indexed parallel iterators collect in order: results line up with
        // `slots`. Small batches (a short journal, the tail) are not worth
        // handing to the pool.
        if self.slots.len() < PARALLEL_MIN_LINES {
            out.clear();
            out.extend(self.slots.iter().map(one));
        } else {
            self.slots
                .par_iter()
                .with_min_len(PARALLEL_MIN_LINES / 4)
                .map(one)
                .collect_into_vec(out);
        }
    }
}

/// Batches in flight at once: one being read, one being parsed, one being
/// applied. Each holds up to [`BATCH_BYTES`] of lines and the results of
/// parsing them.
const IN_FLIGHT: usize = 3;

/// Like [`for_each_line`], in two steps: `parse` runs on rayon's pool over
/// batches of lines (it sees only the line), then `apply` takes each result
/// in journal order with the line's bytes, the same that were parsed (it
/// sees the context: it emits records, feeds the chain tracker). Parsing JSON is most of the cost of loading, and it needs
/// nothing from the lines before. The steps run as a pipeline with no
/// step waiting on another's batch boundary: one thread reads batches, one
/// hands each to the pool to parse, and this thread applies them in order;
/// [`IN_FLIGHT`] batches circulate between them, their buffers reused.
///
/// # Errors
/// I/O errors, after every batch read before the error is applied.
pub(crate) fn for_each_line_parallel<T: Send>(
    ctx: &mut ReadCtx<'_>,
    parse: impl Fn(&[u8], LineMeta) -> T + Sync,
    mut apply: impl FnMut(&mut ReadCtx<'_>, LineMeta, &[u8], T) -> Result<(), BadLine>,
) -> Result<(), JournalError> {
    use std::sync::mpsc::sync_channel;
    let source = ctx.source;
    let input = source.open()?;
    let journal = ctx.journal;
    let parse = &parse;
    std::thread::scope(|s| {
        // Empty batches go back to the reader; read ones to the parser;
        // parsed ones, with their results, to this thread.
        let (free_tx, free_rx) = sync_channel::<Batch>(IN_FLIGHT);
        let (read_tx, read_rx) = sync_channel::<Result<Batch, std::io::Error>>(IN_FLIGHT);
        let (parsed_tx, parsed_rx) =
            sync_channel::<Result<(Batch, Vec<Option<T>>), std::io::Error>>(IN_FLIGHT);
        let (spare_tx, spare_rx) = sync_channel::<Vec<Option<T>>>(IN_FLIGHT);
        for _ in 0..IN_FLIGHT {
            // Cannot fail: the channel has room for every batch and its
            // receiver is alive.
            let _ = free_tx.send(Batch::default());
            let _ = spare_tx.send(Vec::new());
        }
        let reading = s.spawn(move || {
            let mut reader = lines::BlockLines::new(input, journal);
            // Each send fails only when the parser has stopped; then so
            // does the reader.
            while let Ok(mut batch) = free_rx.recv() {
                match batch.fill(&mut reader) {
                    Ok(more) => {
                        if read_tx.send(Ok(batch)).is_err() || !more {
                            return;
                        }
                    }
                    Err(e) => {
                        let _ = read_tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        let parsing = s.spawn(move || {
            while let Ok(read) = read_rx.recv() {
                let parsed = read.map(|batch| {
                    let mut results = spare_rx.recv().unwrap_or_default();
                    batch.parse(parse, &mut results);
                    (batch, results)
                });
                if parsed_tx.send(parsed).is_err() {
                    return;
                }
            }
        });
        // Ends when the parser's sender is dropped: after the last batch,
        // an error passed on, or a panic in either thread, raised again
        // here with its own message.
        while let Ok(parsed) = parsed_rx.recv() {
            let (batch, mut results) = parsed.map_err(|e| source.io_error(e))?;
            ctx.lines += batch.lines_read;
            for (slot, r) in batch.slots.iter().zip(results.drain(..)) {
                match (slot, r) {
                    (&Slot::Line(a, z, meta), Some(r)) => {
                        if let Err(e) = apply(ctx, meta, &batch.arena[a..z], r) {
                            ctx.bad_line(meta.source.position(), e);
                        }
                    }
                    (&Slot::TooLong(no, n), _) => ctx.bad_line(no, too_long_message(n)),
                    (Slot::Line(..), None) => {}
                }
            }
            (ctx.progress)(batch.offset);
            // The reader and parser may have stopped (the last batch).
            let _ = free_tx.send(batch);
            let _ = spare_tx.send(results);
        }
        for thread in [parsing, reading] {
            if let Err(panic) = thread.join() {
                std::panic::resume_unwind(panic);
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::{ChainKeys, Format, JournalSource};

    /// What a read gives: each line applied as (line, what parsing found),
    /// in order, and the lines, bad lines and last progress counted.
    type Outcome = (Vec<(u32, String)>, u64, Vec<(u32, String)>, u64);

    /// A context for reading `source` as a native journal, records
    /// dropped, progress reported to `progress`.
    fn native_ctx<'a>(
        source: &'a JournalSource,
        keys: &'a ChainKeys,
        sink: &'a mut dyn FnMut(Record),
        progress: &'a mut dyn FnMut(u64),
    ) -> ReadCtx<'a> {
        ReadCtx::new(
            0,
            source,
            "t".into(),
            Format::Native,
            (sink, progress),
            keys,
            Vec::new(),
        )
    }

    fn read_with(bytes: &[u8], parallel: bool) -> Outcome {
        let source = JournalSource::memory("t.jsonl", bytes.to_vec());
        let keys = ChainKeys::default();
        let mut sink = |_: Record| {};
        let mut last = 0u64;
        let mut progress = |at: u64| last = at;
        let mut ctx = native_ctx(&source, &keys, &mut sink, &mut progress);
        let mut applied = Vec::new();
        // A line is "bad" when it holds "bad"; the rest are taken upper-cased.
        let parse = |b: &[u8], _: LineMeta| String::from_utf8_lossy(b).to_uppercase();
        let result = if parallel {
            for_each_line_parallel(&mut ctx, parse, |_, meta, bytes, text| {
                // The bytes applied are the ones parsed.
                assert_eq!(parse(bytes, meta), text);
                if text.contains("BAD") {
                    return Err(BadLine::from("bad".to_string()));
                }
                applied.push((meta.source.position(), text));
                Ok(())
            })
        } else {
            for_each_line(&mut ctx, |_, line| {
                let text = parse(
                    line.bytes,
                    LineMeta {
                        source: line.source,
                        terminated: line.terminated,
                    },
                );
                if text.contains("BAD") {
                    return Err(BadLine::from("bad".to_string()));
                }
                applied.push((line.source.position(), text));
                Ok(())
            })
        };
        assert!(result.is_ok());
        let read = ctx.finish();
        let bad = read
            .bad
            .iter()
            .map(|b| (b.line, b.message.clone()))
            .collect();
        (applied, read.lines, bad, last)
    }

    /// The pipeline gives what one thread reading line by line gives: every
    /// line applied once, in journal order, across many batches (full by
    /// lines, full by bytes, a last one without a newline), blank lines
    /// counted and skipped, bad lines reported in order, and the progress
    /// ending at the journal's size.
    #[test]
    fn the_pipeline_reads_as_one_thread_does() {
        let mut text = String::new();
        for i in 0..1000 {
            match i % 97 {
                0 => text.push('\n'),
                13 => text.push_str(&format!("bad line {i}\n")),
                50 => text.push_str(&format!("{{\"long\":\"{}\"}}\n", "x".repeat(700))),
                _ => text.push_str(&format!("{{\"n\":{i}}}\n")),
            }
        }
        text.push_str("{\"last\":true}");
        let one = read_with(text.as_bytes(), false);
        let piped = read_with(text.as_bytes(), true);
        assert_eq!(piped, one);
        assert_eq!(one.1, 1001);
        assert_eq!(one.2.len(), 11);
        assert_eq!(one.3, text.len() as u64);
        assert_eq!(piped.0.len(), 1001 - 11 - 11);
        assert!(piped.0.windows(2).all(|w| w[0].0 < w[1].0));
        // An empty journal and a single line.
        assert_eq!(read_with(b"", true), read_with(b"", false));
        assert_eq!(read_with(b"{}", true), read_with(b"{}", false));
    }

    /// A batch of short lines holds [`BATCH_LINES`] of them at most: its
    /// parse results are kept per line, and a batch bounded by bytes alone
    /// held millions of one-byte lines (a review found 4.4 GB held for a
    /// journal of 20 million).
    #[test]
    fn a_batch_of_short_lines_holds_a_bounded_number() {
        let text = "1\n".repeat(1000);
        let mut reader = lines::BlockLines::new(text.as_bytes(), 0);
        let mut batch = Batch::default();
        let mut lines = 0;
        loop {
            let more = batch.fill(&mut reader).unwrap();
            assert!(batch.slots.len() <= BATCH_LINES, "{}", batch.slots.len());
            assert!(batch.lines_read <= BATCH_LINES as u64);
            lines += batch.lines_read;
            if !more {
                break;
            }
        }
        assert_eq!(lines, 1000);
    }

    /// A panic while parsing reaches the caller with its own message, not
    /// a scoped thread's word that one of its threads panicked.
    #[test]
    fn a_panic_in_parsing_keeps_its_message() {
        let text: String = (0..200).map(|i| format!("{{\"n\":{i}}}\n")).collect();
        let source = JournalSource::memory("t.jsonl", text.into_bytes());
        let keys = ChainKeys::default();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut sink = |_: Record| {};
            let mut progress = |_: u64| {};
            let mut ctx = native_ctx(&source, &keys, &mut sink, &mut progress);
            let parse = |b: &[u8], _: LineMeta| {
                assert!(b != b"{\"n\":150}", "line 151 cannot be parsed");
            };
            for_each_line_parallel(&mut ctx, parse, |_, _, _, ()| Ok(()))
        }));
        let Err(panic) = caught else {
            panic!("the read did not panic");
        };
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        assert!(message.contains("line 151 cannot be parsed"), "{message}");
    }
}
