//! ContextForge's database, the same tables in SQLite and PostgreSQL
//! (docs/formats.md#contextforge):
//!
//! * `structured_log_entries` (`STRUCTURED_LOGGING_DATABASE_ENABLED`): the
//!   structured log, one row per line, `correlation_id` per HTTP request,
//!   `context` JSON (`metadata.event`, `custom_fields`), `error_details`,
//!   `user_id`/`user_email`; read request by request (ordered by
//!   `correlation_id`, then time);
//! * `observability_traces` (`OBSERVABILITY_ENABLED`): one per HTTP
//!   request; a trace that never ended (status `unset`, no `end_time`) is a
//!   request whose client disconnected;
//! * `observability_spans`: the `tool.invoke` span of each call (`tool.id`
//!   in `attributes`), which ties a trace to a request by tool and time (no
//!   column carries the correlation id);
//! * `tool_metrics` (always on): one row per call at its end, with
//!   `response_time` (seconds), `is_success` and `error_message`, tied to a
//!   request by tool and time; a row tied to none (structured logging off)
//!   is a call of its own, `contextforge:tool_metrics:<id>`;
//! * `tools`: `id`, `name` (the exposed name), `original_name` (the
//!   upstream's) and `annotations` (MCP ToolAnnotations), put on each call.
//!
//! The backends ([`Backend`]: SQLite in [`sqlite`], PostgreSQL in
//! [`super::pg`]) hand every column as text (`NULL`: `None`); this module
//! turns rows into [`Request`]s ([`structured_log`] folds the log's rows). A row that cannot be read is
//! reported with its table and row, counted, and skipped. The traces, spans
//! and metrics are held in memory while the structured log streams.

mod sqlite;
mod structured_log;

use super::{Mark, Request, emit};
use crate::journal::{BadLine, JournalError, ReadCtx};
use crate::model::{Record, SourceRef, Table, ToolHint};
use chrono::{DateTime, NaiveDateTime, TimeDelta, Utc};
use serde_json::Value;
use std::collections::HashMap;
use structured_log::{log_row, take_row};

pub(super) use sqlite::{read_sqlite, sniff_sqlite};

/// The tables read, as [`SourceRef::Row`] cites them.
pub(crate) const LOGS: Table = Table::StructuredLogEntries;
pub(crate) const TRACES: Table = Table::ObservabilityTraces;
pub(crate) const SPANS: Table = Table::ObservabilitySpans;
pub(crate) const METRICS: Table = Table::ToolMetrics;
pub(crate) const TOOLS: Table = Table::Tools;

/// What is read, and the columns each query returns, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Query {
    Tools,
    Traces,
    Spans,
    Metrics,
    Logs,
}

impl Query {
    pub fn table(self) -> Table {
        match self {
            Query::Tools => TOOLS,
            Query::Traces => TRACES,
            Query::Spans => SPANS,
            Query::Metrics => METRICS,
            Query::Logs => LOGS,
        }
    }

    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Query::Tools => &["id", "name", "original_name", "annotations"],
            Query::Traces => &[
                "trace_id",
                "start_time",
                "end_time",
                "status",
                "http_status_code",
                "user_email",
                "http_url",
            ],
            Query::Spans => &[
                "span_id",
                "trace_id",
                "start_time",
                "end_time",
                "attributes",
            ],
            Query::Metrics => &[
                "id",
                "tool_id",
                "timestamp",
                "response_time",
                "is_success",
                "error_message",
            ],
            Query::Logs => &[
                "id",
                "timestamp",
                "correlation_id",
                "message",
                "user_id",
                "user_email",
                "request_path",
                "request_method",
                "context",
                "error_details",
                "level",
            ],
        }
    }
}

/// One row as text: its citable row number, then the columns of its query.
pub(crate) type Row = (u32, Vec<Option<String>>);

