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
//! Chain rule, the same as the native journal chain (DESIGN.md §6):
//! `hash = hex(SHA-256(ascii(prev_hash) ‖ JCS({"seq","at","kind","payload"})))`
//! with JCS the JSON Canonicalization Scheme (RFC 8785) and the genesis
//! `prev_hash` 64 ASCII zeros. Triggers refuse `UPDATE` and `DELETE` on both
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

use crate::analysis::fingerprint::jcs;
use crate::analysis::{Decision, Resolution};
use chrono::{DateTime, SecondsFormat, Utc};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The format name stored in the `meta` table.
pub const FORMAT: &str = "retrace-case/1";

/// `prev_hash` of the first entry: 64 ASCII zeros (DESIGN.md §6).
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

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
    #[error("case file {path}: the chain is broken at entry {} ({}): {}; nothing was appended", brk.seq, brk.kind, brk.detail)]
    Broken {
        /// The case file.
        path: String,
        /// The first break.
        brk: ChainBreak,
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

/// Kinds of chain break (DESIGN.md §6 vocabulary).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakKind {
    /// An entry is missing: seq does not follow its predecessor (a deleted
    /// entry, or a first entry that is not seq 1).
    SeqGap,
    /// `prev_hash` is not the previous entry's hash (deleted, reordered or
    /// inserted entries).
    BrokenLink,
    /// The stored hash does not match the entry's content (a changed entry).
    ChangedEntry,
    /// The entry cannot be read: unknown kind, bad time, payload that is not
    /// a JSON object, or a hash that is not 64 hex digits.
    BadEntry,
    /// The triggers that refuse UPDATE and DELETE were removed. Every entry
    /// may verify, but the latest ones could have been deleted without a
    /// trace (a cut tail leaves a valid chain); the break is placed after
    /// the last entry.
    GuardsRemoved,
}

impl BreakKind {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            BreakKind::SeqGap => "seq_gap",
            BreakKind::BrokenLink => "broken_link",
            BreakKind::ChangedEntry => "changed_entry",
            BreakKind::BadEntry => "bad_entry",
            BreakKind::GuardsRemoved => "guards_removed",
        }
    }
}

impl fmt::Display for BreakKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The first break in a case file's chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChainBreak {
    /// The seq of the first entry that does not verify (for a gap: the
    /// missing seq).
    pub seq: u64,
    /// What is wrong.
    pub kind: BreakKind,
    /// In words.
    pub detail: String,
}

/// The result of verifying a case file's chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ChainStatus {
    /// Every entry verified.
    Intact {
        /// Number of entries.
        entries: u64,
        /// Hash of the last entry ([`GENESIS`] when empty).
        head: String,
    },
    /// The first break; entries before it verified.
    Broken {
        /// Entries that verified (those before the break).
        verified: u64,
        /// The break.
        #[serde(rename = "break")]
        brk: ChainBreak,
    },
}

impl ChainStatus {
    /// Whether every entry verified.
    pub fn is_intact(&self) -> bool {
        matches!(self, ChainStatus::Intact { .. })
    }
    /// One line for people: `intact: 3 entries, head 1f2e…` or
    /// `broken at entry 2 (changed_entry): ...`.
    pub fn describe(&self) -> String {
        match self {
            ChainStatus::Intact { entries, head } => format!(
                "intact: {entries} {}, head {}",
                if *entries == 1 { "entry" } else { "entries" },
                &head[..12.min(head.len())]
            ),
            ChainStatus::Broken { verified, brk } => format!(
                "broken at entry {} ({}): {}; {verified} entries before it verify",
                brk.seq, brk.kind, brk.detail
            ),
        }
    }
}

/// A full verification: the chain, and whether the append-only triggers
/// are still in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Chain status.
    pub chain: ChainStatus,
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

/// The break a case file without its guards reads as: after its last entry.
fn guards_removed(entries: u64) -> ChainStatus {
    ChainStatus::Broken {
        verified: entries,
        brk: ChainBreak {
            seq: entries + 1,
            kind: BreakKind::GuardsRemoved,
            detail: "the triggers that refuse UPDATE and DELETE were removed or changed: the latest entries may have been deleted without a trace".into(),
        },
    }
}

