//! The rows of `structured_log_entries`: reading one row into a
//! [`LogLine`] and folding it into its request by the log reader's rules
//! (docs/formats.md#contextforge).

use super::Cols;
use crate::journal::BadLine;
use crate::journal::contextforge::{Invocation, Mark, Request, Upstream, server_of};
use crate::model::SourceRef;
use serde_json::Value;

/// One structured log row, as the reader needs it.
pub(super) struct LogLine {
    mark: Mark,
    message: String,
    user: Option<String>,
    path: Option<String>,
    context: Value,
    error_details: Value,
}

pub(super) fn log_row(c: &Cols<'_>, source: SourceRef) -> Result<(String, LogLine), BadLine> {
    let corr = c.req("correlation_id")?.to_string();
    let at = c.req_time("timestamp")?;
    let context = c.json("context")?;
    let error_details = c.json("error_details")?;
    Ok((
        corr,
        LogLine {
            mark: Mark { at, source },
            message: c.text("message").unwrap_or("").to_string(),
            user: c
                .text("user_email")
                .or_else(|| c.text("user_id"))
                .filter(|u| !u.is_empty())
                .map(str::to_string),
            path: match (c.text("request_method"), c.text("request_path")) {
                (Some(m), Some(p)) => Some(format!("{m} {p}")),
                _ => None,
            },
            context,
            error_details,
        },
    ))
}

impl LogLine {
    /// Whether the row says a call to the upstream starts ("MCP tool call
    /// started").
    pub(super) fn starts_call(&self) -> bool {
        s_at(&self.context, &["metadata", "event"]) == Some("mcp_call_started")
    }
}

fn s_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut v = v;
    for k in path {
        v = v.get(k)?;
    }
    v.as_str()
}

/// Folds one structured log row into its request (the log reader's rules,
/// docs/formats.md#contextforge).
pub(super) fn take_row(r: &mut Request, l: LogLine) {
    r.saw(l.mark.at);
    if let Some(u) = l.user {
        r.user.get_or_insert(u);
    }
    if r.received.is_none() {
        r.received = Some(l.mark);
    }
    let ctx = &l.context;
    match s_at(ctx, &["metadata", "event"]) {
        Some("mcp_call_started") => {
            r.started = Some(l.mark);
            if let Some(t) = s_at(ctx, &["metadata", "tool_name"]) {
                r.upstream_tool = Some(t.to_string());
            }
            if let Some(t) = s_at(ctx, &["metadata", "tool_id"]) {
                r.tool_id = Some(t.to_string());
            }
            return;
        }
        Some("mcp_call_completed") => {
            r.upstream = Some(Upstream::Completed(l.mark));
            return;
        }
        Some("mcp_call_failed") => {
            r.upstream = Some(Upstream::Failed {
                mark: l.mark,
                // The database keeps these on the log line only in some
                // versions; 1.0.7 writes `error_details` NULL here.
                error_type: s_at(&l.error_details, &["error_type"]).map(str::to_string),
                message: s_at(&l.error_details, &["error_message"]).map(str::to_string),
            });
            return;
        }
        Some("request_completed") => {
            let status = ctx
                .get("response_status_code")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok());
            r.completed = Some((l.mark, status));
            if let Some(p) = l.path {
                r.server = server_of(&p);
                r.path = Some(p);
            }
            return;
        }
        _ => {}
    }
    if s_at(ctx, &["resource_action"]) == Some("invoke") {
        let success = if l.message.ends_with("invoked successfully") {
            true
        } else if l.message.ends_with("invocation failed") {
            false
        } else {
            return;
        };
        if let Some(t) = s_at(ctx, &["custom_fields", "tool_name"]) {
            r.tool.get_or_insert_with(|| t.to_string());
        }
        if let Some(t) = s_at(ctx, &["resource_id"]) {
            r.tool_id.get_or_insert_with(|| t.to_string());
        }
        r.invocation = Some(Invocation {
            mark: l.mark,
            success,
            error: s_at(ctx, &["custom_fields", "error_message"]).map(str::to_string),
            integration: s_at(ctx, &["custom_fields", "integration_type"]).map(str::to_string),
        });
    }
}
