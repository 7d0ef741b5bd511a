//! IBM ContextForge (`mcp-contextforge-gateway` 1.0.7), docs/formats.md#contextforge:
//! its database (a SQLite file, or a PostgreSQL server named by a
//! `postgres://` URL) and its JSON log (`LOG_TO_FILE`, `LOG_FORMAT=json`).
//!
//! ContextForge has no execution id: one HTTP request to `/rpc` or `/mcp`
//! that carries a `tools/call` is one execution, named
//! `contextforge:<correlation id>`. The correlation id is the same in every
//! line of the request's log (`request_id`) and every row of its structured
//! log (`structured_log_entries.correlation_id`), and every event carries it
//! as [`Link::Correlation`], so that the database and the log of one
//! gateway join into one execution (docs/design.md §5.12).
//!
//! Each source is read into [`Request`]s (what it shows of one request), and
//! [`emit`] turns a request into lifecycle events by the rules of
//! docs/formats.md#contextforge, which follow ContextForge's own code as the
//! lab saw it run (`tests/lab/README.md`):
//!
//! * accepted: the request arrived (the log's "Incoming request … Body",
//!   the database's trace start, else its first row);
//! * dispatched: "MCP tool call started" (the gateway opens the upstream
//!   call), unless the call failed with httpx's `ConnectError`: then
//!   nothing reached the upstream and the call ends `dispatch_failed`;
//! * the outcome: "MCP tool call completed" then "invoked successfully"
//!   (success) or "invocation failed" (the tool's own error result:
//!   failure); "MCP tool call failed" with `TimeoutError` (the gateway's
//!   `TOOL_TIMEOUT`: outcome unknown) or any other error (outcome unknown);
//! * cancelled: "Tool execution cancelled for run_id=…" (the log), or an
//!   invocation that ended with no error text and no upstream answer (the
//!   database): the client went away, the outcome is unknown;
//! * delivered: "Request completed: POST … - `<status>`" after the tool's own
//!   answer (the response was written to the client); `delivery_failed`
//!   when the call was cancelled and no response followed although the
//!   journal goes on.

mod db;
mod log;
mod pg;

use super::{Capabilities, FormatFacts, JournalError, JournalReader, JournalSource, ReadCtx};
use crate::model::{
    Acceptance, ActionRecord, Arguments, CallRef, Event, EventKind, JsonRpcId, Layer, Link,
    OutcomeKind, ReaderFacts, SourceRef,
};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value, json};

pub(super) use pg::{is_url, read_row as read_pg_row, redact as redact_url, url_of};

/// Reader for ContextForge's database and log.
pub struct ContextForgeReader;

/// ContextForge: no execution id, no idempotency key; delivery only as
/// "the response was written" (docs/formats.md#contextforge).
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "contextforge",
    description: "IBM ContextForge MCP gateway: its database (SQLite file or postgres:// URL) or its JSON log",
    noun: "the ContextForge journal",
    capabilities: Capabilities {
        execution_identity: false,
        authorization: false,
        delivery: true,
        sessions: false,
        authenticated_actor: true,
    },
    no_chain: "ContextForge's database and log carry no hash chain",
    delivery_layer: None,
    reader: &ContextForgeReader,
};

/// The prefix of execution ids.
pub const EXECUTION_PREFIX: &str = "contextforge:";

/// The text httpx gives a `ConnectError` when no connection to the
/// upstream could be made: the only trace of the error's type the database
/// keeps (docs/formats.md#contextforge).
pub const CONNECT_FAILED: &str = "All connection attempts failed";

impl JournalReader for ContextForgeReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.first().is_some_and(|l| is_url(l)) || log::sniff(first_lines)
    }

    fn sniff_source(&self, source: &JournalSource) -> bool {
        db::sniff_sqlite(source)
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        if let Some(url) = pg::url_of(ctx.source) {
            return pg::read(ctx, &url);
        }
        if db::sniff_sqlite(ctx.source) {
            return db::read_sqlite(ctx);
        }
        log::read(ctx)
    }
}

/// A moment in a journal: when, and where it is written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mark {
    pub at: DateTime<Utc>,
    pub source: SourceRef,
}

