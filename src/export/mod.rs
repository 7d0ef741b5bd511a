//! Postmortem export (`retrace export`): per group, the verdict and
//! severity, a timeline, the five questions with their answers and
//! evidence, the reviewer decisions, the chain status of the evidence, and
//! a Mermaid `sequenceDiagram` of agent, gateway and target.
//!
//! [`Report::build`] gathers everything through the query layer into one
//! plain [`Report`]; [`markdown`], [`json`] and [`csv`] render it. Every
//! field passes through an [`anonymize::Namer`] while the report is built,
//! so `--anonymize` is one switch for every format. [`atomic::write`] puts
//! the result on disk without ever leaving a half-written file.

pub mod anonymize;
pub mod atomic;
pub mod csv;
pub mod json;
pub mod markdown;
pub mod mermaid;

use crate::analysis::{Decision, EvidenceRef, Group, Severity, Verdict};
use crate::journal::Format as JournalFormat;
use crate::model::{EventKind, Execution, JournalId, SourceRef};
use crate::query::{EvidenceView, Investigation, redact_secrets};
use crate::review::{CaseContext, DecisionRecord};
use anonymize::{Class, Namer, Pseudonyms};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeSet;

/// Output format of `retrace export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A postmortem document with tables and a Mermaid diagram.
    Markdown,
    /// The same content for tools.
    Json,
    /// The timeline, one row per event.
    Csv,
}

impl Format {
    /// Renders a report.
    pub fn render(self, r: &Report) -> String {
        match self {
            Format::Markdown => markdown::render(r),
            Format::Json => json::render(r),
            Format::Csv => csv::render(r),
        }
    }
}

/// One journal the report rests on.
#[derive(Debug, Clone, Serialize)]
pub struct JournalInfo {
    /// Name (the path as given).
    pub name: String,
    /// Format it was read as.
    pub format: &'static str,
    /// Lines read.
    pub lines: u64,
    /// Lines that could not be read.
    pub bad_lines: u64,
}

/// The case file the decisions come from.
#[derive(Debug, Clone, Serialize)]
pub struct CaseInfo {
    /// Name.
    pub name: String,
    /// Whether the file exists.
    pub exists: bool,
    /// Chain status in words.
    pub chain: String,
    /// Whether the chain verified.
    pub intact: bool,
}

/// Chain status of one source of evidence (DESIGN.md §6: evidence from an
/// unverified or broken span is marked as such).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainState {
    /// The chain verified.
    Intact,
    /// The chain is broken.
    Broken,
    /// The source has no hash chain: its lines cannot be shown unaltered.
    Unchained,
    /// The lines carry chain fields that this export did not check.
    NotVerified,
}

impl ChainState {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainState::Intact => "intact",
            ChainState::Broken => "broken",
            ChainState::Unchained => "unchained",
            ChainState::NotVerified => "not_verified",
        }
    }
}

/// Chain status of one journal or of the case file.
#[derive(Debug, Clone, Serialize)]
pub struct ChainLine {
    /// Journal or case file name.
    pub source: String,
    /// `journal` or `case_file`.
    pub kind: &'static str,
    /// Status.
    pub status: ChainState,
    /// In words.
    pub detail: String,
}

/// One timeline row.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineRow {
    /// When (UTC).
    pub at: DateTime<Utc>,
    /// Milliseconds since the group's first event.
    pub offset_ms: i64,
    /// Execution.
    pub execution_id: Option<String>,
    /// The call, for events that a call caused (`accepted`, `attached`).
    pub call_id: Option<String>,
    /// Lifecycle stage (event name), or `reviewer_decision`.
    pub stage: String,
    /// Key details.
    pub detail: String,
    /// Where it is recorded (`file:line seq N`, or the case file entry).
    pub source: String,
}

