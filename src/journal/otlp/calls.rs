//! From spans to tool calls (docs/formats.md#otlp-json): which spans are a
//! `tools/call`, which layer each was written by, and what each says of the
//! call's lifecycle.
//!
//! Three instrumentations are read, each as it really writes (the rules
//! below name the attribute or span a rule rests on):
//!
//! * **MCP SDK tracing** (`mcp-python-sdk`, MCP semantic conventions): a
//!   CLIENT span `MCP send tools/call NAME` per request sent and a SERVER
//!   span `tools/call NAME` per request handled, the server's parent being
//!   the client's span (W3C trace context in `params._meta`).
//! * **OpenLLMetry** (`opentelemetry-instrumentation-mcp`): an INTERNAL
//!   `NAME.tool` span on the client (`traceloop.span.kind=tool`, arguments
//!   in `traceloop.entity.input`), its child `ResponseStreamWriter` (the
//!   request written, `mcp.request.id`), and on the server a
//!   `ResponseStreamWriter` child of that one, written when the response
//!   goes out (`mcp.response.value`).
//! * **ContextForge's gateway spans**: `tool.invoke` per call through the
//!   gateway (`tool.name`, `correlation_id`, `success`), with descendants
//!   `mcp.client.call` (the upstream call; the server's span is its child),
//!   `mcp.client.request` and `mcp.client.response`.
//!
//! Each client span is one execution (`otel:<trace>:<span>`), each server
//! span another, tied to its caller by [`Link::CalledFrom`] so that the
//! join of sources makes them one (docs/design.md §5.12) whether they come
//! in one file or two. OpenLLMetry's server span names no tool, so it is
//! read only with its client's spans in the same file; a gateway's span is
//! joined to the client span whose tool it carries within its time, when
//! exactly one fits (ContextForge does not pass the client's trace context
//! on).

use super::span::{Kind, Span, StatusCode};
use crate::journal::exchange::{self, Answer, Call, Delivery, Dispatch, End};
use crate::journal::{BadLine, ReadCtx};
use crate::model::{
    ActionRecord, Arguments, CallRef, Event, EventKind, JsonRpcId, Layer, Link, OutcomeKind,
    ProcessInfo, ReaderFacts, Record, Session, ToolHint,
};
use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};

/// How long after its caller gave up (a client's or gateway's timeout) a
/// server span that ends without error is read as cancelled rather than
/// finished: one second. The MCP SDK cancels the handler on the caller's
/// `notifications/cancelled` and ends its span UNSET, like a success
/// (docs/formats.md#otlp-json); a handler that finishes on its own a second or
/// more after the caller left is rare enough to be told apart.
pub const CANCEL_MARGIN: TimeDelta = TimeDelta::seconds(1);

/// Clock difference tolerated between the services of one trace when
/// comparing their spans' times: 50 ms.
const SKEW: TimeDelta = TimeDelta::milliseconds(50);

/// What the spans of one journal hold, indexed by trace and span id.
pub struct Spans<'a> {
    spans: &'a [Span],
    by_id: HashMap<(&'a str, &'a str), usize>,
    /// Children by parent position.
    children: HashMap<usize, Vec<usize>>,
}

impl<'a> Spans<'a> {
    /// Indexes `spans`.
    pub fn new(spans: &'a [Span]) -> Spans<'a> {
        let mut by_id = HashMap::with_capacity(spans.len());
        for (i, s) in spans.iter().enumerate() {
            by_id.insert((s.trace.as_str(), s.id.as_str()), i);
        }
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, s) in spans.iter().enumerate() {
            if let Some(p) = &s.parent
                && let Some(&pi) = by_id.get(&(s.trace.as_str(), p.as_str()))
            {
                children.entry(pi).or_default().push(i);
            }
        }
        Spans {
            spans,
            by_id,
            children,
        }
    }

    fn position(&self, trace: &str, id: &str) -> Option<usize> {
        self.by_id.get(&(trace, id)).copied()
    }

