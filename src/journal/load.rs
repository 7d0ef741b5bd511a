//! Loading journals: format detection from the first lines, reading each
//! journal with its reader, and folding them into one model.

use super::read::{Read, ReadCtx};
use super::{
    ChainKeys, Format, JournalError, JournalSource, LineError, LoadOptions, LoadedJournal,
    Progress, lines,
};
use crate::journal::chain::ChainStatus;
use crate::model::{JournalId, Model, ModelBuilder, Record};

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

/// The first lines of a journal for detection: up to [`SNIFF_LINES`]
/// non-blank lines within [`SNIFF_BYTES`], but always the whole first
/// non-blank line up to the longest line the readers accept
/// ([`lines::MAX_LINE`]): a first record of several hundred KiB (a large
/// tool answer) is still recognised (docs/formats.md).
fn sniff_head(source: &JournalSource) -> Result<Vec<u8>, JournalError> {
    use std::io::BufRead;
    let mut r = source.open()?;
    let mut buf = Vec::new();
    let mut non_blank = 0usize;
    // Where reading stops: the usual budget, moved past the first
    // non-blank line once it is read.
    let mut end = SNIFF_BYTES;
    while non_blank < SNIFF_LINES && buf.len() < end {
        let start = buf.len();
        let limit = if non_blank == 0 {
            lines::MAX_LINE + 1
        } else {
            end - start
        };
        let n = std::io::Read::take(&mut r, limit as u64)
            .read_until(b'\n', &mut buf)
            .map_err(|e| source.io_error(e))?;
        if n == 0 {
            break;
        }
        let line = &buf[start..];
        if !lines::is_blank(line.strip_suffix(b"\n").unwrap_or(line)) {
            if non_blank == 0 {
                end = buf.len() + SNIFF_BYTES;
            }
            non_blank += 1;
        }
        if buf.last() != Some(&b'\n') {
            // Cut by the limit (the sniffers parse leniently), or the end.
            break;
        }
    }
    Ok(buf)
}

/// Tells the format of a journal from its first lines.
///
/// # Errors
/// [`JournalError::UnknownFormat`] naming the first line and the formats
/// retrace reads.
pub fn detect(source: &JournalSource) -> Result<Format, JournalError> {
    let raw = sniff_head(source)?;
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
    // A reader that tells its format from the source itself (a database
    // by its tables) knows more than one that looks at the first lines, so
    // it is asked first.
    for &f in Format::ALL {
        if f.reader().sniff_source(source) {
            return Ok(f);
        }
    }
    for &f in Format::ALL {
        if f.reader().sniff(&first) {
            return Ok(f);
        }
    }
    if looks_binary(&raw) {
        return Err(JournalError::Binary {
            journal: source.name.clone(),
            first_bytes: raw
                .iter()
                .take(4)
                .map(|b| format!("{b:02x}"))
                .collect::<Vec<_>>()
                .join(" "),
        });
    }
    let reason = match first.first() {
        None => "the journal is empty".to_string(),
        Some(l) => {
            // Whole characters (a cut one would show as U+FFFD), escaped
            // once: the message is shown as it is.
            let text = String::from_utf8_lossy(l);
            let shown: String = text.chars().take(60).collect();
            let more = if text.chars().count() > 60 { "…" } else { "" };
            // A line that is not JSON at all (a line cut short, the
            // journal's only one) says so: no format was tried on it.
            let broken = match serde_json::from_slice::<serde::de::IgnoredAny>(l) {
                Err(e) if l.first() == Some(&b'{') => format!(
                    "it is not valid JSON ({}: cut short?); ",
                    crate::sanitize::escape(&e.to_string())
                ),
                _ => String::new(),
            };
            format!(
                "{broken}first line starts \"{}{more}\"",
                crate::sanitize::escape(&shown)
            )
        }
    };
    Err(JournalError::UnknownFormat {
        journal: source.name.clone(),
        line: first_line_no.max(1),
        reason,
        formats: Format::names(),
    })
}

