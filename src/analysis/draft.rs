//! Tool contracts from what the journals show (docs/design.md §4.6):
//! `retrace contracts draft` writes one for every tool seen, each guess
//! commented with the evidence it rests on, and `retrace contracts lint`
//! checks contracts against the calls.
//!
//! A draft is a starting point for the people who know the tools, not a
//! verdict: every class, window and field list says what it was guessed
//! from, and the output is a contracts file `--contracts` accepts as it is.

use super::contracts::{ActionClass, Contracts, DEFAULT_ATTACH_WINDOW};
use super::verdict::TargetAnswer;
use super::{Analysis, Config};
use crate::model::{Arguments, ExecIdx, Model};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// The shortest attach window a draft proposes: five minutes.
pub const MIN_DRAFT_WINDOW: Duration = Duration::from_secs(5 * 60);

/// Argument names that hold secrets in most tools: a draft lists them as
/// `secret_fields` (matched case-insensitively, as whole names or name
/// parts split at `_`, `-` and `.`).
const SECRET_NAMES: [&str; 9] = [
    "token",
    "password",
    "passwd",
    "secret",
    "apikey",
    "api_key",
    "authorization",
    "credential",
    "private_key",
];

/// Argument names that differ on every call without changing what is
/// asked for: a draft leaves them out of `fingerprint_fields`.
const VOLATILE_NAMES: [&str; 8] = [
    "request_id",
    "requestid",
    "nonce",
    "timestamp",
    "ts",
    "trace_id",
    "idempotency_key",
    "client_request_id",
];

/// What the journals show of one tool, and the contract drafted from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDraft {
    /// Tool name.
    pub tool: String,
    /// Calls seen.
    pub calls: usize,
    /// Groups (intents) with more than one execution.
    pub repeated_intents: usize,
    /// Executions the target answered with a failure.
    pub failures: usize,
    /// Executions that sent an idempotency key.
    pub with_key: usize,
    /// The class drafted.
    pub class: ActionClass,
    /// What the class rests on, in words.
    pub class_why: String,
    /// The attach window drafted (zero for read-only tools).
    #[serde(serialize_with = "ser_duration")]
    pub attach_window: Duration,
    /// What the window rests on, in words.
    pub window_why: String,
    /// The fingerprint fields drafted (every argument seen but volatile
    /// ones); `None` when the journal records no arguments for the tool.
    pub fingerprint_fields: Option<Vec<String>>,
    /// Each argument seen and in how many calls.
    pub fields_seen: Vec<(String, usize)>,
    /// Argument names that look like secrets.
    pub secret_fields: Vec<String>,
    /// Whether a contract for the tool is already configured.
    pub configured: bool,
}

fn ser_duration<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&humantime::format_duration(*d).to_string())
}

/// What the calls of one tool show, gathered once for drafting and linting.
#[derive(Default)]
struct Seen {
    calls: usize,
    executions: Vec<ExecIdx>,
    repeated_intents: usize,
    failures: usize,
    with_key: usize,
    /// Arguments recorded in full, per call.
    arguments: Vec<Map<String, Value>>,
    /// Whether some call's arguments are not (fully) logged.
    arguments_missing: bool,
    /// Gaps from an execution whose result did not reach the agent (or is
    /// unknown) to the next execution of the same intent.
    retry_gaps: Vec<Duration>,
}

fn seen(model: &Model, analysis: &Analysis) -> BTreeMap<String, Seen> {
    let mut tools: BTreeMap<String, Seen> = BTreeMap::new();
    for g in &analysis.groups {
        if g.fingerprint.starts_with("orphan:") {
            continue;
        }
        let s = tools.entry(g.tool.to_string()).or_default();
        s.calls += g.calls;
        if g.executions.len() > 1 {
            s.repeated_intents += 1;
        }
        for (i, &x) in g.executions.iter().enumerate() {
            s.executions.push(x);
            let l = analysis.lifecycle(x);
            let ex = model.execution(x);
            if l.answer == TargetAnswer::NotPerformed {
                s.failures += 1;
            }
            if l.has_key() {
                s.with_key += 1;
            }
            match ex.accepted() {
                Some((e, _)) if e.facts().arguments == Arguments::Full => {
                    if let Some(a) = ex.action().and_then(|a| a.arguments()) {
                        s.arguments.push(a);
                    }
                }
                Some(_) => s.arguments_missing = true,
                None => {}
            }
            let Some(&next) = g.executions.get(i + 1) else {
                continue;
            };
            let settled = l.answer == TargetAnswer::Performed && !l.deliveries().is_empty();
            if !settled
                && let (Some(a), Some(b)) = (ex.started_at(), model.execution(next).started_at())
                && let Ok(gap) = (b - a).to_std()
            {
                s.retry_gaps.push(gap);
            }
        }
    }
    tools
}

