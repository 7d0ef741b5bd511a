//! The review queue: executions that wait for a reviewer, oldest first,
//! each shown as its original activity record rather than a fresh approval
//! (docs/design.md §5.7: the
//! reviewer sees the target, the first dispatch time, the known outcome,
//! and why the gateway did not send the action again).
//!
//! An execution is queued when a question about it is open and no reviewer
//! has settled it (docs/design.md §5.8):
//!
//! * its outcome: its own status verdict (analysis `Group::statuses`) is
//!   `pending_verification` (dispatched, nothing shows what the target did;
//!   the execution that makes a group `possible_duplicate`), or its outcome
//!   rests on a pairing by position that may be another call's;
//! * its completion: `undelivered_result` (completed, delivery failed, no
//!   retry yet);
//! * its delivery: it completed, the journal cannot show whether the result
//!   reached the agent, and a later execution of the same intent followed
//!   within the attach window, making the group `possible_duplicate` (so
//!   the answer decides between `distinct_intent` and
//!   `duplicate_side_effect`).
//!
//! An `escalated` decision leaves it in the queue; a decision that settles
//! the question asked takes it out.

/// What a queue item asks the reviewer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Asks {
    /// What the target did: its outcome is unknown.
    Outcome,
    /// What the target did: the answer recorded for it was paired by
    /// position and may be another call's.
    Pairing,
    /// Whether the completion stands (a completed execution whose result
    /// was not delivered).
    Completion,
    /// Whether the completed execution's result reached the agent.
    Delivery,
}

impl Asks {
    /// The decisions a reviewer may record for it (never one that
    /// contradicts what the journal shows), `escalated` last.
    pub fn allowed(self) -> Vec<Decision> {
        match self {
            Asks::Outcome | Asks::Pairing => vec![
                Decision::ConfirmedCompleted,
                Decision::ConfirmedNotExecuted,
                Decision::Escalated,
            ],
            Asks::Completion => vec![Decision::ConfirmedCompleted, Decision::Escalated],
            Asks::Delivery => vec![
                Decision::ConfirmedDelivered,
                Decision::ConfirmedNotDelivered,
                Decision::Escalated,
            ],
        }
    }

    /// The decisions a front end offers for it, in order: the allowed ones
    /// and those the journal rules out (shown as not possible).
    pub fn offered(self) -> Vec<Decision> {
        match self {
            Asks::Delivery => Asks::Delivery.allowed(),
            _ => Asks::Outcome.allowed(),
        }
    }

    /// What a decision must settle to answer it.
    fn settled_by(self) -> Settles {
        match self {
            Asks::Delivery => Settles::Delivery,
            _ => Settles::Outcome,
        }
    }

    /// What waits, in two or three words for a list's status column:
    /// `outcome_unknown`, `pairing_uncertain`, `undelivered`,
    /// `delivery_unknown`.
    pub fn topic(self) -> &'static str {
        match self {
            Asks::Outcome => "outcome_unknown",
            Asks::Pairing => "pairing_uncertain",
            Asks::Completion => "undelivered",
            Asks::Delivery => "delivery_unknown",
        }
    }

    /// The question, in words.
    pub fn words(self) -> &'static str {
        match self {
            Asks::Outcome => "did the target act? (its outcome is unknown)",
            Asks::Pairing => {
                "did the target act? (the answer recorded for it was paired by position and may be another call's)"
            }
            Asks::Completion => "the target completed and the result was not delivered: confirm",
            Asks::Delivery => {
                "did the result reach the agent? (the journal cannot show it, and the intent was sent again)"
            }
        }
    }
}

use super::words::{Plain, event_detail};
use super::{EvidenceView, Investigation};
use crate::analysis::{Decision, EvidenceRef, Settles, Severity, Verdict};
use crate::model::{CallRef, CallView, EventIdx, ExecIdx, KindRef, Recovery};
use crate::review::case::{self, DecisionRecord};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

/// One call that reached an execution.
#[derive(Debug, Clone, Serialize)]
pub struct QueueCall {
    /// When the gateway received it.
    pub at: DateTime<Utc>,
    /// `created` or the attach recovery (`awaiting_review`, ...).
    pub role: &'static str,
    /// Gateway call id.
    pub call_id: Option<String>,
    /// Agent run.
    pub session_id: Option<String>,
    /// JSON-RPC id, as written (`41`, `"abc"`).
    pub jsonrpc_id: Option<String>,
    /// MCP session.
    pub mcp_session_id: Option<String>,
    /// The call's correlation as the journal wrote it, for
    /// [`super::words::call_words`].
    #[serde(skip)]
    pub call: CallRef,
}

