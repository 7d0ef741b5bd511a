//! The case file: reviewer decisions, investigator notes and bookmarks in a
//! SQLite database (rusqlite), append-only and hash-chained like a journal.
//!
//! # Format (`retrace-case/1`)
//!
//! ```sql
//! CREATE TABLE meta    (key TEXT PRIMARY KEY, value TEXT NOT NULL);
//! CREATE TABLE entries (seq INTEGER PRIMARY KEY,  -- contiguous from 1
//!                       at TEXT NOT NULL,         -- RFC 3339 UTC, as hashed
//!                       kind TEXT NOT NULL,       -- decision | note | bookmark
//!                       payload TEXT NOT NULL,    -- a JSON object
//!                       prev_hash TEXT NOT NULL,  -- 64 hex digits
//!                       hash TEXT NOT NULL);      -- 64 hex digits
//! ```
//!
//! Chain rule: the native journal chain (docs/design.md §6), each row read as
//! the record `{"seq","at","kind","payload"}`:
//! `hash = hex(SHA-256(ascii(prev_hash) ‖ JCS({"seq","at","kind","payload"})))`
//! with JCS the JSON Canonicalization Scheme (RFC 8785) and the genesis
//! `prev_hash` 64 ASCII zeros ([`crate::journal::GENESIS`]). The rows are
//! verified by the same [`crate::journal::chain::ChainTracker`] as native journals, in seq order,
//! and report in the same vocabulary ([`ChainStatus`],
//! [`crate::journal::chain::FailureKind`]): an
//! "entry N" is the N-th row. Triggers refuse `UPDATE` and `DELETE` on both
//! tables, so the file only grows through retrace; a change made around the
//! triggers (or with them dropped) shows as a break in [`verify`].
//!
//! What the chain cannot show: entries cut from the tail (the last entries
//! deleted and nothing after them). `retrace review export` prints the head
//! hash so that a copy kept elsewhere anchors the tail.
//!
//! # Durability
//!
//! WAL journal mode with `synchronous=FULL` (docs/design.md §9.5: FULL where
//! the durability of approvals matters), and exactly one `BEGIN IMMEDIATE`
//! transaction per appended entry: an entry is either committed whole or
//! absent, whatever happens to the process. The schema is created the same
//! way, in one `BEGIN IMMEDIATE` transaction, so that processes deciding at
//! once while no case file exists create it once; a reader that finds a
//! database with no table yet reads it as an empty case. A confirmed
//! decision is final: whether one exists is checked inside the appending
//! transaction.
//!
//! # Test hook
//!
//! When the environment variable [`PAUSE_BEFORE_COMMIT_ENV`] holds a number
//! of milliseconds, [`CaseFile::append`] prints
//! `retrace: test hook: pausing before commit` on stderr and sleeps that long
//! after inserting the entry and before committing, so that a test can kill
//! the process inside the transaction. It changes nothing else.

mod chain;
mod records;
mod schema;

pub use chain::{CaseChain, Verification, entry_hash};
pub use records::{
    BookmarkPayload, DecisionPayload, DecisionRecord, Entry, EntryKind, NotePayload, format_at,
};
pub use schema::is_case_file;

use crate::analysis::Decision;
use crate::journal::chain::{ChainFailure, ChainStatus};
use chain::{check_rows, read_rows};
use chrono::{DateTime, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use schema::{Created, guards_ok};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Refuses a case file path that exists but is not a regular file, or is a
/// symbolic link to nothing (docs/design.md §6.6): a FIFO would block every
/// command, and the first decision through a dangling link would create a
/// file wherever it points. A missing path is fine (created by the first
/// decision); a link to a regular file is followed.
///
/// # Errors
/// [`CaseError::NotRegular`] saying what the path is.
pub fn check_path(path: &Path) -> Result<(), CaseError> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let refuse = |what| {
        Err(CaseError::NotRegular {
            path: path.display().to_string(),
            what,
        })
    };
    if meta.file_type().is_symlink() {
        return match std::fs::canonicalize(path) {
            Err(_) => refuse("a symbolic link to nothing"),
            Ok(target) => match crate::export::atomic::not_regular(&target) {
                None => Ok(()),
                Some(what) => refuse(what),
            },
        };
    }
    match crate::export::atomic::not_regular(path) {
        None => Ok(()),
        Some(what) => refuse(what),
    }
}

