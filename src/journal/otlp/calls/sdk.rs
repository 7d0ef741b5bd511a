//! The MCP SDK's spans of one `tools/call`: the CLIENT span
//! `MCP send tools/call NAME` (with the gateway span it went through, when
//! one was joined to it) and the SERVER span `tools/call NAME`.

use super::{
    CANCEL_MARGIN, REFUSAL_CODES, SKEW, Spans, action, connect_failed, execution_id, jsonrpc_error,
    jsonrpc_id, ms, sdk_tool, service_actor, session_id, span_extra, span_link, target, timed_out,
    unknown_caller,
};
use crate::journal::ReadCtx;
use crate::journal::exchange::{self, Answer, Call, Delivery, Dispatch, End};
use crate::journal::otlp::span::{Kind, Span};
use crate::model::{Arguments, CallRef, Layer, Link, OutcomeKind};
use chrono::{DateTime, Utc};
use serde_json::json;

/// The server span that handled the call of client span `s`: its child,
/// or the child of the upstream call of the gateway span `via` it went
/// through.
fn server_of<'a>(idx: &Spans<'a>, s: &Span, via: Option<&Span>) -> Option<&'a Span> {
    let is_server = |c: &&Span| c.kind == Kind::Server && sdk_tool(c).is_some();
    idx.children(s).into_iter().find(is_server).or_else(|| {
        let call = idx.descendant(via?, "mcp.client.call", 3)?;
        idx.children(call).into_iter().find(is_server)
    })
}

/// The MCP SDK's client span of one `tools/call`, and the gateway span it
/// went through when one was joined to it.
pub(super) fn sdk_client(
    ctx: &mut ReadCtx<'_>,
    idx: &Spans<'_>,
    (s, via): (&Span, Option<&Span>),
    tool: &str,
    has_servers: bool,
) {
    let id = execution_id(s);
    // What answered: the server's span, else the gateway's.
    let partner = server_of(idx, s, via).or(via);
    let sent =
        "the client span is the request being sent; whether it arrived, the server's span tells";
    let (dispatch, end, delivery) = if timed_out(s) {
        (
            Dispatch::WithRequest {
                inferred: Some(sent.into()),
            },
            End::TimedOut {
                error: s.error_text(),
            },
            Delivery::Failed(format!(
                "the client stopped waiting after {} ({})",
                ms(s.end - s.start),
                s.error_text().unwrap_or_else(|| "timeout".into())
            )),
        )
    } else if connect_failed(s) {
        (
            Dispatch::Implied {
                why: "nothing was sent: the connection could not be made".into(),
                at_request: true,
            },
            End::DispatchFailed {
                error: s.error_text().unwrap_or_default(),
            },
            Delivery::NotRecorded,
        )
    } else if let Some(code) = jsonrpc_error(s).filter(|_| s.failed()) {
        let error = s.error_text();
        // A refusal was the whole answer; any other error came in place of
        // the tool's result, which did not reach the agent (docs/design.md
        // §5.12: delivery is the client's word).
        let (outcome, delivery) = if REFUSAL_CODES.contains(&code) {
            (OutcomeKind::NotExecuted, Delivery::Delivered)
        } else {
            (
                OutcomeKind::Unknown,
                Delivery::Failed(format!(
                    "the client received JSON-RPC error {code} ({}) in place of the tool's result",
                    error.as_deref().unwrap_or("no message")
                )),
            )
        };
        (
            Dispatch::WithRequest {
                inferred: Some(sent.into()),
            },
            End::response(outcome, error, None),
            delivery,
        )
    } else if s.failed() {
        (
            Dispatch::WithRequest {
                inferred: Some(sent.into()),
            },
            End::response(OutcomeKind::Unknown, s.error_text(), None),
            Delivery::NotRecorded,
        )
    } else {
        // UNSET: the SDK ends the span so both when a result comes back and
        // when the connection closes first (docs/formats.md#otlp-json).
        let (why, delivery) = match partner {
            Some(p) if p.end <= s.end + SKEW => (
                "the client span records that an answer came back, not what it said".to_string(),
                Delivery::Delivered,
            ),
            Some(p) => (
                format!(
                    "the client span ended {} before the {}'s: the connection closed before the answer",
                    ms(p.end - s.end),
                    if p.kind == Kind::Server { "server" } else { "gateway" }
                ),
                Delivery::Failed("the connection closed before the answer came back".into()),
            ),
            None if has_servers => (
                "no server span answers this call, and the SDK ends a client span without error also when the connection closes".to_string(),
                Delivery::NotRecorded,
            ),
            None => (
                "the client span records that an answer came back, not what it said (no server spans in the journals loaded)".to_string(),
                Delivery::Delivered,
            ),
        };
        (
            Dispatch::WithRequest {
                inferred: Some(sent.into()),
            },
            End::response(OutcomeKind::Unknown, Some(why), None),
            delivery,
        )
    };
    let mut call = Call::new(
        id,
        s.start,
        CallRef {
            call_id: None,
            session_id: session_id(s).map(Into::into),
            jsonrpc_id: jsonrpc_id(s.text_attr("jsonrpc.request.id")),
            mcp_session_id: s.str_attr("mcp.session.id").map(Into::into),
            transport: s.str_attr("network.transport").map(Into::into),
        },
        action(service_actor(s), tool, json!({}), target(s)),
        s.source,
        dispatch,
    );
    call.extra = span_extra(s);
    call.facts.arguments =
        Arguments::No("the MCP SDK's spans record the tool's name, not its arguments".into());
    call.layer = Some(Layer::Client);
    call.links = vec![span_link(s)];
    let mut answer = Answer::new(s.end, s.source, end);
    answer.delivery = delivery;
    exchange::exchange(ctx, call, Some(answer));
}

