//! Journal readers: one module per input format behind one [`JournalReader`]
//! interface, format detection from the first lines, and loading of several
//! journals into one [`Model`].
//!
//! Bad input never hides good input: a line that cannot be read is counted,
//! kept with its file and line in [`LoadedJournal::bad_lines`], and skipped.
//! Only a journal that cannot be opened, whose format cannot be told, or that
//! holds no readable record at all is an error ([`JournalError`]).
//!
//! # Adding a format
//!
//! 1. A module with a reader: a unit struct implementing [`JournalReader`]
//!    (`sniff` the first lines, `read` them with `for_each_line` or
//!    `for_each_line_parallel`; a bad line is an `Err(`[`BadLine`]`)`).
//! 2. Beside it, `static FACTS: FormatFacts`: the format's name, a one-line
//!    description, the noun answers use, its [`Capabilities`], and why a
//!    journal of it has no chain until the reader verifies one.
//! 3. One line in the `formats!` list of `format.rs` (`Name => module::FACTS`),
//!    placed where detection should try it.
//! 4. For a request/response log, each call goes through [`exchange`]: a
//!    [`exchange::Call`], and an [`exchange::Answer`] when one comes; what the
//!    reader establishes beyond the journal's fields (a pairing by
//!    position, arguments not logged, an inferred event) goes in
//!    [`crate::model::ReaderFacts`], never in `extra`.
//! 5. A chained format feeds each line to a [`chain::ChainTracker`] with its
//!    rule and reports the status with [`ReadCtx::set_chain`].

pub mod chain;
mod error;
pub mod exchange;
mod fields;
mod format;
mod gh_aw;
pub mod keys;
pub mod lines;
mod mcp_acp;
mod mcp_audit;
mod mcpproxy;
mod native;
mod rawjson;
mod sallyport;
mod source;
mod sqlite;

use crate::model::{JournalId, Model, ModelBuilder, Record, SourceRef};
pub use chain::GENESIS;
use chain::{ChainMark, ChainStatus};
pub use error::{BadLine, JournalError, LineError};
pub use format::{Capabilities, Format, FormatFacts, UnknownFormat};
pub use keys::{ChainKeys, KeyFile, KeyFileError, LoadOptions};
pub use native::{NativeChainWriter, native_chain_hash};
use rayon::prelude::*;
use serde::Serialize;
pub use source::{JournalSource, SourceData};
use std::path::Path;

pub use fields::parse_time;

/// How much of a journal has been read, for progress gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    /// Index of the journal being read.
    pub journal: JournalId,
    /// Bytes read of this journal.
    pub bytes: u64,
    /// Bytes read over all journals so far.
    pub total_bytes: u64,
    /// Size of all journals together, when known.
    pub total_size: Option<u64>,
}

/// What loading one journal found.
#[derive(Debug, Clone, Serialize)]
pub struct LoadedJournal {
    /// Index used by [`SourceRef::journal`].
    pub id: JournalId,
    /// Name shown in evidence (the path as given).
    pub name: String,
    /// Format it was read as.
    pub format: Format,
    /// Whether the format was detected (true) or forced with `--input-format`.
    pub detected: bool,
    /// Lines read (including blank and bad ones).
    pub lines: u64,
    /// Records produced (events and sessions).
    pub records: u64,
    /// Number of lines that could not be read.
    pub bad_line_count: u64,
    /// The first bad lines, up to [`MAX_KEPT_BAD_LINES`].
    pub bad_lines: Vec<LineError>,
    /// Notes from the reader (e.g. ambiguous request/response pairing).
    pub notes: Vec<String>,
    /// What the format can show.
    pub capabilities: Capabilities,
    /// What verifying the journal's audit chain found (DESIGN.md §6).
    pub chain: ChainStatus,
    #[serde(skip)]
    source: JournalSource,
}

/// How many bad lines are kept with their messages per journal; the rest
/// are only counted.
pub const MAX_KEPT_BAD_LINES: usize = 200;

