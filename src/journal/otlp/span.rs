//! OTLP JSON spans, as the OpenTelemetry protocol's JSON encoding writes
//! them (docs/formats.md#otlp-json): a `TracesData` object
//! `{"resourceSpans":[{"resource":{"attributes":[…]},"scopeSpans":[{"scope":{…},"spans":[…]}]}]}`,
//! lowerCamelCase keys (snake_case accepted too), trace and span ids as
//! lowercase hex (base64 accepted: what protobuf's own JSON mapping
//! writes), 64-bit times as decimal strings of nanoseconds since the Unix
//! epoch (numbers accepted), `kind` and `status.code` as integers (enum
//! names accepted), attribute values as `AnyValue` objects
//! (`{"stringValue":…}`, `{"intValue":"…"}`, …).
//!
//! Each span keeps the byte range of its own JSON object, so evidence shows
//! the span, not the whole batch it came in.

use crate::journal::BadLine;
use crate::model::SourceRef;
use base64::Engine;
use chrono::{DateTime, Utc};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::Arc;

/// OTLP span kinds (`SpanKind` in `trace.proto`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// 0 or absent.
    Unspecified,
    /// 1.
    Internal,
    /// 2: the span of a request handled.
    Server,
    /// 3: the span of a request sent.
    Client,
    /// 4.
    Producer,
    /// 5.
    Consumer,
}

/// OTLP status codes (`Status.StatusCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusCode {
    /// 0 or absent: the instrumentation did not say.
    Unset,
    /// 1.
    Ok,
    /// 2.
    Error,
}

/// The resource a span came from: the service that wrote it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resource {
    /// `service.name`.
    pub service: Option<String>,
    /// `service.instance.id`: one process instance of the service.
    pub instance: Option<String>,
    /// `service.version`.
    pub version: Option<String>,
}

/// A span event (`exception` events carry `exception.type` and
/// `exception.message`).
#[derive(Debug, Clone, PartialEq)]
pub struct SpanEvent {
    /// Event name.
    pub name: String,
    /// When it happened.
    pub at: Option<DateTime<Utc>>,
    /// Its attributes, as JSON values.
    pub attributes: Map<String, Value>,
}

/// One span, with what retrace reads of it.
#[derive(Debug, Clone)]
pub struct Span {
    /// Trace id, 32 lowercase hex digits.
    pub trace: String,
    /// Span id, 16 lowercase hex digits.
    pub id: String,
    /// Parent span id, when the span has one.
    pub parent: Option<String>,
    /// Whether the span's `flags` say its parent is in its own process
    /// (bit 0x100 "has is-remote" set, bit 0x200 "is remote" clear; OTLP
    /// trace.proto `SpanFlags`). False when the flags do not say.
    pub parent_is_local: bool,
    /// Span name.
    pub name: String,
    /// Span kind.
    pub kind: Kind,
    /// Start time.
    pub start: DateTime<Utc>,
    /// End time (never before the start).
    pub end: DateTime<Utc>,
    /// Status code.
    pub status: StatusCode,
    /// Status message, when not empty.
    pub status_message: Option<String>,
    /// Attributes, as JSON values (`intValue` as a number).
    pub attributes: Map<String, Value>,
    /// Span events.
    pub events: Vec<SpanEvent>,
    /// The service that wrote it.
    pub resource: Arc<Resource>,
    /// Instrumentation scope name (`mcp-python-sdk`, …).
    pub scope: Option<String>,
    /// Where the span's JSON object is: its line, and its own bytes.
    pub source: SourceRef,
}

impl Span {
    /// A string attribute.
    pub fn str_attr(&self, key: &str) -> Option<&str> {
        self.attributes.get(key).and_then(Value::as_str)
    }

    /// An attribute as text, whatever its type (`jsonrpc.request.id` may be
    /// a string or an integer).
    pub fn text_attr(&self, key: &str) -> Option<String> {
        match self.attributes.get(key)? {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            v => Some(v.to_string()),
        }
    }