/// When the caller of server span `s` gave up on it: its parent client
/// span, or a request span beside it under a gateway's call, that failed
/// with a timeout.
fn caller_gave_up(idx: &Spans<'_>, s: &Span) -> Option<DateTime<Utc>> {
    let parent = idx.parent(s)?;
    std::iter::once(parent)
        .chain(idx.children(parent).into_iter().filter(|c| c.id != s.id))
        .filter(|c| timed_out(c))
        .map(|c| c.end)
        .min()
}

/// When the caller of server span `s` received a JSON-RPC error other than
/// a refusal (`-32603`, an internal error) in place of the answer: its
/// parent client span failed so. With its code.
fn caller_got_error(idx: &Spans<'_>, s: &Span) -> Option<(DateTime<Utc>, i64)> {
    let parent = idx.parent(s)?;
    let code = jsonrpc_error(parent).filter(|c| parent.failed() && !REFUSAL_CODES.contains(c))?;
    Some((parent.end, code))
}

/// The MCP SDK's server span of one `tools/call`. Returns whether its
/// caller was inferred ([`Spans::lone_caller`]): its own span is missing.
pub(super) fn sdk_server(ctx: &mut ReadCtx<'_>, idx: &Spans<'_>, s: &Span, tool: &str) -> bool {
    let id = execution_id(s);
    let end = if s.failed() {
        let code = jsonrpc_error(s);
        let outcome = match code {
            Some(c) if REFUSAL_CODES.contains(&c) => OutcomeKind::NotExecuted,
            _ => OutcomeKind::Failure,
        };
        End::response(outcome, s.error_text(), None)
    } else {
        match caller_gave_up(idx, s) {
            Some(t) if s.end >= t - SKEW && s.end <= t + CANCEL_MARGIN => End::response(
                OutcomeKind::Unknown,
                Some(format!(
                    "the handler stopped {} after its caller gave up; the SDK ends a handler cancelled by the caller like a finished one, so this span does not show that the tool finished",
                    ms(s.end - t)
                )),
                None,
            ),
            // A handler torn down (the server restarting under it) also
            // ends like a finished one; its caller then gets an internal
            // error instead of the answer, at about the same time.
            _ => match caller_got_error(idx, s) {
                Some((t, code)) if (s.end - t).abs() <= CANCEL_MARGIN => End::response(
                    OutcomeKind::Unknown,
                    Some(format!(
                        "the handler stopped {} of its caller receiving JSON-RPC error {code} in place of the answer; the SDK ends a handler torn down (a server restarting) like a finished one, so this span does not show that the tool finished",
                        if s.end <= t {
                            format!("{} ahead", ms(t - s.end))
                        } else {
                            format!("{} after", ms(s.end - t))
                        }
                    )),
                    None,
                ),
                _ => End::response(OutcomeKind::Success, None, None),
            },
        }
    };
    let caller = idx.parent(s);
    let inferred = caller.is_none().then(|| idx.lone_caller(s)).flatten();
    let actor = match (caller, inferred) {
        (Some(c), _) => service_actor(c),
        (None, Some(svc)) => (format!("service:{svc}"), format!("service:{svc}")),
        (None, None) => unknown_caller(s),
    };
    let mut call = Call::new(
        id,
        s.start,
        CallRef {
            call_id: None,
            session_id: None,
            jsonrpc_id: jsonrpc_id(s.text_attr("jsonrpc.request.id")),
            mcp_session_id: s.str_attr("mcp.session.id").map(Into::into),
            transport: None,
        },
        action(actor, tool, json!({}), None),
        s.source,
        Dispatch::WithRequest {
            inferred: Some("the server span starts when the server takes the request".into()),
        },
    );
    call.extra = span_extra(s);
    if let Some(svc) = inferred {
        call.extra.insert(
            "otel.caller".into(),
            format!(
                "service:{svc}, inferred: the caller's span (trace {}, span {}) is not in the journals loaded, and {svc} is the only service seen calling {}",
                s.trace,
                s.parent.as_deref().unwrap_or_default(),
                s.resource.service.as_deref().unwrap_or("unknown_service")
            )
            .into(),
        );
    }
    if let Some(svc) = inferred {
        // Shown wherever the event's details are (the event list, the
        // review queue, the postmortem's timeline).
        call.facts.notes.push((
            "caller_inferred",
            format!(
                "service:{svc} (its own span is missing; the only service seen calling {})",
                s.resource.service.as_deref().unwrap_or("unknown_service")
            )
            .into(),
        ));
    }
    call.facts.arguments =
        Arguments::No("the MCP SDK's spans record the tool's name, not its arguments".into());
    call.layer = Some(Layer::Server);
    call.links = vec![span_link(s)];
    if let Some(p) = &s.parent {
        call.links.push(Link::CalledFrom {
            trace: s.trace.clone(),
            span: p.clone(),
        });
    }
    exchange::exchange(ctx, call, Some(Answer::new(s.end, s.source, end)));
    inferred.is_some()
}