/// The format name stored in the `meta` table.
pub const FORMAT: &str = "retrace-case/1";

/// File name of the default case file, created beside the first journal.
/// One per folder rather than one per journal: an incident's journals
/// usually share a folder, and the order in which they are named on the
/// command line must not change which case file is used. Decisions name
/// gateway-created execution ids, so journals sharing a folder can share
/// one case file.
pub const DEFAULT_FILE_NAME: &str = "retrace-case.sqlite";

/// What a reviewer can do about an execution that already has a final
/// decision (`confirmed_completed` or `confirmed_not_executed`): said
/// wherever such a decision is refused.
pub const FINAL_DECISION: &str = "A confirmed decision is final: the case file is append-only and keeps it as it was recorded. To record a different finding, use another case file (--case FILE) and keep this one as the record of what was decided; `retrace review list` shows what still waits.";

/// Test hook: milliseconds to sleep between insert and commit (see the
/// module documentation).
pub const PAUSE_BEFORE_COMMIT_ENV: &str = "RETRACE_TEST_PAUSE_BEFORE_COMMIT_MS";

/// The default case file for a set of journals: [`DEFAULT_FILE_NAME`] in the
/// folder of the first journal named; in that folder itself when the first
/// journal named is a folder (whatever subfolders `-r` reads its journals
/// from: `retrace review list incident/` finds the decisions that
/// `retrace review decide … -r incident/` recorded); in the current folder
/// when that journal is not a regular file (a pipe such as `/dev/stdin` has
/// no folder of its own).
pub fn default_path(first_journal: &Path) -> PathBuf {
    match std::fs::metadata(first_journal) {
        Ok(m) if m.is_dir() => return first_journal.join(DEFAULT_FILE_NAME),
        Ok(m) if !m.is_file() => return PathBuf::from(DEFAULT_FILE_NAME),
        _ => {}
    }
    match first_journal.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(DEFAULT_FILE_NAME),
        _ => PathBuf::from(DEFAULT_FILE_NAME),
    }
}

/// What went wrong with a case file. Every message names the file.
#[derive(Debug, thiserror::Error)]
pub enum CaseError {
    /// SQLite refused (cannot open, locked, disk full, not a database...).
    #[error("case file {path}: {source}")]
    Sqlite {
        /// The case file.
        path: String,
        /// SQLite's error.
        #[source]
        source: rusqlite::Error,
    },
    /// The file is a SQLite database but not a retrace case file.
    #[error(
        "{0} is not a retrace case file (no `meta` table naming {FORMAT}); choose another with --case FILE"
    )]
    NotACaseFile(String),
    /// The file does not exist (reading never creates one).
    #[error("case file {0} does not exist")]
    Missing(String),
    /// Appending was refused because the chain is already broken.
    #[error("case file {path}: the chain is broken at entry {} ({}): {}; nothing was appended", failure.line, failure.kind.as_str(), failure.message)]
    Broken {
        /// The case file.
        path: String,
        /// The first break (`line`: the entry's place in seq order).
        failure: ChainFailure,
    },
    /// The path is not a regular file (a FIFO, a device, a folder, a
    /// symbolic link to nothing): opening a FIFO would wait forever, and a
    /// decision through a dangling link would create a file where it points
    /// (docs/design.md §6.6, §7.3: exit 1).
    #[error(
        "case file {path} is {what}, not a regular file: refusing to use it; choose another with --case FILE"
    )]
    NotRegular {
        /// The case file as given.
        path: String,
        /// What it is.
        what: &'static str,
    },
    /// The file was opened read-only.
    #[error("case file {0} is open read-only; nothing was written")]
    ReadOnly(String),
    /// A final decision about the execution was recorded first (found
    /// inside the appending transaction: another reviewer, or another
    /// process, decided since the queue was read).
    #[error(
        "case file {path}: {execution_id} was already decided {decision} by {reviewer} at {at} (case entry {seq}); nothing was appended. {FINAL_DECISION}"
    )]
    AlreadyDecided {
        /// The case file.
        path: String,
        /// The execution.
        execution_id: String,
        /// What was decided.
        decision: Decision,
        /// By whom.
        reviewer: String,
        /// When (RFC 3339).
        at: String,
        /// Its entry.
        seq: u64,
    },
    /// An entry could not be encoded.
    #[error("case file {path}: {message}")]
    Invalid {
        /// The case file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Whether a case file is opened for reading only or for appending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Strictly read-only (`--read-only`): a SQLite read-only connection
    /// that never writes. SQLite may leave its lock index files (`-shm`,
    /// `-wal`) beside a WAL database it read; they hold no retrace data.
    ReadOnly,
    /// Read, never append: the connection is opened read-write when the
    /// file allows it (falling back to read-only), only so that SQLite
    /// removes its lock index files when the connection closes. Nothing
    /// is ever appended.
    Read,
    /// Read and append; creates the file (and its schema) when missing.
    ReadWrite,
}

