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
//! Chain rule: the native journal chain (DESIGN.md §6), each row read as
//! the record `{"seq","at","kind","payload"}`:
//! `hash = hex(SHA-256(ascii(prev_hash) ‖ JCS({"seq","at","kind","payload"})))`
//! with JCS the JSON Canonicalization Scheme (RFC 8785) and the genesis
//! `prev_hash` 64 ASCII zeros ([`crate::journal::GENESIS`]). The rows are
//! verified by the same [`ChainTracker`] as native journals, in seq order,
//! and report in the same vocabulary ([`ChainStatus`], [`FailureKind`]): an
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
//! WAL journal mode with `synchronous=FULL` (research notes §3.3: FULL where
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

use crate::analysis::{Decision, Resolution};
use crate::journal::GENESIS;
use crate::journal::chain::{
    ChainFailure, ChainRule, ChainStatus, ChainTracker, FailureKind, LinkInput, RuleParams,
    SigResult, SignatureCheck,
};
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
/// folder of the first journal.
pub fn default_path(first_journal: &Path) -> PathBuf {
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

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// A reviewer decision ([`DecisionPayload`]).
    Decision,
    /// An investigator note ([`NotePayload`]).
    Note,
    /// A bookmark ([`BookmarkPayload`]).
    Bookmark,
}

impl EntryKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            EntryKind::Decision => "decision",
            EntryKind::Note => "note",
            EntryKind::Bookmark => "bookmark",
        }
    }
    /// Parses the stored spelling.
    pub fn parse(s: &str) -> Option<EntryKind> {
        Some(match s {
            "decision" => EntryKind::Decision,
            "note" => EntryKind::Note,
            "bookmark" => EntryKind::Bookmark,
            _ => return None,
        })
    }
}

impl fmt::Display for EntryKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Payload of a `decision` entry: what the reviewer decided about one
/// execution, and what they were looking at when they did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionPayload {
    /// The execution decided about.
    pub execution_id: String,
    /// `confirmed_completed`, `confirmed_not_executed` or `escalated`.
    pub decision: Decision,
    /// Who decided (`--reviewer`, default the login name).
    pub reviewer: String,
    /// Why (required, non-empty).
    pub note: String,
    /// The group of the execution at decision time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// The group's verdict before the decision.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict_before: Option<String>,
    /// The group's intent fingerprint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

/// Payload of a `note` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NotePayload {
    /// Who wrote it.
    pub author: String,
    /// The note.
    pub text: String,
    /// Group it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Execution it is about, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
}

/// Payload of a `bookmark` entry: a marked place in the evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookmarkPayload {
    /// Who set it.
    pub author: String,
    /// A short label.
    pub label: String,
    /// Group, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<String>,
    /// Execution, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution_id: Option<String>,
    /// Journal name of a marked line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journal: Option<String>,
    /// 1-based line in that journal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
}

/// One stored entry, as read back (only entries whose chain verified).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Entry {
    /// Position, contiguous from 1.
    pub seq: u64,
    /// When it was recorded (UTC).
    pub at: DateTime<Utc>,
    /// What it records.
    pub kind: EntryKind,
    /// The payload object.
    pub payload: Value,
    /// Hash of the previous entry ([`GENESIS`] for the first).
    pub prev_hash: String,
    /// This entry's hash.
    pub hash: String,
}

impl Entry {
    /// The decision payload, for `decision` entries.
    pub fn decision(&self) -> Option<DecisionPayload> {
        (self.kind == EntryKind::Decision)
            .then(|| serde_json::from_value(self.payload.clone()).ok())
            .flatten()
    }
}

/// A decision entry with its place in the case file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DecisionRecord {
    /// Entry seq.
    pub seq: u64,
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// Entry hash.
    pub hash: String,
    /// The decision.
    #[serde(flatten)]
    pub payload: DecisionPayload,
}

impl DecisionRecord {
    /// The decision as analysis consumes it; `source` names the case file
    /// and entry (`<case file> entry N`).
    pub fn resolution(&self, case_name: &str) -> Resolution {
        Resolution {
            execution_id: self.payload.execution_id.clone(),
            decision: self.payload.decision,
            reviewer: self.payload.reviewer.clone(),
            at: self.at,
            note: self.payload.note.clone(),
            source: format!("case file {case_name} entry {}", self.seq),
        }
    }
}

