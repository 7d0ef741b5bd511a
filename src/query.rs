//! The one place front ends ask for groups, filters and detail. The CLI, the
//! TUI and the exporters read everything through [`Investigation`]; none of
//! them reaches into the journal readers or the analysis directly.
//!
//! Every string that comes from a journal is returned as the journal wrote
//! it; front ends pass it through [`crate::sanitize::escape`] before display.

use crate::analysis::verdict::TargetAnswer;
use crate::analysis::{
    self, Analysis, Answer, Config, EvidenceRef, Finding, Group, Severity, Verdict, lifecycle,
};
use crate::journal::chain::ChainMark;
use crate::journal::{
    self, Capabilities, Format, JournalError, JournalSource, LoadOptions, LoadedJournal, Progress,
};
use crate::model::{Event, EventKind, JournalId, Model, SourceRef};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Errors a query can give.
#[derive(Debug, thiserror::Error)]
pub enum QueryError {
    /// A journal could not be loaded.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// No group has that id.
    #[error("no group {0:?}; `retrace groups --all` lists them")]
    NoSuchGroup(String),
    /// Several groups start with that prefix.
    #[error("group id {prefix:?} is ambiguous: {}", matches.join(", "))]
    AmbiguousGroup {
        /// What was asked.
        prefix: String,
        /// Matching ids.
        matches: Vec<String>,
    },
    /// No execution has that id.
    #[error("no execution {0:?}")]
    NoSuchExecution(String),
}

/// Loaded journals, the model built from them, and its analysis.
#[derive(Debug)]
pub struct Investigation {
    /// Journals with their load reports.
    pub journals: Vec<LoadedJournal>,
    /// Calls, executions, sessions.
    pub model: Model,
    /// Groups and verdicts.
    pub analysis: Analysis,
    /// Contracts, key and reviewer resolutions the analysis used.
    pub config: Config,
}

impl analysis::JournalCaps for Vec<LoadedJournal> {
    fn caps(&self, id: JournalId) -> Capabilities {
        self.get(id as usize)
            .map(|j| j.capabilities)
            .unwrap_or(Format::Native.capabilities())
    }
    fn name(&self, id: JournalId) -> &str {
        self.get(id as usize)
            .map_or("the journal", |j| j.format.noun())
    }
}

/// Which groups to list.
#[derive(Debug, Clone, Default)]
pub struct GroupFilter {
    /// List every group, not only those worth a look.
    pub all: bool,
    /// Only these verdicts (empty: any).
    pub verdicts: Vec<Verdict>,
    /// Only groups whose tool name contains this text.
    pub tool: Option<String>,
}

/// One group as `retrace groups --json` prints it (DESIGN.md §7).
#[derive(Debug, Clone, Serialize)]
pub struct GroupSummary {
    /// Group id.
    pub group_id: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Severity.
    pub severity: Severity,
    /// Tool.
    pub tool: String,
    /// Actor.
    pub actor: String,
    /// Intent scope.
    pub intent_scope: String,
    /// Intent fingerprint.
    pub fingerprint: String,
    /// Number of calls.
    pub calls: usize,
    /// Number of executions.
    pub executions: usize,
    /// Number of dispatches.
    pub dispatches: usize,
    /// First event (RFC 3339 UTC).
    pub first_at: Option<DateTime<Utc>>,
    /// Last event.
    pub last_at: Option<DateTime<Utc>>,
    /// Execution ids, in time order.
    pub execution_ids: Vec<String>,
    /// Finding names.
    pub flags: Vec<&'static str>,
    /// Reviewer decisions applied to the group's executions (who, what,
    /// when, which case file entry); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resolutions: Vec<analysis::Resolution>,
}

/// Calls over time (see [`Investigation::call_rate`]).
#[derive(Debug, Clone, Default, Serialize)]
pub struct CallRate {
    /// Time of the first call.
    pub start: Option<DateTime<Utc>>,
    /// Time of the last call.
    pub end: Option<DateTime<Utc>>,
    /// Calls in each equal slice of `start..=end`.
    pub counts: Vec<u64>,
}

