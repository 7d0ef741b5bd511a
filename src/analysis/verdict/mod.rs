//! The verdict table of docs/design.md §5 as pure functions of the answers to the
//! five investigation questions (docs/design.md §5.1).
//!
//! Two functions make up the table:
//!
//! * [`pair_verdict`] judges one *later call* against the *earlier
//!   execution* it repeats: attached, deduplicated, safe, distinct, or a
//!   (possible) duplicate.
//! * [`status_verdict`] judges one execution on its own: rejected, pending
//!   verification, undelivered, safe, or clean.
//!
//! A group's verdict is the most severe of its executions' status verdicts
//! and its pairs' verdicts ([`Verdict::severity`] orders them as the table
//! does). Where an answer is unknown, each rule takes the reading that leads
//! to the more cautious verdict; no rule turns "unknown" into "fine".

use serde::Serialize;

/// Verdict words of docs/design.md §5.3, most severe first (the order of
/// [`Verdict::ALL`] and of `Ord`). The snake_case names (`as_str`, `Display`,
/// `FromStr`, serde) are a contract that tests and other tools rely on.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Verdict {
    /// Two or more fresh executions of one intent were dispatched while an
    /// earlier one was unresolved (or after it completed without delivery),
    /// and the target accepted more than one.
    DuplicateSideEffect,
    /// A fresh execution was dispatched after an earlier one had an unknown
    /// outcome.
    PossibleDuplicate,
    /// One key carried two different intents, or the target refused a reused
    /// key (422/400).
    IdempotencyKeyConflict,
    /// Dispatched, outcome unknown, nothing has resolved it yet.
    PendingVerification,
    /// Completed, delivery failed, no retry yet.
    UndeliveredResult,
    /// Distinct processes, a different scope, a repeat after the earlier
    /// result was delivered, or outside the attach window.
    DistinctIntent,
    /// Authorization refused.
    Rejected,
    /// Repeated dispatches carried the same idempotency key and the target
    /// replayed or refused (409) instead of acting again.
    DeduplicatedByTarget,
    /// Later calls attached to the one execution; one dispatch.
    AttachedRetry,
    /// The earlier attempt never crossed the dispatch boundary (or the target
    /// showed it did nothing).
    SafeRetry,
    /// One call, one execution, completed and delivered.
    Clean,
}

/// Severity column of docs/design.md §5.3, most severe first.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Severity {
    /// A second side effect happened.
    Critical,
    /// A second side effect may have happened, or keys were misused.
    High,
    /// A reviewer must decide.
    Review,
    /// Worth attention, no duplicate.
    Warn,
    /// Informational.
    Info,
    /// Nothing wrong.
    Ok,
}

impl Verdict {
    /// Every verdict, most severe first.
    pub const ALL: &'static [Verdict] = <Verdict as strum::VariantArray>::VARIANTS;

    /// The severity docs/design.md §5.3 gives the verdict.
    pub fn severity(self) -> Severity {
        match self {
            Verdict::DuplicateSideEffect => Severity::Critical,
            Verdict::PossibleDuplicate | Verdict::IdempotencyKeyConflict => Severity::High,
            Verdict::PendingVerification => Severity::Review,
            Verdict::UndeliveredResult => Severity::Warn,
            Verdict::DistinctIntent | Verdict::Rejected => Severity::Info,
            Verdict::DeduplicatedByTarget
            | Verdict::AttachedRetry
            | Verdict::SafeRetry
            | Verdict::Clean => Severity::Ok,
        }
    }

    /// The snake_case name used in JSON and on screen.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<Verdict> {
        s.parse().ok()
    }
}

impl Severity {
    /// Every severity, most severe first.
    pub const ALL: &'static [Severity] = <Severity as strum::VariantArray>::VARIANTS;

    /// The lowercase name used in JSON and on screen.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Question 1: did one agent process or two distinct processes send the calls?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Processes {
    /// Same session, or sessions naming one process instance.
    One,
    /// Different agent runs (sessions) of distinct processes.
    Distinct,
    /// The journal does not say.
    Unknown,
}

/// Question 2: did the (earlier) call receive authorization and enter dispatch?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Dispatch {
    /// Authorized (or no authorization step) and handed to the target.
    Dispatched,
    /// Authorization refused.
    Rejected,
    /// Never crossed the dispatch boundary (dispatch failed, cancelled
    /// before dispatch, or stopped before it).
    NotDispatched,
    /// The journal does not say whether it was dispatched.
    Unknown,
}

