//! ContextForge's tables on a live PostgreSQL server, named by a
//! `postgres://` or `postgresql://` URL given in place of a journal path
//! (docs/formats.md#contextforge). The sync `postgres` client connects
//! without TLS: a URL that requires TLS (`sslmode=require`) is refused
//! with a message saying so; `prefer` (the default) and `disable` connect
//! in the clear, which is what a unix socket or 127.0.0.1 needs.
//!
//! The time window (`--since`, `--until`) goes into every `WHERE`: only
//! the requests that began inside it are read (all of their rows, so a
//! call is never cut in two), the traces that began inside it and their
//! `tool.invoke` spans, the `tool_metrics` rows of calls that began inside
//! it. Rows are cited as ``table `tool_metrics` row <id>`` by their integer
//! primary key; tables keyed by a UUID (`structured_log_entries`,
//! `observability_traces`, `observability_spans`) by their 1-based
//! position in (time, id) order over the whole table, counted in the
//! query (ContextForge's retention cleanup deletes old rows, so such a
//! position holds for the investigation that read it).

use super::db::{self, Backend, BackendError, Query, Row};
use crate::journal::{JournalError, JournalSource, ReadCtx, SourceData, TimeWindow};
use crate::model::Table;
use chrono::{DateTime, Utc};
use postgres::config::SslMode;
use postgres::{Client, NoTls};

/// Whether `bytes` (a journal "path", or the first line of a source)
/// is a PostgreSQL URL.
pub(crate) fn is_url(bytes: &[u8]) -> bool {
    bytes.starts_with(b"postgres://") || bytes.starts_with(b"postgresql://")
}

/// The URL a database source stands for ([`JournalSource::database`]).
pub(crate) fn url_of(source: &JournalSource) -> Option<String> {
    let bytes: &[u8] = match &source.data {
        SourceData::Memory(b) => b,
        SourceData::Embedded(b) => b,
        SourceData::File(_) => return None,
    };
    let s = std::str::from_utf8(bytes).ok()?.trim();
    is_url(s.as_bytes()).then(|| s.to_string())
}

/// Why a PostgreSQL database could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum PgError {
    /// The URL asks for TLS, which retrace does not speak.
    #[error(
        "the URL asks for TLS (sslmode=require), which retrace does not support: connect over a unix socket or 127.0.0.1 with sslmode=prefer or sslmode=disable"
    )]
    TlsRequired,
    /// The URL does not parse.
    #[error("not a PostgreSQL URL: {0}")]
    Url(String),
    /// The server refused or a query failed.
    #[error("PostgreSQL: {}", message(.0))]
    Server(#[from] postgres::Error),
}

/// A PostgreSQL error in words: the server's message when it sent one,
/// else the client's error and its cause.
pub(super) fn message(e: &postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return format!("{}: {}", db.severity(), db.message());
    }
    match std::error::Error::source(e) {
        Some(cause) => format!("{e}: {cause}"),
        None => e.to_string(),
    }
}

fn connect(url: &str) -> Result<Client, PgError> {
    let mut config: postgres::Config = url
        .parse()
        .map_err(|e: postgres::Error| PgError::Url(e.to_string()))?;
    if config.get_ssl_mode() == SslMode::Require {
        return Err(PgError::TlsRequired);
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(std::time::Duration::from_secs(10));
    }
    let mut client = config.connect(NoTls)?;
    // Times come back as text in UTC; nothing is ever written.
    client.batch_execute(
        "SET TIME ZONE 'UTC'; SET default_transaction_read_only = on; SET statement_timeout = '5min'",
    )?;
    Ok(client)
}