/// Whether the first bytes of a file are binary data rather than text: a
/// NUL byte, bytes that are not UTF-8 (a character cut by the end of
/// `head` aside), or mostly control characters. Asked only once no reader
/// took the file (a SQLite journal is binary, and read).
fn looks_binary(head: &[u8]) -> bool {
    let head = &head[..head.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        Err(e) if e.error_len().is_none() => {
            // Valid up to a character the cut split.
            std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
        }
        Err(_) => return true,
    };
    let controls = text
        .chars()
        .filter(|c| c.is_control() && !matches!(c, '\n' | '\r' | '\t'))
        .count();
    controls * 10 > text.chars().count().max(1) * 3
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
        window: super::TimeWindow::default(),
        lookback: None,
    };
    load_with(sources, &opts, progress)
}

/// Refuses a set of more journals than a [`JournalId`] numbers (65,536):
/// every event names its journal in two bytes (docs/design.md §9.8).
///
/// # Errors
/// [`JournalError::Invalid`], naming the first journal beyond the limit.
pub fn check_journal_count(sources: &[JournalSource]) -> Result<(), JournalError> {
    let most = usize::from(JournalId::MAX) + 1;
    match sources.get(most) {
        Some(s) => Err(JournalError::Invalid {
            journal: s.name.clone(),
            message: format!(
                "{} journals given; retrace reads at most {most} at once",
                sources.len()
            ),
        }),
        None => Ok(()),
    }
}

/// Loads journals into one model, with keys for chain checks and decryption.
///
/// # Errors
/// More journals than [`check_journal_count`] allows; the first journal
/// that cannot be opened, detected, or read at all.
pub fn load_with(
    mut sources: Vec<JournalSource>,
    opts: &LoadOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<(Vec<LoadedJournal>, Model), JournalError> {
    check_journal_count(&sources)?;
    // Pipes are read once, in full, before detection looks at them.
    for s in &mut sources {
        s.materialize()?;
    }
    let total_size = sources.iter().map(JournalSource::size).sum::<Option<u64>>();
    let identities = unique_identities(&sources)?;
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
    // The spans of OpenTelemetry journals loaded together are looked up
    // across them: a trace's client and server spans may be in two files.
    let trace_set = {
        let given: Vec<(JournalId, &JournalSource, Format)> = sources
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    JournalId::try_from(i).unwrap_or(JournalId::MAX),
                    s,
                    formats[i].0,
                )
            })
            .collect();
        super::otlp::TraceSet::read(&given)
    };
    let traces = trace_set.as_ref().map(super::otlp::TraceSet::index);
    let builder = Building::run(|sink| {
        for (i, source) in sources.into_iter().enumerate() {
            let id = JournalId::try_from(i).unwrap_or(JournalId::MAX);
            let companions: Vec<Format> = formats
                .iter()
                .enumerate()
                .filter(|&(k, _)| k != i)
                .map(|(_, f)| f.0)
                .collect();
            let size = source.size().unwrap_or(0);
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
                identities[i].clone(),
                formats[i],
                (companions, traces.as_ref()),
                opts,
                (&mut |r: Record| sink.push(r), false),
                &mut prog,
            )?;
            done_bytes += size;
            loaded.push(j);
        }
        Ok(())
    })?;
    Ok((loaded, builder.finish()))
}

/// The model built on a thread of its own while the journals are read:
/// the thread that reads a journal in order (links its chain, emits its
/// records) hands the records over in chunks of [`Building::CHUNK`], and
/// the building thread pushes them into the [`ModelBuilder`] in the order
/// they were emitted. Reading and building were one thread's work, which
/// bounded the load (docs/design.md §9.9).
struct Building {
    /// Records emitted and not yet handed over.
    chunk: Vec<Record>,
    /// To the building thread.
    to_build: std::sync::mpsc::SyncSender<Vec<Record>>,
    /// Emptied chunks, back from the building thread to be reused.
    spare: std::sync::mpsc::Receiver<Vec<Record>>,
}

