//! The native journal stored in SQLite, for gateways that keep their
//! activity in a database (docs/design.md §3 fields, one column per field).
//!
//! Tables:
//! * `events`: one row per lifecycle event, the columns named as the native
//!   event's fields (`seq`, `at`, `execution_id`, `event`, `call`, `action`,
//!   `fingerprint`, `decision`, `outcome`, `target_status`, …, and the chain
//!   fields `prev_hash`, `hash`). A `kind` column may say `event` or
//!   `execution` (a snapshot); without one, rows are events.
//! * `sessions`: one row per agent run, the columns named as the native
//!   session's fields (`session_id`, `actor`, `process`, …).
//!
//! Either table may be absent, not both. Columns map to fields as follows:
//! `NULL` is an absent field; INTEGER and REAL are numbers, except columns
//! declared `BOOLEAN`, which are `true`/`false`; TEXT is a string, except
//! columns declared `JSON` and the columns `call`, `action`, `process`,
//! `arguments` and `extra`, which hold JSON text. An `extra` object is merged
//! into the record as unknown fields. Rows are read in `rowid` order; a
//! record's position ([`SourceRef::Row`]) is its table and rowid (a row whose rowid is
//! not in 1..=2^32-1 is reported as a bad row: it cannot be cited).
//!
//! Chain: when the `events` table has a `hash` column, its rows form a
//! native chain (docs/design.md §6) in rowid order, each row's hash computed over
//! the record the row maps to (with `"kind":"event"`), exactly as for a JSONL
//! line. So a chained JSONL journal loaded into these tables verifies
//! unchanged. The `sessions` table is not chained.

use super::chain::{ChainTracker, RuleParams};
use super::native::{check_link, parse_record};
use super::{BadLine, FormatFacts, JournalError, JournalReader, ReadCtx, SourceData};
use crate::model::{SourceRef, Table};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde_json::{Map, Value};
use std::path::Path;

/// Reader for native SQLite journals.
pub struct SqliteReader;

/// The native journal in SQLite: the native format's fields as columns.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "native-sqlite",
    description: "retrace native journal in SQLite (events and sessions tables)",
    noun: "the journal",
    capabilities: super::native::NATIVE_CAPABILITIES,
    no_chain: "the events table has no prev_hash/hash columns",
    delivery_layer: None,
    reader: &SqliteReader,
};

/// The table of lifecycle events; its rows are chained.
pub const EVENTS_TABLE: Table = Table::Events;
/// The table of agent runs; not chained.
pub const SESSIONS_TABLE: Table = Table::Sessions;

/// Columns whose TEXT is JSON whatever their declared type.
const JSON_COLUMNS: [&str; 5] = ["call", "action", "process", "arguments", "extra"];

impl JournalReader for SqliteReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines
            .first()
            .is_some_and(|l| l.starts_with(b"SQLite format 3\0"))
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let path = match &ctx.source.data {
            SourceData::File(p) => p.clone(),
            SourceData::Embedded(_) | SourceData::Memory(_) => {
                return Err(JournalError::Invalid {
                    journal: ctx.source.name.clone(),
                    message: "a SQLite journal must be a file on disk, not piped or compressed (decompress it first)".into(),
                });
            }
        };
        let conn = open(&path).map_err(|e| invalid(ctx, e))?;
        let tables = Tables::of(&conn).map_err(|e| invalid(ctx, e))?;
        if tables.sessions.is_none() && tables.events.is_none() {
            return Err(JournalError::Invalid {
                journal: ctx.source.name.clone(),
                message:
                    "a SQLite file without `events` or `sessions` table is not a retrace journal"
                        .into(),
            });
        }
        if let Some(cols) = &tables.sessions {
            read_table(ctx, &conn, SESSIONS_TABLE, cols, &mut None).map_err(|e| invalid(ctx, e))?;
        }
        if let Some(cols) = &tables.events {
            // Chained when any row carries a hash: then every row must (a
            // row whose hash was cleared is a break, not an unchained table).
            let chained = cols.iter().any(|c| c.name == "hash")
                && conn
                    .query_row(
                        "SELECT EXISTS(SELECT 1 FROM \"events\" WHERE \"hash\" IS NOT NULL)",
                        [],
                        |r| r.get::<_, bool>(0),
                    )
                    .map_err(|e| invalid(ctx, e))?;
            let mut chain = chained.then(|| ChainTracker::new(RuleParams::native()));
            read_table(ctx, &conn, EVENTS_TABLE, cols, &mut chain).map_err(|e| invalid(ctx, e))?;
            if let Some(t) = chain
                && t.lines() > 0
            {
                ctx.set_chain(t.finish());
            }
        }
        Ok(())
    }
}