    fn parent(&self, s: &Span) -> Option<&'a Span> {
        let p = self.position(&s.trace, s.parent.as_deref()?)?;
        Some(&self.spans[p])
    }

    fn children(&self, s: &Span) -> Vec<&'a Span> {
        let spans = self.spans;
        self.position(&s.trace, &s.id)
            .and_then(|i| self.children.get(&i))
            .map(|c| c.iter().map(|&i| &spans[i]).collect())
            .unwrap_or_default()
    }

    /// The first descendant of `s`, at most `depth` levels down, named `name`.
    fn descendant(&self, s: &Span, name: &str, depth: usize) -> Option<&'a Span> {
        let mut level: Vec<&Span> = vec![s];
        for _ in 0..depth {
            let next: Vec<&Span> = level.iter().flat_map(|p| self.children(p)).collect();
            if let Some(d) = next.iter().find(|c| c.name == name) {
                return Some(d);
            }
            level = next;
        }
        None
    }
}

/// The role a span plays in a tool call.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Role {
    /// The MCP SDK's CLIENT span of a `tools/call` (or any CLIENT span
    /// following the MCP semantic conventions).
    SdkClient(String),
    /// The MCP SDK's SERVER span of a `tools/call`.
    SdkServer(String),
    /// OpenLLMetry's `NAME.tool` span.
    LlmTool(String),
    /// ContextForge's `tool.invoke` span.
    GatewayInvoke(String),
}

/// The tool a `tools/call` span names: `gen_ai.tool.name`, else the span
/// name's target (`{mcp.method.name} {target}`, semantic conventions).
fn sdk_tool(s: &Span) -> Option<Option<String>> {
    let by_name = ["MCP send tools/call", "tools/call"]
        .iter()
        .find_map(|p| s.name.strip_prefix(p))
        .filter(|rest| rest.is_empty() || rest.starts_with(' '));
    let method = s.str_attr("mcp.method.name");
    if method != Some("tools/call") && (method.is_some() || by_name.is_none()) {
        return None;
    }
    let tool = s
        .str_attr("gen_ai.tool.name")
        .map(str::to_string)
        .or_else(|| by_name.map(|r| r.trim().to_string()))
        .filter(|t| !t.is_empty());
    Some(tool)
}