/// Where a piece of evidence is, resolved for display.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceView {
    /// Journal name.
    pub journal: String,
    /// 1-based line (the row id for a row of a table).
    pub line: u32,
    /// Journal `seq`, when the format has one.
    pub seq: Option<u64>,
    /// What the line records (`accepted`, `outcome`, `session`, ...).
    pub record: &'static str,
    /// Execution id, for events.
    pub execution_id: Option<String>,
    /// When.
    pub at: Option<DateTime<Utc>>,
    /// Whether the line lies in the verified part of its journal's audit
    /// chain (`verified`), at or after a break (`unverified`), or in a
    /// journal without a chain (`no_chain`). DESIGN.md §6.
    pub chain: ChainMark,
    /// Where to find it again.
    #[serde(skip)]
    pub source: SourceRef,
    /// The pointer this view resolves.
    #[serde(skip)]
    pub pointer: EvidenceRef,
}

impl EvidenceView {
    /// `file:line` (``file table `events` row N`` for a row) with `seq N`
    /// when known.
    pub fn cite(&self) -> String {
        let at = self.source.cite(&self.journal);
        match self.seq {
            Some(s) => format!("{at} seq {s}"),
            None => at,
        }
    }
}

/// One answer with its evidence resolved.
#[derive(Debug, Clone, Serialize)]
pub struct AnswerView {
    /// 1 to 5.
    pub question: u8,
    /// The question.
    pub asks: &'static str,
    /// The answer.
    pub answer: String,
    /// Whether the journal cannot answer.
    pub unknown: bool,
    /// Evidence.
    pub evidence: Vec<EvidenceView>,
}

/// One finding with evidence resolved.
#[derive(Debug, Clone, Serialize)]
pub struct FindingView {
    /// Name.
    pub kind: &'static str,
    /// Detail.
    pub detail: String,
    /// Evidence.
    pub evidence: Vec<EvidenceView>,
}

/// How a lifecycle stage ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageStatus {
    /// The stage was reached normally.
    Done,
    /// The stage was an exit: rejected, dispatch failed, delivery failed,
    /// or the target reported a failure.
    Failed,
    /// Reached, but what happened is unknown (an `unknown` or ambiguous
    /// outcome).
    Unknown,
}

/// One stage mark of a lifecycle lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct StageMark {
    /// When.
    pub at: DateTime<Utc>,
    /// How it ended.
    pub status: StageStatus,
    /// The event name (`authorized`, `rejected`, `delivery_failed`, ...).
    pub event: &'static str,
}

/// Stage marks of one execution, for lifecycle lanes: accepted, authorized,
/// dispatched, outcome observed, result delivered (DESIGN.md §2).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stages {
    /// Accepted.
    pub accepted: Option<StageMark>,
    /// Authorized, or rejected.
    pub authorized: Option<StageMark>,
    /// Dispatched, or dispatch failed.
    pub dispatched: Option<StageMark>,
    /// Outcome observed.
    pub outcome: Option<StageMark>,
    /// Result delivered, or delivery failed.
    pub delivered: Option<StageMark>,
}

impl Stages {
    /// The marks in lifecycle order with their stage names.
    pub fn marks(&self) -> [(&'static str, Option<StageMark>); 5] {
        [
            ("accepted", self.accepted),
            ("authorized", self.authorized),
            ("dispatched", self.dispatched),
            ("outcome", self.outcome),
            ("delivered", self.delivered),
        ]
    }
}

/// One execution of a group, summarized.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutionSummary {
    /// Index in the model (for front ends to ask for detail).
    #[serde(skip)]
    pub index: usize,
    /// Execution id.
    pub execution_id: String,
    /// State at the end of the journal, in the seed's words.
    pub state: &'static str,
    /// Stage times.
    pub stages: Stages,
    /// Outcome in words (`HTTP 201 ...`), if any.
    pub outcome: Option<String>,
    /// Idempotency key sent.
    pub idempotency_key: Option<String>,
    /// Session of the creating call.
    pub session_id: Option<String>,
    /// Calls that attached, with their time and recovery.
    pub attached: Vec<AttachedCall>,
    /// Number of events.
    pub events: usize,
    /// The reviewer decision applied to this execution, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<analysis::Resolution>,
}

