//! ContextForge's JSON log (`LOG_TO_FILE=true`, `LOG_FORMAT=json`): one
//! python-json-logger object a line with `asctime`, `name` (the Python
//! logger), `levelname`, `message`, `@timestamp` (RFC 3339, UTC) and, for
//! every line written while an HTTP request is handled, `request_id` (the
//! correlation id). The lines this reader uses, by logger and message
//! (docs/formats.md#contextforge):
//!
//! * `mcpgateway.middleware.request_logging_middleware` "📩 Incoming
//!   request: POST /rpc … Body: {…}" (`LOG_REQUESTS`): the JSON-RPC id, the
//!   tool, the arguments (sensitive keys masked `******`) and
//!   `params._meta.traceparent`; `trace_id`/`span_id` when ContextForge's
//!   OpenTelemetry export is on;
//! * `mcpgateway.services.structured_logger` lines with `metadata.event`
//!   `mcp_call_started` / `mcp_call_completed` / `mcp_call_failed`
//!   (`error_details.error_type`), "Tool '…' invoked successfully" /
//!   "invocation failed" (`custom_fields.error_message`, `user_id`), and
//!   `request_completed` (`response_status_code`, `user_email`);
//! * `mcpgateway` "Tool execution cancelled for run_id=…" and "Cancelling
//!   tool task for run_id=…".
//!
//! Lines without `request_id` (start-up, migrations, access logs) are
//! counted and not used. A request is emitted when its "Request completed"
//! line comes, the others at the end of the log.

use super::{Invocation, Mark, Request, Upstream, emit, server_of, span_ids, traceparent};
use crate::journal::fields::parse_object;
use crate::journal::{BadLine, JournalError, ReadCtx, for_each_line};
use crate::model::JsonRpcId;
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Whether the first lines look like ContextForge's JSON log: an object
/// with `levelname` and `@timestamp` written by one of its `mcpgateway`
/// loggers; or, in a file rotated while a call ran (its first 64 KiB may
/// hold only the HTTP and database libraries' DEBUG lines), a line of a
/// request: its formatter's fields (`@timestamp`, `hostname`,
/// `process_id`) and the request's `request_id`.
pub(super) fn sniff(first_lines: &[&[u8]]) -> bool {
    first_lines.iter().any(|l| {
        parse_object(l).is_ok_and(|m| {
            let has = |k: &str| m.contains_key(k);
            has("levelname")
                && has("@timestamp")
                && (m
                    .get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| n == "mcpgateway" || n.starts_with("mcpgateway."))
                    || (has("hostname") && has("process_id") && has("request_id")))
        })
    })
}

const MASK: &str = "******";

/// Reads the log.
///
/// # Errors
/// I/O errors; bad lines are reported and skipped.
pub(super) fn read(ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
    let mut open: HashMap<String, Request> = HashMap::new();
    // Requests begun so far under each correlation id.
    let mut requests: HashMap<String, u32> = HashMap::new();
    let mut order: Vec<String> = Vec::new();
    let mut end: Option<DateTime<Utc>> = None;
    let mut skipped = 0u64;
    let mut emitted = 0u64;
    // Whether INFO-level lines are logged, at which the steps of a call
    // are: the first lines (start-up) are INFO at that level, so it is
    // known before the first request ends.
    let mut info = false;
    for_each_line(ctx, |ctx, line| {
        let m = parse_object(line.bytes)?;
        info |= m
            .get("levelname")
            .and_then(Value::as_str)
            .is_some_and(super::logs_steps);
        let at = match m.get("@timestamp") {
            Some(Value::String(t)) => Some(crate::journal::parse_time("@timestamp", t)?),
            Some(_) => {
                return Err(BadLine::in_field(
                    "@timestamp",
                    "field `@timestamp` must be an RFC 3339 time",
                ));
            }
            None => None,
        };
        if let Some(t) = at {
            end = Some(end.map_or(t, |e| e.max(t)));
        }
        let Some(rid) = m.get("request_id").and_then(Value::as_str) else {
            return Ok(());
        };
        let rid = rid.to_string();
        let at = at.ok_or_else(|| {
            BadLine::in_field("@timestamp", "a request's line has no `@timestamp`")
        })?;
        let mark = Mark {
            at,
            source: line.source,
        };
        // A request begins with its "Incoming request" line. A client may
        // send its own X-Correlation-ID, which ContextForge keeps: one id
        // for a retry of the same call, or for a whole agent run. A second
        // request of an id ends the one still open (its client went away)
        // and is a request of its own, `<id>~N` (docs/formats.md#contextforge).
        let begins = is_incoming(&m);
        if begins
            && open.get(&rid).is_some_and(|r| r.received.is_some())
            && let Some(r) = open.remove(&rid)
        {
            if emit_logged(ctx, r, end, info) {
                emitted += 1;
            } else {
                skipped += 1;
            }
        }
        let r = match open.entry(rid.clone()) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(e) => {
                let n = requests.entry(rid.clone()).or_insert(0);
                if begins || *n == 0 {
                    *n += 1;
                }
                order.push(rid.clone());
                e.insert(Request {
                    correlation: Some(super::nth_request(&rid, *n)),
                    ..Request::default()
                })
            }
        };
        let done = take_line(r, &m, mark)?;
        if done && let Some(r) = open.remove(&rid) {
            if emit_logged(ctx, r, end, info) {
                emitted += 1;
            } else {
                skipped += 1;
            }
        }
        Ok(())
    })?;
    for rid in order {
        if let Some(r) = open.remove(&rid) {
            if emit_logged(ctx, r, end, info) {
                emitted += 1;
            } else {
                skipped += 1;
            }
        }
    }
    let shared = requests.values().filter(|&&n| n > 1).count();
    if shared > 0 {
        ctx.note(super::shared_ids_note(shared));
    }
    if !info {
        super::without_info_lines(ctx);
    }
    if skipped > 0 {
        ctx.note(format!(
            "{skipped} HTTP request(s) carried no tools/call (tools/list, initialize, the admin API) and were not used; {emitted} tool call(s) found"
        ));
    }
    Ok(())
}