/// An open case file.
#[derive(Debug)]
pub struct CaseFile {
    conn: Connection,
    path: PathBuf,
    access: Access,
    /// Opened for reading while it holds no table yet: another process is
    /// creating it (or it is an empty file). It reads as an empty case.
    empty: bool,
    /// A case file in a folder retrace cannot write (a read-only file
    /// system) is read from a copy here: SQLite cannot open a WAL database
    /// read-only without writing its shared-memory file beside it.
    /// Declared after `conn`, so the copy outlives the connection.
    _copy: Option<tempfile::TempDir>,
}

/// Opens a copy of the case file (and its `-wal`, which may hold committed
/// entries) in a temporary folder, for reading a case file whose folder
/// cannot be written (docs/design.md §9.5).
fn open_copy(path: &Path) -> Result<(Connection, tempfile::TempDir), rusqlite::Error> {
    let io = |e: std::io::Error| {
        rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_CANTOPEN),
            Some(format!("cannot copy it for reading: {e}")),
        )
    };
    let dir = tempfile::tempdir().map_err(io)?;
    let copy = dir.path().join("case.sqlite");
    std::fs::copy(path, &copy).map_err(io)?;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal = PathBuf::from(wal);
    if wal.is_file() {
        std::fs::copy(&wal, dir.path().join("case.sqlite-wal")).map_err(io)?;
    }
    let conn = Connection::open_with_flags(
        &copy,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    Ok((conn, dir))
}

