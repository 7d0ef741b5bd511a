//! What front ends show, as plain values built from the investigation:
//! group summaries and details, evidence citations, execution lanes, event
//! lists. Every string is as the journal wrote it; front ends escape it.

use super::Investigation;
use super::words::{Plain, event_detail};
use crate::analysis::verdict::TargetAnswer;
use crate::analysis::{
    self, ActionItem, Answer, ContractBasis, EvidenceRef, Finding, Resolution, Severity,
    ToolContract, Verdict, lifecycle,
};
use crate::journal::chain::ChainMark;
use crate::model::{
    ActionRecord, Event, EventIdx, EventKind, EventRef, ExecIdx, GroupIdx, KindRef, SessionIdx,
    SourceRef,
};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

/// One group as `retrace groups --json` prints it (docs/design.md §7).
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
    /// What the tool's class rests on: `contract`, `hint` (a server's
    /// annotation, untrusted: docs/design.md §4.5) or `default`.
    pub class_basis: ContractBasis,
    /// Reviewer decisions applied to the group's executions (who, what,
    /// when, which case file entry); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub resolutions: Vec<Resolution>,
    /// Under `--since`: the ids of the group's executions that began
    /// before the window, read because a repeat in it may pair with them
    /// (docs/design.md §7.2); absent when there are none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before_window: Vec<String>,
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
    /// journal without a chain (`no_chain`). docs/design.md §6.
    pub chain: ChainMark,
    /// What the line's hash does not pin down (a repeated key, an integer
    /// beyond ±2^53; docs/design.md §6.4), in words; omitted when nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ambiguous: Option<String>,
    /// Where to find it again.
    #[serde(skip)]
    pub source: SourceRef,
    /// The pointer this view resolves.
    #[serde(skip)]
    pub(super) pointer: EvidenceRef,
}

/// What a piece of evidence points at, for front ends that jump to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceTarget {
    /// An event of an execution.
    Event {
        /// The execution.
        execution: ExecIdx,
        /// The event within it.
        event: EventIdx,
    },
    /// A session record.
    Session(SessionIdx),
    /// Another record of a journal (a server's `tools/list` answer), shown
    /// by its place only.
    Record(SourceRef),
}