/// A call that attached to an execution.
#[derive(Debug, Clone, Serialize)]
pub struct AttachedCall {
    /// When.
    pub at: DateTime<Utc>,
    /// How the gateway recovered.
    pub recovery: &'static str,
    /// Call id.
    pub call_id: Option<String>,
    /// Session.
    pub session_id: Option<String>,
}

/// Everything `retrace investigate` shows about a group.
#[derive(Debug, Clone, Serialize)]
pub struct GroupDetail {
    /// The summary fields.
    #[serde(flatten)]
    pub summary: GroupSummary,
    /// Target.
    pub target: Option<String>,
    /// Why the verdict.
    pub reason: String,
    /// The five questions.
    pub questions: Vec<AnswerView>,
    /// Findings.
    pub findings: Vec<FindingView>,
    /// Executions with their lifecycle.
    pub executions_detail: Vec<ExecutionSummary>,
    /// Contract applied.
    pub contract: analysis::ToolContract,
    /// The canonical action record that was fingerprinted.
    pub canonical_action: Value,
}

/// One event for display.
#[derive(Debug, Clone, Serialize)]
pub struct EventView {
    /// Where.
    pub evidence: EvidenceView,
    /// Event name.
    pub event: &'static str,
    /// Key details in one line.
    pub summary: String,
    /// Fields the journal line carried beyond what retrace reads (DESIGN.md
    /// §3: unknown fields are kept and shown). Omitted when empty.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
    /// What the reader established about the event (`pairing`,
    /// `arguments_logged`, `inferred`, `request_line`, notes such as
    /// `origin`; [`crate::model::ReaderFacts`]). Omitted when empty.
    #[serde(skip_serializing_if = "crate::model::ReaderFacts::is_empty")]
    pub facts: crate::model::ReaderFacts,
}