impl QueueCall {
    fn new(at: DateTime<Utc>, role: &'static str, c: CallView<'_>) -> QueueCall {
        QueueCall {
            at,
            role,
            call: c.to_call_ref(),
            call_id: c.call_id.map(str::to_string),
            session_id: c.session_id.map(str::to_string),
            jsonrpc_id: c.jsonrpc_id.as_ref().map(ToString::to_string),
            mcp_session_id: c.mcp_session_id.map(str::to_string),
        }
    }
}

/// A later fresh execution of the same intent.
#[derive(Debug, Clone, Serialize)]
pub struct LaterAttempt {
    /// Its execution id.
    pub execution_id: String,
    /// When it was accepted.
    pub at: Option<DateTime<Utc>>,
    /// When it was dispatched, if it was.
    pub dispatched_at: Option<DateTime<Utc>>,
    /// Its state at the end of the journal.
    pub state: &'static str,
}

/// One execution waiting for a reviewer.
#[derive(Debug, Clone, Serialize)]
pub struct QueueItem {
    /// The execution.
    pub execution_id: String,
    /// Its position (for front ends that ask for detail).
    #[serde(skip)]
    pub execution_index: ExecIdx,
    /// Its group.
    pub group_id: String,
    /// The group's verdict.
    pub group_verdict: Verdict,
    /// The execution's own status verdict (`pending_verification`,
    /// `undelivered_result`, or `clean` for an open delivery).
    pub status: Verdict,
    /// What the reviewer is asked.
    pub asks: Asks,
    /// The question in words.
    pub question: &'static str,
    /// Severity of the group verdict.
    pub severity: Severity,
    /// Tool.
    pub tool: String,
    /// Target, when the action record names one.
    pub target: Option<String>,
    /// Actor.
    pub actor: String,
    /// Intent scope.
    pub intent_scope: String,
    /// Tool arguments as the journal recorded them.
    pub arguments: Value,
    /// What the journals lack of the arguments (`no: …`, `partly: …`);
    /// absent when they hold them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments_recorded: Option<String>,
    /// When the execution was accepted.
    pub accepted_at: Option<DateTime<Utc>>,
    /// First dispatch to the target.
    pub first_dispatch_at: Option<DateTime<Utc>>,
    /// State at the end of the journal (`dispatched_outcome_unknown`, ...).
    pub state: &'static str,
    /// The known outcome, in words.
    pub known_outcome: String,
    /// The creating call, then every call that attached, in time order.
    pub calls: Vec<QueueCall>,
    /// Fresh executions of the same intent after this one.
    pub later_attempts: Vec<LaterAttempt>,
    /// Why the gateway did not send the action again (or that it did).
    pub why_not_sent_again: String,
    /// Earlier decisions about it (escalations).
    pub decisions: Vec<DecisionRecord>,
    /// Decisions a reviewer may record: never one that contradicts what the
    /// journal shows (a completed execution cannot be `confirmed_not_executed`).
    pub allowed: Vec<Decision>,
    /// Decisions to offer, in order ([`Asks::offered`]): the allowed ones
    /// and those the journal rules out.
    pub offered: Vec<Decision>,
    /// Journal lines behind the item: accepted, dispatched, outcomes,
    /// deliveries, attachments.
    pub evidence: Vec<EvidenceView>,
}

impl QueueItem {
    /// How grave what waits is, for a front end's colour: the execution's
    /// own status verdict's severity, or for a delivery nobody can see
    /// (status `clean`), its group's.
    pub fn waiting_severity(&self) -> Severity {
        if self.status == Verdict::Clean {
            self.severity
        } else {
            self.status.severity()
        }
    }
}

/// Why an execution cannot be decided now.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotQueued {
    /// No such execution in the loaded journals.
    #[error("no execution {0:?} in these journals")]
    NoSuchExecution(String),
    /// A reviewer already settled it.
    #[error(
        "{execution_id} was already decided {decision} by {reviewer} at {at} (case entry {seq}). {}",
        case::FINAL_DECISION
    )]
    AlreadyDecided {
        /// Execution.
        execution_id: String,
        /// What was decided.
        decision: Decision,
        /// By whom.
        reviewer: String,
        /// When (RFC 3339).
        at: String,
        /// Case entry.
        seq: u64,
    },
    /// Nothing about it waits for a reviewer.
    #[error(
        "{execution_id} does not wait for review: it is {state} and its group {group_id} is {verdict}"
    )]
    NotPending {
        /// Execution.
        execution_id: String,
        /// Its state.
        state: &'static str,
        /// Group.
        group_id: String,
        /// Group verdict.
        verdict: Verdict,
    },
}