impl EvidenceView {
    /// What the evidence points at.
    pub fn target(&self) -> EvidenceTarget {
        match self.pointer {
            EvidenceRef::Event { execution, event } => EvidenceTarget::Event { execution, event },
            EvidenceRef::Session { index } => EvidenceTarget::Session(index),
            EvidenceRef::Hint { source } => EvidenceTarget::Record(source),
        }
    }

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

/// A group one argument field away from another (docs/design.md §5.13),
/// as the other group's detail lists it.
#[derive(Debug, Clone, Serialize)]
pub struct NearDuplicateView {
    /// The linked group's id.
    pub group_id: String,
    /// Its position, for front ends that open it.
    #[serde(skip)]
    pub index: GroupIdx,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its severity.
    pub severity: Severity,
    /// Its calls.
    pub calls: usize,
    /// The argument field the two groups differ in, as a path (`body`,
    /// `options.region`, `files[0].path`).
    pub field: String,
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
/// dispatched, outcome observed, result delivered (docs/design.md §2).
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
    pub index: ExecIdx,
    /// Execution id.
    pub execution_id: String,
    /// State at the end of the journal, as named in docs/design.md §2.4.
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
    /// Where the execution begins: its first event's journal, line (or
    /// row) and record. Execution ids made from content say nothing of
    /// where a call is (docs/design.md §5.10); this does.
    pub first_event: Option<EvidenceView>,
    /// The reviewer decision applied to this execution, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Resolution>,
    /// Whether it began before a `--since` window: read only as the
    /// earlier call a repeat in the window may pair with (docs/design.md
    /// §7.2).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub before_window: bool,
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
    /// Groups one argument field away (docs/design.md §5.13), each also a
    /// `near_duplicate` finding.
    pub near_duplicates: Vec<NearDuplicateView>,
    /// Executions with their lifecycle.
    pub executions_detail: Vec<ExecutionSummary>,
    /// Contract applied.
    pub contract: ToolContract,
    /// The canonical action record that was fingerprinted.
    pub canonical_action: Value,
    /// What the journals lack of the arguments, when they lack any: the
    /// label of [`crate::model::Arguments`] (`no: <why>`, `partly: <why>`);
    /// absent when they hold them whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments_recorded: Option<String>,
    /// What to change so that it does not happen again.
    pub action_items: Vec<ActionItem>,
    /// What the target did, counted over the group's executions.
    pub effects: Effects,
}

/// What the target did across a group's executions (the impact a
/// postmortem reports).
#[derive(Debug, Clone, Default, Serialize)]
pub struct Effects {
    /// Executions the target acted on (the journal or a reviewer says so).
    pub acted: usize,
    /// Of those, the ones a reviewer's decision settled.
    pub acted_by_reviewer: usize,
    /// Dispatched executions whose outcome nothing settled.
    pub unknown: usize,
    /// When the executions the target acted on were dispatched.
    pub acted_at: Vec<DateTime<Utc>>,
    /// Of the side effects beyond the first, the duplicates: what the
    /// group's duplicates cost ([`crate::analysis::Group::duplicates`]).
    /// A repeat from a distinct process, or after the earlier result was
    /// delivered, acted too but is not counted here.
    pub duplicates: usize,
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
    /// Fields the journal line carried beyond what retrace reads
    /// (docs/design.md §3: unknown fields are kept and shown). Omitted when
    /// empty.
    #[serde(skip_serializing_if = "serde_json::Map::is_empty")]
    pub extra: serde_json::Map<String, Value>,
    /// What the reader established about the event (`pairing`,
    /// `arguments_logged`, `inferred`, `request_line`, notes such as
    /// `origin`; [`crate::model::ReaderFacts`]). Omitted when empty.
    #[serde(skip_serializing_if = "crate::model::ReaderFacts::is_empty")]
    pub facts: crate::model::ReaderFacts,
    /// The journal of the request line `facts.request_line` names, when it
    /// is another journal than the event's (a span answered in another
    /// file); omitted when it is the same.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_journal: Option<String>,
    /// The event as read, the arguments' secret fields redacted, for
    /// renderers that word it themselves ([`super::words::event_detail`]
    /// with a pseudonymizer).
    #[serde(skip)]
    pub record: Event,
}

impl Investigation {
    /// Resolves an evidence pointer to where it is and what it records.
    pub fn evidence(&self, r: EvidenceRef) -> EvidenceView {
        match r {
            EvidenceRef::Event { execution, event } => {
                let x = self.model.execution(execution);
                let e = x.event(event);
                EvidenceView {
                    journal: self.journal_name(e.source().journal()),
                    line: e.source().position(),
                    seq: e.seq(),
                    record: e.kind().name(),
                    execution_id: Some(x.id().to_string()),
                    at: Some(e.at()),
                    chain: self.chain_mark(e.source()),
                    ambiguous: e.facts().notes.iter().find_map(|(k, v)| {
                        (*k == "ambiguous")
                            .then(|| self.secrets.text(v.as_str().unwrap_or_default()))
                    }),
                    source: e.source(),
                    pointer: r,
                }
            }
            EvidenceRef::Session { index } => {
                let s = &self.model.sessions[index.get()];
                EvidenceView {
                    journal: self.journal_name(s.source.journal()),
                    line: s.source.position(),
                    seq: None,
                    record: "session",
                    execution_id: None,
                    at: s.started_at,
                    chain: self.chain_mark(s.source),
                    ambiguous: None,
                    source: s.source,
                    pointer: r,
                }
            }
            EvidenceRef::Hint { source } => EvidenceView {
                journal: self.journal_name(source.journal()),
                line: source.position(),
                seq: None,
                record: "tools/list answer",
                execution_id: None,
                at: None,
                chain: self.chain_mark(source),
                ambiguous: None,
                source,
                pointer: r,
            },
        }
    }

    pub(super) fn answer_view(&self, a: &Answer) -> AnswerView {
        AnswerView {
            question: a.question,
            asks: analysis::QUESTIONS[usize::from(a.question.saturating_sub(1)).min(4)],
            answer: a.text.clone(),
            unknown: a.unknown,
            evidence: a.evidence.iter().map(|&r| self.evidence(r)).collect(),
        }
    }

    /// A finding with its evidence resolved (a long list, such as a
    /// group of 200,000 calls' `key_per_attempt`, on every core).
    pub(super) fn finding_view(&self, f: &Finding) -> FindingView {
        use rayon::prelude::*;
        const PARALLEL: usize = crate::analysis::PARALLEL_GROUP;
        FindingView {
            kind: f.kind.as_str(),
            detail: f.detail.to_string(),
            evidence: if f.evidence.len() > PARALLEL {
                f.evidence.par_iter().map(|&r| self.evidence(r)).collect()
            } else {
                f.evidence.iter().map(|&r| self.evidence(r)).collect()
            },
        }
    }