impl LoadedJournal {
    /// The source, for reading raw lines back.
    pub fn source(&self) -> &JournalSource {
        &self.source
    }

    /// Whether evidence at `at` lies in the verified part of this journal's
    /// chain: [`ChainMark::Verified`] before any break,
    /// [`ChainMark::Unverified`] from the first failure on (or when the
    /// chain could not be checked), [`ChainMark::NoChain`] when nothing
    /// chains it.
    pub fn chain_mark(&self, at: SourceRef) -> ChainMark {
        if at.table().is_some_and(|t| t != sqlite::EVENTS_TABLE) {
            // Of a SQLite journal, only the events table is chained.
            return ChainMark::NoChain;
        }
        self.chain.mark(at.position())
    }

    /// The raw text of one record as the journal holds it.
    ///
    /// # Errors
    /// [`JournalError::Io`] when the journal changed or cannot be read;
    /// [`JournalError::Invalid`] when a row cannot be read back.
    pub fn read_raw(&self, at: SourceRef) -> Result<String, JournalError> {
        match (at, &self.source.data) {
            (SourceRef::Row { table, row, .. }, SourceData::File(p)) => {
                sqlite::read_row(p, table, row).map_err(|e| JournalError::Invalid {
                    journal: self.name.clone(),
                    message: e.to_string(),
                })
            }
            _ => self.source.read_raw(at),
        }
    }
}

/// Everything a reader needs while it reads one journal.
pub struct ReadCtx<'a> {
    /// Index of this journal.
    pub journal: JournalId,
    /// The journal being read.
    pub source: &'a JournalSource,
    /// A short name unique among the loaded journals (the file stem), for
    /// synthetic execution ids.
    pub label: String,
    /// Where records go.
    pub sink: &'a mut dyn FnMut(Record),
    /// Called now and then with bytes read so far in this journal.
    pub progress: &'a mut dyn FnMut(u64),
    /// Keys for chain checks and decryption.
    pub keys: &'a ChainKeys,
    /// Formats of the other journals loaded with this one (empty for
    /// `retrace verify`, which reads each journal on its own).
    pub companions: Vec<Format>,
    chain: ChainStatus,
    capabilities: Capabilities,
    lines: u64,
    records: u64,
    bad: Vec<LineError>,
    bad_count: u64,
    notes: Vec<String>,
}

impl ReadCtx<'_> {
    /// Emits one record.
    pub fn emit(&mut self, r: Record) {
        self.records += 1;
        (self.sink)(r);
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

/// How many non-blank lines format detection looks at: enough that a few
/// bad lines at the top do not hide the journal's format.
const SNIFF_LINES: usize = 32;

/// How much of a journal format detection reads.
const SNIFF_BYTES: usize = 64 * 1024;

/// Whether `head`, the first [`SNIFF_BYTES`] of a journal of `size` bytes,
/// is the whole journal and holds nothing but blank lines and a byte order
/// mark (an empty file, a log just rotated).
fn all_blank(head: &[u8], size: Option<u64>) -> bool {
    size.is_some_and(|n| n <= head.len() as u64)
        && head
            .strip_prefix(b"\xEF\xBB\xBF")
            .unwrap_or(head)
            .split(|&b| b == b'\n')
            .all(lines::is_blank)
}

/// [`all_blank`] for a journal that has been read (a read error answers no).
fn is_blank(source: &JournalSource) -> bool {
    source
        .head(SNIFF_BYTES)
        .is_ok_and(|h| all_blank(&h, source.size()))
}

/// Tells the format of a journal from its first lines.
///
/// # Errors
/// [`JournalError::UnknownFormat`] naming the first line and the formats
/// retrace reads.
pub fn detect(source: &JournalSource) -> Result<Format, JournalError> {
    let raw = source.head(SNIFF_BYTES)?;
    let head = raw.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&raw);
    let mut first: Vec<&[u8]> = Vec::new();
    let mut first_line_no = 0u32;
    for (i, l) in head.split(|&b| b == b'\n').enumerate() {
        if lines::is_blank(l) {
            continue;
        }
        if first.is_empty() {
            first_line_no = u32::try_from(i + 1).unwrap_or(u32::MAX);
        }
        first.push(l);
        if first.len() == SNIFF_LINES {
            break;
        }
    }
    // An empty journal (a gateway that just started, a log just rotated) is
    // an empty native journal: it adds nothing, and does not stop the others
    // from loading.
    if first.is_empty() && all_blank(&raw, source.size()) {
        return Ok(Format::Native);
    }
    // The last piece may be cut by the 64 KiB limit; sniffers parse leniently.
    for &f in Format::ALL {
        if f.reader().sniff(&first) {
            return Ok(f);
        }
    }
    let reason = match first.first() {
        None => "the journal is empty".to_string(),
        Some(l) => {
            let shown: String = String::from_utf8_lossy(&l[..l.len().min(60)]).into_owned();
            format!("first line starts {:?}", crate::sanitize::escape(&shown))
        }
    };
    Err(JournalError::UnknownFormat {
        journal: source.name.clone(),
        line: first_line_no.max(1),
        reason,
        formats: Format::names(),
    })
}