/// How the upstream call ended, as ContextForge logs it
/// (`metadata.event` `mcp_call_completed` / `mcp_call_failed`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Upstream {
    /// The upstream answered ("MCP tool call completed").
    Completed(Mark),
    /// The upstream call raised ("MCP tool call failed"); the error's type
    /// and text when the source keeps them (the log does, the database
    /// keeps neither on this row).
    Failed {
        mark: Mark,
        error_type: Option<String>,
        message: Option<String>,
    },
}

/// How ContextForge's tool invocation ended ("Tool '…' invoked
/// successfully" / "invocation failed").
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Invocation {
    pub mark: Mark,
    pub success: bool,
    /// `custom_fields.error_message`: `None` when ContextForge had no error
    /// text (a cancellation, or the tool's own error result).
    pub error: Option<String>,
    /// `custom_fields.integration_type` (`MCP`, `REST`, …).
    pub integration: Option<String>,
}

/// What one source shows of one HTTP request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Request {
    /// The correlation id; `None` for a `tool_metrics` row alone.
    pub correlation: Option<String>,
    /// A synthetic id when there is no correlation id.
    pub fallback_id: Option<String>,
    /// `POST /rpc`, `POST /mcp`, …
    pub path: Option<String>,
    /// The request arrived.
    pub received: Option<Mark>,
    /// The JSON-RPC method, when the body was logged.
    pub method: Option<String>,
    pub jsonrpc_id: Option<JsonRpcId>,
    /// The exposed tool name the client called.
    pub tool: Option<String>,
    /// The upstream's own name of the tool.
    pub upstream_tool: Option<String>,
    pub tool_id: Option<String>,
    /// The arguments, when the body was logged.
    pub arguments: Option<Map<String, Value>>,
    /// Why the arguments are not (all) known, when they are not.
    pub arguments_note: Option<String>,
    /// The client's W3C trace context from `params._meta.traceparent`.
    pub called_from: Option<(String, String)>,
    /// ContextForge's own OpenTelemetry span of the request.
    pub span: Option<(String, String)>,
    /// The authenticated user.
    pub user: Option<String>,
    /// A virtual server the request went through (`/servers/<id>/…`).
    pub server: Option<String>,
    pub started: Option<Mark>,
    pub upstream: Option<Upstream>,
    pub invocation: Option<Invocation>,
    /// "Tool execution cancelled for run_id=…".
    pub cancelled: Option<Mark>,
    /// "Cancelling tool task for run_id=…": a cancellation was asked for
    /// (the client's `notifications/cancelled`), not a disconnect.
    pub cancel_requested: bool,
    /// "Request completed: … - <status>".
    pub completed: Option<(Mark, Option<u16>)>,
    /// The database's trace of the request never ended (status `unset`,
    /// no end time): the client disconnected.
    pub trace_unended: Option<Mark>,
    /// A `tool_metrics` row for the call: (where, success, error text).
    pub metric: Option<(Mark, bool, Option<String>)>,
    /// The last moment of the request the source shows.
    pub last: Option<DateTime<Utc>>,
    /// Display notes for the accepted event (tool annotations).
    pub notes: Vec<(&'static str, Value)>,
}

impl Request {
    /// Notes a moment of the request.
    pub fn saw(&mut self, at: DateTime<Utc>) {
        self.last = Some(self.last.map_or(at, |l| l.max(at)));
    }

    /// Whether the request carried a tool call the source shows.
    pub fn is_tool_call(&self) -> bool {
        match self.method.as_deref() {
            Some(m) => m == "tools/call",
            None => {
                self.started.is_some()
                    || self.invocation.is_some()
                    || self.upstream.is_some()
                    || self.metric.is_some()
            }
        }
    }
}