/// Whether an argument name looks like a secret.
fn secret_like(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    SECRET_NAMES.iter().any(|s| {
        lower == *s
            || lower
                .split(['_', '-', '.'])
                .any(|part| part == *s || part == s.replace('_', ""))
    })
}

fn volatile(name: &str) -> bool {
    VOLATILE_NAMES.contains(&name.to_ascii_lowercase().as_str())
}

/// A window humans write: minutes below two hours, then hours.
fn round_window(d: Duration) -> Duration {
    let s = d.as_secs().max(MIN_DRAFT_WINDOW.as_secs());
    if s < 2 * 3600 {
        Duration::from_secs(s.div_ceil(60) * 60)
    } else {
        Duration::from_secs(s.div_ceil(3600) * 3600)
    }
}

fn draft_one(model: &Model, config: &Config, tool: &str, s: &Seen) -> ToolDraft {
    let hints = model.hints(tool);
    let (class, class_why) = if hints.read_only() {
        (
            ActionClass::ReadOnly,
            format!(
                "every tools/list answer that listed it says readOnlyHint: true ({} answer(s)); an untrusted hint: confirm the tool has no side effect",
                hints.all.len()
            ),
        )
    } else if s.with_key > 0 {
        (
            ActionClass::IdempotentWithKey,
            format!(
                "{} of its executions sent an idempotency key; confirm the target honours it",
                s.with_key
            ),
        )
    } else {
        let yes = hints
            .all
            .iter()
            .filter(|h| h.read_only == Some(true))
            .count();
        let split = format!(
            "{yes} of {} tools/list answers that listed it say readOnlyHint: true, the others do not (a missing readOnlyHint means false in MCP): not unanimous",
            hints.all.len()
        );
        let hint = match hints.all.first() {
            Some(_) if yes > 0 => split.as_str(),
            Some(h) if h.read_only == Some(false) => {
                "its server declares it not read-only (readOnlyHint: false)"
            }
            Some(h) if h.destructive == Some(true) => "its server declares it destructive",
            Some(h)
                if h.read_only.is_none()
                    && h.destructive.is_none()
                    && h.idempotent.is_none()
                    && h.open_world.is_none() =>
            {
                "its server lists it without annotations"
            }
            Some(_) => "its server's annotations do not say it is read-only",
            None => "no annotation says what it does",
        };
        (
            ActionClass::Irreversible,
            format!(
                "{hint}, and no idempotency key was seen: irreversible until someone who knows the tool says otherwise"
            ),
        )
    };
    let (attach_window, window_why) = if class == ActionClass::ReadOnly {
        (Duration::ZERO, "read-only tools have none".to_string())
    } else {
        match s.retry_gaps.iter().max() {
            Some(&g) => {
                let w = round_window(g * 2);
                (
                    w,
                    format!(
                        "{} repeat(s) of an intent whose result was not seen delivered, the longest {} after the first; twice that, at least {}",
                        s.retry_gaps.len(),
                        humantime::format_duration(Duration::from_secs(g.as_secs())),
                        humantime::format_duration(MIN_DRAFT_WINDOW)
                    ),
                )
            }
            None => (
                DEFAULT_ATTACH_WINDOW,
                "no repeat of an unsettled call was seen: the default".to_string(),
            ),
        }
    };
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for a in &s.arguments {
        for k in a.keys() {
            *counts.entry(k.clone()).or_default() += 1;
        }
    }
    let fields_seen: Vec<(String, usize)> = counts.into_iter().collect();
    let fingerprint_fields = (!s.arguments.is_empty() && !s.arguments_missing).then(|| {
        fields_seen
            .iter()
            .map(|(k, _)| k.clone())
            .filter(|k| !volatile(k))
            .collect()
    });
    let secret_fields = fields_seen
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| secret_like(k))
        .collect();
    ToolDraft {
        tool: tool.to_string(),
        calls: s.calls,
        repeated_intents: s.repeated_intents,
        failures: s.failures,
        with_key: s.with_key,
        class,
        class_why,
        attach_window,
        window_why,
        fingerprint_fields,
        fields_seen,
        secret_fields,
        configured: config.contracts.lookup(tool).is_some(),
    }
}

/// A contract drafted for every tool the journals show, by tool name.
pub fn draft(model: &Model, analysis: &Analysis, config: &Config) -> Vec<ToolDraft> {
    seen(model, analysis)
        .iter()
        .map(|(tool, s)| draft_one(model, config, tool, s))
        .collect()
}