impl Building {
    /// Records a chunk holds before it is handed over: enough that the
    /// hand-over does not show, few enough that the chunks in flight hold
    /// a few megabytes (small in the library's own tests, so that the
    /// journals they load cross many chunks).
    const CHUNK: usize = if cfg!(test) { 3 } else { 4096 };
    /// Chunks in flight at once.
    const IN_FLIGHT: usize = 4;

    /// Runs `read`, which emits records through the [`Building`] it is
    /// given, while a thread builds the model from them; the builder once
    /// every record is pushed.
    ///
    /// # Errors
    /// `read`'s, after the records emitted before it are pushed.
    fn run<E>(read: impl FnOnce(&mut Building) -> Result<(), E>) -> Result<ModelBuilder, E> {
        use std::sync::mpsc::{channel, sync_channel};
        std::thread::scope(|s| {
            let (to_build, chunks) = sync_channel::<Vec<Record>>(Self::IN_FLIGHT);
            let (give_back, spare) = channel::<Vec<Record>>();
            let building = s.spawn(move || {
                let mut builder = ModelBuilder::new();
                for mut chunk in chunks {
                    for r in chunk.drain(..) {
                        builder.push(r);
                    }
                    // The reader may be done: the chunk is then dropped.
                    let _ = give_back.send(chunk);
                }
                builder
            });
            let mut b = Building {
                chunk: Vec::with_capacity(Self::CHUNK),
                to_build,
                spare,
            };
            let read = read(&mut b);
            b.hand_over();
            // Dropping the sender ends the building thread's loop.
            drop(b);
            let builder = match building.join() {
                Ok(builder) => builder,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            read.map(|()| builder)
        })
    }

    /// Emits one record.
    fn push(&mut self, r: Record) {
        self.chunk.push(r);
        if self.chunk.len() >= Self::CHUNK {
            self.hand_over();
        }
    }

    /// Hands the records emitted so far to the building thread.
    fn hand_over(&mut self) {
        if self.chunk.is_empty() {
            return;
        }
        let next = self
            .spare
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(Self::CHUNK));
        let chunk = std::mem::replace(&mut self.chunk, next);
        // A send fails, at once, only when the building thread has
        // stopped, which it does only by panicking: the chunk is dropped,
        // and `run` raises that panic when it joins.
        let _ = self.to_build.send(chunk);
    }
}

/// Reads one journal for its chain status only (`retrace verify`): bad
/// lines are still reported, but no model is built, and native lines in
/// RFC 8785 form are checked from their bytes without building their
/// records (docs/design.md §6.8).
///
/// # Errors
/// When the journal cannot be opened, detected, or read at all.
pub fn verify(source: JournalSource, opts: &LoadOptions) -> Result<LoadedJournal, JournalError> {
    verify_by(source, opts, VerifyPath::Fast)
}

/// How [`verify_by`] reads a journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VerifyPath {
    /// Records the reader would build are counted instead, where it can
    /// (what [`verify`] does).
    Fast,
    /// Every record is built and dropped, as a load reads it: the
    /// reference the fast path is tested against.
    #[cfg_attr(not(test), allow(dead_code))]
    Reference,
}

/// [`verify`], reading the journal the way `path` says; both give the same
/// journal report.
///
/// # Errors
/// As [`verify`].
pub(crate) fn verify_by(
    mut source: JournalSource,
    opts: &LoadOptions,
    path: VerifyPath,
) -> Result<LoadedJournal, JournalError> {
    // A pipe is read once, in full, before identity and detection look at
    // it: otherwise they would consume what the chain check must read.
    source.materialize()?;
    let identity = source.identity()?;
    let mut sink = |_: Record| {};
    let mut prog = |_: u64| {};
    let format = match opts.forced {
        Some(f) => (f, false),
        None => (detect(&source)?, true),
    };
    read_one(
        0,
        source,
        identity,
        format,
        (Vec::new(), None),
        opts,
        (&mut sink, path == VerifyPath::Fast),
        &mut prog,
    )
}