/// How a request's call ended, read by the rules of the module doc.
enum End {
    /// Nothing reached the upstream.
    DispatchFailed {
        error: String,
        inferred: Option<String>,
    },
    /// The tool answered: success, or its own error result.
    Answered {
        outcome: OutcomeKind,
        error: Option<String>,
        at: Mark,
    },
    /// The gateway stopped waiting or failed after dispatch: unknown.
    Unknown { error: Option<String>, at: Mark },
    /// The client went away and ContextForge cancelled the call.
    Cancelled { at: Mark, inferred: Option<String> },
    /// The source shows no end (still in flight when it was written).
    Open,
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// `starts_logged`: whether the source keeps INFO-level lines, at which
/// ContextForge logs "MCP tool call started"; at a higher `LOG_LEVEL` the
/// absence of that line says nothing (docs/formats.md#contextforge).
fn classify(r: &Request, from_database: bool, starts_logged: bool) -> End {
    match &r.upstream {
        Some(Upstream::Failed {
            mark,
            error_type,
            message,
        }) => {
            let text = nonempty(message)
                .or_else(|| r.invocation.as_ref().and_then(|i| nonempty(&i.error)))
                .or_else(|| r.metric.as_ref().and_then(|m| nonempty(&m.2)));
            match error_type.as_deref() {
                Some("ConnectError") => End::DispatchFailed {
                    error: format!(
                        "ConnectError: {}",
                        text.as_deref().unwrap_or("no connection to the upstream")
                    ),
                    inferred: None,
                },
                Some("TimeoutError") => End::Unknown {
                    error: Some(
                        "TimeoutError: ContextForge stopped waiting for the upstream (TOOL_TIMEOUT); the tool may still act".into(),
                    ),
                    at: *mark,
                },
                None if from_database && text.as_deref() == Some(CONNECT_FAILED) => {
                    End::DispatchFailed {
                        error: CONNECT_FAILED.into(),
                        inferred: Some(
                            "the database keeps the error's text, not its type: this is httpx's text for a ConnectError (no connection to the upstream, nothing sent); the log's error_details tells for sure".into(),
                        ),
                    }
                }
                t => End::Unknown {
                    error: Some(match (t, text) {
                        (Some(t), Some(x)) => format!("{t}: {x}"),
                        (Some(t), None) => t.to_string(),
                        (None, Some(x)) => x,
                        (None, None) => "the upstream call failed; the source keeps no error".into(),
                    }),
                    at: *mark,
                },
            }
        }
        Some(Upstream::Completed(m)) => match &r.invocation {
            Some(i) if i.success => End::Answered {
                outcome: OutcomeKind::Success,
                error: None,
                at: i.mark,
            },
            Some(i) => End::Answered {
                outcome: OutcomeKind::Failure,
                error: Some(
                    nonempty(&i.error).unwrap_or_else(|| "the tool answered with an error result".into()),
                ),
                at: i.mark,
            },
            None => End::Unknown {
                error: Some(
                    "the upstream answered; the journal ends before ContextForge said whether it was an error".into(),
                ),
                at: *m,
            },
        },
        None => {
            if let Some(c) = r.cancelled {
                return End::Cancelled {
                    at: c,
                    inferred: None,
                };
            }
            match &r.invocation {
                Some(i) if i.success => End::Answered {
                    outcome: OutcomeKind::Success,
                    error: None,
                    at: i.mark,
                },
                // An invocation that ended with no error text and no
                // upstream answer: the call's task was cancelled
                // (ContextForge logs a CancelledError so).
                Some(i) if nonempty(&i.error).is_none() && r.started.is_some() => End::Cancelled {
                    at: i.mark,
                    inferred: Some(
                        "the invocation ended with no error text and no answer from the upstream: ContextForge cancelled the call (the client went away)".into(),
                    ),
                },
                Some(i)
                    if r.started.is_none()
                        && i.integration.as_deref() == Some("MCP")
                        && !starts_logged =>
                {
                    End::Unknown {
                        error: Some(format!(
                            "{}; the journal keeps no INFO-level line (LOG_LEVEL above INFO), where ContextForge says it calls the upstream: whether it did is not known",
                            nonempty(&i.error)
                                .unwrap_or_else(|| "the tool invocation failed".into())
                        )),
                        at: i.mark,
                    }
                }
                Some(i) if r.started.is_none() && i.integration.as_deref() == Some("MCP") => {
                    End::DispatchFailed {
                        error: nonempty(&i.error)
                            .unwrap_or_else(|| "the invocation failed before the upstream call".into()),
                        inferred: Some(
                            "ContextForge logs \"MCP tool call started\" before it calls the upstream; there is none".into(),
                        ),
                    }
                }
                Some(i) => End::Unknown {
                    error: nonempty(&i.error),
                    at: i.mark,
                },
                None => match &r.metric {
                    Some((m, true, _)) => End::Answered {
                        outcome: OutcomeKind::Success,
                        error: None,
                        at: *m,
                    },
                    Some((_, false, e)) if from_database && nonempty(e).as_deref() == Some(CONNECT_FAILED) => {
                        End::DispatchFailed {
                            error: CONNECT_FAILED.into(),
                            inferred: Some(
                                "tool_metrics keeps the error's text, not its type: this is httpx's text for a ConnectError (nothing sent)".into(),
                            ),
                        }
                    }
                    Some((m, false, e)) => End::Unknown {
                        error: nonempty(e).or_else(|| Some("tool_metrics records a failure and no cause".into())),
                        at: *m,
                    },
                    None => End::Open,
                },
            }
        }
    }
}

/// The correlation id of the `n`th request (from 1) that carried `id`: the
/// id itself for the first, `<id>~<n>` after it. ContextForge keeps a
/// client's own X-Correlation-ID, which several requests may carry; the
/// log and the database number them alike, in time order, so that the two
/// still join (docs/formats.md#contextforge).
pub(crate) fn nth_request(id: &str, n: u32) -> String {
    if n <= 1 {
        id.to_string()
    } else {
        format!("{id}~{n}")
    }
}

/// The note for a source in which `ids` correlation ids carried more than
/// one request.
pub(crate) fn shared_ids_note(ids: usize) -> String {
    format!(
        "{ids} correlation id(s) carried several HTTP requests (a client's own X-Correlation-ID, which ContextForge keeps): each request is read as a call of its own, the second as <id>~2 and so on; requests that ran at the same time under one id cannot be told apart, and the log and the database are joined by the order of their requests under each id"
    )
}

/// The note for a source that keeps no INFO-level line: what it cannot
/// show (docs/formats.md#contextforge).
const NO_INFO_NOTE: &str = "no INFO-level line: ContextForge runs at a LOG_LEVEL above INFO (its default is ERROR), so calls that succeeded are not in its log, and whether a failed call reached the upstream is not known; LOG_LEVEL=INFO logs every call";

/// For a source with no INFO-level line: records no delivery ("Request
/// completed", the delivery, is an INFO line) and says what such a source
/// cannot show ([`NO_INFO_NOTE`]).
pub(crate) fn without_info_lines(ctx: &mut ReadCtx<'_>) {
    let mut caps = FACTS.capabilities;
    caps.delivery = false;
    ctx.set_capabilities(caps);
    ctx.note(NO_INFO_NOTE);
}

/// Whether a log level (`levelname`, the `level` column) is INFO or
/// finer, in any case: the level ContextForge logs each call's steps at.
pub(crate) fn logs_steps(level: &str) -> bool {
    ["INFO", "DEBUG", "TRACE", "NOTSET"]
        .iter()
        .any(|l| level.eq_ignore_ascii_case(l))
}

/// How long a journal must go on after a cancelled request for the
/// absence of its "Request completed" to prove that no response was
/// written: ContextForge writes it within milliseconds.
const NO_RESPONSE_AFTER: TimeDelta = TimeDelta::seconds(1);

/// The actor of a request: `contextforge:<user>`, `contextforge:unknown`.
fn actor(r: &Request) -> String {
    format!(
        "{EXECUTION_PREFIX}{}",
        r.user
            .as_deref()
            .filter(|u| !u.is_empty())
            .unwrap_or("unknown")
    )
}

/// The intent scope: the virtual server the call went through, else
/// `contextforge:unscoped` (docs/formats.md#contextforge).
fn scope(r: &Request) -> String {
    match &r.server {
        Some(s) => format!("{EXECUTION_PREFIX}server:{s}"),
        None => format!("{EXECUTION_PREFIX}unscoped"),
    }
}

/// Emits the events of one request (the rules of the module doc).
/// `journal_end` is the last moment the source shows; `from_database` says
/// whether the source is the database (which keeps no error types);
/// `starts_logged` whether it keeps INFO-level lines ([`classify`]).
/// Returns whether the request was a tool call (and emitted).
pub(crate) fn emit(
    ctx: &mut ReadCtx<'_>,
    r: Request,
    journal_end: Option<DateTime<Utc>>,
    (from_database, starts_logged): (bool, bool),
) -> bool {
    if !r.is_tool_call() {
        return false;
    }
    let id = match (&r.correlation, &r.fallback_id) {
        (Some(c), _) => format!("{EXECUTION_PREFIX}{c}"),
        (None, Some(f)) => format!("{EXECUTION_PREFIX}{f}"),
        (None, None) => return false,
    };
    let links: Vec<Link> = r
        .correlation
        .iter()
        .cloned()
        .map(Link::Correlation)
        .collect();
    let facts = |extra: ReaderFacts| ReaderFacts {
        layer: Some(Layer::Gateway),
        links: links.clone(),
        ..extra
    };
    let first = r
        .received
        .or(r.started)
        .or(r.invocation.as_ref().map(|i| i.mark))
        .or(r.metric.as_ref().map(|m| m.0))
        .or(r.cancelled)
        .or(r.completed.map(|c| c.0));
    let Some(accepted_at) = first else {
        return false;
    };
    let end = classify(&r, from_database, starts_logged);

    // accepted
    let tool = r
        .tool
        .clone()
        .or_else(|| r.upstream_tool.clone())
        .unwrap_or_else(|| "unknown".into());
    let mut action = Map::new();
    action.insert("actor".into(), actor(&r).into());
    action.insert("tool".into(), tool.into());
    if let Some(u) = &r.upstream_tool {
        action.insert("upstream_tool".into(), u.clone().into());
    }
    action.insert("channel".into(), "mcp".into());
    action.insert("method".into(), "tools/call".into());
    action.insert(
        "arguments".into(),
        Value::Object(r.arguments.clone().unwrap_or_default()),
    );
    action.insert("intent_scope".into(), scope(&r).into());
    let arguments = match (&r.arguments, &r.arguments_note) {
        (Some(_), None) => Arguments::Full,
        (Some(_), Some(n)) => Arguments::Partly(n.clone()),
        (None, n) => Arguments::No(n.clone().unwrap_or_else(|| {
            "ContextForge's database keeps an argument count, not the arguments; its log has them in each request's \"Incoming request\" line, for the requests it logs (LOG_REQUESTS; a sample of them when LOG_DETAILED_SAMPLE_RATE is below 1)".into()
        })),
    };
    let mut accepted_links = links.clone();
    if let Some((trace, span)) = &r.called_from {
        accepted_links.push(Link::CalledFrom {
            trace: trace.clone(),
            span: span.clone(),
        });
    }
    if let Some((trace, span)) = &r.span {
        accepted_links.push(Link::Span {
            trace: trace.clone(),
            span: span.clone(),
        });
    }
    let mut extra = Map::new();
    if let Some(p) = &r.path {
        extra.insert("request".into(), p.clone().into());
    }
    if let Some(t) = &r.tool_id {
        extra.insert("tool_id".into(), t.clone().into());
    }
    let call = CallRef {
        call_id: r.correlation.clone(),
        session_id: None,
        jsonrpc_id: r.jsonrpc_id.clone(),
        mcp_session_id: None,
        transport: r.path.as_ref().map(|p| {
            if p.ends_with("/mcp") {
                "streamable-http".into()
            } else {
                "http".into()
            }
        }),
    };
    ctx.event(
        &id,
        Event::new(
            accepted_at.at,
            EventKind::Accepted(Box::new(Acceptance {
                call,
                action: ActionRecord::from_map(action),
                fingerprint: None,
                action_class: None,
                idempotency_key: None,
            })),
            accepted_at.source,
        )
        .with_extra(extra)
        .with_facts(ReaderFacts {
            arguments,
            notes: r.notes.clone(),
            layer: Some(Layer::Gateway),
            links: accepted_links,
            ..ReaderFacts::default()
        }),
    );

    // dispatched
    let dispatched = !matches!(end, End::DispatchFailed { .. });
    if dispatched && let Some(s) = r.started {
        ctx.event(
            &id,
            Event::new(
                s.at,
                EventKind::Dispatched {
                    idempotency_key: None,
                },
                s.source,
            )
            .with_facts(facts(ReaderFacts::default())),
        );
    }

    // the end
    let response_note = |status: Option<u16>| -> (&'static str, Value) {
        (
            "response",
            json!(match status {
                Some(s) => format!(
                    "ContextForge answered the client with its own error (HTTP {s}), not the tool's result"
                ),
                None =>
                    "ContextForge answered the client with its own error, not the tool's result"
                        .to_string(),
            }),
        )
    };
    let mut tool_answered = false;
    let mut was_cancelled = false;
    match end {
        End::DispatchFailed { error, inferred } => {
            let at = r
                .upstream
                .as_ref()
                .map(|u| match u {
                    Upstream::Completed(m) | Upstream::Failed { mark: m, .. } => *m,
                })
                .or(r.invocation.as_ref().map(|i| i.mark))
                .or(r.metric.as_ref().map(|m| m.0))
                .unwrap_or(accepted_at);
            let mut f = ReaderFacts {
                inferred,
                ..ReaderFacts::default()
            };
            if let Some((_, status)) = r.completed {
                f.notes.push(response_note(status));
            }
            ctx.event(
                &id,
                Event::new(at.at, EventKind::DispatchFailed { error }, at.source)
                    .with_facts(facts(f)),
            );
        }
        End::Answered { outcome, error, at } => {
            tool_answered = true;
            // The tool's own error text may say it timed out or lost its
            // connection on the target's side: what it did is unknown.
            let (kind, inferred) =
                crate::journal::exchange::End::response(outcome, error, None).into_event();
            ctx.event(
                &id,
                Event::new(at.at, kind, at.source).with_facts(facts(ReaderFacts {
                    inferred: inferred.map(str::to_string),
                    ..ReaderFacts::default()
                })),
            );
        }
        End::Unknown { error, at } => {
            let mut f = ReaderFacts::default();
            if let Some((_, status)) = r.completed {
                f.notes.push(response_note(status));
            }
            ctx.event(
                &id,
                Event::new(
                    at.at,
                    EventKind::response_outcome(OutcomeKind::Unknown, error, None),
                    at.source,
                )
                .with_facts(facts(f)),
            );
        }
        End::Cancelled { at, inferred } => {
            was_cancelled = true;
            ctx.event(
                &id,
                Event::new(
                    at.at,
                    EventKind::Cancelled {
                        by: "client".into(),
                    },
                    at.source,
                )
                .with_facts(facts(ReaderFacts {
                    inferred,
                    ..ReaderFacts::default()
                })),
            );
        }
        End::Open => {}
    }

    // delivery
    match (r.completed, tool_answered) {
        (Some((m, status)), true) => {
            let kind = match status {
                Some(s) if !(200..300).contains(&s) => EventKind::DeliveryFailed {
                    error: format!("ContextForge answered HTTP {s}"),
                },
                _ => EventKind::Delivered,
            };
            ctx.event(
                &id,
                Event::new(m.at, kind, m.source).with_facts(facts(ReaderFacts::default())),
            );
        }
        (None, _) if was_cancelled && !r.cancel_requested => {
            let last = r.last.unwrap_or(accepted_at.at);
            if journal_end.is_some_and(|e| e - last >= NO_RESPONSE_AFTER) {
                let at = r.trace_unended.or(r.cancelled).unwrap_or(accepted_at);
                let at = r
                    .cancelled
                    .or(r.invocation.as_ref().map(|i| i.mark))
                    .unwrap_or(at);
                ctx.event(
                    &id,
                    Event::new(
                        at.at,
                        EventKind::DeliveryFailed {
                            error: "the client went away: ContextForge cancelled the call and wrote no response".into(),
                        },
                        at.source,
                    )
                    .with_facts(facts(ReaderFacts::inferred(
                        "no \"Request completed\" for the request, although the journal goes on",
                    ))),
                );
            }
        }
        _ => {}
    }
    true
}

/// A W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`) as (trace, span),
/// lowercase; `None` for anything else or all-zero ids.
pub(crate) fn traceparent(s: &str) -> Option<(String, String)> {
    let mut parts = s.trim().split('-');
    let (v, t, p, f) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |x: &str, n: usize| x.len() == n && x.bytes().all(|b| b.is_ascii_hexdigit());
    if parts.next().is_some() || !hex(v, 2) || !hex(t, 32) || !hex(p, 16) || !hex(f, 2) {
        return None;
    }
    let zero = |x: &str| x.bytes().all(|b| b == b'0');
    if zero(t) || zero(p) {
        return None;
    }
    Some((t.to_ascii_lowercase(), p.to_ascii_lowercase()))
}

/// An OpenTelemetry trace and span id pair as ContextForge's log lines
/// carry them (`trace_id`, `span_id`), lowercase; `None` unless both are
/// well-formed and not all zero.
pub(crate) fn span_ids(trace: &str, span: &str) -> Option<(String, String)> {
    traceparent(&format!("00-{trace}-{span}-01"))
}

/// The virtual server of a request path (`/servers/<id>/mcp`).
pub(crate) fn server_of(path: &str) -> Option<String> {
    let rest = path.split_whitespace().last()?.strip_prefix("/servers/")?;
    let id = rest.split('/').next()?;
    (!id.is_empty()).then(|| id.to_string())
}

#[cfg(test)]
mod tests;