/// Loads journals into one model.
///
/// `forced` overrides detection for every journal (`--input-format`).
/// `progress` is called now and then while reading.
///
/// # Errors
/// The first journal that cannot be opened, detected, or read at all.
pub fn load(
    sources: Vec<JournalSource>,
    forced: Option<Format>,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<LoadedJournal>, Model), JournalError> {
    let opts = LoadOptions {
        forced,
        keys: ChainKeys::default(),
    };
    load_with(sources, &opts, progress)
}

/// Loads journals into one model, with keys for chain checks and decryption.
///
/// # Errors
/// The first journal that cannot be opened, detected, or read at all.
pub fn load_with(
    mut sources: Vec<JournalSource>,
    opts: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<LoadedJournal>, Model), JournalError> {
    // Pipes are read once, in full, before detection looks at them.
    for s in &mut sources {
        s.materialize()?;
    }
    let total_size = sources.iter().map(JournalSource::size).sum::<Option<u64>>();
    let labels = unique_labels(&sources);
    let mut builder = ModelBuilder::new();
    let mut loaded = Vec::with_capacity(sources.len());
    let mut done_bytes = 0u64;
    // Formats first: a reader may depend on what is loaded with it (an
    // mcp-acp decisions log joins the operations log it authorizes).
    let formats: Vec<(Format, bool)> = sources
        .iter()
        .map(|s| match opts.forced {
            Some(f) => Ok((f, false)),
            None => detect(s).map(|f| (f, true)),
        })
        .collect::<Result<_, _>>()?;
    for (i, source) in sources.into_iter().enumerate() {
        let id = JournalId::try_from(i).unwrap_or(JournalId::MAX);
        let companions: Vec<Format> = formats
            .iter()
            .enumerate()
            .filter(|&(k, _)| k != i)
            .map(|(_, f)| f.0)
            .collect();
        let size = source.size().unwrap_or(0);
        let mut sink = |r: Record| builder.push(r);
        let mut prog = |bytes: u64| {
            progress(Progress {
                journal: id,
                bytes,
                total_bytes: done_bytes + bytes,
                total_size,
            })
        };
        let j = read_one(
            id,
            source,
            labels[i].clone(),
            formats[i],
            companions,
            opts,
            &mut sink,
            &mut prog,
        )?;
        done_bytes += size;
        loaded.push(j);
    }
    Ok((loaded, builder.finish()))
}

/// Reads one journal for its chain status only (`retrace verify`): records
/// are parsed, so bad lines are still reported, but no model is built.
///
/// # Errors
/// When the journal cannot be opened, detected, or read at all.
pub fn verify(source: JournalSource, opts: &LoadOptions) -> Result<LoadedJournal, JournalError> {
    let label = unique_labels(std::slice::from_ref(&source))
        .pop()
        .unwrap_or_else(|| "journal".into());
    let mut sink = |_: Record| {};
    let mut prog = |_: u64| {};
    let format = match opts.forced {
        Some(f) => (f, false),
        None => (detect(&source)?, true),
    };
    read_one(
        0,
        source,
        label,
        format,
        Vec::new(),
        opts,
        &mut sink,
        &mut prog,
    )
}