/// Whether `d` settles question `asks` (an escalation settles nothing).
fn settles(d: &DecisionRecord, asks: Asks) -> bool {
    d.payload.decision.settles() == asks.settled_by()
}

/// What is open about execution `xi` of group `g` (at position `pos`),
/// with status verdict `status`; `None`: nothing waits for a reviewer.
fn open_question(
    inv: &Investigation,
    xi: ExecIdx,
    pos: usize,
    status: Option<Verdict>,
) -> Option<Asks> {
    let l = inv.analysis.lifecycle(xi);
    let g = &inv.analysis.groups[inv.analysis.execution_group[xi.get()].get()];
    match status {
        Some(Verdict::PendingVerification) if l.answer.is_unknown() => Some(Asks::Outcome),
        Some(Verdict::PendingVerification) => Some(Asks::Pairing),
        Some(Verdict::UndeliveredResult) => Some(Asks::Completion),
        _ if l.uncertain_pairing && l.resolution.is_none() => Some(Asks::Pairing),
        _ if l.delivery_open()
            && l.delivery_resolution.is_none()
            && !inv.caps_of(xi).delivery
            && pos + 1 < g.executions.len()
            && g.verdict == Verdict::PossibleDuplicate
            && !g.contract.attach_window.is_zero()
            && crate::analysis::repeated_as_possible_duplicate(
                &inv.model,
                &inv.analysis,
                &inv.journals,
                g,
                xi,
            ) =>
        {
            Some(Asks::Delivery)
        }
        _ => None,
    }
}

impl Investigation {
    /// The review queue, oldest first (by first dispatch, else
    /// acceptance), as the case file the investigation was opened with
    /// decides it.
    pub fn review_queue(&self) -> Vec<QueueItem> {
        queue(self, &self.case.decisions)
    }

    /// The queue item for `execution_id`, or why it cannot be decided.
    ///
    /// # Errors
    /// [`NotQueued`] in words a reviewer can act on.
    pub fn queued(&self, execution_id: &str) -> Result<QueueItem, NotQueued> {
        find(self, &self.case.decisions, execution_id)
    }
}

/// The review queue, oldest first (by first dispatch, else acceptance).
/// `decisions` are the case file's decisions (verified entries only).
pub(super) fn queue(inv: &Investigation, decisions: &[DecisionRecord]) -> Vec<QueueItem> {
    let mut items: Vec<QueueItem> = Vec::new();
    for g in &inv.analysis.groups {
        for (pos, (&xi, status)) in g.executions.iter().zip(&g.statuses).enumerate() {
            let Some(asks) = open_question(inv, xi, pos, *status) else {
                continue;
            };
            let id = &inv.model.execution(xi).id();
            if decisions
                .iter()
                .any(|d| &d.payload.execution_id == id && settles(d, asks))
            {
                continue;
            }
            let status = status.unwrap_or(g.verdict);
            items.push(item(inv, xi, (status, asks), decisions));
        }
    }
    items.sort_by(|a, b| {
        let ka = a.first_dispatch_at.or(a.accepted_at);
        let kb = b.first_dispatch_at.or(b.accepted_at);
        ka.cmp(&kb).then(a.execution_id.cmp(&b.execution_id))
    });
    items
}

/// The queue item for `execution_id`, or why it cannot be decided.
///
/// # Errors
/// [`NotQueued`] in words a reviewer can act on.
pub(super) fn find(
    inv: &Investigation,
    decisions: &[DecisionRecord],
    execution_id: &str,
) -> Result<QueueItem, NotQueued> {
    let Some(xi) = inv.model.execution_index(execution_id).map(ExecIdx::new) else {
        return Err(NotQueued::NoSuchExecution(execution_id.to_string()));
    };
    if let Some(it) = queue(inv, decisions)
        .into_iter()
        .find(|i| i.execution_index == xi)
    {
        return Ok(it);
    }
    if let Some(d) = decisions.iter().rev().find(|d| {
        d.payload.execution_id == execution_id && d.payload.decision != Decision::Escalated
    }) {
        return Err(NotQueued::AlreadyDecided {
            execution_id: execution_id.to_string(),
            decision: d.payload.decision,
            reviewer: d.payload.reviewer.clone(),
            at: case::format_at(d.at),
            seq: d.seq,
        });
    }
    let g = &inv.analysis.groups[inv.analysis.execution_group[xi.get()].get()];
    Err(NotQueued::NotPending {
        execution_id: execution_id.to_string(),
        state: inv.execution_summary(xi).state,
        group_id: g.id.clone(),
        verdict: g.verdict,
    })
}

