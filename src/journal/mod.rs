//! Journal readers: one module per input format behind one [`JournalReader`]
//! interface, format detection from the first lines, and loading of several
//! journals into one [`crate::model::Model`].
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

pub mod ambiguity;
pub mod chain;
mod contextforge;
mod error;
pub mod exchange;
mod fields;
pub mod follow;
mod format;
mod gh_aw;
pub mod keys;
pub mod lines;
mod load;
mod mcp_acp;
mod mcp_audit;
mod mcp_audit_gateway;
mod mcpproxy;
mod native;
mod otlp;
mod pairing;
mod rawjson;
mod read;
mod sallyport;
mod source;
mod sqlite;
pub use sqlite::{SqliteTail, TailRead};

use crate::model::{JournalId, SourceRef};
pub use chain::GENESIS;
use chain::{ChainMark, ChainStatus};
pub use error::{BadLine, JournalError, LineError};
pub use format::{Capabilities, Format, FormatFacts, UnknownFormat};
pub use keys::{ChainKeys, KeyFile, KeyFileError, LoadOptions};
pub use load::{check_journal_count, detect, load, load_with, verify};
pub use native::{NativeChainWriter, native_chain_hash};
pub use otlp::CANCEL_MARGIN;
#[cfg(test)]
pub(crate) use read::with_test_ctx;
pub use read::{JournalReader, ReadCtx};
pub(crate) use read::{
    LineMeta, for_each_line, for_each_line_parallel, started_before, too_long_message,
};
use serde::Serialize;
pub use source::{Compression, JournalSource, SourceData};

pub use fields::parse_time;

/// Whether a journal "path" is a database URL (`postgres://…`,
/// `postgresql://…`) rather than a file (docs/formats.md#contextforge).
pub fn is_database_url(path: &std::path::Path) -> bool {
    path.to_str()
        .is_some_and(|s| contextforge::is_url(s.as_bytes()))
}

/// The part of the journals an investigation reads (`--since`, `--until`):
/// calls that began at or after `since` and at or before `until`, both
/// inclusive, UTC. An empty window (both `None`) reads everything.
///
/// Readers that query a database put the window in their queries
/// (docs/formats.md#contextforge); for every other reader it is applied
/// where records are emitted ([`ReadCtx::emit`]): an execution is kept
/// whole when the first record the journal has of it lies in the window,
/// and left out whole otherwise, so that a call is never cut in two. A
/// session is kept when its run overlaps the window (an unknown start or
/// end counts as open).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimeWindow {
    /// Earliest start kept.
    pub since: Option<chrono::DateTime<chrono::Utc>>,
    /// Latest start kept.
    pub until: Option<chrono::DateTime<chrono::Utc>>,
}

/// Executions read from before a window's start, so that a repeat in the
/// window is judged with the earlier call it repeats (docs/design.md §7.2):
/// with `--since`, the executions that began up to `reach` before it are
/// read too, but for those named in `leave_out`.
///
/// An investigation fills `leave_out` after a first read: the executions
/// of that reach whose intent has no execution in the window, which then
/// stay out as everything else before the window does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Lookback {
    /// How far before `since` executions are read: the longest attach
    /// window in force (§4.4).
    pub reach: chrono::TimeDelta,
    /// Ids of executions within the reach to leave out after all.
    pub leave_out: std::sync::Arc<std::collections::HashSet<String>>,
}

/// A `--since`/`--until` value that is neither a time nor a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is neither an RFC 3339 time (2026-12-01T11:00:00Z) nor a duration back from now (2h, 30m, 1d)"
)]
pub struct BadTimeBound(pub String);

impl TimeWindow {
    /// Whether the window reads everything.
    pub fn is_unbounded(&self) -> bool {
        self.since.is_none() && self.until.is_none()
    }

    /// The window with its start moved `reach` earlier (no start: none).
    pub fn widened(&self, reach: chrono::TimeDelta) -> TimeWindow {
        TimeWindow {
            since: self.since.map(|s| {
                s.checked_sub_signed(reach)
                    .unwrap_or(chrono::DateTime::<chrono::Utc>::MIN_UTC)
            }),
            until: self.until,
        }
    }