#[allow(clippy::too_many_arguments)]
fn read_one(
    id: JournalId,
    source: JournalSource,
    label: String,
    (format, detected): (Format, bool),
    companions: Vec<Format>,
    opts: &LoadOptions,
    sink: &mut dyn FnMut(Record),
    progress: &mut dyn FnMut(u64),
) -> Result<LoadedJournal, JournalError> {
    let mut ctx = ReadCtx {
        journal: id,
        source: &source,
        label,
        sink,
        progress,
        keys: &opts.keys,
        companions,
        chain: format.default_chain(),
        capabilities: format.capabilities(),
        lines: 0,
        records: 0,
        bad: Vec::new(),
        bad_count: 0,
        notes: Vec::new(),
    };
    format.reader().read(&mut ctx)?;
    let ReadCtx {
        lines,
        records,
        bad,
        bad_count,
        notes,
        chain,
        capabilities,
        ..
    } = ctx;
    // A chained journal whose records cannot be read (sealed events with the
    // wrong identity, say) still has a chain to report.
    if records == 0 && bad_count > 0 && matches!(chain, ChainStatus::NoChain { .. }) {
        let first = bad.into_iter().next().unwrap_or(LineError {
            journal: source.name.clone(),
            line: 0,
            message: "no readable record".into(),
            field: None,
        });
        return Err(JournalError::NothingReadable {
            first,
            count: bad_count,
        });
    }
    // An empty journal says so, rather than that its lines lack a chain.
    let mut notes = notes;
    let empty = records == 0 && bad_count == 0 && is_blank(&source);
    let chain = if empty {
        notes.push("the journal is empty: no record in it".into());
        ChainStatus::no_chain("the journal is empty")
    } else {
        chain
    };
    Ok(LoadedJournal {
        id,
        name: source.name.clone(),
        format,
        detected,
        lines,
        records,
        bad_line_count: bad_count,
        bad_lines: bad,
        notes,
        capabilities,
        chain,
        source,
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
    let mut ctx = ReadCtx {
        journal: 0,
        source: &source,
        label: "test".into(),
        sink: &mut sink,
        progress: &mut progress,
        keys: &keys,
        companions: Vec::new(),
        chain: ChainStatus::no_chain("test"),
        capabilities: Format::Native.capabilities(),
        lines: 0,
        records: 0,
        bad: Vec::new(),
        bad_count: 0,
        notes: Vec::new(),
    };
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

fn too_long_message(n: u64) -> String {
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

/// Lines per batch handed to the parsing threads, and bytes at most.
const BATCH_LINES: usize = 8192;
const BATCH_BYTES: usize = 8 << 20;
/// Batches with fewer lines are parsed on the reading thread.
const PARALLEL_MIN_LINES: usize = 256;

/// Like [`for_each_line`], in two steps: `parse` runs on rayon's pool over
/// batches of lines (it sees only the line), then `apply` takes each result
/// in journal order (it sees the context: it emits records, feeds the chain
/// tracker). Parsing JSON is most of the cost of loading, and it needs
/// nothing from the lines before.
///
/// # Errors
/// I/O errors.
pub(crate) fn for_each_line_parallel<T: Send>(
    ctx: &mut ReadCtx<'_>,
    parse: impl Fn(&[u8], LineMeta) -> T + Sync,
    mut apply: impl FnMut(&mut ReadCtx<'_>, LineMeta, T) -> Result<(), BadLine>,
) -> Result<(), JournalError> {
    let source = ctx.source;
    let input = source.open()?;
    let mut reader = lines::LineReader::new(input, ctx.journal);
    let mut next_report = 0u64;
    let mut arena: Vec<u8> = Vec::with_capacity(BATCH_BYTES + (64 << 10));
    let mut spans: Vec<(usize, usize, LineMeta)> = Vec::with_capacity(BATCH_LINES);
    let mut done = false;
    while !done {
        arena.clear();
        spans.clear();
        while spans.len() < BATCH_LINES && arena.len() < BATCH_BYTES {
            let line = match reader.next_line() {
                Ok(Some(l)) => l,
                Ok(None) => {
                    done = true;
                    break;
                }
                Err(e) => return Err(source.io_error(e)),
            };
            ctx.count_line();
            if line.offset() >= next_report {
                (ctx.progress)(line.offset());
                next_report = line.offset() + (4 << 20);
            }
            if let Some(n) = line.too_long {
                ctx.bad_line(line.source.position(), too_long_message(n));
                continue;
            }
            if lines::is_blank(line.bytes) {
                continue;
            }
            let start = arena.len();
            arena.extend_from_slice(line.bytes);
            let meta = LineMeta {
                source: line.source,
                terminated: line.terminated,
            };
            spans.push((start, arena.len(), meta));
        }
        let parse_span = |&(a, b, meta): &(usize, usize, LineMeta)| parse(&arena[a..b], meta);
        // Indexed parallel iterators collect in order: results line up with
        // `spans`, so `apply` sees journal order. Small batches (a short
        // journal, the tail) are not worth handing to the pool.
        let results: Vec<T> = if spans.len() < PARALLEL_MIN_LINES {
            spans.iter().map(parse_span).collect()
        } else {
            spans
                .par_iter()
                .with_min_len(PARALLEL_MIN_LINES / 4)
                .map(parse_span)
                .collect()
        };
        for (r, &(_, _, meta)) in results.into_iter().zip(spans.iter()) {
            if let Err(e) = apply(ctx, meta, r) {
                ctx.bad_line(meta.source.position(), e);
            }
        }
    }
    (ctx.progress)(reader.offset());
    Ok(())
}

/// File stems of the journals, made unique with a `~N` suffix.
fn unique_labels(sources: &[JournalSource]) -> Vec<String> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    sources
        .iter()
        .map(|s| {
            let stem = Path::new(&s.name)
                .file_stem()
                .and_then(|x| x.to_str())
                .unwrap_or("journal")
                .to_string();
            let n = seen.entry(stem.clone()).or_insert(0);
            *n += 1;
            if *n == 1 { stem } else { format!("{stem}~{n}") }
        })
        .collect()
}

/// Path helpers for readers that derive an intent scope from where a journal
/// lives (a gh-aw log sits under `.../run-<id>/mcp-logs/`).
pub(crate) fn run_scope_from_path(name: &str) -> Option<String> {
    Path::new(name).ancestors().find_map(|p| {
        let n = p.file_name()?.to_str()?;
        let id = n.strip_prefix("run-")?;
        (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| format!("run:{id}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names_round_trip() {
        for &f in Format::ALL {
            assert_eq!(f.name().parse::<Format>().unwrap(), f);
            assert_eq!(serde_json::to_value(f).unwrap(), f.name());
        }
        let e = "csv".parse::<Format>().unwrap_err().to_string();
        assert!(e.contains("native") && e.contains("gh-aw-mcpg"), "{e}");
    }

    #[test]
    fn unknown_format_names_line_and_formats() {
        let src = JournalSource::embedded("x.jsonl", b"\n{\"hello\":1}\n");
        let e = detect(&src).unwrap_err().to_string();
        assert!(e.starts_with("x.jsonl:2: unknown journal format"), "{e}");
        assert!(e.contains("gh-aw-mcpg"), "{e}");
    }

    #[test]
    fn run_scope() {
        assert_eq!(
            run_scope_from_path("logs/run-21986494867/mcp-logs/rpc-messages.jsonl").as_deref(),
            Some("run:21986494867")
        );
        assert_eq!(run_scope_from_path("a/rpc-messages.jsonl"), None);
    }
}