impl Investigation {
    /// Loads journals and analyses them.
    ///
    /// # Errors
    /// [`QueryError::Journal`] when a journal cannot be read at all.
    pub fn open(
        sources: Vec<JournalSource>,
        forced: Option<Format>,
        config: &Config,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Investigation, QueryError> {
        let (journals, model) = journal::load(sources, forced, progress)?;
        Ok(Self::analyze(journals, model, config))
    }

    /// Loads journals with keys for chain checks and decryption, and
    /// analyses them.
    ///
    /// # Errors
    /// [`QueryError::Journal`] when a journal cannot be read at all.
    pub fn open_with(
        sources: Vec<JournalSource>,
        opts: &LoadOptions,
        config: &Config,
        progress: &mut dyn FnMut(Progress),
    ) -> Result<Investigation, QueryError> {
        let (journals, model) = journal::load_with(sources, opts, progress)?;
        Ok(Self::analyze(journals, model, config))
    }

    /// Analyses loaded journals.
    pub fn analyze(journals: Vec<LoadedJournal>, model: Model, config: &Config) -> Investigation {
        let analysis = analysis::analyze(&model, &journals, config);
        Investigation {
            journals,
            model,
            analysis,
            config: config.clone(),
        }
    }

    /// Groups passing the filter, worst first.
    pub fn groups(&self, f: &GroupFilter) -> Vec<&Group> {
        self.analysis
            .groups
            .iter()
            .filter(|g| f.all || g.worth_a_look() || !f.verdicts.is_empty())
            .filter(|g| f.verdicts.is_empty() || f.verdicts.contains(&g.verdict))
            .filter(|g| f.tool.as_ref().is_none_or(|t| g.tool.contains(t.as_str())))
            .collect()
    }

    /// A group by id or unique id prefix.
    ///
    /// # Errors
    /// [`QueryError::NoSuchGroup`] or [`QueryError::AmbiguousGroup`].
    pub fn group(&self, id: &str) -> Result<&Group, QueryError> {
        if let Some(g) = self.analysis.groups.iter().find(|g| g.id == id) {
            return Ok(g);
        }
        let m: Vec<&Group> = self
            .analysis
            .groups
            .iter()
            .filter(|g| g.id.starts_with(id))
            .collect();
        match m.as_slice() {
            [] => Err(QueryError::NoSuchGroup(id.to_string())),
            [g] => Ok(g),
            many => Err(QueryError::AmbiguousGroup {
                prefix: id.to_string(),
                matches: many.iter().map(|g| g.id.clone()).collect(),
            }),
        }
    }

    /// Indexes into [`Analysis::groups`] of the groups passing the filter,
    /// worst first (the order of [`Investigation::groups`]). Front ends that
    /// keep their own sorted or filtered views hold these indexes.
    pub fn group_indices(&self, f: &GroupFilter) -> Vec<usize> {
        self.analysis
            .groups
            .iter()
            .enumerate()
            .filter(|(_, g)| f.all || g.worth_a_look() || !f.verdicts.is_empty())
            .filter(|(_, g)| f.verdicts.is_empty() || f.verdicts.contains(&g.verdict))
            .filter(|(_, g)| f.tool.as_ref().is_none_or(|t| g.tool.contains(t.as_str())))
            .map(|(i, _)| i)
            .collect()
    }

    /// The group at an index of [`Analysis::groups`].
    pub fn group_at(&self, index: usize) -> Option<&Group> {
        self.analysis.groups.get(index)
    }

    /// Index in [`Analysis::groups`] of the group an execution belongs to.
    pub fn execution_group(&self, execution: usize) -> Option<usize> {
        self.analysis.execution_group.get(execution).copied()
    }

    /// For every session (aligned with `model.sessions`), the executions its
    /// calls created or attached to, once each, in the order of the calls
    /// (time order). Calls name their session by `call.session_id`.
    pub fn session_executions(&self) -> Vec<Vec<usize>> {
        let mut out: Vec<Vec<usize>> = vec![Vec::new(); self.model.sessions.len()];
        let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        for (i, s) in self.model.sessions.iter().enumerate() {
            index.entry(s.session_id.as_str()).or_insert(i);
        }
        let mut seen: std::collections::HashSet<(usize, usize)> = std::collections::HashSet::new();
        for c in &self.model.calls {
            let Some(&si) = c.call.session_id.as_deref().and_then(|s| index.get(s)) else {
                continue;
            };
            if seen.insert((si, c.execution)) {
                out[si].push(c.execution);
            }
        }
        out
    }

    /// Calls per time bucket over the whole investigation, for a call-rate
    /// sparkline: `buckets` equal slices from the first call to the last.
    /// Empty when there is no call.
    pub fn call_rate(&self, buckets: usize) -> CallRate {
        let times = || self.model.calls.iter().map(|c| c.at);
        let (Some(start), Some(end)) = (times().min(), times().max()) else {
            return CallRate::default();
        };
        let n = buckets.max(1);
        let span = (end - start).num_milliseconds().max(1) as f64;
        let mut counts = vec![0u64; n];
        for t in times() {
            let f = (t - start).num_milliseconds() as f64 / span;
            let b = ((f * n as f64) as usize).min(n - 1);
            counts[b] += 1;
        }
        CallRate {
            start: Some(start),
            end: Some(end),
            counts,
        }
    }

    /// Index of a group in [`Analysis::groups`].
    pub fn group_index(&self, id: &str) -> Option<usize> {
        self.analysis.groups.iter().position(|g| g.id == id)
    }

    /// Number of groups per verdict (all groups), most severe first.
    pub fn verdict_counts(&self) -> Vec<(Verdict, usize)> {
        let mut m: BTreeMap<Verdict, usize> = BTreeMap::new();
        for g in &self.analysis.groups {
            *m.entry(g.verdict).or_default() += 1;
        }
        m.into_iter().collect()
    }

    /// The summary of a group (DESIGN.md §7 `groups --json` element).
    pub fn summary(&self, g: &Group) -> GroupSummary {
        GroupSummary {
            group_id: g.id.clone(),
            verdict: g.verdict,
            severity: g.severity(),
            tool: g.tool.clone(),
            actor: g.actor.clone(),
            intent_scope: g.intent_scope.clone(),
            fingerprint: g.fingerprint.clone(),
            calls: g.calls,
            executions: g.executions.len(),
            dispatches: g.dispatches,
            first_at: g.first_at,
            last_at: g.last_at,
            execution_ids: g
                .executions
                .iter()
                .map(|&x| self.model.executions[x].id.clone())
                .collect(),
            flags: g
                .findings
                .iter()
                .map(|f| f.kind.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            resolutions: g
                .executions
                .iter()
                .filter_map(|&x| self.analysis.lifecycles[x].resolution.clone())
                .collect(),
        }
    }

    /// Resolves an evidence pointer.
    pub fn evidence(&self, r: EvidenceRef) -> EvidenceView {
        match r {
            EvidenceRef::Event { execution, event } => {
                let x = &self.model.executions[execution];
                let e = &x.events[event];
                EvidenceView {
                    journal: self.journal_name(e.source.journal()),
                    line: e.source.position(),
                    seq: e.seq,
                    record: e.kind.name(),
                    execution_id: Some(x.id.clone()),
                    at: Some(e.at),
                    chain: self.chain_mark(e.source),
                    source: e.source,
                    pointer: r,
                }
            }
            EvidenceRef::Session { index } => {
                let s = &self.model.sessions[index];
                EvidenceView {
                    journal: self.journal_name(s.source.journal()),
                    line: s.source.position(),
                    seq: None,
                    record: "session",
                    execution_id: None,
                    at: s.started_at,
                    chain: self.chain_mark(s.source),
                    source: s.source,
                    pointer: r,
                }
            }
        }
    }

    /// Whether a line lies in the verified part of its journal's chain.
    pub fn chain_mark(&self, at: SourceRef) -> ChainMark {
        self.journals
            .get(at.journal() as usize)
            .map_or(ChainMark::NoChain, |j| j.chain_mark(at))
    }

    fn journal_name(&self, id: JournalId) -> String {
        self.journals
            .get(id as usize)
            .map_or_else(|| format!("journal#{id}"), |j| j.name.clone())
    }

    fn answer_view(&self, a: &Answer) -> AnswerView {
        AnswerView {
            question: a.question,
            asks: analysis::QUESTIONS[usize::from(a.question.saturating_sub(1)).min(4)],
            answer: a.text.clone(),
            unknown: a.unknown,
            evidence: a.evidence.iter().map(|&r| self.evidence(r)).collect(),
        }
    }

    fn finding_view(&self, f: &Finding) -> FindingView {
        FindingView {
            kind: f.kind.as_str(),
            detail: f.detail.clone(),
            evidence: f.evidence.iter().map(|&r| self.evidence(r)).collect(),
        }
    }

    /// The verdict of a group in words and its five answers (computed on
    /// demand).
    pub fn explain(&self, g: &Group) -> analysis::Explanation {
        analysis::explain(&self.model, &self.analysis, &self.journals, g)
    }

    /// The canonical action record the group's fingerprint was computed from.
    pub fn canonical_action(&self, g: &Group) -> Value {
        analysis::canonical_action(&self.model, &self.config, g)
    }

    /// Why the group got its verdict, in one sentence.
    pub fn reason(&self, g: &Group) -> String {
        self.explain(g).reason
    }

    /// The five answers of a group, resolved.
    pub fn answers(&self, g: &Group) -> Vec<AnswerView> {
        self.explain(g)
            .answers
            .iter()
            .map(|a| self.answer_view(a))
            .collect()
    }

    /// The findings of a group, resolved.
    pub fn findings(&self, g: &Group) -> Vec<FindingView> {
        g.findings.iter().map(|f| self.finding_view(f)).collect()
    }

    /// An execution summarized with its stage times.
    pub fn execution_summary(&self, xi: usize) -> ExecutionSummary {
        let x = &self.model.executions[xi];
        let l = &self.analysis.lifecycles[xi];
        let caps = analysis::JournalCaps::caps(
            &self.journals,
            x.events.first().map_or(0, |e| e.source.journal()),
        );
        let mark = |i: Option<usize>| {
            i.map(|i| {
                let e = &x.events[i];
                let status = match &e.kind {
                    EventKind::Rejected { .. }
                    | EventKind::DispatchFailed { .. }
                    | EventKind::DeliveryFailed { .. } => StageStatus::Failed,
                    EventKind::Outcome { .. } => {
                        match lifecycle::target_answer(e, l.idempotency_key.is_some()) {
                            TargetAnswer::NoAnswer | TargetAnswer::Ambiguous => {
                                StageStatus::Unknown
                            }
                            TargetAnswer::Performed | TargetAnswer::Replayed => StageStatus::Done,
                            _ => StageStatus::Failed,
                        }
                    }
                    _ => StageStatus::Done,
                };
                StageMark {
                    at: e.at,
                    status,
                    event: e.kind.name(),
                }
            })
        };
        let stages = Stages {
            accepted: mark(l.accepted),
            authorized: mark(l.authorized.or(l.rejected)),
            dispatched: mark(l.dispatched.or(l.dispatch_failed)),
            outcome: mark(l.decisive_outcome.or(l.outcomes.first().copied())),
            delivered: mark(l.deliveries.last().copied()),
        };
        let attached = l
            .attached
            .iter()
            .filter_map(|&i| match &x.events[i].kind {
                EventKind::Attached { call, recovery } => Some(AttachedCall {
                    at: x.events[i].at,
                    recovery: recovery.as_str(),
                    call_id: call.call_id.clone(),
                    session_id: call.session_id.clone(),
                }),
                _ => None,
            })
            .collect();
        ExecutionSummary {
            index: xi,
            execution_id: x.id.clone(),
            state: l.state_name(x, caps.delivery),
            stages,
            outcome: l.decisive_outcome.map(|i| event_summary(&x.events[i])),
            idempotency_key: l.idempotency_key.clone(),
            session_id: x.accepted().and_then(|(_, c, _)| c.session_id.clone()),
            attached,
            events: x.events.len(),
            resolution: l.resolution.clone(),
        }
    }

    /// Everything about a group.
    pub fn detail(&self, g: &Group) -> GroupDetail {
        let ex = self.explain(g);
        GroupDetail {
            summary: self.summary(g),
            target: g.target.clone(),
            reason: ex.reason,
            questions: ex.answers.iter().map(|a| self.answer_view(a)).collect(),
            findings: self.findings(g),
            executions_detail: g
                .executions
                .iter()
                .map(|&x| self.execution_summary(x))
                .collect(),
            contract: g.contract.clone(),
            canonical_action: self.canonical_action(g),
        }
    }

    /// The events of an execution, for display.
    /// Arguments named secret by the group's tool contract are redacted.
    pub fn events(&self, xi: usize) -> Vec<EventView> {
        let x = &self.model.executions[xi];
        let secrets: &[String] = self
            .execution_group(xi)
            .and_then(|g| self.analysis.groups.get(g))
            .map_or(&[], |g| g.contract.secret_fields.as_slice());
        x.events
            .iter()
            .enumerate()
            .map(|(i, e)| EventView {
                evidence: self.evidence(EvidenceRef::Event {
                    execution: xi,
                    event: i,
                }),
                event: e.kind.name(),
                summary: event_summary_redacted(e, secrets),
                extra: e.extra.clone(),
                facts: e.facts().clone(),
            })
            .collect()
    }

    /// The raw text of a journal line, as written.
    ///
    /// # Errors
    /// When the journal can no longer be read.
    pub fn raw_line(&self, at: SourceRef) -> Result<String, JournalError> {
        match self.journals.get(at.journal() as usize) {
            Some(j) => j.read_raw(at),
            None => Ok(String::new()),
        }
    }

    /// Finds an execution by id.
    ///
    /// # Errors
    /// [`QueryError::NoSuchExecution`].
    pub fn execution(&self, id: &str) -> Result<usize, QueryError> {
        self.model
            .execution_index(id)
            .ok_or_else(|| QueryError::NoSuchExecution(id.to_string()))
    }
}

/// Key details of an event in one line.
pub fn event_summary(e: &Event) -> String {
    event_summary_redacted(e, &[])
}

/// Replaces the values of the tool contract's secret fields (DESIGN.md §4:
/// `secret_fields`) in journal arguments with `[secret field]`.
pub fn redact_secrets(args: &Value, secret_fields: &[String]) -> Value {
    match args {
        Value::Object(m) if !secret_fields.is_empty() => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    if secret_fields.contains(k) {
                        (k.clone(), Value::String("[secret field]".into()))
                    } else {
                        (k.clone(), v.clone())
                    }
                })
                .collect(),
        ),
        v => v.clone(),
    }
}