/// A case file's chain: its status by the native rule, in the vocabulary
/// of journal chains (lines are entries, counted in seq order), and its
/// head. Serialized as the status with `head` beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaseChain {
    /// What verifying the entries found.
    #[serde(flatten)]
    pub status: ChainStatus,
    /// Hash of the last entry that verified ([`GENESIS`] when none did):
    /// what the next entry links to, and what a copy kept elsewhere
    /// anchors.
    pub head: String,
}

impl CaseChain {
    /// Whether every entry verified (and the append-only guards are in
    /// place, for a chain read with [`CaseFile::load_guarded`]).
    pub fn is_intact(&self) -> bool {
        self.status.is_intact()
    }

    /// How many entries verified: all of them, or those before the first
    /// one a break puts in doubt.
    pub fn entries(&self) -> u64 {
        match &self.status {
            ChainStatus::Intact { lines, .. } => *lines,
            ChainStatus::Broken { failure, .. } => u64::from(failure.unverified_from) - 1,
            ChainStatus::NoChain { .. } | ChainStatus::NotChecked { .. } => 0,
        }
    }

    /// One line for people: `intact: 3 entries, head 1f2e…` or
    /// `broken at entry 2 (changed_line): …; 1 entries before it verify`.
    pub fn describe(&self) -> String {
        match &self.status {
            ChainStatus::Intact { lines, .. } => format!(
                "intact: {lines} {}, head {}",
                if *lines == 1 { "entry" } else { "entries" },
                &self.head[..12.min(self.head.len())]
            ),
            ChainStatus::Broken { failure, .. } => format!(
                "broken at entry {} ({}): {}; {} entries before it verify",
                failure.line,
                failure.kind.as_str(),
                failure.message,
                self.entries()
            ),
            other => other.summary(),
        }
    }

    /// The chain of a file whose append-only triggers were removed or
    /// changed, when its entries all verified: broken after the last one
    /// ([`FailureKind::GuardsRemoved`]). Any other chain is returned as it is.
    fn without_guards(self) -> CaseChain {
        let ChainStatus::Intact { lines, .. } = self.status else {
            return self;
        };
        let after = u32::try_from(lines + 1).unwrap_or(u32::MAX);
        CaseChain {
            status: ChainStatus::Broken {
                rule: ChainRule::Native,
                lines_checked: lines,
                lines,
                failure: ChainFailure {
                    kind: FailureKind::GuardsRemoved,
                    line: after,
                    seq: None,
                    message: "the triggers that refuse UPDATE and DELETE were removed or changed: the latest entries may have been deleted without a trace".into(),
                    unverified_from: after,
                },
                signatures: SignatureCheck::NotApplicable,
            },
            head: self.head,
        }
    }
}

/// A full verification: the chain, and whether the append-only triggers
/// are still in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Chain status.
    pub chain: CaseChain,
    /// Whether the triggers refusing UPDATE and DELETE are present. Missing
    /// triggers do not break the chain, but someone removed them.
    pub append_only_guards: bool,
}

impl Verification {
    /// Intact: the chain verifies and the append-only triggers are in place.
    /// A case file whose triggers were removed counts as broken: with them
    /// gone, the latest entries could have been deleted, which a hash chain
    /// alone cannot show (a cut tail leaves a valid chain).
    pub fn is_intact(&self) -> bool {
        self.chain.is_intact() && self.append_only_guards
    }
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

/// Whether `path` is a retrace case file: a SQLite database whose `meta`
/// table names the case file format ([`FORMAT`]). Any error (not a
/// file, not SQLite, unreadable) answers `false`; the caller then treats the
/// path as a journal and reports what is wrong with it.
pub fn is_case_file(path: &Path) -> bool {
    let mut head = [0u8; 16];
    let is_sqlite = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && &head == b"SQLite format 3\0";
    if !is_sqlite {
        return false;
    }
    let Ok(conn) = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    ) else {
        return false;
    };
    let has = |table: &str| {
        conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |r| r.get::<_, i64>(0),
        )
        .is_ok_and(|n| n > 0)
    };
    has("entries")
        && has("meta")
        && conn
            .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
                r.get::<_, String>(0)
            })
            .is_ok_and(|f| f == FORMAT)
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
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    seq INTEGER PRIMARY KEY,
    at TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('decision', 'note', 'bookmark')),
    payload TEXT NOT NULL CHECK (json_valid(payload) AND json_type(payload) = 'object'),
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
);
INSERT OR IGNORE INTO meta (key, value) VALUES ('format', 'retrace-case/1');
";

