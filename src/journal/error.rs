//! What can go wrong reading journals: a line that cannot be read
//! ([`BadLine`], kept as a [`LineError`] and skipped), or a journal that
//! cannot be read at all ([`JournalError`]).

use serde::Serialize;
use std::fmt;
use std::io;

/// Why one line (or row) of a journal cannot be read: the message users
/// see, and the field at fault when one is. Readers return it for a bad
/// line; [`super::ReadCtx::bad_line`] keeps it as a [`LineError`] with the
/// journal and line, and reading goes on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct BadLine {
    /// What is wrong, in words that name the field when one is at fault
    /// (``field `seq` must be a non-negative integer, found "x"``).
    pub message: String,
    /// The field at fault, as a path into the record (`seq`,
    /// `call.jsonrpc_id`, a SQLite column), when one is.
    pub field: Option<String>,
}

impl BadLine {
    /// A problem with the line as a whole.
    pub fn new(message: impl Into<String>) -> BadLine {
        BadLine {
            message: message.into(),
            field: None,
        }
    }

    /// A problem with field `field`; `message` names it for the reader.
    pub fn in_field(field: impl Into<String>, message: impl Into<String>) -> BadLine {
        BadLine {
            message: message.into(),
            field: Some(field.into()),
        }
    }

    /// The same problem inside the object `outer` (`process`, `call`): the
    /// message is prefixed (`process: …`) and the field path extended
    /// (`process.pid`).
    pub fn within(self, outer: &str) -> BadLine {
        BadLine {
            message: format!("{outer}: {}", self.message),
            field: Some(match self.field {
                Some(f) => format!("{outer}.{f}"),
                None => outer.to_string(),
            }),
        }
    }

    /// The message prefixed with `context` (`events row 4: …`), the field
    /// kept.
    pub fn context(self, context: impl fmt::Display) -> BadLine {
        BadLine {
            message: format!("{context}: {}", self.message),
            field: self.field,
        }
    }
}

impl From<String> for BadLine {
    fn from(message: String) -> Self {
        BadLine::new(message)
    }
}

impl From<&str> for BadLine {
    fn from(message: &str) -> Self {
        BadLine::new(message)
    }
}

/// A line that could not be read, with where it is and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LineError {
    /// Journal name (the path as given).
    pub journal: String,
    /// 1-based line number.
    pub line: u32,
    /// What is wrong, naming the field where one is at fault.
    pub message: String,
    /// The field at fault, when one is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub field: Option<String>,
}

impl fmt::Display for LineError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.journal, self.line, self.message)
    }
}

/// Errors that stop a journal from loading at all.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The journal could not be opened.
    #[error("{journal}: cannot open: {source}")]
    Open {
        /// Journal name.
        journal: String,
        /// Cause.
        source: io::Error,
    },
    /// Reading failed part way.
    #[error("{journal}: read error: {source}")]
    Io {
        /// Journal name.
        journal: String,
        /// Cause.
        source: io::Error,
    },
    /// No reader recognised the first lines.
    #[error("{journal}:{line}: unknown journal format ({reason}); retrace reads: {formats}")]
    UnknownFormat {
        /// Journal name.
        journal: String,
        /// First non-blank line.
        line: u32,
        /// What the line looked like.
        reason: String,
        /// Format names retrace reads.
        formats: String,
    },
    /// The file holds binary data that no reader takes (an executable, an
    /// image, an archive), not a journal: named by its first bytes, so that
    /// none of its bytes reach the terminal.
    #[error("{journal}: a binary file (starts with bytes {first_bytes}), not a journal")]
    Binary {
        /// Journal name.
        journal: String,
        /// Its first bytes (up to four) in hex, space-separated (`7f 45 4c 46`).
        first_bytes: String,
    },
    /// A key given for the journal's chain or sealed events is not the key
    /// its format needs.
    #[error("{journal}: {source}")]
    Key {
        /// Journal name.
        journal: String,
        /// What is wrong with the key.
        source: super::KeyFileError,
    },
    /// The journal is of a known kind but not usable as a journal.
    #[error("{journal}: {message}")]
    Invalid {
        /// Journal name.
        journal: String,
        /// What is wrong.
        message: String,
    },
    /// The journal's lines were read, but none is a record of its format
    /// (docs/design.md §7.3: bad input, exit 2).
    #[error(
        "{journal}: no usable line: none of its {lines} line(s) is a record retrace reads as {format}; {hint}"
    )]
    NoUsableLine {
        /// Journal name.
        journal: String,
        /// Lines read.
        lines: u64,
        /// The format it was read as.
        format: String,
        /// What to try: another format, when one was forced on it
        /// (`--input-format`); else what was read of its last line.
        hint: String,
    },
    /// Not one line of the journal could be read.
    #[error("{first} (no readable record in {count} bad line(s))")]
    NothingReadable {
        /// The first bad line.
        first: LineError,
        /// Number of bad lines.
        count: u64,
    },
}