/// A TOML string or key, quoted and escaped.
fn quote(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// A comment line: journal text with its control characters escaped, so
/// that it cannot end the comment.
fn comment(out: &mut String, text: &str) {
    for l in crate::sanitize::escape(text).lines() {
        out.push_str("# ");
        out.push_str(l);
        out.push('\n');
    }
}

/// The drafts as a contracts file `--contracts` accepts as it is, each
/// guess commented with its evidence; `from` names the journals.
pub fn to_toml(drafts: &[ToolDraft], from: &[String]) -> String {
    let mut out = String::new();
    comment(
        &mut out,
        &format!(
            "Tool contracts drafted by `retrace contracts draft` from {}: {} tool(s).",
            from.join(", "),
            drafts.len()
        ),
    );
    comment(
        &mut out,
        "Every value below is a guess from what the journals show; each says what it rests on.",
    );
    comment(
        &mut out,
        "Review them with the people who know the tools (docs/design.md §4.4) before relying on them.",
    );
    for d in drafts {
        out.push('\n');
        out.push_str(&format!("[tools.{}]\n", quote(&d.tool)));
        comment(
            &mut out,
            &format!(
                "seen: {} call(s), {} repeated intent(s), {} failure(s), {} with an idempotency key{}",
                d.calls,
                d.repeated_intents,
                d.failures,
                d.with_key,
                if d.configured {
                    "; a contract for it is already configured"
                } else {
                    ""
                }
            ),
        );
        comment(&mut out, &format!("class: {}", d.class_why));
        out.push_str(&format!("class = {}\n", quote(d.class.as_str())));
        comment(&mut out, &format!("attach window: {}", d.window_why));
        if d.class != ActionClass::ReadOnly {
            out.push_str(&format!(
                "attach_window = {}\n",
                quote(&humantime::format_duration(d.attach_window).to_string())
            ));
        }
        match &d.fingerprint_fields {
            Some(fields) => {
                let seen: Vec<String> = d
                    .fields_seen
                    .iter()
                    .map(|(k, n)| format!("{k} ({n} of {} calls)", d.calls))
                    .collect();
                comment(
                    &mut out,
                    &format!(
                        "arguments seen: {}",
                        if seen.is_empty() {
                            "none".to_string()
                        } else {
                            seen.join(", ")
                        }
                    ),
                );
                let left_out: Vec<&str> = d
                    .fields_seen
                    .iter()
                    .map(|(k, _)| k.as_str())
                    .filter(|k| volatile(k))
                    .collect();
                if !left_out.is_empty() {
                    comment(
                        &mut out,
                        &format!(
                            "left out, as they change on every call without changing the intent: {}",
                            left_out.join(", ")
                        ),
                    );
                }
                let list: Vec<String> = fields.iter().map(|f| quote(f)).collect();
                out.push_str(&format!("fingerprint_fields = [{}]\n", list.join(", ")));
            }
            None => comment(
                &mut out,
                "fingerprint fields: the journal does not record this tool's arguments in full; list the fields that make up an intent",
            ),
        }
        if !d.secret_fields.is_empty() {
            comment(
                &mut out,
                "secret fields: argument names that look like secrets",
            );
            let list: Vec<String> = d.secret_fields.iter().map(|f| quote(f)).collect();
            out.push_str(&format!("secret_fields = [{}]\n", list.join(", ")));
        }
    }
    out
}

/// What `retrace contracts lint` finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum LintKind {
    /// A tool with side effects (not read-only by its server's word) was
    /// called and has no contract.
    NoContract,
    /// A contract names a tool no journal shows.
    NeverSeen,
    /// A fingerprint field that no call of the tool carries.
    FieldNeverSeen,
    /// A default whose type the calls contradict, or that cannot matter.
    DefaultContradicted,
    /// A class the server's annotations or the calls contradict.
    ClassContradicted,
    /// A repeat of an unsettled call came after the attach window.
    WindowTooShort,
}

impl LintKind {
    /// Whether the calls contradict the contracts (what `retrace contracts
    /// lint` exits 1 on): all but [`LintKind::NeverSeen`], since one
    /// contracts file commonly covers tools these journals never call.
    pub fn contradicts(self) -> bool {
        self != LintKind::NeverSeen
    }
}

