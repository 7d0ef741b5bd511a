//! From spans to tool calls (docs/formats.md#otlp-json): which spans are a
//! `tools/call`, which layer each was written by, and what each says of the
//! call's lifecycle.
//!
//! Three instrumentations are read, each as it really writes (the rules
//! below name the attribute or span a rule rests on), each in a module of
//! its own ([`sdk`], [`openllmetry`], [`gateway`]); this one finds the
//! roles of the spans and emits them:
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
//! read only with its client's span; a gateway's span is joined to the
//! client span whose tool it carries within its time, when exactly one fits
//! (ContextForge does not pass the client's trace context on). Partners are
//! looked up among the spans of every OpenTelemetry journal loaded together
//! ([`Spans`]; docs/formats.md#otlp-json, "Several files").

mod gateway;
mod openllmetry;
mod sdk;

use super::span::{Kind, Span, StatusCode};
use crate::journal::{BadLine, ReadCtx};
use crate::model::{
    ActionRecord, JournalId, JsonRpcId, Link, ProcessInfo, Record, Session, ToolHint,
};
use chrono::{DateTime, TimeDelta, Utc};
use gateway::{gateway, match_gateways};
use openllmetry::llm_tool;
use sdk::{sdk_client, sdk_server};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

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

/// Spans indexed by trace and span id, each span once: a journal's own,
/// or those of every OpenTelemetry journal loaded together
/// ([`super::TraceSet`]), so that a span's parent, children and gateway
/// partner are found in whichever file holds them. Built once per load:
/// each journal's reader looks its own spans up in it.
pub struct Spans<'a> {
    /// Each span once (the first of the same trace and span id).
    spans: Vec<&'a Span>,
    by_id: HashMap<(&'a str, &'a str), usize>,
    /// Children by parent position.
    children: HashMap<usize, Vec<usize>>,
    /// Gateway `tool.invoke` positions by the client span position that
    /// sent them ([`match_gateways`]), and the reverse.
    gateway_of: HashMap<usize, usize>,
    client_of_invoke: HashMap<usize, usize>,
    /// Whether any span is an SDK server span of a `tools/call`.
    has_sdk_servers: bool,
    /// The services seen calling each service's MCP server: by the
    /// server's `service.name`, the `service.name`s of the exported
    /// CLIENT spans that are parents of its MCP SERVER spans (any method).
    callers: HashMap<&'a str, BTreeSet<&'a str>>,
    /// Spans by journal, for notes.
    per_journal: Vec<(JournalId, usize)>,
}

impl<'a> Spans<'a> {
    /// Indexes `spans` (of journals `per_journal`: id, spans in it). A
    /// span given twice (overlapping exports, the same spans as a line
    /// export and as a body) is indexed once, so that it counts once when
    /// gateway spans are joined to their clients.
    pub fn new(
        spans: impl Iterator<Item = &'a Span>,
        per_journal: Vec<(JournalId, usize)>,
    ) -> Spans<'a> {
        let mut by_id = HashMap::new();
        let mut unique: Vec<&'a Span> = Vec::new();
        for s in spans {
            if let std::collections::hash_map::Entry::Vacant(e) =
                by_id.entry((s.trace.as_str(), s.id.as_str()))
            {
                e.insert(unique.len());
                unique.push(s);
            }
        }
        let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
        for (i, s) in unique.iter().enumerate() {
            if let Some(p) = &s.parent
                && let Some(&pi) = by_id.get(&(s.trace.as_str(), p.as_str()))
            {
                children.entry(pi).or_default().push(i);
            }
        }
        let mut callers: HashMap<&'a str, BTreeSet<&'a str>> = HashMap::new();
        for s in &unique {
            if s.kind != Kind::Server || s.str_attr("mcp.method.name").is_none() {
                continue;
            }
            let parent = s
                .parent
                .as_deref()
                .and_then(|p| by_id.get(&(s.trace.as_str(), p)))
                .map(|&i| unique[i]);
            if let (Some(server), Some(p)) = (s.resource.service.as_deref(), parent)
                && p.kind == Kind::Client
                && let Some(caller) = p.resource.service.as_deref()
            {
                callers.entry(server).or_default().insert(caller);
            }
        }
        let roles: Vec<Option<Role>> = unique.iter().map(|s| role(s).ok().flatten()).collect();
        let has_sdk_servers = roles.iter().any(|r| matches!(r, Some(Role::SdkServer(_))));
        let gateway_of = match_gateways(&unique, &roles);
        let client_of_invoke = gateway_of.iter().map(|(&c, &g)| (g, c)).collect();
        Spans {
            spans: unique,
            by_id,
            children,
            gateway_of,
            client_of_invoke,
            has_sdk_servers,
            callers,
            per_journal,
        }
    }

    /// The service that called server span `s` when its own span is not
    /// among those loaded but can be told all the same: `s` carries a
    /// parent span id that no loaded span has, which its flags do not say
    /// is in the server's own process (its caller sent W3C trace context),
    /// and exactly one service is seen calling `s`'s service. A caller killed before its exporter
    /// ran leaves exactly this (docs/formats.md#otlp-json, "A caller
    /// whose span is missing"). `None` otherwise: a server span without a
    /// parent (an uninstrumented caller), or several services calling.
    fn lone_caller(&self, s: &Span) -> Option<&'a str> {
        if s.parent.is_none() || s.parent_is_local || self.parent(s).is_some() {
            return None;
        }
        let set = self.callers.get(s.resource.service.as_deref()?)?;
        match (set.len(), set.first()) {
            (1, Some(&c)) => Some(c),
            _ => None,
        }
    }

    /// Each gateway `tool.invoke` span with the client span it was joined
    /// to ([`match_gateways`]): (client, invoke).
    pub fn gateway_pairs(&self) -> impl Iterator<Item = (&'a Span, &'a Span)> + '_ {
        self.gateway_of
            .iter()
            .map(|(&c, &g)| (self.spans[c], self.spans[g]))
    }

    /// How many spans the journals other than `journal` hold, and how
    /// many such journals there are.
    pub fn others(&self, journal: JournalId) -> (usize, usize) {
        self.per_journal
            .iter()
            .filter(|(j, _)| *j != journal)
            .fold((0, 0), |(spans, n), (_, k)| (spans + k, n + 1))
    }

    fn position(&self, trace: &str, id: &str) -> Option<usize> {
        self.by_id.get(&(trace, id)).copied()
    }

    fn parent(&self, s: &Span) -> Option<&'a Span> {
        let p = self.position(&s.trace, s.parent.as_deref()?)?;
        Some(self.spans[p])
    }

    fn children(&self, s: &Span) -> Vec<&'a Span> {
        self.position(&s.trace, &s.id)
            .and_then(|i| self.children.get(&i))
            .map(|c| c.iter().map(|&i| self.spans[i]).collect())
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
    ActionRecord::from_map(m)
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
    /// Gateway calls of this journal joined to their client span.
    pub gateway_joined: usize,
    /// OpenLLMetry server writes whose client spans are in another journal
    /// loaded with this one, whose reader reads them.
    pub answered_elsewhere: usize,
    /// Server writes of OpenLLMetry whose client span is in no journal
    /// loaded.
    pub orphan_writes: usize,
    /// Spans that are not about tool calls.
    pub other: usize,
    /// Server spans of calls whose caller's span is missing, attributed
    /// to the only service seen calling their server
    /// ([`Spans::lone_caller`]).
    pub callers_inferred: usize,
    /// Spans an earlier journal loaded with it holds too (overlapping
    /// exports, the same spans as lines and as a body), read there once.
    pub read_elsewhere: usize,
}