/// One of the five questions with its answer and evidence.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionReport {
    /// 1 to 5.
    pub question: u8,
    /// The question.
    pub asks: &'static str,
    /// The answer.
    pub answer: String,
    /// Whether the journal cannot answer.
    pub unknown: bool,
    /// Evidence citations (`file:line seq N (record execution)`).
    pub evidence: Vec<String>,
}

/// A finding with evidence.
#[derive(Debug, Clone, Serialize)]
pub struct FindingReport {
    /// Name.
    pub kind: &'static str,
    /// Detail.
    pub detail: String,
    /// Evidence citations.
    pub evidence: Vec<String>,
}

/// One reviewer decision about an execution of the group.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionReport {
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// Execution.
    pub execution_id: String,
    /// Decision.
    pub decision: Decision,
    /// Reviewer.
    pub reviewer: String,
    /// Note.
    pub note: String,
    /// Case file entry.
    pub case_entry: u64,
    /// What it did to the analysis.
    pub effect: String,
}

/// Everything about one group.
#[derive(Debug, Clone, Serialize)]
pub struct GroupReport {
    /// Group id.
    pub group_id: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Severity.
    pub severity: Severity,
    /// Why, in one sentence.
    pub reason: String,
    /// Whose decision the verdict rests on, if a reviewer's.
    pub provenance: Option<String>,
    /// Tool.
    pub tool: String,
    /// Target.
    pub target: Option<String>,
    /// Actor.
    pub actor: String,
    /// Intent scope.
    pub intent_scope: String,
    /// Intent fingerprint.
    pub fingerprint: String,
    /// Arguments that were fingerprinted (canonical record).
    pub arguments: Value,
    /// Action class of the contract applied.
    pub contract_class: String,
    /// Attach window of the contract applied.
    pub attach_window: String,
    /// Whether the contract was configured.
    pub contract_configured: bool,
    /// Calls.
    pub calls: usize,
    /// Execution ids, in time order.
    pub executions: Vec<String>,
    /// Dispatches.
    pub dispatches: usize,
    /// First event.
    pub first_at: Option<DateTime<Utc>>,
    /// Last event.
    pub last_at: Option<DateTime<Utc>>,
    /// The timeline, in time order.
    pub timeline: Vec<TimelineRow>,
    /// The five questions.
    pub questions: Vec<QuestionReport>,
    /// Findings.
    pub findings: Vec<FindingReport>,
    /// Reviewer decisions.
    pub decisions: Vec<DecisionReport>,
    /// Chain status of the evidence.
    pub chain: Vec<ChainLine>,
    /// Mermaid `sequenceDiagram` source.
    pub sequence_diagram: String,
}

/// A whole export.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `retrace <version>`.
    pub generator: String,
    /// Whether `--anonymize` was applied.
    pub anonymized: bool,
    /// Journals.
    pub journals: Vec<JournalInfo>,
    /// Case file, if any.
    pub case_file: Option<CaseInfo>,
    /// Analysis notes.
    pub notes: Vec<String>,
    /// Groups, in the order asked for.
    pub groups: Vec<GroupReport>,
}

/// Checks a journal's chain for the evidence lines of a group: given the
/// journal and the cited lines, a status and its words. `retrace verify`
/// can plug in here; [`evidence_chain_verified`] is the default.
pub type ChainCheck<'a> =
    dyn Fn(&Investigation, JournalId, &[SourceRef]) -> (ChainState, String) + 'a;

