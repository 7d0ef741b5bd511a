//! OpenLLMetry's spans of one `tools/call`: the client's `NAME.tool` span
//! and, when a journal loaded holds it, the server's `ResponseStreamWriter` that
//! wrote the response.

use super::{
    Spans, action, connect_failed, execution_id, jsonrpc_id, llm_input, ms, service_actor,
    session_id, span_extra, span_link, timed_out,
};
use crate::journal::ReadCtx;
use crate::journal::exchange::{self, Answer, Call, Delivery, Dispatch, End};
use crate::journal::otlp::span::{Span, StatusCode};
use crate::model::{Arguments, CallRef, Event, Layer, OutcomeKind, ReaderFacts};
use serde_json::{Value, json};

/// Whether a tool result (`CallToolResult` JSON) says the tool failed.
fn is_error_result(v: &str) -> Option<bool> {
    match serde_json::from_str::<Value>(v) {
        Ok(Value::Object(m)) => Some(m.get("isError").and_then(Value::as_bool) == Some(true)),
        _ => None,
    }
}

/// The text of a `tools/call` result (`mcp.response.value`): its `text`
/// content items joined by a space; `None` when it has none.
fn result_text(v: &str) -> Option<String> {
    let v: Value = serde_json::from_str(v).ok()?;
    let texts: Vec<&str> = v
        .get("content")?
        .as_array()?
        .iter()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    (!texts.is_empty()).then(|| texts.join(" "))
}

/// OpenLLMetry's client `NAME.tool` span, with the server's response write
/// when a journal loaded holds it. Returns whether it did.
pub(super) fn llm_tool(ctx: &mut ReadCtx<'_>, idx: &Spans<'_>, s: &Span, tool: &str) -> bool {
    let id = execution_id(s);
    let write = idx
        .children(s)
        .into_iter()
        .find(|c| c.name == "ResponseStreamWriter");
    let reply = write.and_then(|w| {
        idx.children(w)
            .into_iter()
            .find(|c| c.name == "ResponseStreamWriter")
    });
    let input = llm_input(s);
    let (arguments, logged) = match input.as_ref().and_then(|i| i.get("arguments")) {
        Some(Value::Object(a)) => (Value::Object(a.clone()), Arguments::Full),
        Some(Value::Null) | None if input.is_some() => (json!({}), Arguments::Full),
        Some(v) => (json!({ "_value": v }), Arguments::Full),
        None => (
            json!({}),
            Arguments::No(
                "OpenLLMetry records tool arguments only with content capture on (TRACELOOP_TRACE_CONTENT)"
                    .into(),
            ),
        ),
    };
    let written = "the client's ResponseStreamWriter span writes the request";
    let sent = Dispatch::WithRequest {
        inferred: Some(match write {
            Some(w) => format!("{written} at {}", w.start.format("%H:%M:%S%.3f")),
            None => "the tool span is the call being sent".into(),
        }),
    };
    // A tool error is the tool's answer, which the client received: its
    // text may speak of a timeout (the tool's own, on the target's side),
    // which `End::response` reads; the client did not stop waiting.
    let (dispatch, end, delivery) = if s.str_attr("error.type") == Some("tool_error") {
        (
            sent,
            End::response(OutcomeKind::Failure, s.error_text(), None),
            Delivery::Delivered,
        )
    } else if timed_out(s) {
        (
            sent,
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
    } else if s.failed() {
        (
            sent,
            End::response(OutcomeKind::Unknown, s.error_text(), None),
            Delivery::NotRecorded,
        )
    } else if s.status == StatusCode::Ok {
        (
            sent,
            End::response(OutcomeKind::Success, None, None),
            Delivery::Delivered,
        )
    } else {
        (
            sent,
            End::response(
                OutcomeKind::Unknown,
                Some(
                    "the tool span ended with neither a result nor an error (OpenLLMetry swallows some client errors)"
                        .into(),
                ),
                None,
            ),
            Delivery::NotRecorded,
        )
    };
    let mut call = Call::new(
        id.clone(),
        s.start,
        CallRef {
            call_id: None,
            session_id: session_id(s).map(Into::into),
            jsonrpc_id: jsonrpc_id(write.and_then(|w| w.text_attr("mcp.request.id"))),
            mcp_session_id: s.str_attr("mcp.session.id").map(Into::into),
            transport: None,
        },
        action(service_actor(s), tool, arguments, None),
        s.source,
        dispatch,
    );
    call.extra = span_extra(s);
    call.facts.arguments = logged;
    call.layer = Some(Layer::Client);
    call.links = std::iter::once(span_link(s))
        .chain(write.map(span_link))
        .collect();
    let mut answer = Answer::new(s.end, s.source, end);
    answer.delivery = delivery;
    exchange::exchange(ctx, call, Some(answer));
    let Some(r) = reply else {
        return false;
    };
    // The server's write of the response: the tool had finished.
    let value = r.str_attr("mcp.response.value");
    let (outcome, error) = match value.and_then(is_error_result) {
        // The error result's own text, when the span keeps none.
        Some(true) => (
            OutcomeKind::Failure,
            r.error_text().or_else(|| value.and_then(result_text)),
        ),
        Some(false) => (OutcomeKind::Success, None),
        None if r.failed() => (OutcomeKind::Failure, r.error_text()),
        None => (
            OutcomeKind::Unknown,
            Some(
                "the server wrote an answer; its span does not say whether a result or an error (content capture off)"
                    .into(),
            ),
        ),
    };
    // A tool's error text may say it timed out or lost its connection on
    // the target's side: what the target did is then unknown.
    let (kind, inferred) = End::response(outcome, error, None).into_event();
    ctx.event(
        &id,
        Event::new(r.start, kind, r.source)
            .with_extra(span_extra(r))
            .with_facts(ReaderFacts {
                layer: Some(Layer::Server),
                links: vec![span_link(r)],
                request: Some(s.source),
                inferred: inferred.map(str::to_string),
                ..ReaderFacts::default()
            }),
    );
    true
}