/// Emits the calls the journal's spans `spans` hold into `ctx`, looking
/// their partners up in `loaded`, the index of every OpenTelemetry
/// journal loaded with it (or, without one, among its own spans); spans of
/// this journal that claim to be a tool call but cannot be read as one are
/// reported as bad lines. Other journals' spans are only looked up: their
/// own readers emit their calls and report their bad spans.
pub fn emit(ctx: &mut ReadCtx<'_>, spans: &[Span], loaded: Option<&Spans<'_>>) -> Counts {
    let local;
    let idx = match loaded {
        Some(idx) => idx,
        None => {
            local = Spans::new(spans.iter(), vec![(ctx.journal, spans.len())]);
            &local
        }
    };
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
    emit_sessions(ctx, spans, &roles);
    let own: HashSet<(&str, &str)> = spans
        .iter()
        .map(|s| (s.trace.as_str(), s.id.as_str()))
        .collect();
    for (s, r) in spans.iter().zip(&roles) {
        let at = idx.position(&s.trace, &s.id);
        // The same span twice is read once, where the index has it (the
        // first journal that holds it): read in each file, its events
        // counted twice in an execution's timeline.
        if let Some(first) = at.map(|p| idx.spans[p].source)
            && (first.journal() != s.source.journal() || first.position() != s.source.position())
        {
            counts.read_elsewhere += 1;
            continue;
        }
        match r {
            Some(Role::SdkClient(tool)) => {
                counts.client += 1;
                let via = at
                    .and_then(|p| idx.gateway_of.get(&p))
                    .map(|&g| idx.spans[g]);
                sdk_client(ctx, idx, (s, via), tool, idx.has_sdk_servers);
            }
            Some(Role::SdkServer(tool)) => {
                counts.server += 1;
                counts.callers_inferred += usize::from(sdk_server(ctx, idx, s, tool));
            }
            Some(Role::LlmTool(tool)) => {
                counts.client += 1;
                if llm_tool(ctx, idx, s, tool) {
                    counts.server += 1;
                }
            }
            Some(Role::GatewayInvoke(tool)) => {
                counts.gateway += 1;
                let client = at
                    .and_then(|p| idx.client_of_invoke.get(&p))
                    .map(|&c| execution_id(idx.spans[c]));
                counts.gateway_joined += usize::from(client.is_some());
                gateway(ctx, idx, s, tool, client);
            }
            None if is_llm_reply(s) => match idx.parent(s).and_then(|w| idx.parent(w)) {
                Some(t) if t.str_attr("traceloop.span.kind") == Some("tool") => {
                    // Read with its client's span: here when that span is
                    // this journal's, else by its own journal's reader.
                    if own.contains(&(t.trace.as_str(), t.id.as_str())) {
                        counts.other += 1;
                    } else {
                        counts.answered_elsewhere += 1;
                    }
                }
                _ => counts.orphan_writes += 1,
            },
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

/// Whether `s` is OpenLLMetry's server-side write of a tool result (it
/// names no tool: the call is its client's `NAME.tool` span, two levels
/// up).
fn is_llm_reply(s: &Span) -> bool {
    s.name == "ResponseStreamWriter"
        && s.str_attr("mcp.response.value")
            .is_some_and(|v| v.contains("\"content\""))
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
        ctx.emit(Record::Session(Box::new(Session {
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
        })));
    }
}
