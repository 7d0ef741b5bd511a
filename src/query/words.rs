//! Journal facts in words, written once for every front end: an event's
//! one-line detail, a call's correlation, argument redaction. Identities go
//! through a [`Namer`], so that the same words serve the screen (as
//! written, [`Plain`]) and an anonymized export (pseudonyms).
//!
//! Strings come out as the journal wrote them; front ends escape them
//! ([`crate::sanitize::escape`]) before display.

use crate::model::{CallView, EventRef, JsonRpcIdRef, KindRef};
use serde_json::Value;

/// What kind of original a value is; decides the pseudonym's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Authenticated caller identity.
    Actor,
    /// Where the effect lands.
    Target,
    /// Credential reference.
    Credential,
    /// Intent scope.
    Scope,
    /// An argument value (or SSH host key, account, command, cwd).
    Value,
    /// Execution id.
    Execution,
    /// Gateway call id.
    Call,
    /// Session id.
    Session,
    /// MCP session id.
    McpSession,
    /// JSON-RPC id.
    JsonRpc,
    /// Idempotency key.
    Key,
    /// Result reference.
    Result,
    /// Intent fingerprint.
    Fingerprint,
    /// Group id.
    Group,
    /// Process id.
    Pid,
    /// Process name.
    Process,
    /// Client name and version (`example-agent/1.4`).
    Client,
    /// A person: approver, reviewer, author.
    Person,
    /// Journal-derived free text: error messages, notes.
    Text,
    /// A file name.
    File,
}

impl Class {
    /// The pseudonym prefix (`actor`, `execution`, ...).
    pub fn prefix(self) -> &'static str {
        match self {
            Class::Actor => "actor",
            Class::Target => "target",
            Class::Credential => "credential",
            Class::Scope => "scope",
            Class::Value => "value",
            Class::Execution => "execution",
            Class::Call => "call",
            Class::Session => "session",
            Class::McpSession => "mcp-session",
            Class::JsonRpc => "rpc",
            Class::Key => "key",
            Class::Result => "result",
            Class::Fingerprint => "fingerprint",
            Class::Group => "group",
            Class::Pid => "pid",
            Class::Process => "process",
            Class::Client => "client",
            Class::Person => "person",
            Class::Text => "text",
            Class::File => "file",
        }
    }
}

/// How report fields are written: as they are, or replaced.
pub trait Namer {
    /// A structured value of a known class.
    fn id(&mut self, class: Class, original: &str) -> String;
    /// Free text that may embed registered originals.
    fn text(&self, s: &str) -> String;
    /// Argument values, recursively (object keys kept).
    fn value(&mut self, v: &Value) -> Value;
    /// Whether this namer replaces anything.
    fn anonymizes(&self) -> bool;
}

/// Leaves everything as it is.
#[derive(Debug, Default, Clone, Copy)]
pub struct Plain;

impl Namer for Plain {
    fn id(&mut self, _: Class, original: &str) -> String {
        original.to_string()
    }
    fn text(&self, s: &str) -> String {
        s.to_string()
    }
    fn value(&mut self, v: &Value) -> Value {
        v.clone()
    }
    fn anonymizes(&self) -> bool {
        false
    }
}

/// Replaces the values of the tool contract's secret fields
/// (docs/design.md §4.1, §4.4: `secret_fields`; a name at any depth,
/// regardless of case, or a dotted path) in journal arguments with
/// `[secret field]`.
pub fn redact_secrets(args: &Value, secret_fields: &[String]) -> Value {
    let mut v = args.clone();
    crate::analysis::for_each_secret(&mut v, secret_fields, &mut |_, v| {
        *v = Value::String(SECRET.into());
    });
    v
}

/// What a secret value is shown as.
pub const SECRET: &str = "[secret field]";