/// Why a backend could not answer a query.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BackendError {
    /// SQLite failed.
    #[error("{0}")]
    Sqlite(#[from] rusqlite::Error),
    /// PostgreSQL failed; the message is what the server said.
    #[error("{}", super::pg::message(.0))]
    Postgres(#[from] postgres::Error),
}

/// A database holding ContextForge's tables.
pub(crate) trait Backend {
    /// Whether the table exists.
    fn has_table(&mut self, table: &str) -> Result<bool, BackendError>;
    /// The rows of `q`, in its order, handed to `f` one by one.
    fn rows(&mut self, q: Query, f: &mut dyn FnMut(Row)) -> Result<(), BackendError>;
    /// The latest `timestamp` of the structured log.
    fn last_time(&mut self) -> Result<Option<String>, BackendError>;
}

pub(super) fn invalid(ctx: &ReadCtx<'_>, message: String) -> JournalError {
    JournalError::Invalid {
        journal: ctx.source.name.clone(),
        message,
    }
}

/// A time as ContextForge's databases write it: SQLite's
/// `2026-12-01 11:16:52.403244` (UTC, no offset) or PostgreSQL's
/// `2026-12-01 11:16:52.403244+00`; RFC 3339 too.
pub(crate) fn parse_db_time(column: &str, s: &str) -> Result<DateTime<Utc>, BadLine> {
    let t = s.trim().replacen(' ', "T", 1);
    if let Ok(d) = DateTime::parse_from_rfc3339(&t) {
        return Ok(d.with_timezone(&Utc));
    }
    if let Ok(d) = DateTime::parse_from_str(&t, "%Y-%m-%dT%H:%M:%S%.f%#z") {
        return Ok(d.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(&t, "%Y-%m-%dT%H:%M:%S%.f")
        .map(|n| n.and_utc())
        .map_err(|_| {
            BadLine::in_field(
                column,
                format!(
                    "column `{column}` is not a time: {:?}",
                    crate::sanitize::escape(s)
                ),
            )
        })
}

/// The columns of one row by name, with typed getters whose errors name
/// the column.
struct Cols<'a> {
    names: &'static [&'static str],
    values: &'a [Option<String>],
}

impl Cols<'_> {
    fn text(&self, c: &str) -> Option<&str> {
        let i = self.names.iter().position(|n| *n == c)?;
        self.values.get(i)?.as_deref()
    }
    fn req(&self, c: &str) -> Result<&str, BadLine> {
        self.text(c)
            .ok_or_else(|| BadLine::in_field(c, format!("column `{c}` is NULL")))
    }
    fn time(&self, c: &str) -> Result<Option<DateTime<Utc>>, BadLine> {
        self.text(c).map(|s| parse_db_time(c, s)).transpose()
    }
    fn req_time(&self, c: &str) -> Result<DateTime<Utc>, BadLine> {
        parse_db_time(c, self.req(c)?)
    }
    fn json(&self, c: &str) -> Result<Value, BadLine> {
        match self.text(c) {
            None => Ok(Value::Null),
            Some(s) => serde_json::from_str(s)
                .map_err(|e| BadLine::in_field(c, format!("column `{c}` is not valid JSON: {e}"))),
        }
    }
    fn boolean(&self, c: &str) -> Result<bool, BadLine> {
        match self.req(c)?.trim() {
            "1" | "t" | "true" | "TRUE" => Ok(true),
            "0" | "f" | "false" | "FALSE" => Ok(false),
            other => Err(BadLine::in_field(
                c,
                format!(
                    "column `{c}` is not a boolean: {:?}",
                    crate::sanitize::escape(other)
                ),
            )),
        }
    }
    fn number(&self, c: &str) -> Result<Option<f64>, BadLine> {
        self.text(c)
            .map(|s| {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| BadLine::in_field(c, format!("column `{c}` is not a number")))
            })
            .transpose()
    }
}

struct Tool {
    name: Option<String>,
    original: Option<String>,
    annotations: Value,
    row: u32,
}

struct Trace {
    mark: Mark,
    unended: bool,
    user: Option<String>,
}

struct Span {
    trace: String,
    tool: String,
    start: DateTime<Utc>,
    end: Option<DateTime<Utc>>,
    used: bool,
}

struct Metric {
    mark: Mark,
    id: String,
    tool: String,
    success: bool,
    error: Option<String>,
    started: DateTime<Utc>,
    used: bool,
}

/// How far before "MCP tool call started" a call's `tool.invoke` span may
/// begin, and how far from its invocation's end its `tool_metrics` row
/// may be written, to be tied to it: ContextForge writes them within
/// milliseconds of each other (the lab's runs: under 10 ms).
const SPAN_LEAD: TimeDelta = TimeDelta::seconds(2);
const METRIC_SLACK: TimeDelta = TimeDelta::seconds(1);