/// Question 3: what the target answered for an execution, reduced to what
/// matters for duplicates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TargetAnswer {
    /// The target acted (success that was not a replay).
    Performed,
    /// The target shows it did not act: `not_executed`, or a definite
    /// failure (a tool error, or an HTTP 4xx other than 408, 409, 422).
    NotPerformed,
    /// The target returned the stored result of an earlier request with the
    /// same idempotency key instead of acting again.
    Replayed,
    /// The target refused a concurrent repeat (HTTP 409).
    Conflict,
    /// The target refused a reused key with a different request (HTTP 422,
    /// or 400 on a request that carried a key).
    KeyRefused,
    /// The target answered, but the answer does not tell whether it acted
    /// (HTTP 408, 500, 502, 503, 504; docs/design.md §10.6).
    Ambiguous,
    /// No answer observed (outcome unknown).
    #[default]
    NoAnswer,
}

impl TargetAnswer {
    /// Whether the outcome is unknown: nothing says whether the target acted.
    pub fn is_unknown(self) -> bool {
        matches!(self, TargetAnswer::Ambiguous | TargetAnswer::NoAnswer)
    }
    /// Whether the target shows it added no new effect.
    pub fn no_new_effect(self) -> bool {
        matches!(
            self,
            TargetAnswer::NotPerformed
                | TargetAnswer::Replayed
                | TargetAnswer::Conflict
                | TargetAnswer::KeyRefused
        )
    }
}

/// When the earlier execution's answer was observed, relative to the later
/// call's dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Timing {
    /// Before the later call was dispatched: the gateway knew.
    BeforeLater,
    /// After: the earlier execution was unresolved when the later one went
    /// out (a status query, durable marker or late response resolved it).
    AfterLater,
}

/// Question 4: had the earlier result been delivered when the later call came?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Delivery {
    /// Delivered before the later call.
    Delivered,
    /// Delivery failed.
    Failed,
    /// Completed but not (yet) delivered when the later call came.
    NotYet,
    /// The journal format does not record delivery.
    NotRecorded,
    /// There was no result to deliver (no answer from the target yet).
    NotApplicable,
}

/// Question 5: did the later call reuse the original execution id, carry an
/// idempotency key, or create a fresh attempt?
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaterCall {
    /// It attached to the earlier execution (same execution id).
    Attached,
    /// A fresh execution that sent the same idempotency key.
    SameKey,
    /// A fresh execution with a different key (a key minted per attempt).
    NewKey,
    /// A fresh execution without a key.
    NoKey,
    /// The journal cannot show attachment (no execution identity).
    Unknown,
}

/// Whether the later call fell inside the tool's attach window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Window {
    /// Inside: the earlier execution was still attachable.
    Within,
    /// Outside (or a read-only tool, whose window is zero).
    Outside,
}

/// The later execution's own fate, for fresh attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LaterFate {
    /// It never crossed the dispatch boundary.
    NotDispatched,
    /// It was (or may have been) dispatched, and the target answered so.
    Answered(TargetAnswer),
}

/// The answers for one (earlier execution, later call) pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct PairAnswers {
    /// Q1.
    pub processes: Processes,
    /// Q2, of the earlier execution.
    pub dispatch: Dispatch,
    /// Q3, of the earlier execution.
    pub answer: TargetAnswer,
    /// When Q3's answer was observed (ignored for `NoAnswer`).
    pub timing: Timing,
    /// Q4, of the earlier execution, as of the later call.
    pub delivery: Delivery,
    /// Q5.
    pub later: LaterCall,
    /// Attach window.
    pub window: Window,
    /// The later execution's fate (ignored for attached calls).
    pub fate: LaterFate,
}