/// A JSON-RPC id as written in words: `41`, or `"abc"` quoted.
fn jsonrpc_words(id: JsonRpcIdRef<'_>, n: &mut dyn Namer) -> String {
    match id {
        JsonRpcIdRef::Num(v) => n.id(Class::JsonRpc, &v.to_string()),
        JsonRpcIdRef::Str(s) => format!("{:?}", n.id(Class::JsonRpc, s)),
    }
}

/// A call's protocol correlation in words, ` · `-separated: `JSON-RPC id
/// 41 · session ses_7Q2 · MCP session mcp-5d1c`; empty when the journal
/// recorded none of them.
pub fn call_words(c: CallView<'_>, n: &mut dyn Namer) -> String {
    let mut bits = Vec::new();
    if let Some(id) = c.jsonrpc_id {
        bits.push(format!("JSON-RPC id {}", jsonrpc_words(id, n)));
    }
    if let Some(s) = c.session_id {
        bits.push(format!("session {}", n.id(Class::Session, s)));
    }
    if let Some(s) = c.mcp_session_id {
        bits.push(format!("MCP session {}", n.id(Class::McpSession, s)));
    }
    bits.join(" · ")
}

/// A gateway's reason code (`vault_locked`, `denied`, `approval_timeout`,
/// docs/design.md §3) rather than free text: kept when anonymizing.
pub fn is_vocabulary(s: &str) -> bool {
    !s.is_empty() && s.len() <= 40 && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// Tool arguments as a front end shows them (`args`, compact JSON), with
/// what the journals lack of them (`recorded`: the label of
/// [`crate::model::Arguments`], `no: …` or `partly: …`; `None` when they
/// hold them): `(not recorded: <why>)` in place of an empty `{}`, which
/// would read as a call with no arguments.
pub fn arguments_words(args: &str, recorded: Option<&str>) -> String {
    let empty = matches!(args, "{}" | "null" | "");
    match recorded {
        None => args.to_string(),
        Some(l) => match l.split_once(": ") {
            Some(("no", why)) if empty => format!("(not recorded: {why})"),
            Some(("no", why)) => format!("{args} (arguments not recorded: {why})"),
            Some((_, why)) => format!("{args} (in part: {why})"),
            None => format!("{args} ({l})"),
        },
    }
}

/// Key details of an event in one line, each identity through `n`, the
/// arguments' secret fields redacted: what the TUI's event list, the
/// review queue and the postmortem timeline show.
pub fn event_detail(e: EventRef<'_>, secret_fields: &[String], n: &mut dyn Namer) -> String {
    let mut detail = detail(e, secret_fields, n);
    // A line its hash does not pin down says so wherever the event shows
    // (docs/design.md §6.4).
    for (k, v) in &e.facts().notes {
        let label = match *k {
            "ambiguous" => "AMBIGUOUS",
            // A caller a reader inferred (docs/formats.md#otlp-json, "A
            // caller whose span is missing").
            "caller_inferred" => "CALLER INFERRED",
            _ => continue,
        };
        if let Some(w) = v.as_str() {
            let w = format!("{label}: {}", n.text(w));
            detail = if detail.is_empty() {
                w
            } else {
                format!("{detail} · {w}")
            };
        }
    }
    // Which layer saw it, when several recorded the call (docs/design.md
    // §5.12).
    match e.facts().layer {
        Some(l) => {
            let l: &'static str = l.into();
            if detail.is_empty() {
                format!("seen by the {l}")
            } else {
                format!("{detail} · seen by the {l}")
            }
        }
        None => detail,
    }
}

fn detail(e: EventRef<'_>, secret_fields: &[String], n: &mut dyn Namer) -> String {
    let joined = |head: String, tail: String| {
        if tail.is_empty() {
            head
        } else if head.is_empty() {
            tail
        } else {
            format!("{head} · {tail}")
        }
    };
    match e.kind() {
        KindRef::Accepted(a) => {
            let (call, action, idempotency_key) = (a.call, a.action, a.idempotency_key);
            let args = action
                .get("arguments")
                .map(|a| redact_secrets(&a, secret_fields))
                .unwrap_or(Value::Null);
            let shown = n.value(&args).to_string();
            let shown = match &e.facts().arguments {
                crate::model::Arguments::Full => shown,
                crate::model::Arguments::No(_) if matches!(shown.as_str(), "{}" | "null") => {
                    "(arguments not recorded)".to_string()
                }
                crate::model::Arguments::No(_) => format!("{shown} (arguments not recorded)"),
                crate::model::Arguments::Partly(_) => format!("{shown} (arguments in part)"),
            };
            let mut s = format!("{} {shown}", action.tool().unwrap_or("?"));
            s = joined(s, call_words(call, n));
            if let Some(k) = idempotency_key {
                s.push_str(&format!(" · key {}", n.id(Class::Key, k)));
            }
            s
        }
        KindRef::Attached { call, recovery } => {
            let mut s = format!("recovery {}", recovery.as_str());
            if let Some(c) = call.call_id {
                s.push_str(&format!(" · call {}", n.id(Class::Call, c)));
            }
            joined(s, call_words(call, n))
        }
        KindRef::Authorized { decision, approver } => match approver {
            Some(a) => format!("{decision} by {}", n.id(Class::Person, a)),
            None => decision.to_string(),
        },
        KindRef::Rejected { reason } if is_vocabulary(reason) => reason.to_string(),
        KindRef::Rejected { reason } => n.id(Class::Text, reason),
        KindRef::Dispatched { idempotency_key } => idempotency_key
            .map(|k| format!("Idempotency-Key {}", n.id(Class::Key, k)))
            .unwrap_or_default(),
        KindRef::DispatchFailed { error } | KindRef::DeliveryFailed { error } => {
            n.id(Class::Text, error)
        }
        KindRef::Outcome {
            outcome,
            target_status,
            exit_status,
            error,
            result_reference,
            replayed,
            observed_via,
        } => {
            let mut s = outcome.as_str().to_string();
            if let Some(t) = target_status {
                s.push_str(&format!(" · HTTP {t}"));
            }
            if let Some(x) = exit_status {
                s.push_str(&format!(" · exit {x}"));
            }
            if replayed {
                s.push_str(" · replayed");
            }
            s.push_str(&format!(" · via {}", observed_via.as_str()));
            if let Some(words) = e.facts().pairing.words() {
                s.push_str(&format!(" · {words}"));
            }
            if let Some(r) = result_reference {
                s.push_str(&format!(" · result {}", n.id(Class::Result, r)));
            }
            if let Some(er) = error {
                s.push_str(&format!(" · {}", n.id(Class::Text, er)));
            }
            s
        }
        KindRef::Delivered => "result delivered to the agent".into(),
        KindRef::Cancelled { by } => format!("by {by}"),
    }
}

/// [`event_detail`] as the journal wrote it, nothing redacted.
pub fn event_summary(e: EventRef<'_>) -> String {
    event_detail(e, &[], &mut Plain)
}

#[cfg(test)]
mod arguments_words_tests {
    use super::arguments_words;

    #[test]
    fn arguments_are_shown_with_what_the_journal_lacks_of_them() {
        assert_eq!(arguments_words(r#"{"a":1}"#, None), r#"{"a":1}"#);
        assert_eq!(arguments_words("{}", None), "{}");
        assert_eq!(
            arguments_words("{}", Some("no: spans record names only")),
            "(not recorded: spans record names only)"
        );
        assert_eq!(
            arguments_words("null", Some("no: paths only")),
            "(not recorded: paths only)"
        );
        assert_eq!(
            arguments_words(r#"{"path":"/x"}"#, Some("no: paths only")),
            r#"{"path":"/x"} (arguments not recorded: paths only)"#
        );
        assert_eq!(
            arguments_words(r#"{"q":"ab"}"#, Some("partly: clipped to 256 bytes")),
            r#"{"q":"ab"} (in part: clipped to 256 bytes)"#
        );
    }
}