/// The append-only guards: trigger name and definition (after the name).
/// [`guards_ok`] checks that each is present with exactly this definition,
/// so a trigger replaced by a harmless one of the same name is caught.
const GUARDS: [(&str, &str); 4] = [
    (
        "entries_append_only_update",
        "BEFORE UPDATE ON entries BEGIN SELECT RAISE(ABORT, 'the case file is append-only: entries cannot be changed'); END",
    ),
    (
        "entries_append_only_delete",
        "BEFORE DELETE ON entries BEGIN SELECT RAISE(ABORT, 'the case file is append-only: entries cannot be deleted'); END",
    ),
    (
        "meta_append_only_update",
        "BEFORE UPDATE ON meta BEGIN SELECT RAISE(ABORT, 'the case file is append-only: meta cannot be changed'); END",
    ),
    (
        "meta_append_only_delete",
        "BEFORE DELETE ON meta BEGIN SELECT RAISE(ABORT, 'the case file is append-only: meta cannot be deleted'); END",
    ),
];

/// The whole schema of a new case file: [`SCHEMA`]'s tables and meta row,
/// and the [`GUARDS`].
fn schema() -> String {
    let mut s = SCHEMA.to_string();
    for (name, body) in GUARDS {
        s.push_str(&format!("CREATE TRIGGER IF NOT EXISTS {name} {body};\n"));
    }
    s
}

/// Whether every guard is present with its exact definition (SQLite keeps
/// a trigger's `CREATE TRIGGER` text; whitespace is not compared).
fn guards_ok(conn: &Connection) -> rusqlite::Result<bool> {
    let squash = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for (name, body) in GUARDS {
        let sql: Option<String> = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?1",
                [name],
                |r| r.get(0),
            )
            .optional()?;
        let expected = squash(&format!("CREATE TRIGGER {name} {body}"));
        if sql.map(|s| squash(&s)) != Some(expected) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The hash of an entry: `hex(SHA-256(ascii(prev_hash) ‖ JCS(body)))` with
/// `body = {"seq","at","kind","payload"}`, the native chain hash of the
/// entry as a record (DESIGN.md §6 rule).
pub fn entry_hash(prev_hash: &str, seq: u64, at: &str, kind: &str, payload: &Value) -> String {
    crate::journal::native_chain_hash(prev_hash, &entry_record(seq, at, kind, payload))
}

/// An entry as the record its hash covers.
fn entry_record(seq: u64, at: &str, kind: &str, payload: &Value) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("seq".into(), seq.into());
    m.insert("at".into(), at.into());
    m.insert("kind".into(), kind.into());
    m.insert("payload".into(), payload.clone());
    m
}

/// The stored spelling of a time: RFC 3339 UTC with microseconds.
pub fn format_at(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

struct RawRow {
    seq: i64,
    at: String,
    kind: String,
    payload: String,
    prev_hash: String,
    hash: String,
}

impl RawRow {
    /// The entry the row stands for, or why it cannot be read as one.
    fn entry(self) -> Result<Entry, String> {
        let seq = u64::try_from(self.seq)
            .ok()
            .filter(|&s| s >= 1)
            .ok_or_else(|| format!("entry with seq {} (seqs start at 1)", self.seq))?;
        let at = DateTime::parse_from_rfc3339(&self.at)
            .map_err(|e| format!("time {:?} is not RFC 3339 ({e})", self.at))?
            .with_timezone(&Utc);
        let kind =
            EntryKind::parse(&self.kind).ok_or_else(|| format!("unknown kind {:?}", self.kind))?;
        let payload = match serde_json::from_str(&self.payload) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return Err("payload is not a JSON object".into()),
            Err(e) => return Err(format!("payload is not JSON ({e})")),
        };
        Ok(Entry {
            seq,
            at,
            kind,
            payload,
            prev_hash: self.prev_hash,
            hash: self.hash,
        })
    }
}