fn str_at<'a>(m: &'a Map<String, Value>, path: &[&str]) -> Option<&'a str> {
    let mut v = m.get(path[0])?;
    for k in &path[1..] {
        v = v.get(k)?;
    }
    v.as_str()
}

/// Whether a line is the one a request begins with: "📩 Incoming request"
/// of the request logging middleware.
fn is_incoming(m: &Map<String, Value>) -> bool {
    let name = m.get("name").and_then(Value::as_str).unwrap_or("");
    let message = m.get("message").and_then(Value::as_str).unwrap_or("");
    name.ends_with("request_logging_middleware") && message.contains("Incoming request: ")
}

/// Folds one line of request `r` into it; returns whether it was the
/// request's "Request completed".
fn take_line(r: &mut Request, m: &Map<String, Value>, mark: Mark) -> Result<bool, BadLine> {
    r.saw(mark.at);
    let name = m.get("name").and_then(Value::as_str).unwrap_or("");
    let message = m.get("message").and_then(Value::as_str).unwrap_or("");
    if let Some(rest) = message
        .split_once("Incoming request: ")
        .map(|(_, r)| r)
        .filter(|_| name.ends_with("request_logging_middleware"))
    {
        incoming(r, rest, mark);
        if let (Some(t), Some(s)) = (
            m.get("trace_id").and_then(Value::as_str),
            m.get("span_id").and_then(Value::as_str),
        ) {
            r.span = span_ids(t, s);
        }
        return Ok(false);
    }
    if message.starts_with("Tool execution cancelled for run_id=") {
        r.cancelled = Some(mark);
        return Ok(false);
    }
    if message.starts_with("Cancelling tool task for run_id=") {
        r.cancel_requested = true;
        return Ok(false);
    }
    if !name.ends_with("structured_logger") {
        return Ok(false);
    }
    if let Some(u) = ["user_email", "user_id"]
        .iter()
        .find_map(|k| m.get(*k).and_then(Value::as_str).filter(|u| !u.is_empty()))
    {
        r.user.get_or_insert_with(|| u.to_string());
    }
    match str_at(m, &["metadata", "event"]) {
        Some("mcp_call_started") => {
            r.started = Some(mark);
            if let Some(t) = str_at(m, &["metadata", "tool_name"]) {
                r.upstream_tool = Some(t.to_string());
            }
            if let Some(t) = str_at(m, &["metadata", "tool_id"]) {
                r.tool_id = Some(t.to_string());
            }
        }
        Some("mcp_call_completed") => r.upstream = Some(Upstream::Completed(mark)),
        Some("mcp_call_failed") => {
            r.upstream = Some(Upstream::Failed {
                mark,
                error_type: str_at(m, &["error_details", "error_type"]).map(str::to_string),
                message: str_at(m, &["error_details", "error_message"]).map(str::to_string),
            })
        }
        Some("request_completed") => {
            let status = m
                .get("response_status_code")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok());
            r.completed = Some((mark, status));
            if r.path.is_none()
                && let (Some(method), Some(path)) = (
                    m.get("request_method").and_then(Value::as_str),
                    m.get("request_path").and_then(Value::as_str),
                )
            {
                r.path = Some(format!("{method} {path}"));
                r.server = server_of(path);
            }
            return Ok(true);
        }
        _ => {}
    }
    if m.get("resource_action").and_then(Value::as_str) == Some("invoke") {
        let success = if message.ends_with("invoked successfully") {
            true
        } else if message.ends_with("invocation failed") {
            false
        } else {
            return Ok(false);
        };
        if let Some(t) = str_at(m, &["custom_fields", "tool_name"]) {
            r.tool.get_or_insert_with(|| t.to_string());
        }
        if let Some(t) = m.get("resource_id").and_then(Value::as_str) {
            r.tool_id.get_or_insert_with(|| t.to_string());
        }
        r.invocation = Some(Invocation {
            mark,
            success,
            error: str_at(m, &["custom_fields", "error_message"]).map(str::to_string),
            integration: str_at(m, &["custom_fields", "integration_type"]).map(str::to_string),
        });
    }
    Ok(false)
}