fn invalid(ctx: &ReadCtx<'_>, e: rusqlite::Error) -> JournalError {
    JournalError::Invalid {
        journal: ctx.source.name.clone(),
        message: format!("SQLite: {e}"),
    }
}

fn open(path: &Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

/// A column with its declared type.
#[derive(Debug, Clone)]
struct Col {
    name: String,
    boolean: bool,
    json: bool,
}

struct Tables {
    sessions: Option<Vec<Col>>,
    events: Option<Vec<Col>>,
}

impl Tables {
    fn of(conn: &Connection) -> rusqlite::Result<Tables> {
        Ok(Tables {
            sessions: columns(conn, "sessions")?,
            events: columns(conn, "events")?,
        })
    }
}

/// The columns of `table` from `PRAGMA table_info`, or `None` when the
/// table does not exist.
fn columns(conn: &Connection, table: &str) -> rusqlite::Result<Option<Vec<Col>>> {
    let mut stmt = conn.prepare("SELECT name, type FROM pragma_table_info(?1)")?;
    let cols: Vec<Col> = stmt
        .query_map([table], |r| {
            let name: String = r.get(0)?;
            let ty: String = r.get::<_, Option<String>>(1)?.unwrap_or_default();
            let ty = ty.to_ascii_uppercase();
            Ok(Col {
                boolean: ty.contains("BOOL"),
                json: ty.contains("JSON") || JSON_COLUMNS.contains(&name.as_str()),
                name,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok((!cols.is_empty()).then_some(cols))
}

/// Maps one row to the record object it stands for.
fn row_object(row: &rusqlite::Row<'_>, cols: &[Col]) -> Result<Map<String, Value>, BadLine> {
    let mut m = Map::new();
    let mut extra = None;
    for (i, c) in cols.iter().enumerate() {
        let bad = |what: String| BadLine::in_field(&c.name, format!("column `{}` {what}", c.name));
        // Column 0 of the query is the rowid.
        let v = row
            .get_ref(i + 1)
            .map_err(|e| BadLine::in_field(&c.name, e.to_string()))?;
        let value = match v {
            ValueRef::Null => continue,
            ValueRef::Integer(n) if c.boolean => Value::Bool(n != 0),
            ValueRef::Integer(n) => Value::from(n),
            ValueRef::Real(f) => serde_json::Number::from_f64(f)
                .map(Value::Number)
                .ok_or_else(|| bad("holds a non-finite number".into()))?,
            ValueRef::Text(t) => {
                let s = std::str::from_utf8(t).map_err(|_| bad("is not UTF-8 text".into()))?;
                if c.json {
                    serde_json::from_str(s).map_err(|e| bad(format!("is not valid JSON: {e}")))?
                } else {
                    Value::String(s.to_string())
                }
            }
            ValueRef::Blob(_) => return Err(bad("holds a BLOB".into())),
        };
        if c.name == "extra" {
            match value {
                Value::Object(o) => extra = Some(o),
                _ => return Err(bad("must hold a JSON object".into())),
            }
        } else {
            m.insert(c.name.clone(), value);
        }
    }
    for (k, v) in extra.into_iter().flatten() {
        m.entry(k).or_insert(v);
    }
    Ok(m)
}

fn read_table(
    ctx: &mut ReadCtx<'_>,
    conn: &Connection,
    table: Table,
    cols: &[Col],
    chain: &mut Option<ChainTracker>,
) -> rusqlite::Result<()> {
    let kind = if table == SESSIONS_TABLE {
        "session"
    } else {
        "event"
    };
    let names: Vec<String> = cols
        .iter()
        .map(|c| format!("\"{}\"", c.name.replace('"', "\"\"")))
        .collect();
    let sql = format!(
        "SELECT rowid, {} FROM \"{table}\" ORDER BY rowid",
        names.join(", ")
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        ctx.count_line();
        let rowid: i64 = row.get(0)?;
        // Evidence cites a row by its rowid; one that does not fit a line
        // number cannot be cited, so it is reported rather than misplaced.
        let Some(line) = u32::try_from(rowid).ok().filter(|&l| l > 0) else {
            if let Some(t) = chain.as_mut() {
                t.unreadable(
                    0,
                    true,
                    format!("{table} rowid {rowid} cannot be cited as a line"),
                );
            }
            ctx.bad_line(
                0,
                format!("{table} row {rowid}: rowid outside 1..=4294967295, which retrace cannot cite; skipped"),
            );
            continue;
        };
        let source = SourceRef::Row {
            journal: ctx.journal,
            table,
            row: line,
        };
        let mut m = match row_object(row, cols) {
            Ok(m) => m,
            Err(e) => {
                if let Some(t) = chain.as_mut() {
                    t.unreadable(line, true, e.message.clone());
                }
                ctx.bad_line(line, e.context(format_args!("{table} row {rowid}")));
                continue;
            }
        };
        if !m.contains_key("kind") {
            m.insert("kind".into(), Value::String(kind.into()));
        }
        if let Some(t) = chain.as_mut() {
            check_link(t, &mut m, line, true);
        }
        match parse_record(m, source) {
            Ok(records) => records.into_iter().for_each(|r| ctx.emit(r)),
            Err(e) => ctx.bad_line(line, e.context(format_args!("{table} row {rowid}"))),
        }
    }
    Ok(())
}

/// Why a row could not be read back.
#[derive(Debug, thiserror::Error)]
pub enum ReadRowError {
    /// SQLite refused.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The table is not in the file (any more).
    #[error("no `{0}` table")]
    NoTable(String),
    /// The row is not in the table (any more).
    #[error("{table} row {row} is gone")]
    Gone {
        /// The table.
        table: String,
        /// The row id.
        row: u32,
    },
    /// The row cannot be mapped to a record.
    #[error(transparent)]
    Bad(#[from] BadLine),
}

/// Reads row `row` of `table` back as JSON text (for the raw view).
///
/// # Errors
/// [`ReadRowError`] when the file cannot be opened or the row is gone.
pub fn read_row(path: &Path, table: &str, row: u32) -> Result<String, ReadRowError> {
    let conn = open(path)?;
    let cols = columns(&conn, table)?.ok_or_else(|| ReadRowError::NoTable(table.into()))?;
    let names: Vec<String> = cols
        .iter()
        .map(|c| format!("\"{}\"", c.name.replace('"', "\"\"")))
        .collect();
    let sql = format!(
        "SELECT rowid, {} FROM \"{}\" WHERE rowid = ?1",
        names.join(", "),
        table.replace('"', "\"\"")
    );
    let mut stmt = conn.prepare(&sql)?;
    let mut rows = stmt.query([row])?;
    let found = rows.next()?.ok_or_else(|| ReadRowError::Gone {
        table: table.into(),
        row,
    })?;
    let m = row_object(found, &cols)?;
    Ok(Value::Object(m).to_string())
}

/// Rows read from one table in one poll of a [`SqliteTail`], at most: a
/// large journal already there is caught up with in steps.
pub const TAIL_ROWS: i64 = 50_000;

/// Following a native SQLite journal that another process writes
/// (docs/design.md §7.7 "SQLite journals"): each poll reads, table by
/// table (`sessions`, then `events`), the rows whose rowid is greater than
/// the last one read, in rowid order. The file is opened read-only for
/// each poll, so a file replaced by another is read as it is now. The
/// chain is not checked (as for any watched journal: `retrace verify`
/// does).
#[derive(Debug)]
pub struct SqliteTail {
    path: std::path::PathBuf,
    name: String,
    journal: crate::model::JournalId,
    /// The last rowid read, of `sessions` and of `events`.
    last: [i64; 2],
}

/// What one poll of a [`SqliteTail`] read.
#[derive(Debug, Default)]
pub struct TailRead {
    /// The records of the new rows, sessions first.
    pub records: Vec<crate::model::Record>,
    /// The rows that could not be read (skipped), each naming its row.
    pub bad: Vec<super::LineError>,
    /// A table holds more new rows than one poll reads (`TAIL_ROWS`).
    pub more: bool,
    /// A table's last rowid is below the last one read (rows deleted, or
    /// the file replaced): the table, and its last rowid read and now.
    /// Its rows are followed on from the last one it holds now.
    pub shrunk: Option<(&'static str, i64, i64)>,
}

impl SqliteTail {
    /// Follows the SQLite journal at `path`, named `name` on the command
    /// line, as journal `journal`, from its first row.
    pub fn new(
        path: impl Into<std::path::PathBuf>,
        name: &str,
        journal: crate::model::JournalId,
    ) -> SqliteTail {
        SqliteTail {
            path: path.into(),
            name: name.to_string(),
            journal,
            last: [0, 0],
        }
    }

    /// Whether the file at `path` starts as a SQLite database does.
    pub fn is_sqlite(path: &Path) -> bool {
        use std::io::Read;
        let mut head = [0u8; 16];
        std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut head))
            .is_ok_and(|()| head == *b"SQLite format 3\0")
    }

    /// Reads the rows written since the last poll.
    ///
    /// # Errors
    /// [`JournalError::Invalid`] (naming the journal) when the file
    /// cannot be opened or queried now (locked by its writer for longer
    /// than a moment, or gone): the next poll tries again from where this
    /// one began.
    pub fn poll(&mut self) -> Result<TailRead, JournalError> {
        let fail = |e: rusqlite::Error| JournalError::Invalid {
            journal: self.name.clone(),
            message: format!("SQLite: {e}"),
        };
        let conn = open(&self.path).map_err(fail)?;
        conn.busy_timeout(std::time::Duration::from_millis(100))
            .map_err(fail)?;
        let tables = Tables::of(&conn).map_err(fail)?;
        let mut out = TailRead::default();
        let mut last = self.last;
        for (k, table, cols) in [
            (0, SESSIONS_TABLE, &tables.sessions),
            (1, EVENTS_TABLE, &tables.events),
        ] {
            let Some(cols) = cols else {
                continue;
            };
            last[k] = self.tail_table(&conn, table, cols, last[k], &mut out)?;
        }
        self.last = last;
        Ok(out)
    }

    /// Reads `table`'s rows after rowid `after`; returns the last rowid read.
    fn tail_table(
        &self,
        conn: &Connection,
        table: Table,
        cols: &[Col],
        after: i64,
        out: &mut TailRead,
    ) -> Result<i64, JournalError> {
        let fail = |e: rusqlite::Error| JournalError::Invalid {
            journal: self.name.clone(),
            message: format!("SQLite: {e}"),
        };
        let max: Option<i64> = conn
            .query_row(&format!("SELECT max(rowid) FROM \"{table}\""), [], |r| {
                r.get(0)
            })
            .map_err(fail)?;
        let max = max.unwrap_or(0);
        if max < after {
            out.shrunk = Some((table.as_str(), after, max));
            return Ok(max);
        }
        let kind = if table == SESSIONS_TABLE {
            "session"
        } else {
            "event"
        };
        let names: Vec<String> = cols
            .iter()
            .map(|c| format!("\"{}\"", c.name.replace('"', "\"\"")))
            .collect();
        let sql = format!(
            "SELECT rowid, {} FROM \"{table}\" WHERE rowid > ?1 ORDER BY rowid LIMIT ?2",
            names.join(", ")
        );
        let mut stmt = conn.prepare(&sql).map_err(fail)?;
        let mut rows = stmt.query([after, TAIL_ROWS]).map_err(fail)?;
        let mut last = after;
        let mut read = 0;
        while let Some(row) = rows.next().map_err(fail)? {
            read += 1;
            let rowid: i64 = row.get(0).map_err(fail)?;
            last = rowid;
            let bad = |line: u32, e: BadLine| super::LineError {
                journal: self.name.clone(),
                line,
                message: e.message,
                field: e.field,
            };
            let Some(line) = u32::try_from(rowid).ok().filter(|&l| l > 0) else {
                out.bad.push(bad(
                    0,
                    BadLine::new(format!(
                        "{table} row {rowid}: rowid outside 1..=4294967295, which retrace cannot cite; skipped"
                    )),
                ));
                continue;
            };
            let source = SourceRef::Row {
                journal: self.journal,
                table,
                row: line,
            };
            let mut m = match row_object(row, cols) {
                Ok(m) => m,
                Err(e) => {
                    out.bad
                        .push(bad(line, e.context(format_args!("{table} row {rowid}"))));
                    continue;
                }
            };
            if !m.contains_key("kind") {
                m.insert("kind".into(), Value::String(kind.into()));
            }
            match parse_record(m, source) {
                Ok(records) => out.records.extend(records),
                Err(e) => out
                    .bad
                    .push(bad(line, e.context(format_args!("{table} row {rowid}")))),
            }
        }
        out.more |= read >= TAIL_ROWS;
        Ok(last)
    }
}