/// Verifies rows in seq order with the native rule's [`ChainTracker`]
/// and returns the entries that verified (those before the first entry a
/// break puts in doubt) with the chain.
fn check_rows(rows: Vec<RawRow>) -> (Vec<Entry>, CaseChain) {
    let mut t = ChainTracker::new(RuleParams::native());
    let mut read = Vec::with_capacity(rows.len());
    for (i, r) in rows.into_iter().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        // The stored text is hashed, as written.
        let at = r.at.clone();
        match r.entry() {
            Err(why) => t.unreadable(line, true, why),
            Ok(e) => {
                let computed = entry_hash(&e.prev_hash, e.seq, &at, e.kind.as_str(), &e.payload);
                t.link(LinkInput {
                    line,
                    seq: Some(e.seq),
                    prev: &e.prev_hash,
                    stored: Some(&e.hash),
                    computed: &computed,
                    terminated: true,
                    sig: SigResult::NotChecked,
                });
                read.push((line, e));
            }
        }
    }
    let head_if_intact = t.head().to_string();
    let status = t.finish();
    let verified_before = status.failure().map_or(u32::MAX, |f| f.unverified_from);
    let entries: Vec<Entry> = read
        .into_iter()
        .take_while(|(line, _)| *line < verified_before)
        .map(|(_, e)| e)
        .collect();
    let head = match &status {
        ChainStatus::Intact { .. } => head_if_intact,
        _ => entries
            .last()
            .map_or_else(|| GENESIS.to_string(), |e| e.hash.clone()),
    };
    (entries, CaseChain { status, head })
}

fn read_rows(conn: &Connection) -> rusqlite::Result<Vec<RawRow>> {
    let mut st =
        conn.prepare("SELECT seq, at, kind, payload, prev_hash, hash FROM entries ORDER BY seq")?;
    let rows = st.query_map([], |r| {
        Ok(RawRow {
            seq: r.get(0)?,
            at: r.get(1)?,
            kind: r.get(2)?,
            payload: r.get(3)?,
            prev_hash: r.get(4)?,
            hash: r.get(5)?,
        })
    })?;
    rows.collect()
}

/// Why the schema could not be made.
enum Created {
    Sqlite(rusqlite::Error),
    /// Another database: never taken over.
    Foreign,
}

fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
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
        let name = path.display().to_string();
        let sql = |source| CaseError::Sqlite {
            path: name.clone(),
            source,
        };
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
                if access == Access::Read && writable {
                    Connection::open_with_flags(
                        path,
                        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                    )
                    .or_else(|_| ro())
                    .map_err(sql)?
                } else {
                    ro().map_err(sql)?
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

    fn tables(&self) -> rusqlite::Result<i64> {
        self.conn.query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
    }

    /// Sets WAL mode and `synchronous=FULL`, and creates the schema when
    /// the database holds no table, inside one `BEGIN IMMEDIATE`
    /// transaction: of several processes creating the file at once, one
    /// creates it whole and the others wait (busy timeout) and then find
    /// it; a reader sees either no table or the whole schema.
    fn create_schema(&mut self) -> Result<(), Created> {
        // Another database is left as it is, its journal mode too.
        if self.tables().map_err(Created::Sqlite)? > 0
            && !self.has_meta().map_err(Created::Sqlite)?
        {
            return Err(Created::Foreign);
        }
        // The journal mode cannot change inside a transaction; switching
        // needs a moment alone with the file, so a busy answer is retried.
        let mut tries = 0;
        loop {
            match self.conn.pragma_update(None, "journal_mode", "WAL") {
                Ok(()) => break,
                Err(e) if is_busy(&e) && tries < 100 => {
                    tries += 1;
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(e) => return Err(Created::Sqlite(e)),
            }
        }
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(Created::Sqlite)?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(Created::Sqlite)?;
        let tables: i64 = tx
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |r| r.get(0),
            )
            .map_err(Created::Sqlite)?;
        if tables == 0 {
            tx.execute_batch(&schema()).map_err(Created::Sqlite)?;
        } else {
            let ours: i64 = tx
                .query_row(
                    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'entries')",
                    [],
                    |r| r.get(0),
                )
                .map_err(Created::Sqlite)?;
            if ours != 2 {
                return Err(Created::Foreign);
            }
        }
        tx.commit().map_err(Created::Sqlite)
    }

    fn has_meta(&self) -> rusqlite::Result<bool> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'entries')",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n == 2)
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
    /// ([`FailureKind::GuardsRemoved`]): its entries still count, but nothing
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
mod tests {
    use super::*;

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
    }

    fn decision(x: &str, d: Decision) -> DecisionPayload {
        DecisionPayload {
            execution_id: x.into(),
            decision: d,
            reviewer: "alice".into(),
            note: "checked the deploy API".into(),
            group_id: None,
            verdict_before: None,
            fingerprint: None,
        }
    }

    fn new_case() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("case.sqlite");
        (dir, p)
    }

    #[test]
    fn appends_chain_and_reopen() {
        let (_d, p) = new_case();
        {
            let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
            c.record_decision(
                at("2026-07-22T15:00:00Z"),
                &decision("act_1", Decision::Escalated),
            )
            .unwrap();
            c.add_note(
                at("2026-07-22T15:01:00Z"),
                &NotePayload {
                    author: "bob".into(),
                    text: "called the deploy team".into(),
                    group_id: Some("g1".into()),
                    execution_id: None,
                },
            )
            .unwrap();
            let r = c
                .record_decision(
                    at("2026-07-22T15:02:00Z"),
                    &decision("act_1", Decision::ConfirmedCompleted),
                )
                .unwrap();
            assert_eq!(r.seq, 3);
        }
        let c = CaseFile::open(&p, Access::ReadOnly).unwrap();
        let (entries, status) = c.load().unwrap();
        assert_eq!(entries.len(), 3);
        assert_eq!(entries[0].prev_hash, GENESIS);
        assert_eq!(entries[1].prev_hash, entries[0].hash);
        let ChainStatus::Intact { lines: n, .. } = status.status else {
            panic!("{status:?}")
        };
        assert_eq!((n, status.head), (3, entries[2].hash.clone()));
        let (ds, _) = c.decisions().unwrap();
        assert_eq!(ds.len(), 2);
        assert_eq!(ds[1].payload.decision, Decision::ConfirmedCompleted);
        let r = ds[1].resolution("case.sqlite");
        assert_eq!(r.source, "case file case.sqlite entry 3");
        assert_eq!(r.at, at("2026-07-22T15:02:00Z"));
        assert!(c.verify().unwrap().append_only_guards);
    }

    #[test]
    fn hash_follows_the_journal_rule() {
        use sha2::{Digest, Sha256};
        // sha256("000…0" ‖ JCS(body)) computed independently of entry_hash.
        let payload = serde_json::json!({"b": 1, "a": "x"});
        let body = r#"{"at":"2026-07-22T15:00:00.000000Z","kind":"note","payload":{"a":"x","b":1},"seq":1}"#;
        let mut h = Sha256::new();
        h.update(GENESIS.as_bytes());
        h.update(body.as_bytes());
        assert_eq!(
            entry_hash(GENESIS, 1, "2026-07-22T15:00:00.000000Z", "note", &payload),
            hex::encode(h.finalize())
        );
    }

    #[test]
    fn triggers_refuse_update_and_delete() {
        let (_d, p) = new_case();
        let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
        c.record_decision(Utc::now(), &decision("act_1", Decision::Escalated))
            .unwrap();
        let e = c
            .conn
            .execute("UPDATE entries SET payload = '{}' WHERE seq = 1", [])
            .unwrap_err();
        assert!(e.to_string().contains("append-only"), "{e}");
        let e = c.conn.execute("DELETE FROM entries", []).unwrap_err();
        assert!(e.to_string().contains("append-only"), "{e}");
        let e = c.conn.execute("DELETE FROM meta", []).unwrap_err();
        assert!(e.to_string().contains("append-only"), "{e}");
    }

    /// Opens the file behind retrace's back, drops the guards and runs `sql`.
    fn tamper(p: &Path, sql: &str) {
        let conn = Connection::open(p).unwrap();
        conn.execute_batch(
            "DROP TRIGGER entries_append_only_update; DROP TRIGGER entries_append_only_delete;",
        )
        .unwrap();
        conn.execute_batch(sql).unwrap();
    }

    fn three(p: &Path) {
        let mut c = CaseFile::open(p, Access::ReadWrite).unwrap();
        for x in ["act_1", "act_2", "act_3"] {
            c.record_decision(Utc::now(), &decision(x, Decision::Escalated))
                .unwrap();
        }
    }

    /// The entry the break shows at, its kind, and how many entries verify.
    fn broken(p: &Path) -> (u32, FailureKind, u64) {
        let chain = verify(p).unwrap().chain;
        match &chain.status {
            ChainStatus::Broken { failure, .. } => (failure.line, failure.kind, chain.entries()),
            s => panic!("not detected: {s:?}"),
        }
    }

    #[test]
    fn detects_a_changed_entry() {
        let (_d, p) = new_case();
        three(&p);
        tamper(
            &p,
            "UPDATE entries SET payload = replace(payload, 'checked', 'ignored') WHERE seq = 2",
        );
        assert_eq!(broken(&p), (2, FailureKind::ChangedLine, 1));
        assert!(!verify(&p).unwrap().append_only_guards);
    }

    #[test]
    fn detects_a_deleted_entry() {
        let (_d, p) = new_case();
        three(&p);
        tamper(&p, "DELETE FROM entries WHERE seq = 2");
        assert_eq!(broken(&p), (2, FailureKind::DeletedLine, 1));
        let (_d, p) = new_case();
        three(&p);
        tamper(&p, "DELETE FROM entries WHERE seq = 1");
        assert_eq!(broken(&p), (1, FailureKind::DeletedLine, 0));
    }

    #[test]
    fn detects_a_deleted_and_renumbered_entry() {
        let (_d, p) = new_case();
        three(&p);
        tamper(
            &p,
            "DELETE FROM entries WHERE seq = 2; UPDATE entries SET seq = 2 WHERE seq = 3",
        );
        // Entry 1 may have been rewritten with a recomputed hash as well:
        // nothing verifies.
        assert_eq!(broken(&p), (2, FailureKind::BrokenLink, 0));
    }

    #[test]
    fn detects_a_rewritten_hash_whose_successor_no_longer_links() {
        let (_d, p) = new_case();
        three(&p);
        // Rewrite entry 2 and recompute its own hash: entry 3 no longer links.
        let c = CaseFile::open(&p, Access::ReadOnly).unwrap();
        let (entries, _) = c.load().unwrap();
        drop(c);
        let mut payload = entries[1].payload.clone();
        payload["note"] = "rewritten".into();
        let h = entry_hash(
            &entries[1].prev_hash,
            2,
            &format_at(entries[1].at),
            "decision",
            &payload,
        );
        tamper(
            &p,
            &format!(
                "UPDATE entries SET payload = '{}', hash = '{h}' WHERE seq = 2",
                payload
            ),
        );
        // Entry 2 was rewritten: the break puts it in doubt too.
        assert_eq!(broken(&p), (3, FailureKind::BrokenLink, 1));
    }

    #[test]
    fn detects_a_bad_entry() {
        let (_d, p) = new_case();
        three(&p);
        tamper(&p, "UPDATE entries SET at = 'yesterday' WHERE seq = 3");
        assert_eq!(broken(&p), (3, FailureKind::ChangedLine, 2));
    }

    #[test]
    fn a_broken_chain_is_never_extended() {
        let (_d, p) = new_case();
        three(&p);
        tamper(&p, "UPDATE entries SET kind = 'note' WHERE seq = 1");
        let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
        let e = c
            .record_decision(Utc::now(), &decision("act_9", Decision::Escalated))
            .unwrap_err();
        assert!(matches!(e, CaseError::Broken { .. }), "{e}");
        let (entries, _) = c.load().unwrap();
        assert!(entries.is_empty());
        let n: i64 = c
            .conn
            .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 3);
    }

    #[test]
    fn read_only_never_creates_or_writes() {
        let (_d, p) = new_case();
        assert!(matches!(
            CaseFile::open(&p, Access::ReadOnly),
            Err(CaseError::Missing(_))
        ));
        assert!(!p.exists());
        three(&p);
        let mut c = CaseFile::open(&p, Access::ReadOnly).unwrap();
        let e = c
            .record_decision(Utc::now(), &decision("act_9", Decision::Escalated))
            .unwrap_err();
        assert!(matches!(e, CaseError::ReadOnly(_)), "{e}");
        assert_eq!(c.load().unwrap().0.len(), 3);
    }

    #[test]
    fn reading_leaves_no_side_files_and_never_appends() {
        let (d, p) = new_case();
        three(&p);
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(d.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(), vec!["case.sqlite"]);
        {
            let mut c = CaseFile::open(&p, Access::Read).unwrap();
            assert_eq!(c.load().unwrap().0.len(), 3);
            assert!(matches!(
                c.record_decision(Utc::now(), &decision("act_9", Decision::Escalated)),
                Err(CaseError::ReadOnly(_))
            ));
        }
        assert_eq!(names(), vec!["case.sqlite"]);
    }

    #[test]
    fn empty_note_is_refused() {
        let (_d, p) = new_case();
        let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
        let mut d = decision("act_1", Decision::Escalated);
        d.note = "  ".into();
        assert!(matches!(
            c.record_decision(Utc::now(), &d),
            Err(CaseError::Invalid { .. })
        ));
        assert!(c.load().unwrap().0.is_empty());
    }

    #[test]
    fn another_database_is_not_taken_over() {
        let (_d, p) = new_case();
        Connection::open(&p)
            .unwrap()
            .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
            .unwrap();
        assert!(matches!(
            CaseFile::open(&p, Access::ReadWrite),
            Err(CaseError::NotACaseFile(_))
        ));
        let conn = Connection::open(&p).unwrap();
        let n: i64 = conn
            .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }

    #[test]
    fn a_database_being_created_reads_as_an_empty_case() {
        let (_d, p) = new_case();
        std::fs::write(&p, b"").unwrap();
        for access in [Access::ReadOnly, Access::Read] {
            let c = CaseFile::open(&p, access).unwrap();
            let (entries, chain) = c.load().unwrap();
            assert!(entries.is_empty());
            assert!(chain.is_intact());
        }
        // The first writer creates the schema in it.
        let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
        c.record_decision(Utc::now(), &decision("act_1", Decision::Escalated))
            .unwrap();
        assert!(verify(&p).unwrap().append_only_guards);
    }

    #[test]
    fn a_confirmed_decision_is_final_even_for_a_second_writer() {
        let (_d, p) = new_case();
        // Two reviewers who both read the case before either decided.
        let mut first = CaseFile::open(&p, Access::ReadWrite).unwrap();
        let mut second = CaseFile::open(&p, Access::ReadWrite).unwrap();
        first
            .record_decision(Utc::now(), &decision("act_1", Decision::Escalated))
            .unwrap();
        first
            .record_decision(Utc::now(), &decision("act_1", Decision::ConfirmedCompleted))
            .unwrap();
        for d in Decision::ALL {
            let e = second
                .record_decision(Utc::now(), &decision("act_1", d))
                .unwrap_err();
            assert!(matches!(e, CaseError::AlreadyDecided { seq: 2, .. }), "{e}");
            assert!(e.to_string().contains(FINAL_DECISION), "{e}");
        }
        // Another execution is still open.
        second
            .record_decision(
                Utc::now(),
                &decision("act_2", Decision::ConfirmedNotExecuted),
            )
            .unwrap();
        assert_eq!(second.load().unwrap().0.len(), 3);
    }

    #[test]
    fn a_text_file_is_a_clear_error() {
        let (_d, p) = new_case();
        std::fs::write(&p, "not sqlite at all, just some text that is long enough").unwrap();
        let e = CaseFile::open(&p, Access::ReadOnly).unwrap_err();
        assert!(e.to_string().contains("case.sqlite"), "{e}");
    }

    #[test]
    fn default_path_is_beside_the_first_journal() {
        assert_eq!(
            default_path(Path::new("incident/activity.jsonl")),
            Path::new("incident/retrace-case.sqlite")
        );
        assert_eq!(
            default_path(Path::new("activity.jsonl")),
            Path::new("retrace-case.sqlite")
        );
    }
}
