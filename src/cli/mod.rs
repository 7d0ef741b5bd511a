//! Headless commands (docs/design.md §7): text and JSON over the query layer.
//! Every TUI view has a twin here.

mod args;
pub mod config;
mod contracts;
mod export;
mod review;
mod text;
mod watch;

pub use args::{
    AnalysisOpts, CaseOpts, Cli, ColorWhen, Command, ContractsCommand, ExportFormat, ReadOpts,
    ReviewCommand, ReviewerOpts, TuiOpts, WindowOpts,
};
pub use contracts::{draft as contracts_draft, lint as contracts_lint};
pub use export::export;
pub use review::{review_decide, review_export, review_list};
pub use watch::{WatchArgs, watch};

use crate::query::{DecisionError, GroupFilter, Investigation, QueryError, Setup, VerifyReport};
use crate::sanitize::escape;
use std::io::{self, Write};

/// What went wrong; [`CliError::exit_code`] is the one place an error
/// becomes a process exit code (0 success, 1 a write refused or failed, 2
/// bad input or bad arguments; docs/design.md §7).
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A journal, contracts, key or case file could not be used, or an
    /// unknown group or execution was asked for.
    #[error(transparent)]
    Query(#[from] QueryError),
    /// A reviewer decision was refused or could not be written.
    #[error(transparent)]
    Decision(#[from] DecisionError),
    /// The TUI could not start or its journals could not be loaded.
    #[error(transparent)]
    Tui(#[from] crate::tui::TuiError),
    /// The settings file could not be used.
    #[error(transparent)]
    Config(#[from] config::ConfigError),
    /// Other bad input (an output file that is one of the inputs).
    #[error("{0}")]
    Input(String),
    /// Writing output failed (a closed pipe is not an error).
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    /// A write was refused (read-only mode, a broken case file, an output
    /// that is not a regular file) or failed; nothing was half-written.
    #[error("{0}")]
    Write(String),
}

impl CliError {
    /// The process exit code.
    pub fn exit_code(&self) -> i32 {
        match self {
            // A case file that is not a regular file: a refused write, as
            // for `-o FIFO` (docs/design.md §7.3).
            CliError::Query(QueryError::Setup(crate::query::SetupError::Case(
                crate::review::case::CaseError::NotRegular { .. },
            ))) => 1,
            CliError::Query(_) | CliError::Input(_) | CliError::Tui(_) | CliError::Config(_) => 2,
            CliError::Decision(d) if d.is_refusal() => 2,
            CliError::Decision(_) | CliError::Output(_) | CliError::Write(_) => 1,
        }
    }
}

/// Standard output as every command writes it.
pub type Stdout = io::BufWriter<crate::sanitize::TerminalGuard<io::StdoutLock<'static>>>;

/// Standard output, buffered, with colour as asked: `auto` colours on a
/// terminal unless `NO_COLOR` (or `CLICOLOR=0`) is set, as `anstream`
/// decides it, and drops every style when the output is a pipe or a file.
/// Behind the buffer, a [`crate::sanitize::TerminalGuard`] escapes any
/// control character or escape sequence that is not one of retrace's
/// colours, in case a journal string escaped its escaping (docs/design.md
/// §8.5), and drops the colours when there are to be none (one pass over
/// the output for both).
pub fn stdout(color: ColorWhen) -> Stdout {
    let stdout = io::stdout().lock();
    let colour = match color {
        ColorWhen::Auto => !matches!(
            anstream::AutoStream::choice(&stdout),
            anstream::ColorChoice::Never
        ),
        ColorWhen::Always => true,
        ColorWhen::Never => false,
    };
    io::BufWriter::new(if colour {
        crate::sanitize::TerminalGuard::new(stdout)
    } else {
        crate::sanitize::TerminalGuard::without_colour(stdout)
    })
}

/// `retrace config`: every setting, its value and where it came from.
///
/// # Errors
/// Output errors.
pub fn config(
    r: &config::Resolved,
    file: Option<&std::path::Path>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    match file {
        Some(p) => writeln!(out, "settings file: {}", escape(&p.display().to_string()))?,
        None => writeln!(
            out,
            "settings file: none ($XDG_CONFIG_HOME/retrace/config.toml or ~/.config/retrace/config.toml, or --config FILE)"
        )?,
    }
    let width = r.effective.iter().map(|e| e.name.len()).max().unwrap_or(0);
    for e in &r.effective {
        writeln!(
            out,
            "{:<width$}  {}  ({})",
            e.name,
            escape(&e.value),
            escape(&e.source.to_string())
        )?;
    }
    Ok(())
}

/// Prints the setup's warnings (a journal given twice, a broken case file
/// chain) on stderr.
pub fn warn(warnings: &[String]) {
    let mut err = io::stderr().lock();
    for w in warnings {
        let _ = writeln!(err, "warning: {}", escape(w));
    }
}

/// Prints notes on stderr (files left out of folders), each escaped.
pub fn notes(notes: &[String]) {
    let mut err = io::stderr().lock();
    for n in notes {
        let _ = writeln!(err, "note: {}", escape(n));
    }
}

/// Loads and analyses, reporting warnings, bad lines and notes on stderr.
///
/// # Errors
/// [`CliError::Query`] with a one-line message naming file and line.
pub fn open(setup: &Setup) -> Result<Investigation, CliError> {
    let prepared = setup.prepare().map_err(QueryError::from)?;
    warn(&prepared.warnings);
    notes(&prepared.skipped);
    let said = prepared.skipped.len();
    let inv = Investigation::load(prepared, &mut |_| {})?;
    // Files of a folder found unreadable while loading.
    notes(inv.skipped().get(said..).unwrap_or_default());
    report_load(&inv);
    Ok(inv)
}

/// Prints bad-line warnings and journal notes to stderr (at most ten bad
/// lines per journal, then a count).
fn report_load(inv: &Investigation) {
    let mut err = io::stderr().lock();
    for j in inv.journals() {
        for b in j.bad_lines.iter().take(text::SHOWN_BAD_LINES) {
            let _ = writeln!(err, "warning: {}", escape(&b.to_string()));
        }
        if j.bad_line_count > text::SHOWN_BAD_LINES as u64 {
            let _ = writeln!(
                err,
                "warning: {}: {} more bad line(s) not shown; `retrace verify --json {}` lists every one",
                escape(&j.name),
                j.bad_line_count - text::SHOWN_BAD_LINES as u64,
                escape(&j.name),
            );
        }
        if j.bad_line_count > 0 {
            let _ = writeln!(
                err,
                "warning: {}: {} of {} lines could not be read and were skipped; the rest were used",
                escape(&j.name),
                j.bad_line_count,
                j.lines
            );
        }
    }
    for j in inv.journals() {
        for n in &j.notes {
            let _ = writeln!(err, "note: {}: {}", escape(&j.name), escape(n));
        }
    }
    for n in inv.notes() {
        let _ = writeln!(err, "note: {}", escape(n));
    }
    if let Some(n) = inv.narrowed() {
        let _ = writeln!(err, "note: {}", n.describe());
    }
}

/// Writes `v` as pretty JSON and a newline, all or nothing: it is
/// serialized whole before a byte goes out, so a value that cannot be
/// serialized leaves no half-written document behind.
///
/// # Errors
/// Serialization or output errors.
pub(crate) fn write_json(out: &mut dyn Write, v: &impl serde::Serialize) -> Result<(), CliError> {
    let mut buf = Pieces::default();
    crate::sanitize::write_json_pretty(&mut buf, v)?;
    buf.write_all(b"\n")?;
    for piece in buf.full.iter().chain([&buf.last]) {
        out.write_all(piece)?;
    }
    Ok(())
}

/// Writes a list as pretty JSON and a newline, each element as `each`
/// makes it from an item: the bytes [`write_json`] gives the `Vec` of the
/// elements, written as they are made, for a document too large to hold
/// (`groups --json` of ten million events is hundreds of megabytes). The
/// elements of a batch of items at a time are made and formatted on every
/// core (rayon), in stretches ([`batching`]), then written out in order:
/// what is held at once does not grow with the number of cores.
///
/// Only for elements whose serialization cannot fail (derived `Serialize`
/// of strings, numbers, times, enums and lists, no map with non-string
/// keys), so that only a write error, a closed pipe, can stop it part way:
/// where [`write_json`] would have written nothing, the reader of a closed
/// pipe reads nothing either.
///
/// # Errors
/// Output errors.
fn write_json_list_streamed<I: Sync, S: serde::Serialize>(
    out: &mut dyn Write,
    items: &[I],
    each: impl Fn(&I) -> S + Sync,
) -> Result<(), CliError> {
    use rayon::prelude::*;
    if items.is_empty() {
        out.write_all(b"[]\n")?;
        return Ok(());
    }
    let (batch_len, stretch) = batching(rayon::current_num_threads());
    // One buffer a stretch, kept from batch to batch.
    let mut bufs: Vec<Vec<u8>> = Vec::new();
    let mut first = true;
    out.write_all(b"[")?;
    for batch in items.chunks(batch_len) {
        bufs.resize_with(batch.len().div_ceil(stretch), Vec::new);
        bufs.par_iter_mut()
            .zip(batch.par_chunks(stretch))
            .try_for_each(|(buf, stretch)| -> io::Result<()> {
                buf.clear();
                for item in stretch {
                    // Every element after `,`: the list's first drops it.
                    buf.extend_from_slice(b",\n  ");
                    crate::sanitize::write_json_pretty_nested(&mut *buf, &each(item), 1)?;
                }
                Ok(())
            })?;
        for buf in &bufs[..batch.len().div_ceil(stretch)] {
            let skip = usize::from(std::mem::take(&mut first));
            out.write_all(&buf[skip..])?;
        }
    }
    out.write_all(b"\n]\n")?;
    Ok(())
}

/// Items [`write_json_list_streamed`] makes and formats at once: a few
/// megabytes of output (a group's summary is about 600 bytes), whatever the
/// number of cores; small in tests, so that short lists make many batches.
const BATCH: usize = if cfg!(test) { 12 } else { 8192 };

/// Items of a batch ([`BATCH`], whatever the number of cores) and of one
/// stretch of it on `threads` cores: two stretches a core (one core
/// finishing early takes another), each at least [`MIN_STRETCH`] items so
/// that a task's overhead does not show. On two cores, 2,048.
fn batching(threads: usize) -> (usize, usize) {
    (BATCH, BATCH.div_ceil(2 * threads.max(1)).max(MIN_STRETCH))
}

/// The fewest items of a stretch (one in tests, where batches are short).
const MIN_STRETCH: usize = if cfg!(test) { 1 } else { 64 };

/// A buffer kept in pieces of [`Pieces::SIZE`] bytes: a document of tens
/// of megabytes (`groups --json` of a million events) grows without being
/// copied into buffers of twice its size, which held three times its size
/// at once.
#[derive(Default)]
struct Pieces {
    full: Vec<Vec<u8>>,
    last: Vec<u8>,
}

impl Pieces {
    /// Bytes of a piece.
    const SIZE: usize = 1 << 20;
}

impl Write for Pieces {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.last.len() + buf.len() > Self::SIZE && !self.last.is_empty() {
            self.full.push(std::mem::take(&mut self.last));
        }
        if self.last.capacity() == 0 {
            self.last.reserve_exact(Self::SIZE.max(buf.len()));
        }
        self.last.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// `retrace groups`.
///
/// # Errors
/// Input or output errors.
pub fn groups(
    inv: &Investigation,
    all: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let filter = GroupFilter {
        all,
        ..GroupFilter::default()
    };
    let groups = inv.groups(&filter);
    if json {
        text::chain_header(inv, &mut io::stderr().lock())?;
        return write_json_list_streamed(out, &groups, |g| g.summary());
    }
    text::chain_header(inv, out)?;
    text::groups(inv, &groups, all, out)?;
    Ok(())
}

/// `retrace investigate --group ID`.
///
/// # Errors
/// An unknown or ambiguous group id is an input error.
pub fn investigate(
    inv: &Investigation,
    id: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let g = inv.group(id)?;
    let d = g.detail();
    if json {
        text::chain_header(inv, &mut io::stderr().lock())?;
        return write_json(
            out,
            &InvestigateJson {
                event_log: d
                    .executions_detail
                    .iter()
                    .map(|x| (x.execution_id.as_str(), inv.events(x.index)))
                    .collect(),
                detail: &d,
            },
        );
    }
    text::chain_header(inv, out)?;
    text::investigate(&d, out)?;
    Ok(())
}

/// `retrace investigate --json`: the group detail, and every event of each
/// execution (with its evidence and the fields retrace did not read).
#[derive(serde::Serialize)]
struct InvestigateJson<'a> {
    #[serde(flatten)]
    detail: &'a crate::query::GroupDetail,
    /// Execution id → its events in time order.
    event_log: std::collections::BTreeMap<&'a str, Vec<crate::query::EventView>>,
}

/// `retrace verify`: verifies each journal on its own (one unreadable
/// journal does not stop the others), and the case file; returns the exit
/// code: the worst of the journals' codes.
///
/// # Errors
/// Unreadable key files, or output errors.
pub fn verify(
    setup: &Setup,
    anchor: Option<&std::path::Path>,
    json: bool,
    out: &mut dyn Write,
) -> Result<u8, CliError> {
    let crate::query::Verification { reports, skipped } =
        crate::query::verify_anchored(setup, anchor).map_err(|e| match e {
            e @ QueryError::Anchor(crate::query::anchor::AnchorError::Io { .. }) => {
                CliError::Write(e.to_string())
            }
            e => CliError::Query(e),
        })?;
    notes(&skipped);
    let code = reports
        .iter()
        .map(VerifyReport::exit_code)
        .max()
        .unwrap_or(0);
    if json {
        write_json(out, &reports)?;
    } else {
        text::verify(&reports, out)?;
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A value whose serialization fails halfway.
    struct Breaks;
    impl serde::Serialize for Breaks {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            use serde::ser::{Error, SerializeMap};
            let mut m = s.serialize_map(None)?;
            m.serialize_entry("fine", "so far")?;
            Err(S::Error::custom("cannot go on"))
        }
    }

    #[test]
    fn a_streamed_list_is_the_buffered_one() {
        // Lengths around a stretch's and a batch's, unsafe text included.
        let (batch, stretch) = batching(rayon::current_num_threads());
        for n in [
            0,
            1,
            2,
            stretch,
            stretch + 1,
            batch - 1,
            batch,
            batch + 1,
            3 * batch + 2,
        ] {
            let v: Vec<serde_json::Value> = (0..n)
                .map(|i| serde_json::json!({"group_id": format!("g{i}"), "bidi": "a\u{202e}b", "n": i, "ids": [i, {"x": []}]}))
                .collect();
            let (mut streamed, mut buffered) = (Vec::new(), Vec::new());
            write_json_list_streamed(&mut streamed, &v, |x| x.clone()).unwrap();
            write_json(&mut buffered, &v).unwrap();
            assert!(
                streamed == buffered,
                "{n}: {}",
                String::from_utf8_lossy(&streamed)
            );
        }
    }

    #[test]
    fn a_streamed_batch_is_held_alike_on_any_number_of_cores() {
        // What is formatted at once is one batch, cut into two stretches a
        // core while stretches are not too short: on 64 cores as on 2, the
        // memory it takes is the same.
        let (on_two, _) = batching(2);
        for threads in [0, 1, 2, 3, 4, 7, 8, 16, 64, 256] {
            let (batch, stretch) = batching(threads);
            assert_eq!(batch, on_two, "{threads} cores");
            assert!(stretch >= MIN_STRETCH, "{threads}: {stretch}");
            let stretches = batch.div_ceil(stretch);
            assert!(stretches <= 2 * threads.max(1), "{threads}: {stretches}");
            assert!(
                stretch == MIN_STRETCH || stretches > threads.max(1),
                "{threads}: {stretches} stretches leave cores idle"
            );
        }
    }

    #[test]
    fn a_document_of_many_pieces_is_written_as_one() {
        // Strings of every size around a piece's, so that pieces end
        // everywhere, and one larger than a piece.
        let v: Vec<String> = (0..300)
            .map(|i| "x".repeat((i * 7919) % (Pieces::SIZE / 64)))
            .chain([String::from("y").repeat(Pieces::SIZE + 3)])
            .collect();
        let mut out = Vec::new();
        write_json(&mut out, &v).unwrap();
        let mut whole = Vec::new();
        crate::sanitize::write_json_pretty(&mut whole, &v).unwrap();
        whole.push(b'\n');
        assert!(out.len() > 3 * Pieces::SIZE);
        assert!(out == whole);
    }

    #[test]
    fn json_that_cannot_be_written_whole_is_not_written_at_all() {
        let mut out = Vec::new();
        assert!(write_json(&mut out, &Breaks).is_err());
        assert!(out.is_empty(), "{}", String::from_utf8_lossy(&out));
        write_json(&mut out, &serde_json::json!({"a": 1})).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "{\n  \"a\": 1\n}\n");
    }
}
