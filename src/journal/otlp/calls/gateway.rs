//! ContextForge's gateway spans: joining a `tool.invoke` span to the client
//! span that sent it, and reading the gateway's side of the call.

use super::{
    Role, SKEW, Spans, action, connect_failed, execution_id, span_extra, span_link, target,
    timed_out, unknown_caller,
};
use crate::journal::ReadCtx;
use crate::journal::exchange::{self, Answer, Call, Dispatch, End};
use crate::journal::otlp::span::{Span, StatusCode};
use crate::model::{Arguments, CallRef, Layer, Link, OutcomeKind};
use serde_json::json;
use std::collections::HashMap;

/// Gateway `tool.invoke` spans joined to the client span that sent them
/// (among the spans of every OpenTelemetry journal loaded together, so
/// that each journal finds the same pairs): the same tool name, another service, the invocation
/// starting within the client span (less [`SKEW`] at its start: a
/// gateway cannot start a call before its client has ended it), and
/// exactly one such pairing each way. Returns client span index → invoke span index.
pub(super) fn match_gateways(spans: &[&Span], roles: &[Option<Role>]) -> HashMap<usize, usize> {
    let clients: Vec<(usize, &str)> = roles
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r {
            Some(Role::SdkClient(t) | Role::LlmTool(t)) => Some((i, t.as_str())),
            _ => None,
        })
        .collect();
    let invokes: Vec<(usize, &str)> = roles
        .iter()
        .enumerate()
        .filter_map(|(i, r)| match r {
            Some(Role::GatewayInvoke(t)) => Some((i, t.as_str())),
            _ => None,
        })
        .collect();
    if clients.is_empty() || invokes.is_empty() {
        return HashMap::new();
    }
    let fits = |c: usize, g: usize| {
        let (c, g) = (spans[c], spans[g]);
        c.resource.service != g.resource.service && g.start >= c.start - SKEW && g.start <= c.end
    };
    let mut by_tool: HashMap<&str, Vec<usize>> = HashMap::new();
    for &(g, t) in &invokes {
        by_tool.entry(t).or_default().push(g);
    }
    let fit_of_client = |c: usize, t: &str| -> Vec<usize> {
        by_tool
            .get(t)
            .into_iter()
            .flatten()
            .copied()
            .filter(|&g| fits(c, g))
            .collect()
    };
    let mut fitting_clients: HashMap<usize, usize> = HashMap::new();
    let mut candidate: HashMap<usize, usize> = HashMap::new();
    for &(c, t) in &clients {
        let fit = fit_of_client(c, t);
        for &g in &fit {
            *fitting_clients.entry(g).or_default() += 1;
        }
        if let [g] = fit.as_slice() {
            candidate.insert(c, *g);
        }
    }
    // Exactly one each way: a gateway span two clients could have sent is
    // nobody's.
    candidate.retain(|_, g| fitting_clients.get(g) == Some(&1));
    candidate
}

/// ContextForge's `tool.invoke` span: the gateway's side of one call,
/// emitted into the client's execution when it was joined to one.
pub(super) fn gateway(
    ctx: &mut ReadCtx<'_>,
    idx: &Spans<'_>,
    s: &Span,
    tool: &str,
    client: Option<String>,
) {
    let call_span = idx.descendant(s, "mcp.client.call", 3);
    let request = call_span.and_then(|c| idx.descendant(c, "mcp.client.request", 1));
    let response = call_span.and_then(|c| idx.descendant(c, "mcp.client.response", 1));
    let success = s.bool_attr("success");
    let upstream_timeout = request.is_some_and(timed_out) || call_span.is_some_and(timed_out);
    let (dispatch, end) = if upstream_timeout {
        let t = request.filter(|r| timed_out(r)).or(call_span).unwrap_or(s);
        (
            Dispatch::WithRequest {
                inferred: Some(
                    "the gateway's mcp.client.request span sends the call upstream".into(),
                ),
            },
            End::TimedOut {
                error: Some(format!(
                    "the gateway stopped waiting for the server: {}",
                    t.error_text().unwrap_or_else(|| "timeout".into())
                )),
            },
        )
    } else if request.is_none() && (connect_failed(s) || call_span.is_some_and(connect_failed)) {
        (
            Dispatch::Implied {
                why: "nothing was sent: the connection could not be made".into(),
                at_request: true,
            },
            End::DispatchFailed {
                error: s.error_text().unwrap_or_default(),
            },
        )
    } else if success == Some(true) || (!s.failed() && s.status == StatusCode::Ok) {
        (
            Dispatch::WithRequest {
                inferred: Some(
                    "the gateway's mcp.client.request span sends the call upstream".into(),
                ),
            },
            End::response(OutcomeKind::Success, None, None),
        )
    } else if s.failed() || success == Some(false) {
        let upstream_ok = response.and_then(|r| r.bool_attr("upstream.response.success"));
        (
            Dispatch::WithRequest {
                inferred: Some(
                    "the gateway's mcp.client.request span sends the call upstream".into(),
                ),
            },
            match upstream_ok {
                Some(false) => End::response(OutcomeKind::Failure, s.error_text(), None),
                _ => End::response(OutcomeKind::Unknown, s.error_text(), None),
            },
        )
    } else {
        (
            Dispatch::WithRequest {
                inferred: Some(
                    "the gateway's mcp.client.request span sends the call upstream".into(),
                ),
            },
            End::response(
                OutcomeKind::Unknown,
                Some("the gateway's span ended without saying how the call went".into()),
                None,
            ),
        )
    };
    let joined = client.is_some();
    let id = client.unwrap_or_else(|| execution_id(s));
    let mut call = Call::new(
        id,
        s.start,
        CallRef {
            call_id: s.str_attr("correlation_id").map(str::to_string),
            session_id: None,
            jsonrpc_id: None,
            mcp_session_id: None,
            transport: call_span
                .and_then(|c| c.str_attr("contextforge.transport"))
                .map(Into::into),
        },
        action(
            unknown_caller(s),
            tool,
            json!({}),
            call_span.and_then(target),
        ),
        s.source,
        dispatch,
    );
    call.extra = span_extra(s);
    if let Some(c) = call_span.and_then(|c| c.str_attr("mcp.tool.name")) {
        call.extra.insert("upstream_tool".into(), c.into());
    }
    call.facts.arguments = Arguments::No(
        "ContextForge's spans count the arguments (`arguments_count`) but do not record them"
            .into(),
    );
    if joined {
        call.facts.notes.push((
            "joined_by",
            "the tool name and time: the gateway does not pass the client's trace context on"
                .into(),
        ));
    }
    call.layer = Some(Layer::Gateway);
    call.links = std::iter::once(span_link(s))
        .chain(call_span.map(span_link))
        .chain(
            s.str_attr("correlation_id")
                .map(|c| Link::Correlation(c.to_string())),
        )
        .collect();
    exchange::exchange(ctx, call, Some(Answer::new(s.end, s.source, end)));
}