fn item(
    inv: &Investigation,
    xi: ExecIdx,
    (status, asks): (Verdict, Asks),
    decisions: &[DecisionRecord],
) -> QueueItem {
    let x = inv.model.execution(xi);
    let l = inv.analysis.lifecycle(xi);
    let g = &inv.analysis.groups[inv.analysis.execution_group[xi.get()].get()];
    let summary = inv.execution_summary(xi);
    let action = x.action();
    let ev = |i: usize| {
        inv.evidence(EvidenceRef::Event {
            execution: xi,
            event: EventIdx::new(i),
        })
    };

    let mut calls = Vec::new();
    let mut evidence = Vec::new();
    if let Some((e, a)) = x.accepted() {
        calls.push(QueueCall::new(e.at(), "created", a.call));
    }
    for (i, e) in x.events().enumerate() {
        if let KindRef::Attached { call, recovery } = e.kind() {
            calls.push(QueueCall::new(e.at(), recovery.as_str(), call));
        }
        if !matches!(e.kind(), KindRef::Authorized { .. }) {
            evidence.push(ev(i));
        }
    }

    let first_dispatch_at = l.dispatched.map(|i| x.event(i).at());
    let pos = g.executions.iter().position(|&e| e == xi).unwrap_or(0);
    let later_attempts: Vec<LaterAttempt> = g.executions[pos + 1..]
        .iter()
        .map(|&f| {
            let xf = inv.model.execution(f);
            let lf = inv.analysis.lifecycle(f);
            LaterAttempt {
                execution_id: xf.id().to_string(),
                at: xf.first_at(),
                dispatched_at: lf.dispatched.map(|i| xf.event(i).at()),
                state: inv.execution_summary(f).state,
            }
        })
        .collect();

    let known_outcome = known_outcome(inv, xi, status, asks);
    let drift = g
        .findings
        .iter()
        .find(|f| f.kind == crate::analysis::FindingKind::FingerprintDrift)
        .map(|f| &*f.detail);
    let why = why_not_sent_again(x, &calls, &later_attempts, drift);
    let allowed = asks.allowed();
    QueueItem {
        execution_id: x.id().to_string(),
        execution_index: xi,
        group_id: g.id.clone(),
        group_verdict: g.verdict,
        status,
        asks,
        question: asks.words(),
        severity: g.severity(),
        tool: g.tool.to_string(),
        target: g.target.as_deref().map(str::to_string),
        actor: g.actor.clone(),
        intent_scope: g.intent_scope.clone(),
        arguments: action
            .and_then(|a| a.arguments())
            .map(|m| super::words::redact_secrets(&Value::Object(m), inv.secret_fields(xi)))
            .unwrap_or(Value::Null),
        arguments_recorded: x.arguments_recorded().and_then(|a| a.label()),
        accepted_at: l.accepted.map(|i| x.event(i).at()),
        first_dispatch_at,
        state: summary.state,
        known_outcome,
        calls,
        later_attempts,
        why_not_sent_again: why,
        decisions: decisions
            .iter()
            .filter(|d| d.payload.execution_id == x.id())
            .cloned()
            .collect(),
        allowed,
        offered: asks.offered(),
        evidence,
    }
}

fn hms(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S%.3fZ").to_string()
}