/// [`event_summary`] with the arguments' secret fields redacted.
pub fn event_summary_redacted(e: &Event, secret_fields: &[String]) -> String {
    match &e.kind {
        EventKind::Accepted {
            call,
            action,
            idempotency_key,
            ..
        } => {
            let mut s = format!(
                "{} {}",
                action.tool().unwrap_or("?"),
                action
                    .arguments()
                    .map(|a| redact_secrets(&Value::Object(a.clone()), secret_fields).to_string())
                    .unwrap_or_default()
            );
            if let Some(id) = &call.jsonrpc_id {
                s.push_str(&format!(" · JSON-RPC id {id}"));
            }
            if let Some(sid) = &call.session_id {
                s.push_str(&format!(" · session {sid}"));
            }
            if let Some(k) = idempotency_key {
                s.push_str(&format!(" · key {k}"));
            }
            s
        }
        EventKind::Attached { call, recovery } => format!(
            "{}{}",
            recovery.as_str(),
            call.call_id
                .as_deref()
                .map(|c| format!(" · call {c}"))
                .unwrap_or_default()
        ),
        EventKind::Authorized { decision, approver } => format!(
            "{decision}{}",
            approver
                .as_deref()
                .map(|a| format!(" by {a}"))
                .unwrap_or_default()
        ),
        EventKind::Rejected { reason } => reason.clone(),
        EventKind::Dispatched { idempotency_key } => idempotency_key
            .as_deref()
            .map(|k| format!("Idempotency-Key {k}"))
            .unwrap_or_default(),
        EventKind::DispatchFailed { error } => error.clone(),
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
                s.push_str(&format!(" · result {r}"));
            }
            if let Some(er) = error {
                s.push_str(&format!(" · {er}"));
            }
            s
        }
        EventKind::Delivered => String::new(),
        EventKind::DeliveryFailed { error } => error.clone(),
        EventKind::Cancelled { by } => format!("by {by}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Investigation {
        Investigation::open(
            crate::sample::sources(),
            None,
            &crate::sample::config(),
            &mut |_| {},
        )
        .unwrap()
    }

    #[test]
    fn group_indices_follow_groups() {
        let inv = sample();
        for f in [
            GroupFilter::default(),
            GroupFilter {
                all: true,
                ..GroupFilter::default()
            },
        ] {
            let by_ref: Vec<&str> = inv.groups(&f).iter().map(|g| g.id.as_str()).collect();
            let by_index: Vec<&str> = inv
                .group_indices(&f)
                .into_iter()
                .map(|i| inv.group_at(i).unwrap().id.as_str())
                .collect();
            assert_eq!(by_ref, by_index);
        }
    }

    #[test]
    fn every_execution_belongs_to_its_group() {
        let inv = sample();
        for xi in 0..inv.model.executions.len() {
            let g = inv.group_at(inv.execution_group(xi).unwrap()).unwrap();
            assert!(g.executions.contains(&xi));
        }
    }

    #[test]
    fn session_executions_come_from_calls() {
        let inv = sample();
        let per = inv.session_executions();
        assert_eq!(per.len(), inv.model.sessions.len());
        let expected: std::collections::BTreeSet<usize> = inv
            .model
            .calls
            .iter()
            .filter(|c| c.call.session_id.as_deref() == Some(&inv.model.sessions[0].session_id))
            .map(|c| c.execution)
            .collect();
        assert!(!expected.is_empty());
        assert_eq!(
            per[0]
                .iter()
                .copied()
                .collect::<std::collections::BTreeSet<_>>(),
            expected
        );
    }

    #[test]
    fn call_rate_counts_every_call() {
        let inv = sample();
        for n in [1, 7, 64] {
            let r = inv.call_rate(n);
            assert_eq!(r.counts.len(), n);
            assert_eq!(r.counts.iter().sum::<u64>(), inv.model.calls.len() as u64);
        }
        let r = inv.call_rate(10);
        assert!(r.counts[0] > 0 && r.counts[9] > 0, "{r:?}");
    }
}