    /// An execution summarized with its stage times.
    pub fn execution_summary(&self, xi: ExecIdx) -> ExecutionSummary {
        let x = self.model.execution(xi);
        let l = self.analysis.lifecycle(xi);
        let caps = self.caps_of(xi);
        let mark = |i: Option<EventIdx>| {
            i.map(|i| {
                let e = x.event(i);
                let status = match e.kind() {
                    KindRef::Rejected { .. }
                    | KindRef::DispatchFailed { .. }
                    | KindRef::DeliveryFailed { .. } => StageStatus::Failed,
                    KindRef::Outcome { .. } => match lifecycle::target_answer(e, l.has_key()) {
                        TargetAnswer::NoAnswer | TargetAnswer::Ambiguous => StageStatus::Unknown,
                        TargetAnswer::Performed | TargetAnswer::Replayed => StageStatus::Done,
                        _ => StageStatus::Failed,
                    },
                    _ => StageStatus::Done,
                };
                StageMark {
                    at: e.at(),
                    status,
                    event: e.kind().name(),
                }
            })
        };
        let stages = Stages {
            accepted: mark(l.accepted),
            authorized: mark(l.authorized.or(l.rejected)),
            dispatched: mark(l.dispatched.or(l.dispatch_failed)),
            outcome: mark(l.decisive_outcome.or(l.outcomes().first().copied())),
            delivered: mark(l.deliveries().last().copied()),
        };
        let attached = l
            .attached()
            .iter()
            .filter_map(|&i| match x.event(i).kind() {
                KindRef::Attached { call, recovery } => Some(AttachedCall {
                    at: x.event(i).at(),
                    recovery: recovery.as_str(),
                    call_id: call.call_id.map(str::to_string),
                    session_id: call.session_id.map(str::to_string),
                }),
                _ => None,
            })
            .collect();
        let secrets = self.secret_fields(xi);
        ExecutionSummary {
            index: xi,
            execution_id: x.id().to_string(),
            state: l.state_name(x, caps.delivery),
            stages,
            outcome: l
                .decisive_outcome
                .map(|i| event_detail(x.event(i), secrets, &mut Plain)),
            idempotency_key: l.idempotency_key(x).map(str::to_string),
            session_id: x
                .accepted()
                .and_then(|(_, a)| a.call.session_id.map(str::to_string)),
            attached,
            events: x.len(),
            first_event: (!x.is_empty()).then(|| {
                self.evidence(EvidenceRef::Event {
                    execution: xi,
                    event: EventIdx::new(0),
                })
            }),
            resolution: l.resolution.as_deref().cloned(),
            before_window: self.before_window(xi),
        }
    }

    /// The events of an execution, for display, in time order; the
    /// arguments' secret fields (the group's tool contract) redacted.
    pub fn events(&self, x: ExecIdx) -> Vec<EventView> {
        let ex = self.model.execution(x);
        let secrets = self.secret_fields(x);
        ex.events()
            .enumerate()
            .map(|(i, e)| EventView {
                evidence: self.evidence(EvidenceRef::Event {
                    execution: x,
                    event: EventIdx::new(i),
                }),
                event: e.kind().name(),
                summary: self.secrets.text(&event_detail(e, secrets, &mut Plain)),
                extra: {
                    let mut extra = Value::Object(e.extra().clone());
                    self.scrub(&mut extra);
                    match extra {
                        Value::Object(m) => m,
                        _ => serde_json::Map::new(),
                    }
                },
                facts: {
                    let mut f = e.facts().clone();
                    for (_, v) in &mut f.notes {
                        self.scrub(v);
                    }
                    f
                },
                request_journal: e
                    .facts()
                    .request
                    .map(|r| r.journal())
                    .filter(|&j| j != e.source().journal())
                    .map(|j| self.journal_name(j)),
                record: {
                    let mut r = redacted(e, secrets);
                    if let EventKind::Accepted(a) = &mut r.kind {
                        let mut v = Value::Object(std::mem::take(&mut a.action).into_map());
                        self.scrub(&mut v);
                        if let Value::Object(m) = v {
                            a.action = ActionRecord::from_map(m);
                        }
                    }
                    r
                },
            })
            .collect()
    }
}

/// An event with the arguments' secret fields replaced.
fn redacted(e: EventRef<'_>, secret_fields: &[String]) -> Event {
    let mut e = e.to_event();
    // With no secret field, the action is not taken apart at all.
    if let (EventKind::Accepted(a), false) = (&mut e.kind, secret_fields.is_empty()) {
        let mut m = std::mem::take(&mut a.action).into_map();
        if let Some(args) = m.get_mut("arguments") {
            *args = super::words::redact_secrets(args, secret_fields);
        }
        a.action = ActionRecord::from_map(m);
    }
    e
}