fn role(s: &Span) -> Result<Option<Role>, BadLine> {
    if s.str_attr("traceloop.span.kind") == Some("tool") {
        let tool = llm_input(s)
            .and_then(|i| {
                i.get("tool_name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .or_else(|| s.str_attr("traceloop.entity.name").map(str::to_string))
            .or_else(|| s.name.strip_suffix(".tool").map(str::to_string))
            .filter(|t| !t.is_empty());
        return match tool {
            Some(t) => Ok(Some(Role::LlmTool(t))),
            None => Err(BadLine::new("an OpenLLMetry tool span that names no tool")),
        };
    }
    if s.name == "tool.invoke"
        && let Some(t) = s.str_attr("tool.name").filter(|t| !t.is_empty())
    {
        return Ok(Some(Role::GatewayInvoke(t.to_string())));
    }
    let Some(tool) = sdk_tool(s) else {
        return Ok(None);
    };
    let Some(tool) = tool else {
        return Err(BadLine::new(
            "a tools/call span that names no tool (no `gen_ai.tool.name`, no target in its name)",
        ));
    };
    Ok(match s.kind {
        Kind::Client => Some(Role::SdkClient(tool)),
        Kind::Server => Some(Role::SdkServer(tool)),
        _ => None,
    })
}

/// OpenLLMetry's `traceloop.entity.input` (`{"tool_name":…,"arguments":…}`).
fn llm_input(s: &Span) -> Option<Map<String, Value>> {
    match serde_json::from_str(s.str_attr("traceloop.entity.input")?) {
        Ok(Value::Object(m)) => Some(m),
        _ => None,
    }
}

fn execution_id(s: &Span) -> String {
    format!("otel:{}:{}", s.trace, s.id)
}

fn span_link(s: &Span) -> Link {
    Link::Span {
        trace: s.trace.clone(),
        span: s.id.clone(),
    }
}

fn jsonrpc_id(v: Option<String>) -> Option<JsonRpcId> {
    let v = v?;
    Some(match v.parse::<i64>() {
        Ok(n) => JsonRpcId::Num(n),
        Err(_) => JsonRpcId::Str(v),
    })
}

fn ms(d: TimeDelta) -> String {
    format!("{} ms", d.num_milliseconds())
}

/// Whether a failed span failed because its side stopped waiting.
fn timed_out(s: &Span) -> bool {
    if !s.failed() {
        return false;
    }
    let t = s.error_text().unwrap_or_default().to_ascii_lowercase();
    t.contains("timeouterror")
        || t.contains("timed out")
        || t.contains("timeout")
        || s.exception()
            .and_then(|(t, _)| t)
            .is_some_and(|t| t.contains("Timeout"))
}

/// Whether a failed span says the connection could not be made (nothing
/// was sent).
fn connect_failed(s: &Span) -> bool {
    if !s.failed() {
        return false;
    }
    let t = s.error_text().unwrap_or_default();
    [
        "ConnectError",
        "ConnectionRefused",
        "Connection refused",
        "All connection attempts failed",
        "ConnectTimeout",
    ]
    .iter()
    .any(|w| t.contains(w))
}

/// JSON-RPC error codes that say the server refused the request before
/// any tool ran (JSON-RPC 2.0 §5.1: parse error, invalid request, method
/// not found, invalid params).
const REFUSAL_CODES: [i64; 4] = [-32700, -32600, -32601, -32602];

/// The span's JSON-RPC error code (`error.type` or
/// `rpc.response.status_code` holding a number), when it has one.
fn jsonrpc_error(s: &Span) -> Option<i64> {
    ["rpc.response.status_code", "error.type"]
        .iter()
        .find_map(|k| s.text_attr(k)?.parse::<i64>().ok())
}

/// Display fields shown on a span's events.
fn span_extra(s: &Span) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("otel.span".into(), s.name.clone().into());
    if let Some(svc) = &s.resource.service {
        m.insert("otel.service".into(), svc.clone().into());
    }
    if let Some(scope) = &s.scope {
        m.insert("otel.scope".into(), scope.clone().into());
    }
    m.insert("otel.trace_id".into(), s.trace.clone().into());
    m.insert("otel.span_id".into(), s.id.clone().into());
    let status = match (s.status, &s.status_message) {
        (StatusCode::Unset, _) => "UNSET".to_string(),
        (StatusCode::Ok, _) => "OK".to_string(),
        (StatusCode::Error, Some(m)) => format!("ERROR: {m}"),
        (StatusCode::Error, None) => "ERROR".to_string(),
    };
    m.insert("otel.status".into(), status.into());
    if let Some(t) = s.str_attr("error.type") {
        m.insert("error.type".into(), t.into());
    }
    m
}

/// The session of a service instance: `otel:<service>/<instance>`; `None`
/// when the resource names no instance (calls of one service could then
/// come from any of its processes).
fn session_id(s: &Span) -> Option<String> {
    let svc = s.resource.service.as_deref().unwrap_or("unknown_service");
    let inst = s.resource.instance.as_deref()?;
    Some(format!("otel:{svc}/{inst}"))
}

fn service(s: &Span) -> String {
    format!(
        "service:{}",
        s.resource.service.as_deref().unwrap_or("unknown_service")
    )
}

/// The caller as a service, and its intent scope: `service:<service.name>`
/// (an OpenTelemetry service name, not an authenticated identity).
fn service_actor(s: &Span) -> (String, String) {
    (service(s), service(s))
}

/// A caller the spans do not name, of service `s`: `caller-of:service:<name>`,
/// scoped to that service.
fn unknown_caller(s: &Span) -> (String, String) {
    (format!("caller-of:{}", service(s)), service(s))
}

/// The action record of a call: `actor`, `tool`, `channel` (`mcp`),
/// `target`, `method`, `arguments`, and the intent scope, which is the
/// calling service (`service:<name>`, or the recording service's for a
/// caller the spans do not name).
fn action(
    (actor, scope): (String, String),
    tool: &str,
    arguments: Value,
    target: Option<String>,
) -> ActionRecord {
    let mut m = Map::new();
    m.insert("actor".into(), actor.into());
    m.insert("tool".into(), tool.into());
    m.insert("channel".into(), "mcp".into());
    m.insert("target".into(), target.map_or(Value::Null, Value::from));
    m.insert("method".into(), "tools/call".into());
    m.insert("arguments".into(), arguments);
    m.insert("intent_scope".into(), scope.into());
    ActionRecord(m)
}

/// `server.address[:server.port]` of a client span, when recorded.
fn target(s: &Span) -> Option<String> {
    if let Some(u) = s.str_attr("url.full") {
        return Some(u.to_string());
    }
    let host = s.str_attr("server.address")?;
    Some(match s.text_attr("server.port") {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    })
}

/// What one journal's spans held, for its note.
#[derive(Debug, Default)]
pub struct Counts {
    /// Client calls read.
    pub client: usize,
    /// Server spans read.
    pub server: usize,
    /// Gateway calls read.
    pub gateway: usize,
    /// Gateway calls joined to a client span of the same file.
    pub gateway_joined: usize,
    /// Server writes of OpenLLMetry whose client span is not in the file.
    pub orphan_writes: usize,
    /// Spans that are not about tool calls.
    pub other: usize,
}

/// Emits the calls `spans` hold into `ctx`; spans that claim to be a tool
/// call but cannot be read as one are reported as bad lines.
pub fn emit(ctx: &mut ReadCtx<'_>, spans: &[Span]) -> Counts {
    let idx = Spans::new(spans);
    let mut counts = Counts::default();
    let mut roles: Vec<Option<Role>> = Vec::with_capacity(spans.len());
    for s in spans {
        match role(s) {
            Ok(r) => roles.push(r),
            Err(e) => {
                ctx.bad_line(s.source.position(), e.context(format!("span {}", s.id)));
                roles.push(None);
            }
        }
    }
    let has_sdk_servers = roles.iter().any(|r| matches!(r, Some(Role::SdkServer(_))));
    let gateway_of = match_gateways(spans, &roles);
    counts.gateway_joined = gateway_of.len();
    emit_sessions(ctx, spans, &roles);
    let mut client_of_invoke: HashMap<usize, String> = HashMap::new();
    for (&client, &invoke) in &gateway_of {
        client_of_invoke.insert(invoke, execution_id(&spans[client]));
    }
    for (i, (s, r)) in spans.iter().zip(&roles).enumerate() {
        match r {
            Some(Role::SdkClient(tool)) => {
                counts.client += 1;
                let via = gateway_of.get(&i).map(|&g| &spans[g]);
                sdk_client(ctx, &idx, (s, via), tool, has_sdk_servers);
            }
            Some(Role::SdkServer(tool)) => {
                counts.server += 1;
                sdk_server(ctx, &idx, s, tool);
            }
            Some(Role::LlmTool(tool)) => {
                counts.client += 1;
                if llm_tool(ctx, &idx, s, tool) {
                    counts.server += 1;
                }
            }
            Some(Role::GatewayInvoke(tool)) => {
                counts.gateway += 1;
                gateway(ctx, &idx, s, tool, client_of_invoke.get(&i).cloned());
            }
            None if is_orphan_reply(&idx, s) => counts.orphan_writes += 1,
            None if s.name == "tools/list.mcp" => {
                // OpenLLMetry records the tools/list result: what the
                // server declares about its tools (docs/design.md §4.5).
                counts.other += 1;
                if let Some(Value::Object(out)) = s
                    .str_attr("traceloop.entity.output")
                    .and_then(|o| serde_json::from_str(o).ok())
                    && let Some(Value::Array(tools)) = out.get("tools")
                {
                    for h in ToolHint::from_tools_list(tools, None, s.end, s.source) {
                        ctx.emit(Record::ToolHint(h));
                    }
                }
            }
            None => counts.other += 1,
        }
    }
    counts
}

/// Whether `s` is OpenLLMetry's server-side write of a tool result whose
/// client spans are not in the file (the write names no tool).
fn is_orphan_reply(idx: &Spans<'_>, s: &Span) -> bool {
    s.name == "ResponseStreamWriter"
        && s.str_attr("mcp.response.value")
            .is_some_and(|v| v.contains("\"content\""))
        && idx
            .parent(s)
            .and_then(|w| idx.parent(w))
            .is_none_or(|t| t.str_attr("traceloop.span.kind") != Some("tool"))
}

/// One session per service instance that sent calls.
fn emit_sessions(ctx: &mut ReadCtx<'_>, spans: &[Span], roles: &[Option<Role>]) {
    let mut seen: BTreeMap<String, (&Span, DateTime<Utc>, DateTime<Utc>)> = BTreeMap::new();
    for (s, r) in spans.iter().zip(roles) {
        if !matches!(r, Some(Role::SdkClient(_) | Role::LlmTool(_))) {
            continue;
        }
        let Some(id) = session_id(s) else { continue };
        let e = seen.entry(id).or_insert((s, s.start, s.end));
        e.1 = e.1.min(s.start);
        e.2 = e.2.max(s.end);
    }
    for (id, (s, from, to)) in seen {
        let client = s
            .resource
            .service
            .as_ref()
            .map(|svc| match &s.resource.version {
                Some(v) => format!("{svc}/{v}"),
                None => svc.clone(),
            });
        ctx.emit(Record::Session(Session {
            session_id: id,
            actor: Some(service(s)),
            process: Some(ProcessInfo {
                name: s.resource.service.clone(),
                instance: s.resource.instance.clone(),
                ..ProcessInfo::default()
            }),
            client,
            started_at: Some(from),
            ended_at: Some(to),
            source: s.source,
            ..Session::default()
        }));
    }
}

/// Gateway `tool.invoke` spans joined to the client span of the same file
/// that sent them: the same tool name, another service, the invocation
/// starting within the client span (less [`SKEW`] at its start: a
/// gateway cannot start a call before its client has ended it), and
/// exactly one such pairing each way. Returns client span index → invoke span index.
fn match_gateways(spans: &[Span], roles: &[Option<Role>]) -> HashMap<usize, usize> {
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
        let (c, g) = (&spans[c], &spans[g]);
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
fn sdk_client(
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
        let outcome = if REFUSAL_CODES.contains(&code) {
            OutcomeKind::NotExecuted
        } else {
            OutcomeKind::Unknown
        };
        (
            Dispatch::WithRequest {
                inferred: Some(sent.into()),
            },
            End::response(outcome, error, None),
            Delivery::Delivered,
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
                "the client span records that an answer came back, not what it said (no server spans in this journal)".to_string(),
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
            session_id: session_id(s),
            jsonrpc_id: jsonrpc_id(s.text_attr("jsonrpc.request.id")),
            mcp_session_id: s.str_attr("mcp.session.id").map(str::to_string),
            transport: s.str_attr("network.transport").map(str::to_string),
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

/// The MCP SDK's server span of one `tools/call`.
fn sdk_server(ctx: &mut ReadCtx<'_>, idx: &Spans<'_>, s: &Span, tool: &str) {
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
            _ => End::response(OutcomeKind::Success, None, None),
        }
    };
    let caller = idx.parent(s);
    let actor = match caller {
        Some(c) => service_actor(c),
        None => unknown_caller(s),
    };
    let mut call = Call::new(
        id,
        s.start,
        CallRef {
            call_id: None,
            session_id: None,
            jsonrpc_id: jsonrpc_id(s.text_attr("jsonrpc.request.id")),
            mcp_session_id: s.str_attr("mcp.session.id").map(str::to_string),
            transport: None,
        },
        action(actor, tool, json!({}), None),
        s.source,
        Dispatch::WithRequest {
            inferred: Some("the server span starts when the server takes the request".into()),
        },
    );
    call.extra = span_extra(s);
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
}

/// Whether a tool result (`CallToolResult` JSON) says the tool failed.
fn is_error_result(v: &str) -> Option<bool> {
    match serde_json::from_str::<Value>(v) {
        Ok(Value::Object(m)) => Some(m.get("isError").and_then(Value::as_bool) == Some(true)),
        _ => None,
    }
}

/// OpenLLMetry's client `NAME.tool` span, with the server's response write
/// when the file holds it. Returns whether it did.
fn llm_tool(ctx: &mut ReadCtx<'_>, idx: &Spans<'_>, s: &Span, tool: &str) -> bool {
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
    let (dispatch, end, delivery) = if timed_out(s) {
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
    } else if s.str_attr("error.type") == Some("tool_error") {
        (
            sent,
            End::response(OutcomeKind::Failure, s.error_text(), None),
            Delivery::Delivered,
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
            session_id: session_id(s),
            jsonrpc_id: jsonrpc_id(write.and_then(|w| w.text_attr("mcp.request.id"))),
            mcp_session_id: s.str_attr("mcp.session.id").map(str::to_string),
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
        Some(true) => (OutcomeKind::Failure, r.error_text()),
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
    ctx.event(
        &id,
        Event::new(
            r.start,
            EventKind::response_outcome(outcome, error, None),
            r.source,
        )
        .with_extra(span_extra(r))
        .with_facts(ReaderFacts {
            layer: Some(Layer::Server),
            links: vec![span_link(r)],
            request: Some(s.source),
            ..ReaderFacts::default()
        }),
    );
    true
}

/// ContextForge's `tool.invoke` span: the gateway's side of one call,
/// emitted into the client's execution when it was joined to one.
fn gateway(ctx: &mut ReadCtx<'_>, idx: &Spans<'_>, s: &Span, tool: &str, client: Option<String>) {
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
                .map(str::to_string),
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