/// Reads every table of a ContextForge database from `b` (both backends).
///
/// # Errors
/// The backend's message when a query fails.
pub(crate) fn read_tables(ctx: &mut ReadCtx<'_>, b: &mut dyn Backend) -> Result<(), BackendError> {
    let j = ctx.journal;
    let cite = |table: Table, row: u32| SourceRef::Row {
        journal: j,
        table,
        row,
    };
    let mut bad: Vec<(u32, BadLine)> = Vec::new();
    let mut counts: Vec<(Table, u64)> = Vec::new();
    let count =
        |t: Table, counts: &mut Vec<(Table, u64)>| match counts.iter_mut().find(|(x, _)| *x == t) {
            Some((_, n)) => *n += 1,
            None => counts.push((t, 1)),
        };

    // tools
    let mut tools: HashMap<String, Tool> = HashMap::new();
    if b.has_table(TOOLS.as_str())? {
        b.rows(Query::Tools, &mut |(row, v)| {
            count(TOOLS, &mut counts);
            let c = Cols {
                names: Query::Tools.columns(),
                values: &v,
            };
            let r = (|| -> Result<(String, Tool), BadLine> {
                Ok((
                    c.req("id")?.to_string(),
                    Tool {
                        name: c.text("name").map(str::to_string),
                        original: c.text("original_name").map(str::to_string),
                        annotations: c.json("annotations")?,
                        row,
                    },
                ))
            })();
            match r {
                Ok((id, t)) => {
                    tools.insert(id, t);
                }
                Err(e) => bad.push((row, e.context(format_args!("table `{TOOLS}` row {row}")))),
            }
        })?;
    }

    // What the upstream servers declared about their tools, under the
    // names the gateway exposes them by (docs/design.md §4.5).
    let mut hinted: Vec<(&String, &Tool)> = tools.iter().collect();
    hinted.sort_by_key(|(_, t)| t.row);
    for (_, t) in hinted {
        let (Some(name), Value::Object(_)) = (&t.name, &t.annotations) else {
            continue;
        };
        let tool = serde_json::json!({ "name": name, "annotations": t.annotations });
        for h in ToolHint::from_tools_list(
            std::slice::from_ref(&tool),
            None,
            DateTime::UNIX_EPOCH,
            cite(TOOLS, t.row),
        ) {
            ctx.emit(Record::ToolHint(h));
        }
    }

    // traces
    let mut traces: HashMap<String, Trace> = HashMap::new();
    if b.has_table(TRACES.as_str())? {
        b.rows(Query::Traces, &mut |(row, v)| {
            count(TRACES, &mut counts);
            let c = Cols {
                names: Query::Traces.columns(),
                values: &v,
            };
            let r = (|| -> Result<(String, Trace), BadLine> {
                let start = c.req_time("start_time")?;
                let end = c.time("end_time")?;
                Ok((
                    c.req("trace_id")?.to_string(),
                    Trace {
                        mark: Mark {
                            at: start,
                            source: cite(TRACES, row),
                        },
                        unended: end.is_none() && c.text("status") == Some("unset"),
                        user: c
                            .text("user_email")
                            .filter(|u| !u.is_empty())
                            .map(str::to_string),
                    },
                ))
            })();
            match r {
                Ok((id, t)) => {
                    traces.insert(id, t);
                }
                Err(e) => bad.push((row, e.context(format_args!("table `{TRACES}` row {row}")))),
            }
        })?;
    }

    // tool.invoke spans, by tool
    let mut spans: HashMap<String, Vec<Span>> = HashMap::new();
    if b.has_table(SPANS.as_str())? {
        b.rows(Query::Spans, &mut |(row, v)| {
            count(SPANS, &mut counts);
            let c = Cols {
                names: Query::Spans.columns(),
                values: &v,
            };
            let r = (|| -> Result<Option<Span>, BadLine> {
                let attrs = c.json("attributes")?;
                let Some(tool) = attrs.get("tool.id").and_then(Value::as_str) else {
                    return Ok(None);
                };
                Ok(Some(Span {
                    trace: c.req("trace_id")?.to_string(),
                    tool: tool.to_string(),
                    start: c.req_time("start_time")?,
                    end: c.time("end_time")?,
                    used: false,
                }))
            })();
            match r {
                Ok(Some(s)) => spans.entry(s.tool.clone()).or_default().push(s),
                Ok(None) => {}
                Err(e) => bad.push((row, e.context(format_args!("table `{SPANS}` row {row}")))),
            }
        })?;
    }

    // tool_metrics, by tool
    let mut metrics: HashMap<String, Vec<Metric>> = HashMap::new();
    if b.has_table(METRICS.as_str())? {
        b.rows(Query::Metrics, &mut |(row, v)| {
            count(METRICS, &mut counts);
            let c = Cols {
                names: Query::Metrics.columns(),
                values: &v,
            };
            let r = (|| -> Result<Metric, BadLine> {
                let at = c.req_time("timestamp")?;
                let took = c.number("response_time")?.unwrap_or(0.0);
                let started = crate::journal::started_before(at, took * 1000.0, "response_time")?;
                Ok(Metric {
                    mark: Mark {
                        at,
                        source: cite(METRICS, row),
                    },
                    id: c.req("id")?.to_string(),
                    tool: c.req("tool_id")?.to_string(),
                    success: c.boolean("is_success")?,
                    error: c.text("error_message").map(str::to_string),
                    started,
                    used: false,
                })
            })();
            match r {
                Ok(m) => metrics.entry(m.tool.clone()).or_default().push(m),
                Err(e) => bad.push((row, e.context(format_args!("table `{METRICS}` row {row}")))),
            }
        })?;
    }

    let has_logs = b.has_table(LOGS.as_str())?;
    let end = if has_logs {
        b.last_time()?
            .and_then(|t| parse_db_time("timestamp", &t).ok())
    } else {
        None
    };
    let mut emitted = 0u64;
    let mut skipped = 0u64;
    let mut tied = Tied {
        tools: &tools,
        traces: &traces,
        spans: &mut spans,
        metrics: &mut metrics,
    };
    // Whether INFO-level rows are kept, at which the steps of a call are
    // (ContextForge writes the rows at its LOG_LEVEL).
    let mut info = false;
    let mut log_rows = 0u64;
    if has_logs {
        let mut current: Option<Request> = None;
        // The correlation id of `current`'s rows, and which request of it
        // `current` is.
        let (mut current_id, mut nth) = (String::new(), 0u32);
        // Ids that carried more than one request.
        let mut shared = 0usize;
        let mut pending: Vec<(Request, Option<DateTime<Utc>>)> = Vec::new();
        b.rows(Query::Logs, &mut |(row, v)| {
            count(LOGS, &mut counts);
            let c = Cols {
                names: Query::Logs.columns(),
                values: &v,
            };
            info |= c.text("level").is_some_and(super::logs_steps);
            log_rows += 1;
            let source = cite(LOGS, row);
            match log_row(&c, source) {
                Ok((corr, line)) => {
                    // Rows come by correlation id, then time. Several
                    // requests may carry one id (a client's own
                    // X-Correlation-ID, kept by ContextForge): each is a
                    // request of its own, numbered as the log numbers it
                    // (`super::nth_request`).
                    // A request ends with "Request completed"; one whose
                    // client went away has none, and ends where the next
                    // call starts.
                    let again = current.as_ref().is_some_and(|r| {
                        r.completed.is_some()
                            || (line.starts_call()
                                && (r.started.is_some() || r.invocation.is_some()))
                    });
                    if corr != current_id || again {
                        if let Some(done) = current.take() {
                            pending.push((done, end));
                        }
                        nth = if corr == current_id { nth + 1 } else { 1 };
                        shared += usize::from(nth == 2);
                        current = Some(Request {
                            correlation: Some(super::nth_request(&corr, nth)),
                            ..Request::default()
                        });
                        current_id = corr;
                    }
                    if let Some(r) = current.as_mut() {
                        take_row(r, line);
                    }
                }
                Err(e) => bad.push((row, e.context(format_args!("table `{LOGS}` row {row}")))),
            }
        })?;
        if let Some(done) = current.take() {
            pending.push((done, end));
        }
        // Spans and metrics are tied in time order, so that of two
        // concurrent calls of one tool each gets its own.
        pending.sort_by_key(|(r, _)| r.started.or(r.received).map(|m| m.at));
        for (mut r, end) in pending {
            tied.enrich(&mut r);
            if emit(ctx, r, end, (true, info)) {
                emitted += 1;
            } else {
                skipped += 1;
            }
        }
        if shared > 0 {
            ctx.note(super::shared_ids_note(shared));
        }
    }

    // tool_metrics rows tied to no request: calls of their own.
    let mut alone: Vec<Metric> = metrics
        .into_values()
        .flatten()
        .filter(|m| !m.used)
        .collect();
    alone.sort_by_key(|m| m.mark.at);
    let lone = alone.len();
    for m in alone {
        let t = tools.get(&m.tool);
        let mut r = Request {
            fallback_id: Some(format!("{METRICS}:{}", m.id)),
            received: Some(Mark {
                at: m.started,
                source: m.mark.source,
            }),
            tool: t.and_then(|t| t.name.clone()),
            upstream_tool: t.and_then(|t| t.original.clone()),
            tool_id: Some(m.tool.clone()),
            metric: Some((m.mark, m.success, m.error.clone())),
            ..Request::default()
        };
        r.saw(m.mark.at);
        if let Some(t) = t {
            r.notes.push(("annotations", t.annotations.clone()));
        }
        if emit(ctx, r, end, (true, info)) {
            emitted += 1;
        }
    }

    for (row, e) in bad {
        ctx.bad_line(row, e);
    }
    // A table with no row in what was read records as little as none: the
    // database's default (STRUCTURED_LOGGING_DATABASE_ENABLED false) makes
    // the table and writes nothing to it.
    if !has_logs || log_rows == 0 {
        let mut caps = super::FACTS.capabilities;
        caps.delivery = false;
        caps.authenticated_actor = false;
        ctx.set_capabilities(caps);
        ctx.note(if has_logs {
            "the database's structured_log_entries table holds no row (STRUCTURED_LOGGING_DATABASE_ENABLED off, ContextForge's default): each tool_metrics row is a call, with no user, no arguments, no dispatch and no delivery; ContextForge's JSON log (LOG_TO_FILE, LOG_LEVEL=INFO) records them, and read with the database it shows each call twice"
        } else {
            "the database has no structured_log_entries table (STRUCTURED_LOGGING_DATABASE_ENABLED off): each tool_metrics row is a call, with no user, no dispatch and no delivery"
        });
    } else if lone > 0 {
        ctx.note(format!(
            "{lone} tool_metrics row(s) match no request of the structured log and are read as calls of their own"
        ));
    }
    if log_rows > 0 && !info {
        super::without_info_lines(ctx);
    }
    if skipped > 0 {
        ctx.note(format!(
            "{skipped} HTTP request(s) of the structured log carried no tool call and were not used; {emitted} tool call(s) found"
        ));
    }
    counts.sort();
    // Rows are this journal's lines: a bad row is counted among them.
    for _ in 0..counts.iter().map(|(_, n)| n).sum::<u64>() {
        ctx.count_line();
    }
    ctx.note(format!(
        "rows read: {}",
        counts
            .iter()
            .map(|(t, n)| format!("{t} {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(())
}

/// The in-memory tables a request is tied to.
struct Tied<'a> {
    tools: &'a HashMap<String, Tool>,
    traces: &'a HashMap<String, Trace>,
    spans: &'a mut HashMap<String, Vec<Span>>,
    metrics: &'a mut HashMap<String, Vec<Metric>>,
}

impl Tied<'_> {
    /// Ties the request to its tool, its trace (through its `tool.invoke`
    /// span) and its `tool_metrics` row.
    fn enrich(&mut self, r: &mut Request) {
        let Some(tool_id) = r.tool_id.clone() else {
            return;
        };
        if let Some(t) = self.tools.get(&tool_id) {
            if r.tool.is_none() {
                r.tool.clone_from(&t.name);
            }
            if r.upstream_tool.is_none() {
                r.upstream_tool.clone_from(&t.original);
            }
            if !t.annotations.is_null() {
                r.notes.push(("annotations", t.annotations.clone()));
            }
        }
        // The span that began last before the upstream call started, and
        // had not ended by then.
        if let Some(at) = r
            .started
            .or(r.invocation.as_ref().map(|i| i.mark))
            .map(|m| m.at)
            && let Some(s) = self.spans.get_mut(&tool_id).and_then(|v| {
                v.iter_mut()
                    .filter(|s| {
                        !s.used
                            && s.start <= at
                            && at - s.start <= SPAN_LEAD
                            && s.end.is_none_or(|e| e + METRIC_SLACK >= at)
                    })
                    .max_by_key(|s| s.start)
            })
        {
            s.used = true;
            if let Some(t) = self.traces.get(&s.trace) {
                r.received = Some(t.mark);
                if t.unended {
                    r.trace_unended = Some(t.mark);
                }
                if r.user.is_none() {
                    r.user.clone_from(&t.user);
                }
            }
        }
        // The metric written closest to the invocation's end.
        if let Some(i) = &r.invocation
            && let Some(m) = self.metrics.get_mut(&tool_id).and_then(|v| {
                v.iter_mut()
                    .filter(|m| !m.used && (m.mark.at - i.mark.at).abs() <= METRIC_SLACK)
                    .min_by_key(|m| (m.mark.at - i.mark.at).abs())
            })
        {
            m.used = true;
            r.metric = Some((m.mark, m.success, m.error.clone()));
        }
    }
}