    /// A boolean attribute, also when written as the text `True`/`true`
    /// (instrumentations that stringify every attribute).
    pub fn bool_attr(&self, key: &str) -> Option<bool> {
        match self.attributes.get(key)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) if s.eq_ignore_ascii_case("true") => Some(true),
            Value::String(s) if s.eq_ignore_ascii_case("false") => Some(false),
            _ => None,
        }
    }

    /// The first `exception` event's type and message.
    pub fn exception(&self) -> Option<(Option<&str>, Option<&str>)> {
        self.events.iter().find(|e| e.name == "exception").map(|e| {
            let s = |k| e.attributes.get(k).and_then(Value::as_str);
            (s("exception.type"), s("exception.message"))
        })
    }

    /// Why the span failed, in the span's words: `error.type`, the first
    /// exception, the status message.
    pub fn error_text(&self) -> Option<String> {
        let mut parts: Vec<String> = Vec::new();
        if let Some(t) = self.str_attr("error.type") {
            parts.push(t.to_string());
        }
        if let Some(m) = self
            .str_attr("error.message")
            .filter(|m| !m.trim().is_empty())
        {
            parts.push(m.trim().to_string());
        }
        if parts.is_empty()
            && let Some((t, m)) = self.exception()
        {
            parts.extend(t.map(str::to_string));
            parts.extend(
                m.filter(|m| !m.trim().is_empty())
                    .map(|m| m.trim().to_string()),
            );
        }
        if let Some(m) = &self.status_message
            && !parts.iter().any(|p| m.contains(p.as_str()))
        {
            parts.push(m.clone());
        }
        (!parts.is_empty()).then(|| parts.join(": "))
    }

    /// Whether the span says it failed: status ERROR or an `error.type`.
    pub fn failed(&self) -> bool {
        self.status == StatusCode::Error
            || self.attributes.contains_key("error.type")
            || self.bool_attr("error") == Some(true)
    }
}

/// One `TracesData` object, its spans borrowed as raw JSON so that each
/// keeps its byte range.
#[derive(Deserialize)]
struct TracesData<'a> {
    #[serde(rename = "resourceSpans", alias = "resource_spans", borrow, default)]
    resource_spans: Vec<ResourceSpans<'a>>,
}

#[derive(Deserialize)]
struct ResourceSpans<'a> {
    #[serde(default)]
    resource: Option<RawResource>,
    #[serde(rename = "scopeSpans", alias = "scope_spans", borrow, default)]
    scope_spans: Vec<ScopeSpans<'a>>,
}

#[derive(Deserialize)]
struct RawResource {
    #[serde(default)]
    attributes: Vec<KeyValue>,
}

#[derive(Deserialize)]
struct ScopeSpans<'a> {
    #[serde(default)]
    scope: Option<Scope>,
    #[serde(borrow, default)]
    spans: Vec<&'a RawValue>,
}

#[derive(Deserialize)]
struct Scope {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Deserialize)]
struct KeyValue {
    key: String,
    #[serde(default)]
    value: Value,
}

#[derive(Deserialize)]
struct RawSpan {
    #[serde(rename = "traceId", alias = "trace_id", default)]
    trace_id: String,
    #[serde(rename = "spanId", alias = "span_id", default)]
    span_id: String,
    #[serde(rename = "parentSpanId", alias = "parent_span_id", default)]
    parent_span_id: String,
    #[serde(default)]
    flags: Value,
    #[serde(default)]
    name: String,
    #[serde(default)]
    kind: Value,
    #[serde(rename = "startTimeUnixNano", alias = "start_time_unix_nano", default)]
    start: Value,
    #[serde(rename = "endTimeUnixNano", alias = "end_time_unix_nano", default)]
    end: Value,
    #[serde(default)]
    attributes: Vec<KeyValue>,
    #[serde(default)]
    events: Vec<RawEvent>,
    #[serde(default)]
    status: Option<RawStatus>,
}

#[derive(Deserialize)]
struct RawEvent {
    #[serde(rename = "timeUnixNano", alias = "time_unix_nano", default)]
    time: Value,
    #[serde(default)]
    name: String,
    #[serde(default)]
    attributes: Vec<KeyValue>,
}

#[derive(Deserialize)]
struct RawStatus {
    #[serde(default)]
    message: String,
    #[serde(default)]
    code: Value,
}

/// A span that could not be used: the message, and which span of its batch
/// it was (1-based).
#[derive(Debug)]
pub struct BadSpan {
    /// Where the span is (its line and bytes).
    pub source: SourceRef,
    /// Its place in the batch, 1-based.
    pub index: usize,
    /// What is wrong.
    pub error: BadLine,
}