/// The default chain check: the journal's chain as verified while it was
/// loaded (the same result as `retrace verify`, DESIGN.md §6). The cited
/// lines are `intact` when all lie in the verified part of the chain,
/// `broken` when one lies at or after the first failure, `unchained` when
/// the format (or the record, such as a SQLite sessions row) has no chain,
/// `not_verified` when the chain could not be checked.
pub fn evidence_chain_verified(
    inv: &Investigation,
    journal: JournalId,
    lines: &[SourceRef],
) -> (ChainState, String) {
    use crate::journal::chain::{ChainMark, ChainStatus};
    let Some(j) = inv.journals.get(journal as usize) else {
        return (ChainState::Unchained, "unknown journal".into());
    };
    match &j.chain {
        ChainStatus::NoChain { reason } => (ChainState::Unchained, reason.clone()),
        ChainStatus::NotChecked { reason, .. } => (ChainState::NotVerified, reason.clone()),
        ChainStatus::Intact { .. } => {
            if lines
                .iter()
                .all(|&l| j.chain_mark(l) == ChainMark::Verified)
            {
                (ChainState::Intact, j.chain.summary())
            } else {
                (
                    ChainState::Unchained,
                    "some cited records lie outside the journal's chain".into(),
                )
            }
        }
        ChainStatus::Broken { failure, .. } => {
            let mut after: Vec<u32> = lines
                .iter()
                .filter(|&&l| j.chain_mark(l) == ChainMark::Unverified)
                .map(|l| l.position())
                .collect();
            after.sort_unstable();
            after.dedup();
            if after.is_empty() {
                (
                    ChainState::Intact,
                    format!(
                        "the cited lines lie before the chain break at line {} ({}); they verified",
                        failure.line, failure.kind
                    ),
                )
            } else {
                (
                    ChainState::Broken,
                    format!(
                        "cited line(s) {} lie at or after the chain break at line {} ({}): unverified",
                        after
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                        failure.line,
                        failure.kind
                    ),
                )
            }
        }
    }
}

/// A chain check that only looks at whether the cited lines carry the
/// native chain fields (`prev_hash`, `hash`, DESIGN.md §6), without
/// verifying them; formats without a chain are `unchained`.
pub fn evidence_chain_fields(
    inv: &Investigation,
    journal: JournalId,
    lines: &[SourceRef],
) -> (ChainState, String) {
    let Some(j) = inv.journals.get(journal as usize) else {
        return (ChainState::Unchained, "unknown journal".into());
    };
    if j.format != JournalFormat::Native {
        return (
            ChainState::Unchained,
            format!("{} has no hash chain", j.format.describe()),
        );
    }
    // Session records carry no seq and sit outside the event chain.
    let (mut events, mut chained) = (0usize, 0usize);
    for &s in lines {
        let v = inv
            .raw_line(s)
            .ok()
            .and_then(|l| serde_json::from_str::<Value>(&l).ok());
        let Some(v) = v else { continue };
        if v.get("seq").is_none() {
            continue;
        }
        events += 1;
        chained += usize::from(v.get("hash").is_some() && v.get("prev_hash").is_some());
    }
    match chained {
        0 => (
            ChainState::Unchained,
            "the lines carry no hash chain: they cannot be shown unaltered".into(),
        ),
        n if n == events => (
            ChainState::NotVerified,
            format!(
                "{n} cited event lines carry chain fields; this export does not check them: run `retrace verify`"
            ),
        ),
        n => (
            ChainState::NotVerified,
            format!(
                "only {n} of {events} cited event lines carry chain fields; run `retrace verify`"
            ),
        ),
    }
}

/// What to export and how.
pub struct Request<'a> {
    /// Groups, in order.
    pub groups: Vec<&'a Group>,
    /// The case file and its decisions.
    pub case: &'a CaseContext,
    /// Replace identities consistently.
    pub anonymize: bool,
    /// Journal chain check ([`evidence_chain_verified`] by default).
    pub chain_check: Option<&'a ChainCheck<'a>>,
}

pub(crate) fn hms(t: DateTime<Utc>) -> String {
    t.format("%H:%M:%S%.3f").to_string()
}

const PLACEHOLDERS: [&str; 2] = ["unknown", "unscoped"];