    /// Whether `t` lies in the window (bounds included).
    pub fn contains(&self, t: chrono::DateTime<chrono::Utc>) -> bool {
        self.since.is_none_or(|s| s <= t) && self.until.is_none_or(|u| t <= u)
    }

    /// Whether the span from `start` to `end` (either unknown: open) meets
    /// the window.
    pub fn overlaps(
        &self,
        start: Option<chrono::DateTime<chrono::Utc>>,
        end: Option<chrono::DateTime<chrono::Utc>>,
    ) -> bool {
        let after_since = match (self.since, end.or(start)) {
            (Some(s), Some(e)) => e >= s,
            _ => true,
        };
        let before_until = match (self.until, start.or(end)) {
            (Some(u), Some(b)) => b <= u,
            _ => true,
        };
        after_since && before_until
    }

    /// The window in words: `from 2026-07-22 14:00:00Z until 2026-07-22
    /// 15:00:00Z`, `at or after …`, `at or before …` (fractions of a
    /// second shown when a bound has them), or `all of the journals`.
    pub fn describe(&self) -> String {
        use chrono::Timelike;
        let t = |d: chrono::DateTime<chrono::Utc>| {
            if d.nanosecond() == 0 {
                d.format("%Y-%m-%d %H:%M:%SZ").to_string()
            } else {
                d.format("%Y-%m-%d %H:%M:%S%.fZ").to_string()
            }
        };
        match (self.since, self.until) {
            (Some(s), Some(u)) => format!("from {} until {}", t(s), t(u)),
            (Some(s), None) => format!("at or after {}", t(s)),
            (None, Some(u)) => format!("at or before {}", t(u)),
            (None, None) => "all of the journals".into(),
        }
    }

    /// Parses one bound as `--since` and `--until` take it: an RFC 3339
    /// time (`2026-12-01T11:00:00Z`, any offset, a space for the `T`), or a duration that many
    /// units back from `now` in humantime's syntax (`2h`, `30m`, `1d`,
    /// `1h 30m`).
    ///
    /// # Errors
    /// [`BadTimeBound`] when `s` is neither, or the duration reaches back
    /// before any representable time.
    pub fn parse_bound(
        s: &str,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<chrono::DateTime<chrono::Utc>, BadTimeBound> {
        let s = s.trim();
        if let Ok(t) = chrono::DateTime::parse_from_rfc3339(&s.replacen(' ', "T", 1)) {
            return Ok(t.with_timezone(&chrono::Utc));
        }
        humantime::parse_duration(s)
            .ok()
            .and_then(|d| chrono::TimeDelta::from_std(d).ok())
            .and_then(|d| now.checked_sub_signed(d))
            .ok_or_else(|| BadTimeBound(s.to_string()))
    }
}

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
    /// What verifying the journal's audit chain found (docs/design.md §6).
    pub chain: ChainStatus,
    /// Executions the time window (`--since`, `--until`) left out: calls
    /// that began outside it. A database queried for the window does not
    /// count the rows it did not return.
    pub left_out_executions: u64,
    #[serde(skip)]
    source: JournalSource,
}

/// How many bad lines are kept with their messages per journal; the rest
/// are only counted (docs/design.md §6.2: `verify --json` lists every kept
/// one and says how many more there were).
pub const MAX_KEPT_BAD_LINES: usize = 1_000_000;

impl LoadedJournal {
    /// The source, for reading raw lines back.
    pub fn source(&self) -> &JournalSource {
        &self.source
    }

    /// Opens the journal's file again for reading lines back, taking its
    /// size and time as they are now: what it gained since it was read has
    /// been read too (the TUI's follow mode, docs/design.md §7.7), and
    /// [`LoadedJournal::read_raw`] refuses a file that changed since.
    pub fn restamp(&mut self) {
        if let SourceData::File(p) = &self.source.data {
            let mut s = JournalSource::file(p.clone());
            s.name.clone_from(&self.source.name);
            self.source = s;
        }
    }