/// What one `TracesData` object held: its spans, and the spans that could
/// not be read.
#[derive(Debug, Default)]
pub struct Batch {
    /// Spans read.
    pub spans: Vec<Span>,
    /// Spans that could not be read.
    pub bad: Vec<BadSpan>,
}

/// Reads one `TracesData` object, `text`, which starts at byte `base` of
/// journal `journal`. `line_of` gives the line number of a byte offset
/// within `text` (the object's own line for one object per line).
///
/// # Errors
/// A [`BadLine`] when `text` is not a `TracesData` object at all; spans that
/// cannot be read are returned in [`Batch::bad`], the others kept.
pub fn parse_batch(
    text: &str,
    journal: crate::model::JournalId,
    base: u64,
    line_of: &mut dyn FnMut(usize) -> u32,
) -> Result<Batch, BadLine> {
    let data: TracesData<'_> = serde_json::from_str(text).map_err(|e| {
        BadLine::new(format!(
            "not an OTLP TracesData object ({{\"resourceSpans\":[…]}}): {e}"
        ))
    })?;
    let mut batch = Batch::default();
    let mut index = 0;
    for rs in data.resource_spans {
        let resource = Arc::new(resource(rs.resource));
        for ss in rs.scope_spans {
            let scope = ss.scope.and_then(|s| s.name).filter(|n| !n.is_empty());
            for raw in ss.spans {
                index += 1;
                let json = raw.get();
                let at = json.as_ptr().addr().saturating_sub(text.as_ptr().addr());
                let source = SourceRef::Line {
                    journal,
                    line: line_of(at),
                    offset: crate::model::LineOffset::new(base + at as u64),
                    len: u32::try_from(json.len()).unwrap_or(u32::MAX),
                };
                match span(json, &resource, scope.as_deref(), source) {
                    Ok(s) => batch.spans.push(s),
                    Err(error) => batch.bad.push(BadSpan {
                        source,
                        index,
                        error,
                    }),
                }
            }
        }
    }
    Ok(batch)
}