/// The verdict for one later call against the earlier execution it repeats,
/// or `None` when the pair adds nothing (the later attempt never reached the
/// target, or the target refused it, so no second effect is possible).
pub fn pair_verdict(a: &PairAnswers) -> Option<Verdict> {
    use TargetAnswer as T;
    if a.later == LaterCall::Attached {
        return Some(Verdict::AttachedRetry);
    }
    // Not one intent: separate runs, or the contract no longer ties them.
    if a.window == Window::Outside || a.processes == Processes::Distinct {
        return Some(Verdict::DistinctIntent);
    }
    let resolved_before = a.timing == Timing::BeforeLater;
    let delivered_before = a.answer == TargetAnswer::Performed
        && resolved_before
        && a.delivery == Delivery::Delivered
        && matches!(a.dispatch, Dispatch::Dispatched | Dispatch::Unknown);
    let later = match a.fate {
        // A repeat after the earlier result was delivered is a new request,
        // whatever became of it.
        LaterFate::NotDispatched if delivered_before => return Some(Verdict::DistinctIntent),
        LaterFate::NotDispatched => return None,
        LaterFate::Answered(t) => t,
    };
    if a.later == LaterCall::SameKey {
        match later {
            T::KeyRefused => return Some(Verdict::IdempotencyKeyConflict),
            T::Replayed | T::Conflict => return Some(Verdict::DeduplicatedByTarget),
            _ => {}
        }
    }
    if matches!(a.dispatch, Dispatch::Rejected | Dispatch::NotDispatched) {
        return Some(Verdict::SafeRetry);
    }
    // The earlier execution crossed (or may have crossed) the boundary.
    if a.answer.no_new_effect() {
        return Some(Verdict::SafeRetry);
    }
    if a.answer.is_unknown() {
        return (!later.no_new_effect()).then_some(Verdict::PossibleDuplicate);
    }
    // The earlier execution performed the action.
    if delivered_before {
        return Some(Verdict::DistinctIntent);
    }
    let known_undelivered = !resolved_before
        || matches!(
            a.delivery,
            Delivery::Failed | Delivery::NotYet | Delivery::NotApplicable
        );
    match later {
        T::Performed if known_undelivered => Some(Verdict::DuplicateSideEffect),
        // Delivery not recorded: it may have been delivered (a deliberate
        // repeat) or lost (a duplicate). The cautious reading is "possible".
        T::Performed | T::Ambiguous | T::NoAnswer => Some(Verdict::PossibleDuplicate),
        T::NotPerformed | T::Replayed | T::Conflict | T::KeyRefused => None,
    }
}

/// Facts about one execution on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ExecutionAnswers {
    /// Q2 for this execution.
    pub dispatch: Dispatch,
    /// Q3 for this execution (final).
    pub answer: TargetAnswer,
    /// Q4 for this execution (final): `NotYet` means no delivery was
    /// recorded by the end of the journal.
    pub delivery: Delivery,
}

/// The verdict for one execution on its own (docs/design.md §5 rows that speak of
/// a single execution: rejected, pending verification, undelivered result,
/// clean; an execution that never crossed the dispatch boundary is safe to
/// retry).
pub fn status_verdict(a: &ExecutionAnswers) -> Verdict {
    match a.dispatch {
        Dispatch::Rejected => return Verdict::Rejected,
        Dispatch::NotDispatched => return Verdict::SafeRetry,
        Dispatch::Dispatched | Dispatch::Unknown => {}
    }
    if a.answer.is_unknown() {
        return Verdict::PendingVerification;
    }
    if a.answer == TargetAnswer::Performed
        && matches!(a.delivery, Delivery::Failed | Delivery::NotYet)
    {
        return Verdict::UndeliveredResult;
    }
    Verdict::Clean
}

/// Facts about one execution the gateway dispatched more than once (it
/// continued or re-sent the same execution instead of attaching).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Redispatch {
    /// Number of `dispatched` events.
    pub dispatches: usize,
    /// Outcome events that say the target acted (success, not a replay).
    pub performed: usize,
    /// An idempotency key was sent and the target replayed or refused (409)
    /// a repeat.
    pub deduplicated: bool,
    /// Before the last dispatch, the target had shown it did nothing
    /// (not executed, or a definite failure), and never that it acted.
    pub cleared_before_last: bool,
    /// The tool is `read_only`: it has no side effect, so a repeat
    /// duplicates nothing (docs/design.md §4.4).
    pub read_only: bool,
}

/// The verdict for an execution dispatched more than once, or `None` for
/// one dispatch. The same rows as for two executions (docs/design.md §5): each
/// dispatch is an attempt at the target; and as there, a `read_only`
/// tool's repeat is `distinct_intent` (§4.4: it duplicates nothing).
pub fn redispatch_verdict(r: &Redispatch) -> Option<Verdict> {
    if r.dispatches < 2 {
        return None;
    }
    Some(if r.read_only {
        Verdict::DistinctIntent
    } else if r.deduplicated {
        Verdict::DeduplicatedByTarget
    } else if r.performed >= 2 {
        Verdict::DuplicateSideEffect
    } else if r.cleared_before_last {
        Verdict::SafeRetry
    } else {
        Verdict::PossibleDuplicate
    })
}

#[cfg(test)]
mod tests;