/// A gateway's reason code (`vault_locked`, `denied`, `approval_timeout`,
/// DESIGN.md §3) rather than free text: kept when anonymizing.
fn is_vocabulary(s: &str) -> bool {
    !s.is_empty() && s.len() <= 40 && s.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// Registers every original a report about `groups` may show, in a fixed
/// order, so that pseudonyms are numbered the same way on every run.
fn collect(inv: &Investigation, groups: &[&Group], case: &CaseContext) -> Pseudonyms {
    let mut p = Pseudonyms::new();
    for j in &inv.journals {
        p.register(Class::File, &j.name);
        if let Some(base) = std::path::Path::new(&j.name).file_name() {
            p.register(Class::File, &base.to_string_lossy());
        }
    }
    if let Some(n) = case.name() {
        p.register(Class::File, &n);
    }
    let mut all_groups: Vec<&Group> = groups.to_vec();
    all_groups.extend(inv.analysis.groups.iter());
    for g in all_groups {
        p.register(Class::Group, &g.id);
        p.register(Class::Fingerprint, &g.fingerprint);
        if !PLACEHOLDERS.contains(&g.actor.as_str()) {
            p.register(Class::Actor, &g.actor);
        }
        if !PLACEHOLDERS.contains(&g.intent_scope.as_str()) {
            p.register(Class::Scope, &g.intent_scope);
        }
        if let Some(t) = &g.target {
            p.register(Class::Target, t);
        }
        for &x in &g.executions {
            collect_execution(&mut p, inv, &inv.model.executions[x]);
        }
    }
    for d in &case.decisions {
        p.register(Class::Execution, &d.payload.execution_id);
        p.register(Class::Person, &d.payload.reviewer);
        p.register(Class::Text, &d.payload.note);
    }
    for e in &case.entries {
        for k in ["author", "text", "label"] {
            if let Some(s) = e.payload.get(k).and_then(Value::as_str) {
                let class = if k == "author" {
                    Class::Person
                } else {
                    Class::Text
                };
                p.register(class, s);
            }
        }
    }
    p
}

fn collect_call(p: &mut Pseudonyms, inv: &Investigation, c: &crate::model::CallRef) {
    if let Some(s) = &c.call_id {
        p.register(Class::Call, s);
    }
    if let Some(s) = &c.session_id {
        p.register(Class::Session, s);
        if let Some(sess) = inv.model.session(s) {
            if let Some(a) = &sess.actor {
                p.register(Class::Actor, a);
            }
            if let Some(m) = &sess.mcp_session_id {
                p.register(Class::McpSession, m);
            }
            if let Some(pr) = &sess.process {
                if let Some(pid) = pr.pid {
                    p.register(Class::Pid, &pid.to_string());
                }
                if let Some(n) = &pr.name {
                    p.register(Class::Process, n);
                }
            }
            if let Some(c) = &sess.client {
                p.register(Class::Client, c);
            }
        }
    }
    if let Some(s) = &c.mcp_session_id {
        p.register(Class::McpSession, s);
    }
    if let Some(id) = &c.jsonrpc_id {
        let s = match id {
            crate::model::JsonRpcId::Num(n) => n.to_string(),
            crate::model::JsonRpcId::Str(s) => s.clone(),
        };
        p.register(Class::JsonRpc, &s);
    }
}

/// Registers an error text, and the 90-character prefix the analysis
/// quotes in answers (`analysis::questions::outcome_words`).
fn collect_error(p: &mut Pseudonyms, err: &str) {
    let name = p.register(Class::Text, err);
    if err.chars().count() > 90 {
        let short: String = err.chars().take(90).collect();
        p.phrase(&short, &name);
    }
}

fn collect_execution(p: &mut Pseudonyms, inv: &Investigation, x: &Execution) {
    p.register(Class::Execution, &x.id);
    for e in &x.events {
        match &e.kind {
            EventKind::Accepted {
                call,
                action,
                fingerprint,
                idempotency_key,
                ..
            } => {
                collect_call(p, inv, call);
                for (k, class) in [
                    ("actor", Class::Actor),
                    ("target", Class::Target),
                    ("credential_ref", Class::Credential),
                    ("intent_scope", Class::Scope),
                    ("host_key", Class::Value),
                    ("account", Class::Value),
                    ("command", Class::Value),
                    ("cwd", Class::Value),
                ] {
                    if let Some(s) = action.0.get(k).and_then(Value::as_str) {
                        p.register(class, s);
                    }
                }
                if let Some(a) = action.0.get("arguments") {
                    p.register_value(a);
                }
                if let Some(f) = fingerprint {
                    p.register(Class::Fingerprint, f);
                }
                if let Some(k) = idempotency_key {
                    p.register(Class::Key, k);
                }
            }
            EventKind::Attached { call, .. } => collect_call(p, inv, call),
            EventKind::Authorized {
                approver: Some(a), ..
            } => {
                p.register(Class::Person, a);
            }
            EventKind::Dispatched {
                idempotency_key: Some(k),
            } => {
                p.register(Class::Key, k);
            }
            EventKind::Outcome {
                result_reference,
                error,
                ..
            } => {
                if let Some(r) = result_reference {
                    p.register(Class::Result, r);
                }
                if let Some(er) = error {
                    collect_error(p, er);
                }
            }
            EventKind::DispatchFailed { error } | EventKind::DeliveryFailed { error } => {
                collect_error(p, error)
            }
            EventKind::Rejected { reason } if !is_vocabulary(reason) => {
                p.register(Class::Text, reason);
            }
            _ => {}
        }
    }
}

/// The mark after a citation of evidence that no verified chain covers
/// (DESIGN.md §6: evidence from an unverified or broken span is marked as
/// such everywhere it shows), as `retrace investigate` writes it:
/// ` [UNVERIFIED: at or after the chain break at line 7]`, or, for a
/// chain that could not be checked, ` [UNVERIFIED: chain not checked]`.
/// Empty for verified or unchained evidence.
pub fn unverified_mark(inv: &Investigation, v: &EvidenceView) -> String {
    use crate::journal::chain::{ChainMark, ChainStatus};
    if v.chain != ChainMark::Unverified {
        return String::new();
    }
    match inv
        .journals
        .get(v.source.journal() as usize)
        .map(|j| &j.chain)
    {
        Some(ChainStatus::Broken { failure, .. }) => format!(
            " [UNVERIFIED: at or after the chain break at line {}]",
            failure.line
        ),
        Some(ChainStatus::NotChecked { .. }) => " [UNVERIFIED: chain not checked]".into(),
        _ => " [UNVERIFIED]".into(),
    }
}

struct Builder<'a, N: Namer> {
    inv: &'a Investigation,
    namer: N,
}