fn resource(r: Option<RawResource>) -> Resource {
    let attrs = attributes(r.map(|r| r.attributes).unwrap_or_default());
    let s = |k: &str| {
        attrs
            .get(k)
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    Resource {
        service: s("service.name"),
        instance: s("service.instance.id"),
        version: s("service.version"),
    }
}

fn span(
    json: &str,
    resource: &Arc<Resource>,
    scope: Option<&str>,
    source: SourceRef,
) -> Result<Span, BadLine> {
    let raw: RawSpan =
        serde_json::from_str(json).map_err(|e| BadLine::new(format!("not an OTLP span: {e}")))?;
    let trace = id(&raw.trace_id, 16).map_err(|e| BadLine::in_field("traceId", e.to_string()))?;
    let span_id = id(&raw.span_id, 8).map_err(|e| BadLine::in_field("spanId", e.to_string()))?;
    let parent = if raw.parent_span_id.is_empty() {
        None
    } else {
        Some(
            id(&raw.parent_span_id, 8)
                .map_err(|e| BadLine::in_field("parentSpanId", e.to_string()))?,
        )
    };
    let start = nanos(&raw.start)
        .map_err(|e| BadLine::in_field("startTimeUnixNano", format!("startTimeUnixNano: {e}")))?;
    let end = nanos(&raw.end)
        .map_err(|e| BadLine::in_field("endTimeUnixNano", format!("endTimeUnixNano: {e}")))?;
    if end < start {
        return Err(BadLine::in_field(
            "endTimeUnixNano",
            "the span ends before it starts",
        ));
    }
    let kind = match &raw.kind {
        Value::Null => Kind::Unspecified,
        Value::Number(n) => match n.as_u64() {
            Some(0) => Kind::Unspecified,
            Some(1) => Kind::Internal,
            Some(2) => Kind::Server,
            Some(3) => Kind::Client,
            Some(4) => Kind::Producer,
            Some(5) => Kind::Consumer,
            _ => return Err(BadLine::in_field("kind", format!("unknown span kind {n}"))),
        },
        Value::String(s) => match s.trim_start_matches("SPAN_KIND_") {
            "UNSPECIFIED" => Kind::Unspecified,
            "INTERNAL" => Kind::Internal,
            "SERVER" => Kind::Server,
            "CLIENT" => Kind::Client,
            "PRODUCER" => Kind::Producer,
            "CONSUMER" => Kind::Consumer,
            _ => {
                return Err(BadLine::in_field(
                    "kind",
                    format!("unknown span kind {s:?}"),
                ));
            }
        },
        v => {
            return Err(BadLine::in_field(
                "kind",
                format!("span kind must be an integer, found {v}"),
            ));
        }
    };
    let (status, status_message) = match raw.status {
        None => (StatusCode::Unset, None),
        Some(st) => {
            let code = match &st.code {
                Value::Null => StatusCode::Unset,
                Value::Number(n) => match n.as_u64() {
                    Some(0) => StatusCode::Unset,
                    Some(1) => StatusCode::Ok,
                    Some(2) => StatusCode::Error,
                    _ => {
                        return Err(BadLine::in_field(
                            "status.code",
                            format!("unknown status code {n}"),
                        ));
                    }
                },
                Value::String(s) => match s.trim_start_matches("STATUS_CODE_") {
                    "UNSET" => StatusCode::Unset,
                    "OK" => StatusCode::Ok,
                    "ERROR" => StatusCode::Error,
                    _ => {
                        return Err(BadLine::in_field(
                            "status.code",
                            format!("unknown status code {s:?}"),
                        ));
                    }
                },
                v => {
                    return Err(BadLine::in_field(
                        "status.code",
                        format!("status code must be an integer, found {v}"),
                    ));
                }
            };
            let m = st.message.trim();
            (code, (!m.is_empty()).then(|| m.to_string()))
        }
    };
    let events = raw
        .events
        .into_iter()
        .map(|e| SpanEvent {
            name: e.name,
            at: nanos(&e.time).ok(),
            attributes: attributes(e.attributes),
        })
        .collect();
    let flags = match &raw.flags {
        Value::Number(n) => n.as_u64(),
        Value::String(t) => t.parse::<u64>().ok(),
        _ => None,
    }
    .unwrap_or(0);
    Ok(Span {
        trace,
        id: span_id,
        parent_is_local: parent.is_some() && flags & 0x100 != 0 && flags & 0x200 == 0,
        parent,
        name: raw.name,
        kind,
        start,
        end,
        status,
        status_message,
        attributes: attributes(raw.attributes),
        events,
        resource: Arc::clone(resource),
        scope: scope.map(str::to_string),
        source,
    })
}

/// Why a trace or span id cannot be read; `what` is `trace id` or `span id`.
#[derive(Debug, thiserror::Error)]
enum BadId {
    #[error("the {what} is all zeros (invalid)")]
    Zero { what: &'static str },
    #[error("the {what} is missing")]
    Missing { what: &'static str },
    #[error("the {what} {found:?} is neither {digits} hex digits nor base64 of {bytes} bytes")]
    Malformed {
        what: &'static str,
        /// The start of what was found, escaped.
        found: String,
        digits: usize,
        bytes: usize,
    },
}

/// A trace or span id of `bytes` bytes as lowercase hex, from hex (OTLP
/// JSON) or base64 (protobuf's JSON mapping).
fn id(s: &str, bytes: usize) -> Result<String, BadId> {
    let what = if bytes == 16 { "trace id" } else { "span id" };
    if s.len() == bytes * 2 && s.bytes().all(|b| b.is_ascii_hexdigit()) {
        let h = s.to_ascii_lowercase();
        if h.bytes().all(|b| b == b'0') {
            return Err(BadId::Zero { what });
        }
        return Ok(h);
    }
    match base64::engine::general_purpose::STANDARD.decode(s) {
        Ok(b) if b.len() == bytes && b.iter().any(|&x| x != 0) => Ok(hex::encode(b)),
        _ if s.is_empty() => Err(BadId::Missing { what }),
        _ => Err(BadId::Malformed {
            what,
            found: crate::sanitize::escape(&s.chars().take(64).collect::<String>()).into_owned(),
            digits: bytes * 2,
            bytes,
        }),
    }
}

/// Why a span's start or end time cannot be read.
#[derive(Debug, thiserror::Error)]
enum BadTime {
    #[error("not a time in nanoseconds: {0}")]
    NotNanos(String),
    #[error("missing")]
    Missing,
    #[error("zero (the instrumentation did not set it)")]
    Zero,
}

/// Nanoseconds since the Unix epoch, from a decimal string or a number.
fn nanos(v: &Value) -> Result<DateTime<Utc>, BadTime> {
    let n: i64 = match v {
        Value::String(s) => s
            .parse::<u64>()
            .ok()
            .and_then(|n| i64::try_from(n).ok())
            .ok_or_else(|| BadTime::NotNanos(format!("{s:?}")))?,
        Value::Number(n) => n
            .as_u64()
            .and_then(|n| i64::try_from(n).ok())
            .ok_or_else(|| BadTime::NotNanos(n.to_string()))?,
        Value::Null => return Err(BadTime::Missing),
        v => return Err(BadTime::NotNanos(v.to_string())),
    };
    if n == 0 {
        return Err(BadTime::Zero);
    }
    Ok(DateTime::from_timestamp_nanos(n))
}

/// `[{"key":…,"value":{AnyValue}}]` as a JSON object.
fn attributes(kvs: Vec<KeyValue>) -> Map<String, Value> {
    kvs.into_iter()
        .map(|kv| (kv.key, any_value(kv.value)))
        .collect()
}

/// An `AnyValue` as plain JSON: strings, booleans, numbers (`intValue`
/// strings as integers), arrays, key-value lists as objects, bytes as
/// their base64 text.
fn any_value(v: Value) -> Value {
    let Value::Object(mut m) = v else {
        return v;
    };
    let take = |m: &mut Map<String, Value>, camel: &str, snake: &str| {
        m.remove(camel).or_else(|| m.remove(snake))
    };
    if let Some(s) = take(&mut m, "stringValue", "string_value") {
        return s;
    }
    if let Some(b) = take(&mut m, "boolValue", "bool_value") {
        return b;
    }
    if let Some(i) = take(&mut m, "intValue", "int_value") {
        return match &i {
            Value::String(s) => s.parse::<i64>().map(Value::from).unwrap_or(i),
            _ => i,
        };
    }
    if let Some(d) = take(&mut m, "doubleValue", "double_value") {
        return d;
    }
    if let Some(a) = take(&mut m, "arrayValue", "array_value") {
        let values = match a {
            Value::Object(mut o) => match o.remove("values") {
                Some(Value::Array(v)) => v,
                _ => Vec::new(),
            },
            _ => Vec::new(),
        };
        return Value::Array(values.into_iter().map(any_value).collect());
    }
    if let Some(k) = take(&mut m, "kvlistValue", "kvlist_value") {
        let values = match k {
            Value::Object(mut o) => match o.remove("values") {
                Some(v) => serde_json::from_value::<Vec<KeyValue>>(v).unwrap_or_default(),
                None => Vec::new(),
            },
            _ => Vec::new(),
        };
        return Value::Object(attributes(values));
    }
    if let Some(b) = take(&mut m, "bytesValue", "bytes_value") {
        return b;
    }
    Value::Null
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Batch {
        parse_batch(text, 0, 100, &mut |_| 7).unwrap()
    }

    const SPAN: &str = r#"{"traceId":"E53F17B153FE9910684B275CBD928919","spanId":"d13f15f174a7f7cc","name":"MCP send tools/call deploy_release","kind":3,"startTimeUnixNano":"1796123762986120074","endTimeUnixNano":"1796123764993140027","attributes":[{"key":"mcp.method.name","value":{"stringValue":"tools/call"}},{"key":"jsonrpc.request.id","value":{"intValue":"3"}}],"status":{"message":"TimeoutError: ","code":2},"events":[{"timeUnixNano":"1796123764993088262","name":"exception","attributes":[{"key":"exception.type","value":{"stringValue":"TimeoutError"}}]}]}"#;

    #[test]
    fn a_span_keeps_its_own_bytes_and_the_service_it_came_from() {
        let text = format!(
            r#"{{"resourceSpans":[{{"resource":{{"attributes":[{{"key":"service.name","value":{{"stringValue":"lab-agent"}}}},{{"key":"service.instance.id","value":{{"stringValue":"a757"}}}}]}},"scopeSpans":[{{"scope":{{"name":"mcp-python-sdk"}},"spans":[{SPAN}]}}]}}]}}"#
        );
        let b = one(&text);
        assert!(b.bad.is_empty(), "{:?}", b.bad);
        let s = &b.spans[0];
        assert_eq!(s.trace, "e53f17b153fe9910684b275cbd928919");
        assert_eq!(s.kind, Kind::Client);
        assert_eq!(s.status, StatusCode::Error);
        assert_eq!(s.status_message.as_deref(), Some("TimeoutError:"));
        assert_eq!(s.attributes["jsonrpc.request.id"], 3);
        assert_eq!(s.resource.service.as_deref(), Some("lab-agent"));
        assert_eq!(s.resource.instance.as_deref(), Some("a757"));
        assert_eq!(s.scope.as_deref(), Some("mcp-python-sdk"));
        assert_eq!(s.exception(), Some((Some("TimeoutError"), None)));
        let (off, len) = s.source.byte_range().unwrap();
        let at = usize::try_from(off - 100).unwrap();
        assert_eq!(&text[at..at + len as usize], SPAN);
        assert_eq!(s.source.position(), 7);
    }

    #[test]
    fn base64_ids_enum_names_and_number_times_are_read_too() {
        let text = r#"{"resource_spans":[{"scope_spans":[{"spans":[{"trace_id":"5T8XsVP+mRBoSydcvZKJGQ==","span_id":"0T8V8XSn98w=","name":"x","kind":"SPAN_KIND_SERVER","start_time_unix_nano":1796123762986120074,"end_time_unix_nano":1796123762986120075,"status":{"code":"STATUS_CODE_OK"}}]}]}]}"#;
        let b = one(text);
        assert!(b.bad.is_empty(), "{:?}", b.bad);
        assert_eq!(b.spans[0].trace, "e53f17b153fe9910684b275cbd928919");
        assert_eq!(b.spans[0].id, "d13f15f174a7f7cc");
        assert_eq!(b.spans[0].kind, Kind::Server);
        assert_eq!(b.spans[0].status, StatusCode::Ok);
    }

    #[test]
    fn a_bad_span_is_reported_and_the_others_kept() {
        let good = SPAN;
        let text = format!(
            r#"{{"resourceSpans":[{{"scopeSpans":[{{"spans":[{{"traceId":"zz","spanId":"d13f15f174a7f7cc"}},{good},{{"traceId":"e53f17b153fe9910684b275cbd928919","spanId":"d13f15f174a7f7cc","startTimeUnixNano":"5","endTimeUnixNano":"4"}}]}}]}}]}}"#
        );
        let b = one(&text);
        assert_eq!(b.spans.len(), 1);
        assert_eq!(b.bad.len(), 2);
        assert_eq!(b.bad[0].index, 1);
        assert_eq!(b.bad[0].error.field.as_deref(), Some("traceId"));
        assert!(
            b.bad[0].error.message.contains("neither 32 hex digits"),
            "{:?}",
            b.bad[0]
        );
        assert_eq!(b.bad[1].index, 3);
        assert!(b.bad[1].error.message.contains("ends before it starts"));
    }

    #[test]
    fn attribute_values_become_plain_json() {
        let v = |j: &str| any_value(serde_json::from_str(j).unwrap());
        assert_eq!(v(r#"{"intValue":"42"}"#), 42);
        assert_eq!(v(r#"{"boolValue":true}"#), true);
        assert_eq!(v(r#"{"doubleValue":1.5}"#), 1.5);
        assert_eq!(
            v(r#"{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":"1"}]}}"#),
            serde_json::json!(["a", 1])
        );
        assert_eq!(
            v(r#"{"kvlistValue":{"values":[{"key":"k","value":{"stringValue":"v"}}]}}"#),
            serde_json::json!({"k": "v"})
        );
        assert_eq!(v("{}"), Value::Null);
    }

    #[test]
    fn not_traces_data_is_a_bad_line() {
        let e = parse_batch("[1,2]", 0, 0, &mut |_| 1).unwrap_err();
        assert!(e.message.contains("TracesData"), "{e}");
    }
}