/// The hash of an entry: `hex(SHA-256(ascii(prev_hash) ‖ JCS(body)))` with
/// `body = {"seq","at","kind","payload"}` (DESIGN.md §6 rule).
pub fn entry_hash(prev_hash: &str, seq: u64, at: &str, kind: &str, payload: &Value) -> String {
    let body = serde_json::json!({"seq": seq, "at": at, "kind": kind, "payload": payload});
    let mut h = Sha256::new();
    h.update(prev_hash.as_bytes());
    h.update(jcs(&body).as_bytes());
    hex::encode(h.finalize())
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

fn is_hash(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Walks rows in seq order and returns the verified entries and the status.
fn check_rows(rows: Vec<RawRow>) -> (Vec<Entry>, ChainStatus) {
    let mut out = Vec::with_capacity(rows.len());
    let mut prev = GENESIS.to_string();
    let mut expected: u64 = 1;
    for r in rows {
        let broken = |kind, seq, detail: String, out: Vec<Entry>| {
            let verified = out.len() as u64;
            (
                out,
                ChainStatus::Broken {
                    verified,
                    brk: ChainBreak { seq, kind, detail },
                },
            )
        };
        let seq = match u64::try_from(r.seq) {
            Ok(s) if s >= 1 => s,
            _ => {
                return broken(
                    BreakKind::BadEntry,
                    expected,
                    format!("entry with seq {} (seqs start at 1)", r.seq),
                    out,
                );
            }
        };
        if seq != expected {
            return broken(
                BreakKind::SeqGap,
                expected,
                format!("entry {expected} is missing (the next entry is {seq})"),
                out,
            );
        }
        let at = match DateTime::parse_from_rfc3339(&r.at) {
            Ok(t) => t.with_timezone(&Utc),
            Err(e) => {
                return broken(
                    BreakKind::BadEntry,
                    seq,
                    format!("time {:?} is not RFC 3339 ({e})", r.at),
                    out,
                );
            }
        };
        let Some(kind) = EntryKind::parse(&r.kind) else {
            return broken(
                BreakKind::BadEntry,
                seq,
                format!("unknown kind {:?}", r.kind),
                out,
            );
        };
        let payload: Value = match serde_json::from_str(&r.payload) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                return broken(
                    BreakKind::BadEntry,
                    seq,
                    "payload is not a JSON object".into(),
                    out,
                );
            }
            Err(e) => {
                return broken(
                    BreakKind::BadEntry,
                    seq,
                    format!("payload is not JSON ({e})"),
                    out,
                );
            }
        };
        if !is_hash(&r.prev_hash) || !is_hash(&r.hash) {
            return broken(
                BreakKind::BadEntry,
                seq,
                "prev_hash or hash is not 64 lowercase hex digits".into(),
                out,
            );
        }
        if r.prev_hash != prev {
            return broken(
                BreakKind::BrokenLink,
                seq,
                format!(
                    "prev_hash {}… does not match the previous entry's hash {}…",
                    &r.prev_hash[..12],
                    &prev[..12]
                ),
                out,
            );
        }
        let want = entry_hash(&r.prev_hash, seq, &r.at, &r.kind, &payload);
        if want != r.hash {
            return broken(
                BreakKind::ChangedEntry,
                seq,
                format!(
                    "stored hash {}… does not match the entry's content (recomputed {}…)",
                    &r.hash[..12],
                    &want[..12]
                ),
                out,
            );
        }
        prev = r.hash.clone();
        expected = seq + 1;
        out.push(Entry {
            seq,
            at,
            kind,
            payload,
            prev_hash: r.prev_hash,
            hash: r.hash,
        });
    }
    let entries = out.len() as u64;
    (
        out,
        ChainStatus::Intact {
            entries,
            head: prev,
        },
    )
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
    pub fn load(&self) -> Result<(Vec<Entry>, ChainStatus), CaseError> {
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
    /// ([`BreakKind::GuardsRemoved`]): its entries still count, but nothing
    /// may extend it and every view says it is broken.
    ///
    /// # Errors
    /// [`CaseError::Sqlite`] when the file cannot be read.
    pub fn load_guarded(&self) -> Result<(Vec<Entry>, ChainStatus), CaseError> {
        let (entries, chain) = self.load()?;
        let chain = match chain {
            ChainStatus::Intact { entries: n, .. } if !self.guards_present()? => guards_removed(n),
            other => other,
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
    pub fn decisions(&self) -> Result<(Vec<DecisionRecord>, ChainStatus), CaseError> {
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
        let (entries, status) = check_rows(read_rows(&tx).map_err(sql)?);
        let status = match status {
            ChainStatus::Intact { entries: n, .. } if !guards_ok(&tx).map_err(sql)? => {
                guards_removed(n)
            }
            other => other,
        };
        let prev = match status {
            ChainStatus::Intact { head, .. } => head,
            ChainStatus::Broken { brk, .. } => {
                return Err(CaseError::Broken { path: name, brk });
            }
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
        let ChainStatus::Intact { entries: n, head } = status else {
            panic!("{status:?}")
        };
        assert_eq!((n, head), (3, entries[2].hash.clone()));
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

    fn broken(p: &Path) -> (u64, BreakKind, u64) {
        match verify(p).unwrap().chain {
            ChainStatus::Broken { verified, brk } => (brk.seq, brk.kind, verified),
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
        assert_eq!(broken(&p), (2, BreakKind::ChangedEntry, 1));
        assert!(!verify(&p).unwrap().append_only_guards);
    }

    #[test]
    fn detects_a_deleted_entry() {
        let (_d, p) = new_case();
        three(&p);
        tamper(&p, "DELETE FROM entries WHERE seq = 2");
        assert_eq!(broken(&p), (2, BreakKind::SeqGap, 1));
        let (_d, p) = new_case();
        three(&p);
        tamper(&p, "DELETE FROM entries WHERE seq = 1");
        assert_eq!(broken(&p), (1, BreakKind::SeqGap, 0));
    }

    #[test]
    fn detects_a_deleted_and_renumbered_entry() {
        let (_d, p) = new_case();
        three(&p);
        tamper(
            &p,
            "DELETE FROM entries WHERE seq = 2; UPDATE entries SET seq = 2 WHERE seq = 3",
        );
        assert_eq!(broken(&p), (2, BreakKind::BrokenLink, 1));
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
        assert_eq!(broken(&p), (3, BreakKind::BrokenLink, 2));
    }

    #[test]
    fn detects_a_bad_entry() {
        let (_d, p) = new_case();
        three(&p);
        tamper(&p, "UPDATE entries SET at = 'yesterday' WHERE seq = 3");
        assert_eq!(broken(&p), (3, BreakKind::BadEntry, 2));
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
        for &d in Decision::ALL {
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