/// Reads the database at `url`.
///
/// # Errors
/// [`JournalError::Invalid`] when the server cannot be reached or a query
/// fails.
pub(super) fn read(ctx: &mut ReadCtx<'_>, url: &str) -> Result<(), JournalError> {
    let client = connect(url).map_err(|e| db::invalid(ctx, e.to_string()))?;
    let mut b = Pg {
        client,
        window: ctx.window,
    };
    db::read_tables(ctx, &mut b).map_err(|e| db::invalid(ctx, e.to_string()))?;
    if !ctx.window.is_unbounded() {
        ctx.note(format!(
            "the time window ({}) was applied in the database's queries: only the requests that began in it were read",
            ctx.window.describe()
        ));
    }
    Ok(())
}

struct Pg {
    client: Client,
    window: TimeWindow,
}

/// The time column and the key of each table, for positions.
fn order_of(q: Query) -> (&'static str, &'static str) {
    match q {
        Query::Logs => ("timestamp", "id"),
        Query::Traces => ("start_time", "trace_id"),
        Query::Spans => ("start_time", "span_id"),
        Query::Metrics => ("timestamp", "id"),
        Query::Tools => ("created_at", "id"),
    }
}

/// The SQL of a query: every column as text; `$1` since and `$2` until
/// (text, NULL: open), and for positions `$3`, the rows before `$1`.
/// `tools` takes no parameter, `tool_metrics` no `$3`.
fn sql(q: Query) -> String {
    let table = q.table();
    let cols: Vec<String> = q
        .columns()
        .iter()
        .map(|c| format!("\"{c}\"::text AS \"{c}\""))
        .collect();
    let cols = cols.join(", ");
    let plain: Vec<String> = q.columns().iter().map(|c| format!("\"{c}\"")).collect();
    let plain = plain.join(", ");
    let (time, key) = order_of(q);
    let since = |col: &str| format!("($1::text IS NULL OR {col} >= $1::text::timestamptz)");
    let until = |col: &str| format!("($2::text IS NULL OR {col} <= $2::text::timestamptz)");
    match q {
        Query::Tools => format!("SELECT 0::bigint, {cols} FROM public.{table}"),
        Query::Metrics => format!(
            "SELECT t.id::bigint, {cols} FROM public.{table} t WHERE {} AND {} ORDER BY t.\"timestamp\", t.id",
            since("t.\"timestamp\""),
            until("t.\"timestamp\" - make_interval(secs => t.response_time)")
        ),
        Query::Traces => format!(
            "SELECT $3::bigint + row_number() OVER (ORDER BY t.start_time, t.trace_id), {cols} \
             FROM public.{table} t WHERE {} AND {} ORDER BY t.start_time, t.trace_id",
            since("t.start_time"),
            until("t.start_time")
        ),
        Query::Spans => format!(
            "WITH base AS (SELECT {plain}, name, $3::bigint + row_number() OVER (ORDER BY {time}, {key}) AS rn \
               FROM public.{table} WHERE {}) \
             SELECT rn, {cols} FROM base WHERE name = 'tool.invoke' AND trace_id IN \
               (SELECT trace_id FROM public.observability_traces WHERE {} AND {}) \
             ORDER BY base.start_time, base.span_id",
            since(time),
            since("start_time"),
            until("start_time")
        ),
        Query::Logs => format!(
            "WITH base AS (SELECT {plain}, $3::bigint + row_number() OVER (ORDER BY \"{time}\", {key}) AS rn \
               FROM public.{table} WHERE {}), \
             began AS (SELECT correlation_id FROM base WHERE correlation_id IS NOT NULL \
               GROUP BY correlation_id HAVING {}) \
             SELECT rn, {cols} FROM base JOIN began USING (correlation_id) \
             WHERE $1::text IS NULL OR NOT EXISTS (SELECT 1 FROM public.{table} o \
               WHERE o.correlation_id = base.correlation_id AND o.\"timestamp\" < $1::text::timestamptz) \
             ORDER BY base.correlation_id, base.\"timestamp\", base.id",
            since(&format!("\"{time}\"")),
            until("min(\"timestamp\")")
        ),
    }
}