/// One lint finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LintFinding {
    /// What kind.
    pub kind: LintKind,
    /// The tool.
    pub tool: String,
    /// What is wrong, in words.
    pub message: String,
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Checks the configured contracts against the calls the journals show.
pub fn lint(model: &Model, analysis: &Analysis, contracts: &Contracts) -> Vec<LintFinding> {
    let tools = seen(model, analysis);
    let mut out = Vec::new();
    let mut push = |kind, tool: &str, message: String| {
        out.push(LintFinding {
            kind,
            tool: tool.to_string(),
            message,
        });
    };
    for (tool, s) in &tools {
        let Some(c) = contracts.lookup(tool) else {
            if !model.hints(tool).read_only() {
                push(
                    LintKind::NoContract,
                    tool,
                    format!(
                        "{tool}: {} call(s) and no contract: treated as irreversible with a {} attach window",
                        s.calls,
                        humantime::format_duration(DEFAULT_ATTACH_WINDOW)
                    ),
                );
            }
            continue;
        };
        if let Some(fields) = &c.fingerprint_fields
            && !s.arguments_missing
            && !s.arguments.is_empty()
        {
            for f in fields {
                if !s.arguments.iter().any(|a| a.contains_key(f)) {
                    push(
                        LintKind::FieldNeverSeen,
                        tool,
                        format!(
                            "{tool}: fingerprint field {f:?} occurs in none of its {} call(s)",
                            s.arguments.len()
                        ),
                    );
                }
            }
        }
        for (k, v) in &c.defaults {
            if let Some(fields) = &c.fingerprint_fields
                && !fields.contains(k)
            {
                push(
                    LintKind::DefaultContradicted,
                    tool,
                    format!(
                        "{tool}: default {k:?} is not a fingerprint field, so it cannot change an intent"
                    ),
                );
            }
            let other: BTreeSet<&'static str> = s
                .arguments
                .iter()
                .filter_map(|a| a.get(k))
                .map(json_type)
                .filter(|t| *t != json_type(v))
                .collect();
            if !other.is_empty() {
                push(
                    LintKind::DefaultContradicted,
                    tool,
                    format!(
                        "{tool}: default {k:?} is a {}, but calls send it as {}",
                        json_type(v),
                        other.into_iter().collect::<Vec<_>>().join(", ")
                    ),
                );
            }
        }
        let hints = model.hints(tool);
        match c.class {
            ActionClass::ReadOnly => {
                if let Some(h) = hints
                    .all
                    .iter()
                    .find(|h| h.read_only == Some(false) || h.destructive == Some(true))
                {
                    push(
                        LintKind::ClassContradicted,
                        tool,
                        format!(
                            "{tool}: the contract says read_only, but {} declares it {}",
                            h.server.as_deref().unwrap_or("its server"),
                            if h.read_only == Some(false) {
                                "not read-only (readOnlyHint: false)"
                            } else {
                                "destructive (destructiveHint: true)"
                            }
                        ),
                    );
                }
                if s.with_key > 0 {
                    push(
                        LintKind::ClassContradicted,
                        tool,
                        format!(
                            "{tool}: the contract says read_only, but {} call(s) sent an idempotency key",
                            s.with_key
                        ),
                    );
                }
            }
            _ if hints.read_only() => push(
                LintKind::ClassContradicted,
                tool,
                format!(
                    "{tool}: the contract says {}, but every tools/list answer declares it read-only",
                    c.class
                ),
            ),
            _ => {}
        }
        if c.class != ActionClass::ReadOnly
            && let Some(&g) = s.retry_gaps.iter().max()
            && g > c.attach_window
        {
            push(
                LintKind::WindowTooShort,
                tool,
                format!(
                    "{tool}: a repeat of an unsettled call came {} after it, outside the {} attach window: it reads as a distinct intent",
                    humantime::format_duration(Duration::from_secs(g.as_secs())),
                    humantime::format_duration(c.attach_window)
                ),
            );
        }
    }
    for (tool, _) in contracts.iter() {
        if !tools.contains_key(tool) {
            push(
                LintKind::NeverSeen,
                tool,
                format!("{tool}: a contract, but no journal shows a call of it"),
            );
        }
    }
    out.sort_by(|a, b| a.kind.cmp(&b.kind).then(a.tool.cmp(&b.tool)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_and_volatile_names() {
        for n in [
            "token",
            "API_KEY",
            "github_token",
            "auth.password",
            "apiKey",
        ] {
            assert!(secret_like(n), "{n}");
        }
        for n in ["title", "tokenizer", "owner", "secretary_name"] {
            assert!(!secret_like(n), "{n}");
        }
        assert!(volatile("request_id") && volatile("Nonce") && !volatile("repo"));
    }

    #[test]
    fn windows_are_written_as_humans_write_them() {
        assert_eq!(round_window(Duration::from_secs(10)), MIN_DRAFT_WINDOW);
        assert_eq!(
            round_window(Duration::from_secs(61 * 60 + 1)),
            Duration::from_secs(62 * 60)
        );
        assert_eq!(
            round_window(Duration::from_secs(3 * 3600 + 5)),
            Duration::from_secs(4 * 3600)
        );
    }
}