/// [`emit`] of a request read from the log: one without its "Incoming
/// request" line says why its arguments are missing (the database's own
/// words, which point at this log, would not).
fn emit_logged(
    ctx: &mut ReadCtx<'_>,
    mut r: Request,
    end: Option<DateTime<Utc>>,
    info: bool,
) -> bool {
    if r.received.is_none() && r.arguments.is_none() && r.arguments_note.is_none() {
        r.arguments_note = Some(
            "the log holds no \"Incoming request\" line for this call, the only line with its arguments (LOG_REQUESTS off, or the request not sampled: LOG_DETAILED_SAMPLE_RATE below 1)"
                .into(),
        );
    }
    emit(ctx, r, end, (false, info))
}

/// Reads "POST /rpc\nQuery params: …\nHeaders: …\nBody: {…}".
fn incoming(r: &mut Request, rest: &str, mark: Mark) {
    r.received = Some(mark);
    let first = rest.lines().next().unwrap_or("").trim();
    r.path = Some(first.to_string());
    r.server = server_of(first);
    let Some((_, body)) = rest.split_once("\nBody: ") else {
        r.arguments_note = Some("the request was logged without its body".into());
        return;
    };
    let body = body.trim_end();
    if body.ends_with("... [truncated]") || body.starts_with("<body too large") {
        r.arguments_note = Some(
            "ContextForge logged the request body truncated (LOG_DETAILED_MAX_BODY_SIZE)".into(),
        );
        return;
    }
    let Ok(Value::Object(b)) = serde_json::from_str::<Value>(body) else {
        r.arguments_note = Some("the logged request body is not a JSON-RPC object".into());
        return;
    };
    r.method = b.get("method").and_then(Value::as_str).map(str::to_string);
    r.jsonrpc_id = b.get("id").and_then(JsonRpcId::from_value);
    let params = b.get("params");
    if let Some(n) = params.and_then(|p| p.get("name")).and_then(Value::as_str) {
        r.tool = Some(n.to_string());
    }
    if let Some(tp) = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get("traceparent"))
        .and_then(Value::as_str)
    {
        r.called_from = traceparent(tp);
    }
    let args = match params.and_then(|p| p.get("arguments")) {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(a)) => a.clone(),
        Some(other) => {
            let mut m = Map::new();
            m.insert("_value".into(), other.clone());
            m
        }
    };
    let mut masked = Vec::new();
    masked_keys(&Value::Object(args.clone()), "", &mut masked);
    if !masked.is_empty() {
        r.arguments_note = Some(format!(
            "ContextForge masks the values of sensitive keys in the logged body: {}",
            masked.join(", ")
        ));
    }
    r.arguments = Some(args);
}

fn masked_keys(v: &Value, at: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let p = if at.is_empty() {
                    k.clone()
                } else {
                    format!("{at}.{k}")
                };
                if v.as_str() == Some(MASK) {
                    out.push(p);
                } else {
                    masked_keys(v, &p, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                masked_keys(v, &format!("{at}[{i}]"), out);
            }
        }
        _ => {}
    }
}