impl Pg {
    /// Rows of `table` before the window's start, by its time column.
    fn before_since(&mut self, q: Query) -> Result<i64, postgres::Error> {
        let Some(since) = self.window.since else {
            return Ok(0);
        };
        let (time, _) = order_of(q);
        let row = self.client.query_one(
            &format!(
                "SELECT count(*) FROM public.{} WHERE \"{time}\" < $1::text::timestamptz",
                q.table()
            ),
            &[&rfc3339(since)],
        )?;
        row.try_get(0)
    }
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

impl Backend for Pg {
    fn has_table(&mut self, table: &str) -> Result<bool, BackendError> {
        self.client
            .query_one(
                "SELECT to_regclass($1) IS NOT NULL",
                &[&format!("public.{table}")],
            )
            .and_then(|r| r.try_get(0))
            .map_err(BackendError::from)
    }

    fn rows(&mut self, q: Query, f: &mut dyn FnMut(Row)) -> Result<(), BackendError> {
        let since = self.window.since.map(rfc3339);
        let until = self.window.until.map(rfc3339);
        let text = sql(q);
        let rows = match q {
            Query::Tools => self.client.query(&text, &[]),
            Query::Metrics => self.client.query(&text, &[&since, &until]),
            _ => {
                let offset = self.before_since(q)?;
                self.client.query(&text, &[&since, &until, &offset])
            }
        }?;
        let n = q.columns().len();
        for row in rows {
            let pos: i64 = row.try_get(0)?;
            let values = (1..=n)
                .map(|i| row.try_get::<_, Option<String>>(i).ok().flatten())
                .collect();
            f((u32::try_from(pos).unwrap_or(0), values));
        }
        Ok(())
    }

    fn last_time(&mut self) -> Result<Option<String>, BackendError> {
        self.client
            .query_one(
                "SELECT max(\"timestamp\")::text FROM public.structured_log_entries",
                &[],
            )
            .and_then(|r| r.try_get(0))
            .map_err(BackendError::from)
    }
}

/// Reads row `row` of `table` back as JSON text (the raw view), by the
/// position or key it was cited with.
///
/// # Errors
/// A message when the server cannot be reached or the row is gone.
pub(crate) fn read_row(url: &str, table: Table, row: u32) -> Result<String, String> {
    let mut client = connect(url).map_err(|e| e.to_string())?;
    let known = [db::LOGS, db::TRACES, db::SPANS, db::METRICS, db::TOOLS];
    let Some(&table) = known.iter().find(|t| **t == table) else {
        return Err(format!("no table `{table}` is read from ContextForge"));
    };
    let sql = if table == db::METRICS {
        format!("SELECT row_to_json(t)::text FROM public.{table} t WHERE id = $1::bigint")
    } else {
        let (time, key) = match table {
            db::TRACES | db::SPANS => (
                "start_time",
                if table == db::TRACES {
                    "trace_id"
                } else {
                    "span_id"
                },
            ),
            _ => ("\"timestamp\"", "id"),
        };
        format!(
            "SELECT row_to_json(t)::text FROM public.{table} t ORDER BY {time}, {key} OFFSET $1::bigint - 1 LIMIT 1"
        )
    };
    let rows = client
        .query(&sql, &[&i64::from(row)])
        .map_err(|e| message(&e))?;
    rows.first()
        .and_then(|r| r.try_get::<_, String>(0).ok())
        .ok_or_else(|| format!("table `{table}` row {row} is gone"))
}

/// The URL as shown: its password replaced by `***`.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = match rest.find(['/', '?']) {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => match user.split_once(':') {
            Some((name, _)) => format!("{name}:***@{host}"),
            None => format!("{user}@{host}"),
        },
        None => authority.to_string(),
    };
    let tail: String = match tail.split_once('?') {
        Some((path, query)) => {
            let q: Vec<String> = query
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=***"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{path}?{}", q.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}
