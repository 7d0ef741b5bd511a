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
        Verdict::SafeRetry => fresh && one_intent && (!earlier_crossed || a.answer.no_new_effect()),
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
                for (cleared_before_last, read_only) in
                    [(false, false), (false, true), (true, false), (true, true)]
                {
                    let r = Redispatch {
                        dispatches,
                        performed,
                        deduplicated,
                        cleared_before_last,
                        read_only,
                    };
                    let v = redispatch_verdict(&r);
                    let expected = if dispatches < 2 {
                        None
                    } else if read_only {
                        // A read-only tool's repeat duplicates nothing.
                        Some(Verdict::DistinctIntent)
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
                    if dispatches >= 2 && !deduplicated && !cleared_before_last && !read_only {
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
