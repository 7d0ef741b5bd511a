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
}

/// The verdict for an execution dispatched more than once, or `None` for
/// one dispatch. The same rows as for two executions (docs/design.md §5): each
/// dispatch is an attempt at the target.
pub fn redispatch_verdict(r: &Redispatch) -> Option<Verdict> {
    if r.dispatches < 2 {
        return None;
    }
    Some(if r.deduplicated {
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
mod tests {
    use super::*;

    const PROCESSES: [Processes; 3] = [Processes::One, Processes::Distinct, Processes::Unknown];
    const DISPATCH: [Dispatch; 4] = [
        Dispatch::Dispatched,
        Dispatch::Rejected,
        Dispatch::NotDispatched,
        Dispatch::Unknown,
    ];
    const ANSWERS: [TargetAnswer; 7] = [
        TargetAnswer::Performed,
        TargetAnswer::NotPerformed,
        TargetAnswer::Replayed,
        TargetAnswer::Conflict,
        TargetAnswer::KeyRefused,
        TargetAnswer::Ambiguous,
        TargetAnswer::NoAnswer,
    ];
    const TIMING: [Timing; 2] = [Timing::BeforeLater, Timing::AfterLater];
    const DELIVERY: [Delivery; 5] = [
        Delivery::Delivered,
        Delivery::Failed,
        Delivery::NotYet,
        Delivery::NotRecorded,
        Delivery::NotApplicable,
    ];
    const LATER: [LaterCall; 5] = [
        LaterCall::Attached,
        LaterCall::SameKey,
        LaterCall::NewKey,
        LaterCall::NoKey,
        LaterCall::Unknown,
    ];
    const WINDOW: [Window; 2] = [Window::Within, Window::Outside];

    fn fates() -> Vec<LaterFate> {
        let mut v = vec![LaterFate::NotDispatched];
        v.extend(ANSWERS.iter().map(|&a| LaterFate::Answered(a)));
        v
    }

    /// Every combination of answers to the five questions and the context
    /// facts: 3·4·7·2·5·5·2·8 = 67,200 pairs.
    fn all_pairs() -> Vec<PairAnswers> {
        let mut out = Vec::new();
        for processes in PROCESSES {
            for dispatch in DISPATCH {
                for answer in ANSWERS {
                    for timing in TIMING {
                        for delivery in DELIVERY {
                            for later in LATER {
                                for window in WINDOW {
                                    for fate in fates() {
                                        out.push(PairAnswers {
                                            processes,
                                            dispatch,
                                            answer,
                                            timing,
                                            delivery,
                                            later,
                                            window,
                                            fate,
                                        });
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        out
    }

    fn later_answer(a: &PairAnswers) -> Option<TargetAnswer> {
        match a.fate {
            LaterFate::NotDispatched => None,
            LaterFate::Answered(t) => Some(t),
        }
    }

    /// The "when" column of docs/design.md §5, written independently of
    /// `pair_verdict`: each verdict the function gives must satisfy its row.
    fn row_holds(v: Verdict, a: &PairAnswers) -> bool {
        let fresh = a.later != LaterCall::Attached;
        let one_intent = a.window == Window::Within && a.processes != Processes::Distinct;
        let earlier_crossed = matches!(a.dispatch, Dispatch::Dispatched | Dispatch::Unknown);
        let later = later_answer(a);
        let later_dispatched = later.is_some();
        match v {
            // "two or more fresh executions of one intent were dispatched
            // while an earlier one was unresolved (or after it completed
            // without delivery), and the target accepted more than one"
            Verdict::DuplicateSideEffect => {
                fresh
                    && one_intent
                    && earlier_crossed
                    && a.answer == TargetAnswer::Performed
                    && later == Some(TargetAnswer::Performed)
                    && (a.timing == Timing::AfterLater
                        || matches!(
                            a.delivery,
                            Delivery::Failed | Delivery::NotYet | Delivery::NotApplicable
                        ))
            }
            // "a fresh execution was dispatched after an earlier one had an
            // unknown outcome" — extended to an unknown delivery, which leaves
            // the same doubt.
            Verdict::PossibleDuplicate => {
                fresh
                    && one_intent
                    && earlier_crossed
                    && later_dispatched
                    && (a.answer.is_unknown()
                        || (a.answer == TargetAnswer::Performed
                            && (a.delivery == Delivery::NotRecorded
                                || later.is_some_and(TargetAnswer::is_unknown))))
            }
            // "the target refused a reused key (422/400)"
            Verdict::IdempotencyKeyConflict => {
                a.later == LaterCall::SameKey && later == Some(TargetAnswer::KeyRefused)
            }
            // "distinct processes, a different scope, a repeat after the
            // earlier result was delivered, or outside the attach window"
            Verdict::DistinctIntent => {
                fresh
                    && (!one_intent
                        || (a.answer == TargetAnswer::Performed
                            && a.timing == Timing::BeforeLater
                            && a.delivery == Delivery::Delivered))
            }
            // "repeated dispatches carried the same idempotency key and the
            // target replayed or refused (409)"
            Verdict::DeduplicatedByTarget => {
                a.later == LaterCall::SameKey
                    && matches!(later, Some(TargetAnswer::Replayed | TargetAnswer::Conflict))
            }
            // "later calls attached to the one execution; one dispatch"
            Verdict::AttachedRetry => !fresh,
            // "the earlier attempt never crossed the dispatch boundary", or
            // the target showed it did nothing.
            Verdict::SafeRetry => {
                fresh && one_intent && (!earlier_crossed || a.answer.no_new_effect())
            }
            Verdict::PendingVerification
            | Verdict::UndeliveredResult
            | Verdict::Rejected
            | Verdict::Clean => false,
        }
    }

    #[test]
    fn every_pair_verdict_satisfies_its_row() {
        let pairs = all_pairs();
        assert_eq!(pairs.len(), 67_200);
        for a in &pairs {
            if let Some(v) = pair_verdict(a) {
                assert!(row_holds(v, a), "{v} does not fit its row for {a:?}");
            }
        }
    }

    #[test]
    fn no_pair_with_a_second_possible_effect_goes_unjudged() {
        // If the later attempt may have acted and the two are one intent,
        // the pair must be judged (never silently dropped).
        for a in all_pairs() {
            let later = later_answer(&a);
            let may_act = later.is_some_and(|t| !t.no_new_effect());
            let one_intent = a.window == Window::Within && a.processes != Processes::Distinct;
            if a.later != LaterCall::Attached && one_intent && may_act {
                assert!(pair_verdict(&a).is_some(), "{a:?}");
            }
        }
    }

    /// "Any answer may be unknown; then the verdict is the most cautious one
    /// that the evidence allows": when some way of resolving an unknown
    /// answer would give `duplicate_side_effect`, the unknown answer must
    /// give at least `possible_duplicate`.
    #[test]
    fn unknown_answers_keep_the_worst_case_in_view() {
        let high = |v: Option<Verdict>| {
            matches!(
                v,
                Some(Verdict::DuplicateSideEffect | Verdict::PossibleDuplicate)
            )
        };
        for a in all_pairs() {
            let v = pair_verdict(&a);
            // Unknown outcome of the earlier execution.
            if a.answer.is_unknown() {
                let worst = ANSWERS
                    .iter()
                    .filter(|x| !x.is_unknown())
                    .flat_map(|&answer| {
                        TIMING.map(|timing| PairAnswers {
                            answer,
                            timing,
                            ..a
                        })
                    })
                    .any(|r| pair_verdict(&r) == Some(Verdict::DuplicateSideEffect));
                assert!(!worst || high(v), "{a:?} gave {v:?}");
            }
            // Delivery not recorded.
            if a.delivery == Delivery::NotRecorded {
                let worst = DELIVERY
                    .iter()
                    .filter(|&&d| d != Delivery::NotRecorded)
                    .any(|&delivery| {
                        pair_verdict(&PairAnswers { delivery, ..a })
                            == Some(Verdict::DuplicateSideEffect)
                    });
                assert!(!worst || high(v), "{a:?} gave {v:?}");
            }
            // Unknown processes read as one process.
            if a.processes == Processes::Unknown {
                let one = pair_verdict(&PairAnswers {
                    processes: Processes::One,
                    ..a
                });
                assert_eq!(v, one, "{a:?}");
            }
            // Unknown dispatch reads as dispatched.
            if a.dispatch == Dispatch::Unknown {
                let dispatched = pair_verdict(&PairAnswers {
                    dispatch: Dispatch::Dispatched,
                    ..a
                });
                assert_eq!(v, dispatched, "{a:?}");
            }
        }
    }

    #[test]
    fn table_rows_by_example() {
        let base = PairAnswers {
            processes: Processes::One,
            dispatch: Dispatch::Dispatched,
            answer: TargetAnswer::Performed,
            timing: Timing::BeforeLater,
            delivery: Delivery::Failed,
            later: LaterCall::NoKey,
            window: Window::Within,
            fate: LaterFate::Answered(TargetAnswer::Performed),
        };
        // The reference incident (docs/design.md §5.11): 201 observed, delivery failed, fresh retry acted.
        assert_eq!(pair_verdict(&base), Some(Verdict::DuplicateSideEffect));
        // Unknown outcome, fresh retry.
        let unknown = PairAnswers {
            answer: TargetAnswer::NoAnswer,
            delivery: Delivery::NotApplicable,
            ..base
        };
        assert_eq!(pair_verdict(&unknown), Some(Verdict::PossibleDuplicate));
        // ... resolved later by a status query that found it done.
        let resolved = PairAnswers {
            answer: TargetAnswer::Performed,
            timing: Timing::AfterLater,
            ..unknown
        };
        assert_eq!(pair_verdict(&resolved), Some(Verdict::DuplicateSideEffect));
        // ... or found no record of it.
        let not_run = PairAnswers {
            answer: TargetAnswer::NotPerformed,
            timing: Timing::AfterLater,
            ..unknown
        };
        assert_eq!(pair_verdict(&not_run), Some(Verdict::SafeRetry));
        // Same key, target replayed.
        let dedup = PairAnswers {
            later: LaterCall::SameKey,
            fate: LaterFate::Answered(TargetAnswer::Replayed),
            ..base
        };
        assert_eq!(pair_verdict(&dedup), Some(Verdict::DeduplicatedByTarget));
        let refused = PairAnswers {
            fate: LaterFate::Answered(TargetAnswer::KeyRefused),
            ..dedup
        };
        assert_eq!(
            pair_verdict(&refused),
            Some(Verdict::IdempotencyKeyConflict)
        );
        // Repeat after delivery.
        let delivered = PairAnswers {
            delivery: Delivery::Delivered,
            ..base
        };
        assert_eq!(pair_verdict(&delivered), Some(Verdict::DistinctIntent));
        // Two processes.
        let two = PairAnswers {
            processes: Processes::Distinct,
            ..base
        };
        assert_eq!(pair_verdict(&two), Some(Verdict::DistinctIntent));
        // Outside the window.
        let late = PairAnswers {
            window: Window::Outside,
            ..base
        };
        assert_eq!(pair_verdict(&late), Some(Verdict::DistinctIntent));
        // Earlier never dispatched.
        let never = PairAnswers {
            dispatch: Dispatch::NotDispatched,
            answer: TargetAnswer::NoAnswer,
            ..base
        };
        assert_eq!(pair_verdict(&never), Some(Verdict::SafeRetry));
        // Attached.
        let att = PairAnswers {
            later: LaterCall::Attached,
            ..base
        };
        assert_eq!(pair_verdict(&att), Some(Verdict::AttachedRetry));
        // Delivery not recorded (raw RPC logs): possible, not proven.
        let rpc = PairAnswers {
            delivery: Delivery::NotRecorded,
            later: LaterCall::Unknown,
            processes: Processes::Unknown,
            ..base
        };
        assert_eq!(pair_verdict(&rpc), Some(Verdict::PossibleDuplicate));
    }

    #[test]
    fn status_verdicts_exhaustive() {
        for dispatch in DISPATCH {
            for answer in ANSWERS {
                for delivery in DELIVERY {
                    let a = ExecutionAnswers {
                        dispatch,
                        answer,
                        delivery,
                    };
                    let v = status_verdict(&a);
                    let expected = match dispatch {
                        Dispatch::Rejected => Verdict::Rejected,
                        Dispatch::NotDispatched => Verdict::SafeRetry,
                        _ if answer.is_unknown() => Verdict::PendingVerification,
                        _ if answer == TargetAnswer::Performed
                            && matches!(delivery, Delivery::Failed | Delivery::NotYet) =>
                        {
                            Verdict::UndeliveredResult
                        }
                        _ => Verdict::Clean,
                    };
                    assert_eq!(v, expected, "{a:?}");
                }
            }
        }
    }

    #[test]
    fn redispatch_verdicts_exhaustive() {
        for dispatches in 0..4 {
            for performed in 0..4 {
                for deduplicated in [false, true] {
                    for cleared_before_last in [false, true] {
                        let r = Redispatch {
                            dispatches,
                            performed,
                            deduplicated,
                            cleared_before_last,
                        };
                        let v = redispatch_verdict(&r);
                        let expected = if dispatches < 2 {
                            None
                        } else if deduplicated {
                            Some(Verdict::DeduplicatedByTarget)
                        } else if performed >= 2 {
                            Some(Verdict::DuplicateSideEffect)
                        } else if cleared_before_last {
                            Some(Verdict::SafeRetry)
                        } else {
                            Some(Verdict::PossibleDuplicate)
                        };
                        assert_eq!(v, expected, "{r:?}");
                        // Never "fine" while a second dispatch may have acted.
                        if dispatches >= 2 && !deduplicated && !cleared_before_last {
                            assert!(v.unwrap() <= Verdict::PossibleDuplicate, "{r:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn names_round_trip_and_order_matches_table() {
        for (i, v) in Verdict::ALL.iter().enumerate() {
            assert_eq!(Verdict::parse(v.as_str()), Some(*v));
            if i > 0 {
                assert!(Verdict::ALL[i - 1] < *v);
                assert!(Verdict::ALL[i - 1].severity() <= v.severity());
            }
        }
    }
}