impl CaseFile {
    /// Opens a case file. [`Access::ReadWrite`] creates a missing file with
    /// its schema in one transaction (safe when several processes create it
    /// at once), sets WAL mode and `synchronous=FULL`; [`Access::ReadOnly`]
    /// never creates or changes anything and fails with
    /// [`CaseError::Missing`] when the file does not exist. A database with
    /// no table yet (being created by another process, or an empty file)
    /// reads as a case file with no entry.
    ///
    /// # Errors
    /// [`CaseError::Sqlite`] when SQLite cannot open it,
    /// [`CaseError::NotACaseFile`] for another SQLite database.
    pub fn open(path: &Path, access: Access) -> Result<CaseFile, CaseError> {
        check_path(path)?;
        let name = path.display().to_string();
        let sql = |source| CaseError::Sqlite {
            path: name.clone(),
            source,
        };
        let mut copy = None;
        let conn = match access {
            Access::ReadOnly | Access::Read => {
                if !path.exists() {
                    return Err(CaseError::Missing(name));
                }
                let ro = || {
                    Connection::open_with_flags(
                        path,
                        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    )
                };
                let writable = std::fs::metadata(path).is_ok_and(|m| !m.permissions().readonly());
                let opened = if access == Access::Read && writable {
                    Connection::open_with_flags(
                        path,
                        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    )
                    .or_else(|_| ro())
                } else {
                    ro()
                };
                // SQLite opens lazily: the first read tells whether it can
                // use the file where it is. A WAL case file on a read-only
                // file system (or in an unwritable folder) cannot be, and is
                // read from a copy: it stays readable.
                let usable = |c: &Connection| {
                    c.query_row("SELECT count(*) FROM sqlite_master", [], |_| Ok(()))
                };
                match opened {
                    Ok(c) => match usable(&c) {
                        Ok(()) => c,
                        Err(first) => {
                            drop(c);
                            let (c, dir) = open_copy(path).map_err(|_| sql(first))?;
                            copy = Some(dir);
                            c
                        }
                    },
                    Err(first) => {
                        let (c, dir) = open_copy(path).map_err(|_| sql(first))?;
                        copy = Some(dir);
                        c
                    }
                }
            }
            Access::ReadWrite => Connection::open_with_flags(
                path,
                OpenFlags::SQLITE_OPEN_READ_WRITE
                    | OpenFlags::SQLITE_OPEN_CREATE
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )
            .map_err(sql)?,
        };
        conn.busy_timeout(Duration::from_secs(5)).map_err(sql)?;
        let mut case = CaseFile {
            conn,
            path: path.to_path_buf(),
            access,
            empty: false,
            _copy: copy,
        };
        if access == Access::ReadWrite {
            case.create_schema().map_err(|e| match e {
                Created::Sqlite(e) => sql(e),
                Created::Foreign => CaseError::NotACaseFile(name.clone()),
            })?;
        } else if case.tables().map_err(sql)? == 0 {
            // Nothing committed yet: a case file that another process is
            // creating (its schema appears whole, in one transaction), or
            // an empty file. Either way it holds no entry.
            case.empty = true;
            return Ok(case);
        }
        let format: Option<String> = if case.has_meta().map_err(sql)? {
            case.conn
                .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(sql)?
        } else {
            None
        };
        if format.as_deref() != Some(FORMAT) {
            return Err(CaseError::NotACaseFile(name));
        }
        Ok(case)
    }

    /// The path as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path for messages and evidence.
    pub fn name(&self) -> String {
        self.path.display().to_string()
    }

    fn sql(&self, source: rusqlite::Error) -> CaseError {
        CaseError::Sqlite {
            path: self.name(),
            source,
        }
    }

    /// Reads every entry and verifies the chain. The entries returned are
    /// those that verified: all of them when the chain is intact, those
    /// before the first break otherwise.
    ///
    /// # Errors
    /// [`CaseError::Sqlite`] when the file cannot be read.
    pub fn load(&self) -> Result<(Vec<Entry>, CaseChain), CaseError> {
        if self.empty {
            return Ok(check_rows(Vec::new()));
        }
        let rows = read_rows(&self.conn).map_err(|e| self.sql(e))?;
        Ok(check_rows(rows))
    }

    /// Verifies the chain and the append-only triggers.
    ///
    /// # Errors
    /// [`CaseError::Sqlite`] when the file cannot be read.
    pub fn verify(&self) -> Result<Verification, CaseError> {
        let (_, chain) = self.load_guarded()?;
        Ok(Verification {
            append_only_guards: self.guards_present()?,
            chain,
        })
    }

