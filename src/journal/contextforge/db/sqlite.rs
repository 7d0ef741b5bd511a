//! The SQLite backend of ContextForge's database: sniffing a file for
//! ContextForge's tables, opening it read-only, and handing its rows (cited
//! by `rowid`) as text to [`super::read_tables`].

use super::{Backend, BackendError, METRICS, Query, Row, TOOLS, invalid, read_tables};
use crate::journal::{JournalError, JournalSource, ReadCtx, SourceData};
use rusqlite::{Connection, OpenFlags};

/// Whether `source` is a SQLite file with ContextForge's tables (`tools`
/// and `tool_metrics`, which every ContextForge database has).
pub(in crate::journal::contextforge) fn sniff_sqlite(source: &JournalSource) -> bool {
    let SourceData::File(p) = &source.data else {
        return false;
    };
    let head = source.head(16).unwrap_or_default();
    if !head.starts_with(b"SQLite format 3\0") {
        return false;
    }
    let Ok(conn) = open(p) else {
        return false;
    };
    let mut b = Sqlite(conn);
    b.has_table(TOOLS.as_str()).unwrap_or(false) && b.has_table(METRICS.as_str()).unwrap_or(false)
}

fn open(p: &std::path::Path) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(
        p,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
}

/// The SQLite backend: rows cited by `rowid`.
pub(super) struct Sqlite(Connection);

impl Backend for Sqlite {
    fn has_table(&mut self, table: &str) -> Result<bool, BackendError> {
        self.0
            .query_row(
                "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                [table],
                |r| r.get::<_, bool>(0),
            )
            .map_err(BackendError::from)
    }

    fn rows(&mut self, q: Query, f: &mut dyn FnMut(Row)) -> Result<(), BackendError> {
        let cols: Vec<String> = q
            .columns()
            .iter()
            .map(|c| format!("CAST(\"{c}\" AS TEXT)"))
            .collect();
        let (filter, order) = match q {
            Query::Logs => (
                "WHERE correlation_id IS NOT NULL",
                "correlation_id, timestamp, rowid",
            ),
            Query::Spans => ("WHERE name = 'tool.invoke'", "start_time, rowid"),
            Query::Traces => ("", "start_time, rowid"),
            Query::Metrics => ("", "timestamp, rowid"),
            Query::Tools => ("", "rowid"),
        };
        let sql = format!(
            "SELECT rowid, {} FROM \"{}\" {filter} ORDER BY {order}",
            cols.join(", "),
            q.table()
        );
        let mut stmt = self.0.prepare(&sql)?;
        let n = q.columns().len();
        let mut rows = stmt.query([])?;
        while let Some(row) = rows.next()? {
            let rowid: i64 = row.get(0)?;
            let values = (1..=n)
                .map(|i| row.get::<_, Option<String>>(i).ok().flatten())
                .collect();
            // A rowid that does not fit a row number is cited as row 0.
            f((u32::try_from(rowid).unwrap_or(0), values));
        }
        Ok(())
    }

    fn last_time(&mut self) -> Result<Option<String>, BackendError> {
        self.0
            .query_row(
                "SELECT CAST(max(timestamp) AS TEXT) FROM structured_log_entries",
                [],
                |r| r.get::<_, Option<String>>(0),
            )
            .map_err(BackendError::from)
    }
}

/// Reads a SQLite database.
///
/// # Errors
/// [`JournalError::Invalid`] when the file cannot be opened or queried.
pub(in crate::journal::contextforge) fn read_sqlite(
    ctx: &mut ReadCtx<'_>,
) -> Result<(), JournalError> {
    let SourceData::File(p) = &ctx.source.data else {
        return Err(invalid(ctx, "a SQLite database must be a file".into()));
    };
    let conn = open(p).map_err(|e| invalid(ctx, format!("SQLite: {e}")))?;
    read_tables(ctx, &mut Sqlite(conn)).map_err(|e| invalid(ctx, format!("SQLite: {e}")))
}