    /// Whether evidence at `at` lies in the verified part of this journal's
    /// chain: [`ChainMark::Verified`] before any break,
    /// [`ChainMark::Unverified`] from the first failure on (or when the
    /// chain could not be checked), [`ChainMark::NoChain`] when nothing
    /// chains it.
    pub fn chain_mark(&self, at: SourceRef) -> ChainMark {
        if at
            .table()
            .is_some_and(|t| t != sqlite::EVENTS_TABLE.as_str())
        {
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
        if let (SourceRef::Row { table, row, .. }, Some(url)) =
            (at, contextforge::url_of(&self.source))
        {
            return contextforge::read_pg_row(&url, table, row).map_err(|message| {
                JournalError::Invalid {
                    journal: self.name.clone(),
                    message,
                }
            });
        }
        match (at, &self.source.data) {
            (SourceRef::Row { table, row, .. }, SourceData::File(p)) => {
                sqlite::read_row(p, table.as_str(), row).map_err(|e| JournalError::Invalid {
                    journal: self.name.clone(),
                    message: e.to_string(),
                })
            }
            _ => self.source.read_raw(at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event names its journal in two bytes: one more journal than
    /// that numbers is refused by name, before anything is read.
    #[test]
    fn a_set_of_more_journals_than_are_numbered_is_refused() {
        let most = usize::from(crate::model::JournalId::MAX) + 1;
        let mut sources: Vec<JournalSource> = (0..most)
            .map(|i| JournalSource::file(format!("j{i}.jsonl")))
            .collect();
        assert!(check_journal_count(&sources).is_ok());
        sources.push(JournalSource::file("one-too-many.jsonl"));
        let e = check_journal_count(&sources).unwrap_err().to_string();
        assert!(
            e.starts_with("one-too-many.jsonl: 65537 journals given"),
            "{e}"
        );
        let e = load_with(sources, &LoadOptions::default(), &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("at most 65536"), "{e}");
    }

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
        // A line cut short says it is not JSON (a journal of one such
        // line read as "unknown format" only).
        let src =
            JournalSource::embedded("y.jsonl", b"{\"kind\":\"event\",\"seq\":1,\"at\":\"2026");
        let e = detect(&src).unwrap_err().to_string();
        assert!(
            e.starts_with(
                "y.jsonl:1: unknown journal format (it is not valid JSON (EOF while parsing"
            ),
            "{e}"
        );
        assert!(e.contains("cut short?); first line starts"), "{e}");
    }

    fn utc(s: &str) -> chrono::DateTime<chrono::Utc> {
        chrono::DateTime::parse_from_rfc3339(s)
            .unwrap()
            .with_timezone(&chrono::Utc)
    }

    #[test]
    fn time_bounds_are_rfc3339_or_durations_back_from_now() {
        let now = utc("2026-12-01T12:00:00Z");
        let p = |s| TimeWindow::parse_bound(s, now);
        assert_eq!(
            p("2026-12-01T10:00:00+01:00"),
            Ok(utc("2026-12-01T09:00:00Z"))
        );
        assert_eq!(p("2h"), Ok(utc("2026-12-01T10:00:00Z")));
        assert_eq!(p("30m"), Ok(utc("2026-12-01T11:30:00Z")));
        assert_eq!(p("1d"), Ok(utc("2026-11-30T12:00:00Z")));
        assert_eq!(p("1h30m"), Ok(utc("2026-12-01T10:30:00Z")));
        assert_eq!(
            p("2026-12-01 12:03:00+02:00"),
            Ok(utc("2026-12-01T10:03:00Z"))
        );
        let e = p("yesterday").unwrap_err().to_string();
        assert!(e.contains("\"yesterday\"") && e.contains("RFC 3339"), "{e}");
        for bad in ["", "2x", "2h-"] {
            let e = p(bad).unwrap_err().to_string();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_window_keeps_calls_whole_and_says_what_it_left_out() {
        let opts = LoadOptions {
            window: TimeWindow {
                since: Some(utc("2026-07-22T14:03:30Z")),
                until: None,
            },
            ..LoadOptions::default()
        };
        let (all_j, all) = load(crate::sample::sources(), None, &mut |_| {}).unwrap();
        let (j, m) = load_with(crate::sample::sources(), &opts, &mut |_| {}).unwrap();
        assert!(m.execution_count() < all.execution_count());
        for x in m.executions() {
            // Every execution kept began in the window, with all its events.
            assert!(x.started_at().unwrap() >= opts.window.since.unwrap());
            let whole = all
                .execution_at(all.execution_index(x.id()).unwrap())
                .unwrap();
            assert_eq!(x.len(), whole.len(), "{}", x.id());
        }
        let activity = &j[1];
        let left = all_j[1].records - activity.records;
        assert!(left > 0);
        assert!(
            activity
                .notes
                .iter()
                .any(|n| n.contains(&format!("left out {left} of"))
                    && n.contains("at or after 2026-07-22 14:03:30Z")),
            "{:?}",
            activity.notes
        );
    }

    /// Ids and scopes of one gh-aw log under `names`, loaded together.
    fn ids_of(names: &[&str]) -> Vec<(String, String)> {
        let bytes: &'static [u8] =
            include_bytes!("../../tests/fixtures/gh-aw/repeat-after-result.jsonl");
        let sources = names
            .iter()
            .map(|n| JournalSource::memory(n, bytes.to_vec()))
            .collect();
        let (_, m) = load(sources, None, &mut |_| {}).unwrap();
        let mut ids: Vec<(String, String)> = m
            .executions()
            .map(|x| {
                let scope = x
                    .action()
                    .and_then(|a| a.intent_scope())
                    .unwrap_or_default()
                    .to_string();
                (x.id().to_string(), scope)
            })
            .collect();
        ids.sort();
        ids
    }

    #[test]
    fn ids_and_scopes_come_from_content_not_names_or_order() {
        let a = ids_of(&["logs/run-1/mcp-logs/rpc-messages.jsonl"]);
        assert!(!a.is_empty());
        // Renamed, moved, read through a pipe: the same ids and scopes.
        assert_eq!(a, ids_of(&["copy.jsonl"]));
        assert_eq!(a, ids_of(&["/dev/stdin"]));
        for (id, scope) in &a {
            assert!(
                !id.contains("rpc-messages") && !id.contains("run-1"),
                "{id}"
            );
            assert!(
                scope.starts_with("journal:") && !scope.contains("rpc"),
                "{scope}"
            );
        }
        // A copy loaded beside it is a journal of its own, whichever comes
        // first: its executions do not merge into the other's.
        let both = ids_of(&["a/rpc-messages.jsonl", "b/rpc-messages.jsonl"]);
        assert_eq!(both.len(), 2 * a.len());
        assert_eq!(
            both,
            ids_of(&["b/rpc-messages.jsonl", "a/rpc-messages.jsonl"])
        );
    }

    #[test]
    fn identical_lines_are_told_apart_by_their_place_among_them() {
        let src = JournalSource::memory("x", b"{}\n".to_vec());
        let mut sink = |_: crate::model::Record| {};
        let mut prog = |_: u64| {};
        let keys = ChainKeys::default();
        let mut ctx = ReadCtx::new(
            0,
            &src,
            src.identity().unwrap(),
            Format::GhAwMcpg,
            (&mut sink, &mut prog),
            &keys,
            Vec::new(),
        );
        let first = ctx.line_id(b"{\"a\":1}");
        let other = ctx.line_id(b"{\"a\":2}");
        let again = ctx.line_id(b"{\"a\":1}");
        assert_ne!(first, other);
        assert_eq!(again, format!("{first}~2"));
        assert!(first.starts_with(&src.identity().unwrap()));
    }
}
