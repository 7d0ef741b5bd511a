//! The case file's schema and the triggers that keep it append-only, and
//! how a file is told to be a case file.

use super::{CaseFile, FORMAT};
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior};
use std::path::Path;
use std::time::Duration;

/// Whether `path` is a retrace case file: a SQLite database whose `meta`
/// table names the case file format ([`FORMAT`]). Any error (not a
/// file, not SQLite, unreadable) answers `false`; the caller then treats the
/// path as a journal and reports what is wrong with it.
pub fn is_case_file(path: &Path) -> bool {
    // Only a regular file can be one: looking into a pipe (`/dev/stdin`)
    // would consume the bytes its reader needs.
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
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
pub(super) fn guards_ok(conn: &Connection) -> rusqlite::Result<bool> {
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

/// Why the schema could not be made.
pub(super) enum Created {
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
    pub(super) fn tables(&self) -> rusqlite::Result<i64> {
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
    pub(super) fn create_schema(&mut self) -> Result<(), Created> {
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

    pub(super) fn has_meta(&self) -> rusqlite::Result<bool> {
        self.conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('meta', 'entries')",
                [],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n == 2)
    }
}
