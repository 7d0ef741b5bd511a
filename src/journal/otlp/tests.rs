//! The OTLP reader's rules, on spans shaped as the real instrumentations
//! write them (docs/formats.md#otlp-json). The lab's real exports are read end
//! to end by `tests/otlp.rs` and `tests/lab_otel.rs`.

use super::CANCEL_MARGIN;
use crate::journal::{Format, JournalSource, LoadedJournal, load};
use crate::model::{EventKind, Layer, Model, OutcomeKind};
use serde_json::{Value, json};

const T0: u64 = 1_796_123_762_000_000_000;

/// One span, as a test writes it.
#[derive(Clone)]
struct S {
    trace: &'static str,
    id: &'static str,
    parent: Option<&'static str>,
    name: String,
    kind: u8,
    /// Milliseconds after T0.
    from: u64,
    to: u64,
    attrs: Vec<(&'static str, Value)>,
    status: Option<(u8, &'static str)>,
    exception: Option<&'static str>,
    /// OTLP `SpanFlags`, when written.
    flags: Option<u32>,
}

const TRACE_A: &str = "e53f17b153fe9910684b275cbd928919";
const TRACE_B: &str = "4cf08c837f76064037e702b4da0a130a";

fn span(trace: &'static str, id: &'static str, name: &str, kind: u8, from: u64, to: u64) -> S {
    S {
        trace,
        id,
        parent: None,
        name: name.into(),
        kind,
        from,
        to,
        attrs: Vec::new(),
        status: None,
        exception: None,
        flags: None,
    }
}

/// The MCP SDK's client span of `tools/call tool`.
fn client(trace: &'static str, id: &'static str, tool: &str, rpc: &str, from: u64, to: u64) -> S {
    let mut s = span(
        trace,
        id,
        &format!("MCP send tools/call {tool}"),
        3,
        from,
        to,
    );
    s.attrs = vec![
        ("mcp.method.name", json!("tools/call")),
        ("jsonrpc.request.id", json!(rpc)),
    ];
    s
}

/// The MCP SDK's server span, child of `parent`.
fn server(
    trace: &'static str,
    id: &'static str,
    parent: &'static str,
    tool: &str,
    from: u64,
    to: u64,
) -> S {
    let mut s = span(trace, id, &format!("tools/call {tool}"), 2, from, to);
    s.parent = Some(parent);
    s.attrs = vec![
        ("mcp.method.name", json!("tools/call")),
        ("jsonrpc.request.id", json!("1")),
        ("gen_ai.operation.name", json!("execute_tool")),
        ("gen_ai.tool.name", json!(tool)),
    ];
    s
}

fn timeout(mut s: S) -> S {
    s.status = Some((2, "TimeoutError: "));
    s.exception = Some("TimeoutError");
    s
}

fn any(v: &Value) -> Value {
    match v {
        Value::String(s) => json!({ "stringValue": s }),
        Value::Bool(b) => json!({ "boolValue": b }),
        Value::Number(n) => json!({ "intValue": n.to_string() }),
        v => json!({ "stringValue": v.to_string() }),
    }
}

fn span_json(s: &S) -> Value {
    let mut v = json!({
        "traceId": s.trace,
        "spanId": s.id,
        "name": s.name,
        "kind": s.kind,
        "startTimeUnixNano": (T0 + s.from * 1_000_000).to_string(),
        "endTimeUnixNano": (T0 + s.to * 1_000_000).to_string(),
        "attributes": s.attrs.iter().map(|(k, v)| json!({"key": k, "value": any(v)})).collect::<Vec<_>>(),
        "status": match s.status { Some((c, m)) => json!({"code": c, "message": m}), None => json!({}) },
    });
    if let Some(p) = s.parent {
        v["parentSpanId"] = json!(p);
    }
    if let Some(f) = s.flags {
        v["flags"] = json!(f);
    }
    if let Some(e) = s.exception {
        v["events"] = json!([{"name": "exception", "timeUnixNano": (T0 + s.to * 1_000_000).to_string(),
            "attributes": [{"key": "exception.type", "value": {"stringValue": e}}]}]);
    }
    v
}

/// One `TracesData` line of `service`'s spans.
fn batch(service: &str, instance: &str, spans: &[S]) -> String {
    json!({"resourceSpans": [{
        "resource": {"attributes": [
            {"key": "service.name", "value": {"stringValue": service}},
            {"key": "service.instance.id", "value": {"stringValue": instance}},
        ]},
        "scopeSpans": [{"scope": {"name": "mcp-python-sdk"}, "spans": spans.iter().map(span_json).collect::<Vec<_>>()}],
    }]})
    .to_string()
}

fn read(text: &str) -> (LoadedJournal, Model) {
    let (mut j, m) = load(
        vec![JournalSource::memory("traces.jsonl", text.as_bytes())],
        None,
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(j[0].format, Format::OtlpJson);
    (j.remove(0), m)
}

/// The events of the execution of client span `id` of TRACE_A or TRACE_B,
/// as (kind, layer, outcome) triples.
fn events(
    m: &Model,
    trace: &str,
    id: &str,
) -> Vec<(&'static str, Option<Layer>, Option<OutcomeKind>)> {
    let x = &m.to_executions()[m
        .execution_index(&format!("otel:{trace}:{id}"))
        .unwrap_or_else(|| {
            panic!(
                "no execution {id}: {:?}",
                m.to_executions().iter().map(|x| &x.id).collect::<Vec<_>>()
            )
        })];
    x.events
        .iter()
        .map(|e| {
            let o = match &e.kind {
                EventKind::Outcome { outcome, .. } => Some(*outcome),
                _ => None,
            };
            (e.kind.name(), e.facts().layer, o)
        })
        .collect()
}

fn lines(parts: &[String]) -> String {
    parts.iter().map(|p| format!("{p}\n")).collect()
}

/// A client that gave up after 2 s (a timeout) on a `deploy` call, and the
/// server span of that call ending at `server_end_ms`.
fn client_gave_up_at_2s(server_end_ms: u64) -> String {
    lines(&[
        batch(
            "lab-agent",
            "a1",
            &[timeout(client(
                TRACE_A,
                "00000000000000c1",
                "deploy",
                "3",
                0,
                2000,
            ))],
        ),
        batch(
            "lab-tools",
            "t1",
            &[server(
                TRACE_A,
                "0000000000000051",
                "00000000000000c1",
                "deploy",
                3,
                server_end_ms,
            )],
        ),
    ])
}

#[test]
fn a_client_timeout_and_a_handler_cancelled_with_it_leave_the_outcome_unknown() {
    let text = client_gave_up_at_2s(2007);
    let (j, m) = read(&text);
    assert_eq!(j.bad_line_count, 0, "{:?}", j.bad_lines);
    let ev = events(&m, TRACE_A, "00000000000000c1");
    assert_eq!(
        m.execution_count(),
        1,
        "client and server spans are one execution"
    );
    let outcomes: Vec<_> = ev.iter().filter(|e| e.0 == "outcome").collect();
    assert_eq!(outcomes.len(), 2);
    assert!(
        outcomes.iter().all(|o| o.2 == Some(OutcomeKind::Unknown)),
        "{ev:?}"
    );
    assert!(
        ev.contains(&("delivery_failed", Some(Layer::Client), None)),
        "{ev:?}"
    );
}

#[test]
fn a_handler_that_finishes_well_after_the_client_left_completed() {
    let late = 2000 + u64::try_from(CANCEL_MARGIN.num_milliseconds()).unwrap() + 500;
    let text = client_gave_up_at_2s(late);
    let (_, m) = read(&text);
    let ev = events(&m, TRACE_A, "00000000000000c1");
    assert!(
        ev.contains(&("outcome", Some(Layer::Server), Some(OutcomeKind::Success))),
        "{ev:?}"
    );
    assert!(
        ev.contains(&("delivery_failed", Some(Layer::Client), None)),
        "{ev:?}"
    );
}

#[test]
fn an_unset_client_span_was_answered_only_if_the_server_finished_first() {
    let text = lines(&[
        batch(
            "lab-agent",
            "a1",
            &[
                client(TRACE_A, "00000000000000c1", "deploy", "3", 0, 100),
                client(TRACE_B, "00000000000000c2", "deploy", "4", 200, 250),
            ],
        ),
        batch(
            "lab-tools",
            "t1",
            &[
                server(
                    TRACE_A,
                    "0000000000000051",
                    "00000000000000c1",
                    "deploy",
                    3,
                    95,
                ),
                // The client's span ended first: the connection closed.
                server(
                    TRACE_B,
                    "0000000000000052",
                    "00000000000000c2",
                    "deploy",
                    203,
                    900,
                ),
            ],
        ),
    ]);
    let (_, m) = read(&text);
    let a = events(&m, TRACE_A, "00000000000000c1");
    assert!(
        a.contains(&("delivered", Some(Layer::Client), None)),
        "{a:?}"
    );
    let b = events(&m, TRACE_B, "00000000000000c2");
    assert!(
        b.contains(&("delivery_failed", Some(Layer::Client), None)),
        "{b:?}"
    );
    assert!(
        b.contains(&("outcome", Some(Layer::Server), Some(OutcomeKind::Success))),
        "{b:?}"
    );
}

#[test]
fn a_client_span_no_server_answers_has_no_delivery_when_servers_are_traced() {
    let text = lines(&[
        batch(
            "lab-agent",
            "a1",
            &[
                client(TRACE_A, "00000000000000c1", "charge", "8", 0, 3),
                client(TRACE_B, "00000000000000c2", "charge", "3", 500, 510),
            ],
        ),
        batch(
            "lab-tools",
            "t1",
            &[server(
                TRACE_B,
                "0000000000000052",
                "00000000000000c2",
                "charge",
                503,
                508,
            )],
        ),
    ]);
    let (_, m) = read(&text);
    let a = events(&m, TRACE_A, "00000000000000c1");
    assert_eq!(
        a.iter().map(|e| e.0).collect::<Vec<_>>(),
        ["accepted", "dispatched", "outcome"],
        "dispatched (it may have been sent), outcome unknown, no delivery"
    );
    assert_eq!(a[2].2, Some(OutcomeKind::Unknown));
}

/// The server restarted under a call: its handler span ended UNSET, as a
/// finished one does, and the client received JSON-RPC error -32603
/// 13 ms later. That was read as a success delivered, and the retry that
/// made the target act again as a `distinct_intent`. The error came in
/// place of the result: not delivered; and the server span does not show
/// that the tool finished: outcome unknown.
#[test]
fn an_internal_error_in_place_of_the_answer_is_no_delivery_and_no_success() {
    let mut c = client(TRACE_A, "00000000000000c1", "deploy", "3", 0, 3_013);
    c.status = Some((2, "Server returned an error response"));
    c.attrs.push(("error.type", json!("-32603")));
    let text = lines(&[
        batch("lab-agent", "a1", &[c]),
        batch(
            "lab-tools",
            "t1",
            &[server(
                TRACE_A,
                "0000000000000051",
                "00000000000000c1",
                "deploy",
                4,
                3_000,
            )],
        ),
    ]);
    let (_, m) = read(&text);
    let a = events(&m, TRACE_A, "00000000000000c1");
    assert!(
        a.contains(&("delivery_failed", Some(Layer::Client), None)),
        "{a:?}"
    );
    assert!(!a.iter().any(|e| e.0 == "delivered"), "{a:?}");
    assert!(
        a.contains(&("outcome", Some(Layer::Server), Some(OutcomeKind::Unknown))),
        "{a:?}"
    );
}

#[test]
fn jsonrpc_refusals_were_not_executed_and_connection_errors_not_sent() {
    let mut refused = client(TRACE_A, "00000000000000c1", "deploy", "3", 0, 5);
    refused.status = Some((2, "Invalid params"));
    refused.attrs.push(("error.type", json!("-32602")));
    let mut down = client(TRACE_B, "00000000000000c2", "deploy", "4", 10, 12);
    down.status = Some((2, "ConnectError: All connection attempts failed"));
    let text = lines(&[batch("lab-agent", "a1", &[refused, down])]);
    let (_, m) = read(&text);
    let a = events(&m, TRACE_A, "00000000000000c1");
    assert!(
        a.contains(&(
            "outcome",
            Some(Layer::Client),
            Some(OutcomeKind::NotExecuted)
        )),
        "{a:?}"
    );
    let b = events(&m, TRACE_B, "00000000000000c2");
    assert_eq!(
        b.iter().map(|e| e.0).collect::<Vec<_>>(),
        ["accepted", "dispatch_failed"]
    );
}

#[test]
fn openllmetry_spans_give_arguments_and_the_servers_reply() {
    let mut tool = span(TRACE_A, "00000000000000c1", "deploy.tool", 1, 0, 2000);
    tool.attrs = vec![
        ("traceloop.span.kind", json!("tool")),
        ("traceloop.entity.name", json!("deploy")),
        (
            "traceloop.entity.input",
            json!(r#"{"tool_name": "deploy", "arguments": {"service": "catalog"}}"#),
        ),
        ("error.type", json!("McpError")),
    ];
    tool.status = Some((
        2,
        "Timed out while waiting for response to ClientRequest. Waited 2.0 seconds.",
    ));
    let mut write = span(TRACE_A, "00000000000000a1", "ResponseStreamWriter", 1, 1, 1);
    write.parent = Some("00000000000000c1");
    write.attrs = vec![("mcp.request.id", json!("2"))];
    let mut reply = span(
        TRACE_A,
        "00000000000000b1",
        "ResponseStreamWriter",
        1,
        5000,
        5000,
    );
    reply.parent = Some("00000000000000a1");
    reply.attrs = vec![
        ("mcp.request.id", json!("2")),
        (
            "mcp.response.value",
            json!(r#"{"content": [{"type": "text", "text": "done"}], "isError": false}"#),
        ),
    ];
    let text = lines(&[
        batch("lab-agent", "a1", &[tool, write]),
        batch("lab-tools", "t1", &[reply]),
    ]);
    let (_, m) = read(&text);
    let ev = events(&m, TRACE_A, "00000000000000c1");
    assert!(
        ev.contains(&("delivery_failed", Some(Layer::Client), None)),
        "{ev:?}"
    );
    assert!(
        ev.contains(&("outcome", Some(Layer::Server), Some(OutcomeKind::Success))),
        "{ev:?}"
    );
    let x = &m.to_executions()[0];
    let action = x.action().unwrap();
    assert_eq!(action.arguments().unwrap()["service"], "catalog");
    assert_eq!(action.tool(), Some("deploy"));
}

/// A tool that acted and then answered with an error saying it timed out
/// (OpenLLMetry, content capture on: `error.type` `tool_error`). The
/// client received that answer: it did not stop waiting, and the tool's
/// timeout leaves what the target did unknown. It was read as the
/// client's timeout (delivery failed) and the server's write as a definite
/// failure, so a retry that made the target act twice was `safe_retry`.
#[test]
fn a_tool_error_that_speaks_of_a_timeout_is_an_answer_with_an_unknown_outcome() {
    const TEXT: &str = "Error executing tool charge_card: Timed out waiting for the payment provider (request may have been applied)";
    let mut tool = span(TRACE_A, "00000000000000c1", "charge_card.tool", 1, 0, 6);
    tool.attrs = vec![
        ("traceloop.span.kind", json!("tool")),
        ("traceloop.entity.name", json!("charge_card")),
        (
            "traceloop.entity.input",
            json!(r#"{"tool_name": "charge_card", "arguments": {"amount": 5}}"#),
        ),
        ("error.type", json!("tool_error")),
    ];
    tool.status = Some((2, TEXT));
    let mut write = span(TRACE_A, "00000000000000a1", "ResponseStreamWriter", 1, 1, 1);
    write.parent = Some("00000000000000c1");
    write.attrs = vec![("mcp.request.id", json!("2"))];
    let mut reply = span(TRACE_A, "00000000000000b1", "ResponseStreamWriter", 1, 4, 4);
    reply.parent = Some("00000000000000a1");
    reply.attrs = vec![
        ("mcp.request.id", json!("2")),
        (
            "mcp.response.value",
            json!(format!(
                r#"{{"content": [{{"type": "text", "text": "{TEXT}"}}], "isError": true}}"#
            )),
        ),
    ];
    let text = lines(&[
        batch("lab-agent", "a1", &[tool, write]),
        batch("lab-tools", "t1", &[reply]),
    ]);
    let (_, m) = read(&text);
    let ev = events(&m, TRACE_A, "00000000000000c1");
    assert!(
        ev.contains(&("delivered", Some(Layer::Client), None)),
        "{ev:?}"
    );
    assert!(!ev.iter().any(|e| e.0 == "delivery_failed"), "{ev:?}");
    for layer in [Layer::Client, Layer::Server] {
        assert!(
            ev.contains(&("outcome", Some(layer), Some(OutcomeKind::Unknown))),
            "{ev:?}"
        );
    }
}

#[test]
fn a_gateway_span_joins_the_one_client_span_it_fits() {
    let mut invoke = span(TRACE_B, "00000000000000d1", "tool.invoke", 1, 30, 90);
    invoke.attrs = vec![
        ("tool.name", json!("gw-deploy")),
        ("correlation_id", json!("c0ffee")),
        ("success", json!("True")),
    ];
    invoke.status = Some((1, ""));
    // A second client call of the same tool, after the first ended: the
    // gateway span fits only the first.
    let text = lines(&[
        batch(
            "lab-agent",
            "a1",
            &[
                client(TRACE_A, "00000000000000c1", "gw-deploy", "3", 0, 100),
                client(
                    "0000000000000000000000000000000c",
                    "00000000000000c2",
                    "gw-deploy",
                    "4",
                    101,
                    200,
                ),
            ],
        ),
        batch("mcp-gateway", "g1", &[invoke]),
    ]);
    let (j, m) = read(&text);
    let ev = events(&m, TRACE_A, "00000000000000c1");
    assert!(
        ev.contains(&("accepted", Some(Layer::Gateway), None)),
        "{ev:?}"
    );
    assert!(
        ev.contains(&("outcome", Some(Layer::Gateway), Some(OutcomeKind::Success))),
        "{ev:?}"
    );
    assert_eq!(m.execution_count(), 2);
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("1 joined to their client")),
        "{:?}",
        j.notes
    );
}

#[test]
fn a_gateway_span_two_clients_fit_is_nobodys() {
    let mut invoke = span(TRACE_B, "00000000000000d1", "tool.invoke", 1, 30, 90);
    invoke.attrs = vec![("tool.name", json!("gw-send")), ("success", json!("True"))];
    let text = lines(&[
        batch(
            "lab-agent",
            "a1",
            &[
                client(TRACE_A, "00000000000000c1", "gw-send", "3", 0, 100),
                client(
                    "0000000000000000000000000000000c",
                    "00000000000000c2",
                    "gw-send",
                    "4",
                    0,
                    100,
                ),
            ],
        ),
        batch("mcp-gateway", "g1", &[invoke]),
    ]);
    let (_, m) = read(&text);
    assert_eq!(m.execution_count(), 3, "the gateway's call stays its own");
}

#[test]
fn bad_spans_are_reported_by_line_and_a_cut_last_line_is_a_note() {
    let good = batch(
        "lab-agent",
        "a1",
        &[client(TRACE_A, "00000000000000c1", "deploy", "3", 0, 5)],
    );
    let mut bad = client(TRACE_B, "00000000000000c2", "deploy", "4", 10, 12);
    bad.trace = "nothex";
    let bad = batch(
        "lab-agent",
        "a1",
        &[
            bad,
            client(TRACE_B, "00000000000000c3", "deploy", "5", 20, 25),
        ],
    );
    let text = format!(
        "{good}\n{{\"resourceSpans\": [oops\n{bad}\n{}",
        &good[..good.len() / 2]
    );
    let (j, m) = read(&text);
    assert_eq!(m.execution_count(), 2);
    assert_eq!(j.bad_line_count, 2, "{:?}", j.bad_lines);
    assert_eq!(j.bad_lines[0].line, 2);
    assert_eq!(j.bad_lines[1].line, 3);
    assert!(
        j.bad_lines[1].message.starts_with("span 1 of the batch"),
        "{:?}",
        j.bad_lines[1]
    );
    assert!(
        j.notes.iter().any(|n| n.contains("line 4 is cut short")),
        "{:?}",
        j.notes
    );
}

#[test]
fn a_pretty_printed_body_is_read_whole_with_each_spans_line() {
    let one = batch(
        "lab-agent",
        "a1",
        &[
            client(TRACE_A, "00000000000000c1", "deploy", "3", 0, 5),
            client(TRACE_B, "00000000000000c2", "deploy", "4", 10, 12),
        ],
    );
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<Value>(&one).unwrap()).unwrap();
    let (j, m) = read(&pretty);
    assert_eq!(j.bad_line_count, 0, "{:?}", j.bad_lines);
    assert_eq!(m.execution_count(), 2);
    let x = &m.to_executions()[m
        .execution_index(&format!("otel:{TRACE_B}:00000000000000c2"))
        .unwrap()];
    let at = x.events[0].source;
    let raw = j.read_raw(at).unwrap();
    assert!(
        raw.trim_start().starts_with('{') && raw.contains("00000000000000c2"),
        "{raw}"
    );
    let line = at.position() as usize;
    assert!(
        pretty.lines().nth(line - 1).unwrap().trim() == "{",
        "span starts at line {line}"
    );
}

#[test]
fn sessions_are_service_instances() {
    let text = lines(&[
        batch(
            "lab-agent",
            "a1",
            &[client(TRACE_A, "00000000000000c1", "deploy", "3", 0, 5)],
        ),
        batch(
            "lab-agent",
            "a2",
            &[client(TRACE_B, "00000000000000c2", "deploy", "3", 10, 15)],
        ),
    ]);
    let (_, m) = read(&text);
    let keys: Vec<_> = m.sessions.iter().map(|s| s.process_key()).collect();
    assert_eq!(
        keys,
        [
            Some("instance:a1".to_string()),
            Some("instance:a2".to_string())
        ]
    );
}

/// The actor of the execution of span `id`.
fn actor_of(m: &Model, trace: &str, id: &str) -> String {
    let xs = m.to_executions();
    let x = &xs[m
        .execution_index(&format!("otel:{trace}:{id}"))
        .expect("execution")];
    x.action()
        .and_then(|a| a.actor())
        .unwrap_or_default()
        .to_string()
}

/// An agent killed mid-call never exports its client span: the server's
/// span of that call points at a parent no journal holds. Its retry, from
/// the agent restarted, is traced whole.
fn killed_then_retried(other_caller: bool, first_has_parent: bool, flags: Option<u32>) -> String {
    let mut first = server(
        TRACE_A,
        "0000000000000051",
        "00000000000000c1",
        "deploy",
        4,
        1_000,
    );
    if !first_has_parent {
        first.parent = None;
    }
    first.flags = flags;
    let mut spans = vec![
        first,
        server(
            TRACE_B,
            "0000000000000052",
            "00000000000000c2",
            "deploy",
            6_004,
            6_050,
        ),
    ];
    let mut parts = vec![batch(
        "lab-agent",
        "a2",
        &[client(
            TRACE_B,
            "00000000000000c2",
            "deploy",
            "3",
            6_000,
            6_060,
        )],
    )];
    if other_caller {
        const TRACE_C: &str = "0af7651916cd43dd8448eb211c80319c";
        spans.push(server(
            TRACE_C,
            "0000000000000053",
            "00000000000000c3",
            "status",
            7_004,
            7_010,
        ));
        parts.push(batch(
            "ops-bot",
            "o1",
            &[client(
                TRACE_C,
                "00000000000000c3",
                "status",
                "1",
                7_000,
                7_020,
            )],
        ));
    }
    parts.push(batch("lab-tools", "t1", &spans));
    lines(&parts)
}

#[test]
fn a_call_whose_caller_was_killed_is_the_lone_callers_and_meets_its_retry() {
    let (j, m) = read(&killed_then_retried(false, true, Some(0x301)));
    assert_eq!(
        actor_of(&m, TRACE_A, "0000000000000051"),
        "service:lab-agent"
    );
    assert_eq!(
        actor_of(&m, TRACE_B, "00000000000000c2"),
        "service:lab-agent"
    );
    assert!(
        j.notes
            .iter()
            .any(|n| n.contains("1 server spans' callers")),
        "{:?}",
        j.notes
    );
    let xs = m.to_executions();
    let x = &xs[m
        .execution_index(&format!("otel:{TRACE_A}:0000000000000051"))
        .expect("execution")];
    let said = x
        .events
        .iter()
        .filter_map(|e| e.extra().get("otel.caller").and_then(Value::as_str))
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(said.contains("inferred"), "{said}");
    // Said wherever the event's details show (event list, review queue,
    // postmortem timeline), not only in `investigate --json`.
    let xi = crate::model::ExecIdx::new(
        m.execution_index(&format!("otel:{TRACE_A}:0000000000000051"))
            .expect("execution"),
    );
    let accepted = m.execution(xi).events().next().expect("an event");
    let detail = crate::query::words::event_detail(accepted, &[], &mut crate::query::words::Plain);
    assert!(
        detail.contains("CALLER INFERRED: service:lab-agent (its own span is missing"),
        "{detail}"
    );

    // Two services call the server: the caller cannot be told.
    let (j, m) = read(&killed_then_retried(true, true, None));
    assert_eq!(
        actor_of(&m, TRACE_A, "0000000000000051"),
        "caller-of:service:lab-tools"
    );
    assert!(!j.notes.iter().any(|n| n.contains("server spans' callers")));
    // No parent at all: an uninstrumented caller, not the traced one.
    let (_, m) = read(&killed_then_retried(false, false, None));
    assert_eq!(
        actor_of(&m, TRACE_A, "0000000000000051"),
        "caller-of:service:lab-tools"
    );
    // A parent its flags place in the server's own process (an HTTP
    // server span not loaded): no caller's trace context, nothing told.
    let (_, m) = read(&killed_then_retried(false, true, Some(0x100)));
    assert_eq!(
        actor_of(&m, TRACE_A, "0000000000000051"),
        "caller-of:service:lab-tools"
    );
}