    /// [`CaseFile::load`], and a file whose append-only triggers were
    /// removed reads as broken after its last entry
    /// ([`crate::journal::chain::FailureKind::GuardsRemoved`]): its entries still count, but nothing
    /// may extend it and every view says it is broken.
    ///
    /// # Errors
    /// [`CaseError::Sqlite`] when the file cannot be read.
    pub fn load_guarded(&self) -> Result<(Vec<Entry>, CaseChain), CaseError> {
        let (entries, chain) = self.load()?;
        let chain = if chain.is_intact() && !self.guards_present()? {
            chain.without_guards()
        } else {
            chain
        };
        Ok((entries, chain))
    }

    /// Whether the triggers refusing UPDATE and DELETE are all present (an
    /// empty file, still being created, has none and needs none).
    fn guards_present(&self) -> Result<bool, CaseError> {
        if self.empty {
            return Ok(true);
        }
        guards_ok(&self.conn).map_err(|e| self.sql(e))
    }

    /// The decisions among the verified entries, in seq order.
    ///
    /// # Errors
    /// [`CaseError::Sqlite`] when the file cannot be read.
    pub fn decisions(&self) -> Result<(Vec<DecisionRecord>, CaseChain), CaseError> {
        let (entries, status) = self.load()?;
        Ok((decisions_of(&entries), status))
    }

    /// Appends one entry in its own `BEGIN IMMEDIATE` transaction, after
    /// verifying the whole chain inside that transaction (a broken chain is
    /// never extended). Returns the entry as stored.
    ///
    /// # Errors
    /// [`CaseError::ReadOnly`], [`CaseError::Broken`], or
    /// [`CaseError::Sqlite`] (locked, disk full...): then nothing was
    /// written.
    pub fn append(
        &mut self,
        at: DateTime<Utc>,
        kind: EntryKind,
        payload: &Value,
    ) -> Result<Entry, CaseError> {
        self.append_checked(at, kind, payload, &|_| Ok(()))
    }