impl<N: Namer> Builder<'_, N> {
    fn cite(&mut self, v: &EvidenceView) -> String {
        let journal = self.namer.id(Class::File, &v.journal);
        let mut s = match v.seq {
            Some(seq) => format!("{journal}:{} seq {seq}", v.line),
            None => format!("{journal}:{}", v.line),
        };
        s.push_str(&format!(" ({}", v.record));
        if let Some(x) = &v.execution_id {
            s.push(' ');
            s.push_str(&self.namer.id(Class::Execution, x));
        }
        s.push(')');
        s.push_str(&unverified_mark(self.inv, v));
        s
    }

    fn call_words(&mut self, c: &crate::model::CallRef) -> String {
        let mut bits = Vec::new();
        if let Some(id) = &c.jsonrpc_id {
            bits.push(match id {
                crate::model::JsonRpcId::Num(n) => {
                    format!(
                        "JSON-RPC id {}",
                        self.namer.id(Class::JsonRpc, &n.to_string())
                    )
                }
                crate::model::JsonRpcId::Str(s) => {
                    format!("JSON-RPC id {:?}", self.namer.id(Class::JsonRpc, s))
                }
            });
        }
        if let Some(s) = &c.session_id {
            bits.push(format!("session {}", self.namer.id(Class::Session, s)));
        }
        if let Some(s) = &c.mcp_session_id {
            bits.push(format!(
                "MCP session {}",
                self.namer.id(Class::McpSession, s)
            ));
        }
        bits.join(" · ")
    }

    /// Key details of an event, each piece through the namer.
    fn detail(&mut self, e: &crate::model::Event, secret_fields: &[String]) -> String {
        match &e.kind {
            EventKind::Accepted {
                call,
                action,
                idempotency_key,
                ..
            } => {
                let args = action
                    .0
                    .get("arguments")
                    .map(|a| redact_secrets(a, secret_fields))
                    .unwrap_or(Value::Null);
                let mut s = format!(
                    "{} {}",
                    action.tool().unwrap_or("?"),
                    self.namer.value(&args)
                );
                let cw = self.call_words(call);
                if !cw.is_empty() {
                    s.push_str(" · ");
                    s.push_str(&cw);
                }
                if let Some(k) = idempotency_key {
                    s.push_str(&format!(" · key {}", self.namer.id(Class::Key, k)));
                }
                s
            }
            EventKind::Attached { call, recovery } => {
                let cw = self.call_words(call);
                format!(
                    "recovery {}{}{cw}",
                    recovery.as_str(),
                    if cw.is_empty() { "" } else { " · " }
                )
            }
            EventKind::Authorized { decision, approver } => match approver {
                Some(a) => format!("{decision} by {}", self.namer.id(Class::Person, a)),
                None => decision.clone(),
            },
            EventKind::Rejected { reason } if is_vocabulary(reason) => reason.clone(),
            EventKind::Rejected { reason } => self.namer.id(Class::Text, reason),
            EventKind::Dispatched { idempotency_key } => idempotency_key
                .as_deref()
                .map(|k| format!("Idempotency-Key {}", self.namer.id(Class::Key, k)))
                .unwrap_or_default(),
            EventKind::DispatchFailed { error } | EventKind::DeliveryFailed { error } => {
                self.namer.id(Class::Text, error)
            }
            EventKind::Outcome {
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
                if *replayed {
                    s.push_str(" · replayed");
                }
                s.push_str(&format!(" · via {}", observed_via.as_str()));
                if let Some(words) = e.facts().pairing.words() {
                    s.push_str(&format!(" · {words}"));
                }
                if let Some(r) = result_reference {
                    s.push_str(&format!(" · result {}", self.namer.id(Class::Result, r)));
                }
                if let Some(er) = error {
                    s.push_str(&format!(" · {}", self.namer.id(Class::Text, er)));
                }
                s
            }
            EventKind::Delivered => "result delivered to the agent".into(),
            EventKind::Cancelled { by } => format!("by {by}"),
        }
    }

    fn group(&mut self, g: &Group, case: &CaseContext, check: &ChainCheck<'_>) -> GroupReport {
        let inv = self.inv;
        let detail = inv.detail(g);
        let secret_fields = g.contract.secret_fields.clone();

        // Timeline.
        let mut rows: Vec<(DateTime<Utc>, SourceRef, usize, usize)> = Vec::new();
        for &xi in &g.executions {
            for (ei, e) in inv.model.executions[xi].events.iter().enumerate() {
                rows.push((e.at, e.source, xi, ei));
            }
        }
        rows.sort();
        let t0 = g.first_at.or(rows.first().map(|r| r.0)).unwrap_or_default();
        let mut timeline = Vec::new();
        for &(at, _, xi, ei) in &rows {
            let x = &inv.model.executions[xi];
            let e = &x.events[ei];
            let call_id = match &e.kind {
                EventKind::Accepted { call, .. } | EventKind::Attached { call, .. } => {
                    call.call_id.clone()
                }
                _ => None,
            };
            let v = inv.evidence(EvidenceRef::Event {
                execution: xi,
                event: ei,
            });
            timeline.push(TimelineRow {
                at,
                offset_ms: (at - t0).num_milliseconds(),
                execution_id: Some(self.namer.id(Class::Execution, &x.id)),
                call_id: call_id.map(|c| self.namer.id(Class::Call, &c)),
                stage: e.kind.name().to_string(),
                detail: self.detail(e, &secret_fields),
                source: self.cite(&v),
            });
        }
        let ids: BTreeSet<&str> = g
            .executions
            .iter()
            .map(|&x| inv.model.executions[x].id.as_str())
            .collect();
        let case_name = case.name().unwrap_or_default();
        let decisions: Vec<&DecisionRecord> = case
            .decisions
            .iter()
            .filter(|d| ids.contains(d.payload.execution_id.as_str()))
            .collect();
        let mut decision_reports = Vec::new();
        let mut provenance = Vec::new();
        for d in &decisions {
            let xi = inv.model.execution_index(&d.payload.execution_id);
            let source = d.resolution(&case_name).source;
            let applied = xi.and_then(|x| inv.analysis.lifecycles[x].resolution.as_ref());
            let effect = match (d.payload.decision, applied) {
                (Decision::Escalated, _) => "escalated: the outcome stays unknown".to_string(),
                (_, Some(r)) if r.source == source => {
                    "resolved the unknown outcome; verdicts use it".to_string()
                }
                _ => {
                    "not applied: the journal shows the outcome, and the journal stands".to_string()
                }
            };
            let reviewer = self.namer.id(Class::Person, &d.payload.reviewer);
            let execution_id = self.namer.id(Class::Execution, &d.payload.execution_id);
            if effect.starts_with("resolved") {
                provenance.push(format!(
                    "{execution_id}'s outcome comes from reviewer {reviewer}'s decision {} at {} (case file entry {}), not from the journal",
                    d.payload.decision,
                    d.at.format("%Y-%m-%d %H:%M:%SZ"),
                    d.seq
                ));
            }
            let case_file = self.namer.id(Class::File, &case_name);
            timeline.push(TimelineRow {
                at: d.at,
                offset_ms: (d.at - t0).num_milliseconds(),
                execution_id: Some(execution_id.clone()),
                call_id: None,
                stage: "reviewer_decision".into(),
                detail: format!(
                    "{} by {reviewer}: {}",
                    d.payload.decision,
                    self.namer.id(Class::Text, &d.payload.note)
                ),
                source: format!("{case_file} entry {}", d.seq),
            });
            decision_reports.push(DecisionReport {
                at: d.at,
                execution_id,
                decision: d.payload.decision,
                reviewer,
                note: self.namer.id(Class::Text, &d.payload.note),
                case_entry: d.seq,
                effect,
            });
        }
        timeline.sort_by_key(|r| r.at);

        let questions = detail
            .questions
            .iter()
            .map(|q| QuestionReport {
                question: q.question,
                asks: q.asks,
                answer: self.namer.text(&q.answer),
                unknown: q.unknown,
                evidence: q.evidence.iter().map(|v| self.cite(v)).collect(),
            })
            .collect();
        let findings = detail
            .findings
            .iter()
            .map(|f| FindingReport {
                kind: f.kind,
                detail: self.namer.text(&f.detail),
                evidence: f.evidence.iter().map(|v| self.cite(v)).collect(),
            })
            .collect();

        // Chain status of the evidence: every journal the group's events
        // come from, and the case file when decisions are shown.
        let mut by_journal: std::collections::BTreeMap<JournalId, Vec<SourceRef>> =
            Default::default();
        for &(_, s, _, _) in &rows {
            by_journal.entry(s.journal()).or_default().push(s);
        }
        for q in &detail.questions {
            for v in &q.evidence {
                by_journal
                    .entry(v.source.journal())
                    .or_default()
                    .push(v.source);
            }
        }
        let mut chain = Vec::new();
        for (j, mut lines) in by_journal {
            lines.sort();
            lines.dedup();
            let (status, words) = check(inv, j, &lines);
            let name = inv
                .journals
                .get(j as usize)
                .map_or_else(|| format!("journal#{j}"), |lj| lj.name.clone());
            chain.push(ChainLine {
                source: self.namer.id(Class::File, &name),
                kind: "journal",
                status,
                detail: self.namer.text(&words),
            });
        }
        if !decisions.is_empty()
            && let Some(status) = &case.chain
        {
            chain.push(ChainLine {
                source: self.namer.id(Class::File, &case_name),
                kind: "case_file",
                status: if status.is_intact() {
                    ChainState::Intact
                } else {
                    ChainState::Broken
                },
                detail: status.describe(),
            });
        }

        let arguments = detail
            .canonical_action
            .get("arguments")
            .map(|a| self.namer.value(a))
            .unwrap_or(Value::Null);
        let mut report = GroupReport {
            group_id: self.namer.id(Class::Group, &g.id),
            verdict: g.verdict,
            severity: g.severity(),
            reason: self.namer.text(&detail.reason),
            provenance: (!provenance.is_empty()).then(|| provenance.join("; ")),
            tool: g.tool.clone(),
            target: g.target.as_ref().map(|t| self.namer.id(Class::Target, t)),
            actor: self.name_or_placeholder(Class::Actor, &g.actor),
            intent_scope: self.name_or_placeholder(Class::Scope, &g.intent_scope),
            fingerprint: self.namer.id(Class::Fingerprint, &g.fingerprint),
            arguments,
            contract_class: g.contract.class.as_str().to_string(),
            attach_window: humantime::format_duration(g.contract.attach_window).to_string(),
            contract_configured: g.contract.configured,
            calls: g.calls,
            executions: g
                .executions
                .iter()
                .map(|&x| self.namer.id(Class::Execution, &inv.model.executions[x].id))
                .collect(),
            dispatches: g.dispatches,
            first_at: g.first_at,
            last_at: g.last_at,
            timeline,
            questions,
            findings,
            decisions: decision_reports,
            chain,
            sequence_diagram: String::new(),
        };
        report.sequence_diagram = mermaid::sequence_diagram(&report);
        report
    }

    fn name_or_placeholder(&mut self, class: Class, s: &str) -> String {
        if PLACEHOLDERS.contains(&s) {
            s.to_string()
        } else {
            self.namer.id(class, s)
        }
    }
}

