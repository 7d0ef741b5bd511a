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

pub mod chain;
mod error;
pub mod exchange;
mod fields;
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
mod rawjson;
mod read;
mod sallyport;
mod source;
mod sqlite;

use crate::model::{JournalId, SourceRef};
pub use chain::GENESIS;
use chain::{ChainMark, ChainStatus};
pub use error::{BadLine, JournalError, LineError};
pub use format::{Capabilities, Format, FormatFacts, UnknownFormat};
pub use keys::{ChainKeys, KeyFile, KeyFileError, LoadOptions};
pub use load::{detect, load, load_with, verify};
pub use native::{NativeChainWriter, native_chain_hash};
pub use otlp::CANCEL_MARGIN;
#[cfg(test)]
pub(crate) use read::with_test_ctx;
pub use read::{JournalReader, ReadCtx};
pub(crate) use read::{
    LineMeta, for_each_line, for_each_line_parallel, run_scope_from_path, started_before,
};
use serde::Serialize;
pub use source::{Compression, JournalSource, SourceData};

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
    /// What verifying the journal's audit chain found (docs/design.md §6).
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