    /// As [`CaseFile::append`], after `check` accepted the verified
    /// entries, inside the same transaction (so that what it checks cannot
    /// change before the entry is committed).
    fn append_checked(
        &mut self,
        at: DateTime<Utc>,
        kind: EntryKind,
        payload: &Value,
        check: &dyn Fn(&[Entry]) -> Result<(), CaseError>,
    ) -> Result<Entry, CaseError> {
        if self.access != Access::ReadWrite {
            return Err(CaseError::ReadOnly(self.name()));
        }
        if !payload.is_object() {
            return Err(CaseError::Invalid {
                path: self.name(),
                message: "an entry payload must be a JSON object".into(),
            });
        }
        let name = self.name();
        let sql = |source| CaseError::Sqlite {
            path: name.clone(),
            source,
        };
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql)?;
        let (entries, chain) = check_rows(read_rows(&tx).map_err(sql)?);
        let chain = if chain.is_intact() && !guards_ok(&tx).map_err(sql)? {
            chain.without_guards()
        } else {
            chain
        };
        let prev = match chain.status {
            ChainStatus::Broken { failure, .. } => {
                return Err(CaseError::Broken {
                    path: name,
                    failure,
                });
            }
            _ => chain.head,
        };
        check(&entries)?;
        let seq = entries.len() as u64 + 1;
        let at_text = format_at(at);
        let hash = entry_hash(&prev, seq, &at_text, kind.as_str(), payload);
        tx.execute(
            "INSERT INTO entries (seq, at, kind, payload, prev_hash, hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                i64::try_from(seq).unwrap_or(i64::MAX),
                at_text,
                kind.as_str(),
                payload.to_string(),
                prev,
                hash
            ],
        )
        .map_err(sql)?;
        test_pause(PAUSE_BEFORE_COMMIT_ENV, "before commit");
        tx.commit().map_err(sql)?;
        Ok(Entry {
            seq,
            at: DateTime::parse_from_rfc3339(&at_text)
                .map(|t| t.with_timezone(&Utc))
                .unwrap_or(at),
            kind,
            payload: payload.clone(),
            prev_hash: prev,
            hash,
        })
    }

    /// Records a decision (one transaction). A confirmed decision
    /// (anything but `escalated`) is final: once one is recorded for an
    /// execution, no other decision about it is appended. This is checked
    /// inside the appending transaction, so two reviewers (or processes)
    /// deciding at once cannot both record one.
    ///
    /// # Errors
    /// As [`CaseFile::append`]; [`CaseError::Invalid`] for an empty note or
    /// reviewer; [`CaseError::AlreadyDecided`].
    pub fn record_decision(
        &mut self,
        at: DateTime<Utc>,
        d: &DecisionPayload,
    ) -> Result<DecisionRecord, CaseError> {
        if d.note.trim().is_empty() || d.reviewer.trim().is_empty() {
            return Err(CaseError::Invalid {
                path: self.name(),
                message: "a decision needs a reviewer and a note".into(),
            });
        }
        let payload = serde_json::to_value(d).map_err(|e| CaseError::Invalid {
            path: self.name(),
            message: e.to_string(),
        })?;
        let path = self.name();
        let execution_id = d.execution_id.clone();
        let e =
            self.append_checked(
                at,
                EntryKind::Decision,
                &payload,
                &|entries| match decisions_of(entries).into_iter().find(|r| {
                    r.payload.execution_id == execution_id
                        && r.payload.decision != Decision::Escalated
                }) {
                    Some(r) => Err(CaseError::AlreadyDecided {
                        path: path.clone(),
                        execution_id: execution_id.clone(),
                        decision: r.payload.decision,
                        reviewer: r.payload.reviewer,
                        at: format_at(r.at),
                        seq: r.seq,
                    }),
                    None => Ok(()),
                },
            )?;
        Ok(DecisionRecord {
            seq: e.seq,
            at: e.at,
            hash: e.hash,
            payload: d.clone(),
        })
    }

    /// Records an investigator note (one transaction).
    ///
    /// # Errors
    /// As [`CaseFile::append`].
    pub fn add_note(&mut self, at: DateTime<Utc>, n: &NotePayload) -> Result<Entry, CaseError> {
        let payload = serde_json::to_value(n).map_err(|e| CaseError::Invalid {
            path: self.name(),
            message: e.to_string(),
        })?;
        self.append(at, EntryKind::Note, &payload)
    }

    /// Records a bookmark (one transaction).
    ///
    /// # Errors
    /// As [`CaseFile::append`].
    pub fn add_bookmark(
        &mut self,
        at: DateTime<Utc>,
        b: &BookmarkPayload,
    ) -> Result<Entry, CaseError> {
        let payload = serde_json::to_value(b).map_err(|e| CaseError::Invalid {
            path: self.name(),
            message: e.to_string(),
        })?;
        self.append(at, EntryKind::Bookmark, &payload)
    }
}

/// The decision entries among `entries`, in seq order (entries whose
/// payload is not a decision payload are skipped).
pub fn decisions_of(entries: &[Entry]) -> Vec<DecisionRecord> {
    entries
        .iter()
        .filter_map(|e| {
            e.decision().map(|payload| DecisionRecord {
                seq: e.seq,
                at: e.at,
                hash: e.hash.clone(),
                payload,
            })
        })
        .collect()
}

/// Verifies the case file at `path` without changing it (for `retrace
/// verify`).
///
/// # Errors
/// [`CaseError::Missing`], [`CaseError::NotACaseFile`],
/// [`CaseError::Sqlite`].
pub fn verify(path: &Path) -> Result<Verification, CaseError> {
    CaseFile::open(path, Access::Read)?.verify()
}

/// Sleeps for the number of milliseconds in environment variable `var`,
/// announcing it on stderr; a test hook (see the module documentation).
pub(crate) fn test_pause(var: &str, what: &str) {
    if let Some(ms) = std::env::var(var).ok().and_then(|v| v.parse::<u64>().ok()) {
        eprintln!("retrace: test hook: pausing {what}");
        std::thread::sleep(Duration::from_millis(ms));
    }
}

#[cfg(test)]
mod tests;