impl Report {
    /// Builds the report for the requested groups.
    pub fn build(inv: &Investigation, req: &Request<'_>) -> Report {
        if req.anonymize {
            let p = collect(inv, &req.groups, req.case);
            Self::build_with(inv, req, p)
        } else {
            Self::build_with(inv, req, anonymize::Plain)
        }
    }

    fn build_with<N: Namer>(inv: &Investigation, req: &Request<'_>, namer: N) -> Report {
        let mut b = Builder { inv, namer };
        let default_check = evidence_chain_verified;
        let check: &ChainCheck<'_> = req.chain_check.unwrap_or(&default_check);
        let groups = req
            .groups
            .iter()
            .map(|g| b.group(g, req.case, check))
            .collect();
        let journals = inv
            .journals
            .iter()
            .map(|j| JournalInfo {
                name: b.namer.id(Class::File, &j.name),
                format: j.format.name(),
                lines: j.lines,
                bad_lines: j.bad_line_count,
            })
            .collect();
        let case_file = req.case.name().map(|n| CaseInfo {
            name: b.namer.id(Class::File, &n),
            exists: req.case.exists,
            chain: req
                .case
                .chain
                .as_ref()
                .map_or_else(|| "no case file yet".into(), |c| c.describe()),
            intact: req.case.chain.as_ref().is_none_or(|c| c.is_intact()),
        });
        let notes = inv.analysis.notes.iter().map(|n| b.namer.text(n)).collect();
        Report {
            generator: format!("retrace {}", env!("CARGO_PKG_VERSION")),
            anonymized: b.namer.anonymizes(),
            journals,
            case_file,
            notes,
            groups,
        }
    }
}