fn known_outcome(inv: &Investigation, xi: ExecIdx, status: Verdict, asks: Asks) -> String {
    let secrets = inv.secret_fields(xi);
    let x = inv.model.execution(xi);
    let l = inv.analysis.lifecycle(xi);
    if matches!(asks, Asks::Delivery | Asks::Pairing)
        && let Some(i) = l.decisive_outcome
    {
        let tail = if asks == Asks::Delivery {
            format!(
                "; {} cannot show whether the result reached the agent",
                x.first()
                    .and_then(|e| inv.journals().get(e.source().journal() as usize))
                    .map_or("the journal", |j| j.format.noun())
            )
        } else {
            let why = x.event(i).facts().pairing.why().unwrap_or_default();
            format!("; paired by position, and may be another call's answer ({why})")
        };
        return format!(
            "{} at {}{tail}",
            event_detail(x.event(i), secrets, &mut Plain),
            hms(x.event(i).at())
        );
    }
    if status == Verdict::UndeliveredResult {
        let done = l
            .decisive_outcome
            .map(|i| {
                format!(
                    "{} at {}",
                    event_detail(x.event(i), secrets, &mut Plain),
                    hms(x.event(i).at())
                )
            })
            .unwrap_or_else(|| "completed".into());
        let delivery = l
            .deliveries()
            .last()
            .map(|&i| {
                format!(
                    "; delivery failed at {}: {}",
                    hms(x.event(i).at()),
                    event_detail(x.event(i), secrets, &mut Plain)
                )
            })
            .unwrap_or_else(|| "; no delivery to the agent is recorded".into());
        return format!("completed: {done}{delivery}");
    }
    match (l.decisive_outcome, l.outcomes().last()) {
        // docs/design.md §2.5: an answer that may be another call's.
        (Some(i), _) if x.event(i).facts().pairing.is_uncertain() => format!(
            "ambiguous: {} at {}; {}",
            event_detail(x.event(i), secrets, &mut Plain),
            hms(x.event(i).at()),
            x.event(i).facts().pairing.why().unwrap_or_default()
        ),
        (Some(i), _) => format!(
            "ambiguous: {} at {}; it does not tell whether the target acted",
            event_detail(x.event(i), secrets, &mut Plain),
            hms(x.event(i).at())
        ),
        (None, Some(&i)) => format!(
            "unknown: the gateway recorded {} at {}",
            event_detail(x.event(i), secrets, &mut Plain),
            hms(x.event(i).at())
        ),
        (None, None) => match l.dispatched {
            Some(i) => format!(
                "unknown: dispatched at {}, and no response or exit status is recorded",
                hms(x.event(i).at())
            ),
            None => "unknown: no dispatch or outcome is recorded".into(),
        },
    }
}

fn recovery_words(r: &str) -> &'static str {
    match Recovery::parse(r) {
        Some(Recovery::AwaitingReview) => {
            "the gateway held it for a reviewer instead of dispatching again"
        }
        Some(Recovery::QueriedStatus) => {
            "the gateway queried the target's status instead of dispatching again"
        }
        Some(Recovery::ReturnedStoredResult) => {
            "the gateway returned the stored result instead of dispatching again"
        }
        Some(Recovery::Continued) => "the gateway continued this execution",
        Some(Recovery::ReturnedRejection) => "the gateway returned the earlier rejection",
        None => "it attached to this execution",
    }
}

/// Why the gateway did not send the execution again, in words; `drift`,
/// the group's `fingerprint_drift` finding, when another group may hold
/// its repeat (docs/design.md §4.3): "no later call" would then be false.
fn why_not_sent_again(
    x: crate::model::ExecutionRef<'_>,
    calls: &[QueueCall],
    later: &[LaterAttempt],
    drift: Option<&str>,
) -> String {
    let mut parts: Vec<String> = calls
        .iter()
        .filter(|c| c.role != "created")
        .map(|c| {
            format!(
                "call {} attached at {}: {}",
                c.call_id.as_deref().unwrap_or("(no call id)"),
                hms(c.at),
                recovery_words(c.role)
            )
        })
        .collect();
    if !later.is_empty() {
        let fresh: Vec<String> = later
            .iter()
            .map(|a| {
                let when = a
                    .dispatched_at
                    .map(|t| format!("dispatched at {}", hms(t)))
                    .unwrap_or_else(|| "not dispatched".into());
                format!("{} ({when})", a.execution_id)
            })
            .collect();
        parts.push(format!(
            "it was not held back for {}: {} {} did not attach to it",
            x.id(),
            if fresh.len() == 1 {
                "fresh execution"
            } else {
                "fresh executions"
            },
            fresh.join(", ")
        ));
    }
    if let Some(d) = drift {
        parts.push(format!(
            "no later call of this intent as fingerprinted, but it may have been sent again under another fingerprint: {d}"
        ));
    }
    if parts.is_empty() {
        "no later call has asked for this action; the gateway has not been asked to send it again"
            .into()
    } else {
        let mut s = parts.join("; ");
        s.push('.');
        s
    }
}