#[allow(clippy::too_many_arguments)]
fn read_one(
    id: JournalId,
    source: JournalSource,
    identity: String,
    (format, detected): (Format, bool),
    (companions, traces): (Vec<Format>, Option<&super::otlp::Spans<'_>>),
    opts: &LoadOptions,
    (sink, drop_records): (&mut dyn FnMut(Record), bool),
    progress: &mut dyn FnMut(u64),
) -> Result<LoadedJournal, JournalError> {
    let mut ctx = ReadCtx::new(
        id,
        &source,
        identity,
        format,
        (sink, progress),
        &opts.keys,
        companions,
    );
    ctx.set_window(opts);
    ctx.traces = traces;
    if drop_records {
        ctx.drop_records();
    }
    format.reader().read(&mut ctx)?;
    let Read {
        lines,
        usable_without_records,
        left_out_executions,
        records,
        bad,
        bad_count,
        notes,
        chain,
        capabilities,
    } = ctx.finish();
    // A chained journal whose records cannot be read (sealed events with the
    // wrong identity, say) still has a chain to report.
    // A chain broken at its first line of a journal read as a format forced
    // on it (`--input-format`) is no evidence either: its lines are of
    // another format. No usable line is then an error naming the file.
    let chain_holds = match &chain {
        ChainStatus::NoChain { .. } => false,
        ChainStatus::Broken { lines_checked, .. } if !detected => *lines_checked > 1,
        _ => true,
    };
    if records == 0
        && usable_without_records == 0
        && !chain_holds
        && bad_count == 0
        && !is_blank(&source)
    {
        return Err(JournalError::NoUsableLine {
            journal: source.name.clone(),
            lines,
            format: format.noun().to_string(),
            // Its first lines look like the format, yet none was read and
            // none was bad: the reader's note says why (a last line cut
            // short, taken as still being written).
            hint: match notes.first() {
                _ if !detected => "is it another format (try without --input-format)?".into(),
                Some(n) => n.clone(),
                None => "is it another format?".into(),
            },
        });
    }
    if records == 0 && usable_without_records == 0 && bad_count > 0 && !chain_holds {
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
    if let Some(why) = source.cut_short() {
        notes.insert(0, why.to_string());
    }
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
        left_out_executions,
        source,
    })
}

/// Content identities of the journals ([`JournalSource::identity`]), a
/// repeated one made unique with `~N` in load order: only journals whose
/// first lines are the same (copies of one journal) depend on the order,
/// and their ids are the same whichever comes first (docs/design.md §2.6).
fn unique_identities(sources: &[JournalSource]) -> Result<Vec<String>, JournalError> {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    sources
        .iter()
        .map(|s| {
            let id = s.identity()?;
            let n = seen.entry(id.clone()).or_insert(0);
            *n += 1;
            Ok(if *n == 1 { id } else { format!("{id}~{n}") })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{SourceRef, ToolHint};

    fn hint(n: usize) -> Record {
        Record::ToolHint(ToolHint {
            tool: format!("t{n}"),
            server: None,
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
            at: chrono::DateTime::UNIX_EPOCH,
            source: SourceRef::default(),
        })
    }

    /// Every record emitted reaches the builder once, in the order it was
    /// emitted, however the chunks fall: none, fewer than one, one exactly,
    /// several and a part.
    #[test]
    fn records_reach_the_builder_in_order_across_chunks() {
        for n in [
            0,
            1,
            Building::CHUNK,
            Building::CHUNK + 1,
            7 * Building::CHUNK + 2,
        ] {
            let builder = Building::run(|b| {
                (0..n).for_each(|i| b.push(hint(i)));
                Ok::<(), String>(())
            })
            .unwrap();
            let tools: Vec<String> = builder
                .finish()
                .tool_hints
                .into_iter()
                .map(|h| h.tool)
                .collect();
            let want: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
            assert_eq!(tools, want, "{n} records");
        }
    }

    /// A read that fails gives its error, once the building thread has
    /// taken what came before it (nothing waits forever).
    #[test]
    fn a_failed_read_gives_its_error() {
        let got = Building::run(|b| {
            (0..2 * Building::CHUNK + 1).for_each(|i| b.push(hint(i)));
            Err::<(), String>("unreadable".into())
        });
        assert_eq!(got.err().as_deref(), Some("unreadable"));
    }
}
