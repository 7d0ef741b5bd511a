//! The verdict in one sentence (docs/design.md §5.3): why the most telling
//! pair or execution of a group got its verdict, naming the executions and
//! what the target answered.

use super::super::verdict::{
    Delivery, Dispatch, LaterCall, PairAnswers, Processes, Timing, Verdict, Window,
};
use super::{Ctx, outcome_words};
use crate::analysis::verdict::TargetAnswer;
use crate::model::ExecIdx;

impl Ctx<'_> {
    /// Why a lone execution is `clean`, in words that match what the journal
    /// shows: completed and delivered, completed with delivery not recorded
    /// by the format, or refused or failed by the target (nothing repeated,
    /// so nothing to investigate).
    fn clean_reason(&self, e: ExecIdx, outcome: &str) -> String {
        let x = self.x(e);
        let l = self.lc(e);
        let caps = self.journals.caps_of(x);
        let detail = if outcome.is_empty() {
            String::new()
        } else {
            format!(" ({outcome})")
        };
        match (l.answer, l.delivery_at(x, None, caps.delivery).0) {
            (TargetAnswer::Performed | TargetAnswer::Replayed, Delivery::NotRecorded) => format!(
                "one call, one execution, completed{detail}; {} does not record whether the result reached the agent",
                self.format_name(e)
            ),
            (TargetAnswer::Performed | TargetAnswer::Replayed, _) => {
                format!("one call, one execution, completed and delivered{detail}")
            }
            (TargetAnswer::NotPerformed | TargetAnswer::Conflict | TargetAnswer::KeyRefused, _) => {
                // "One call" says it was not sent again in this group; a
                // near duplicate in another group may still be a rewritten
                // repeat, which the findings name.
                format!("one call, one execution; the target did not act{detail}")
            }
            _ => format!("one call, one execution{detail}"),
        }
    }

    /// One sentence saying why the verdict was given.
    pub fn reason(&self, v: Verdict, e: ExecIdx, f: ExecIdx, p: Option<&PairAnswers>) -> String {
        let (xe, xf) = (self.x(e), self.x(f));
        let le = self.lc(e);
        if e == f && p.is_none() && le.dispatches >= 2 {
            let what = match v {
                Verdict::DuplicateSideEffect => "and the target acted more than once",
                Verdict::DeduplicatedByTarget => {
                    "with the same idempotency key, and the target did not act again"
                }
                Verdict::SafeRetry => "after the target had shown it did nothing",
                Verdict::DistinctIntent => {
                    "; the tool is read-only, so a repeat duplicates nothing"
                }
                _ => {
                    "while its first dispatch had no known outcome: the target may have acted twice"
                }
            };
            let sep = if what.starts_with(';') { "" } else { " " };
            return format!(
                "the gateway dispatched {} {} times{sep}{what}",
                xe.id(),
                le.dispatches
            );
        }
        // An outcome settled by a reviewer names the reviewer and the time
        // (resolution.rs: every view says who resolved it and when).
        // An outcome settled by a reviewer says so first: the journal's own
        // answer (if any) did not tell what the target did.
        let reviewed = |r: &crate::analysis::Resolution| {
            format!(
                "reviewer {} decided {} at {}",
                r.reviewer,
                r.decision,
                r.at.format("%Y-%m-%d %H:%M:%SZ")
            )
        };
        let outcome = match (le.decisive_outcome, &le.resolution) {
            (Some(i), Some(r)) if r.decision != crate::analysis::Decision::Escalated => format!(
                "{}; the journal's answer, {}, did not tell",
                reviewed(r),
                outcome_words(xe.event(i))
            ),
            (Some(i), _) => outcome_words(xe.event(i)),
            (None, Some(r)) => reviewed(r),
            (None, None) => String::new(),
        };
        match (v, p) {
            (Verdict::DuplicateSideEffect, Some(p)) => {
                if p.timing == Timing::AfterLater {
                    format!(
                        "{} was dispatched while {} was still unresolved; both turned out to be performed by the target ({outcome})",
                        xf.id(),
                        xe.id()
                    )
                } else {
                    format!(
                        "{} was dispatched after {} had completed ({outcome}) without its result reaching the agent; the target acted on both",
                        xf.id(),
                        xe.id()
                    )
                }
            }
            (Verdict::PossibleDuplicate, Some(p)) if p.answer.is_unknown() => format!(
                "{} was dispatched while the outcome of {} was unknown; the target may have acted twice",
                xf.id(),
                xe.id()
            ),
            (Verdict::PossibleDuplicate, Some(p)) if p.delivery == Delivery::NotRecorded => {
                format!(
                    "{} repeated {} after it completed; the journal cannot show whether the first result reached the agent",
                    xf.id(),
                    xe.id()
                )
            }
            (Verdict::PossibleDuplicate, _) => format!(
                "{} repeated {}, and the second outcome is unknown",
                xf.id(),
                xe.id()
            ),
            (Verdict::IdempotencyKeyConflict, _) => format!(
                "{} reused the idempotency key of {} and the target refused it as a different request",
                xf.id(),
                xe.id()
            ),
            (Verdict::PendingVerification, _) if le.answer == TargetAnswer::Ambiguous => format!(
                "{} was dispatched and its answer does not show whether the target acted; nothing has resolved it",
                xe.id()
            ),
            (Verdict::PendingVerification, _) => format!(
                "{} was dispatched and its outcome is unknown; nothing has resolved it",
                xe.id()
            ),
            (Verdict::UndeliveredResult, _) => format!(
                "{} completed ({outcome}) but its result did not reach the agent, and no retry followed",
                xe.id()
            ),
            (Verdict::DistinctIntent, Some(p)) => {
                if p.processes == Processes::Distinct {
                    format!(
                        "{} and {} came from distinct agent processes",
                        xe.id(),
                        xf.id()
                    )
                } else if p.window == Window::Outside {
                    if self.lc(f).accepted.is_some() && p.later != LaterCall::Attached {
                        // How far apart, not a guess at why the window is
                        // what it is (a contract, a read-only tool's none).
                        let gap = match (xe.started_at(), xf.started_at()) {
                            (Some(a), Some(b)) if b >= a => (b - a)
                                .to_std()
                                .map(|d| {
                                    format!(
                                        ", {} later",
                                        humantime::format_duration(
                                            std::time::Duration::from_millis(
                                                u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
                                            )
                                        )
                                    )
                                })
                                .unwrap_or_default(),
                            _ => String::new(),
                        };
                        format!(
                            "{} came outside the attach window of {}{gap}",
                            xf.id(),
                            xe.id()
                        )
                    } else {
                        format!("{} came outside the attach window", xf.id())
                    }
                } else {
                    format!(
                        "{} was a new request after the result of {} was delivered",
                        xf.id(),
                        xe.id()
                    )
                }
            }
            (Verdict::Rejected, _) => format!("authorization refused {}", xe.id()),
            (Verdict::DeduplicatedByTarget, _) => format!(
                "{} carried the same idempotency key as {} and the target did not act again",
                xf.id(),
                xe.id()
            ),
            (Verdict::AttachedRetry, _) => {
                let n = self.lc(e).attached().len();
                format!(
                    "{n} later call(s) attached to {}; it was dispatched {} time(s)",
                    xe.id(),
                    le.dispatches
                )
            }
            (Verdict::SafeRetry, Some(p)) => {
                if matches!(p.dispatch, Dispatch::Rejected | Dispatch::NotDispatched) {
                    format!(
                        "{} never crossed the dispatch boundary, so {} was safe",
                        xe.id(),
                        xf.id()
                    )
                } else {
                    format!(
                        "the target did not act on {} ({outcome}), so {} was safe",
                        xe.id(),
                        xf.id()
                    )
                }
            }
            (Verdict::SafeRetry, None) => {
                format!("{} never crossed the dispatch boundary", xe.id())
            }
            (Verdict::Clean, _) => self.clean_reason(e, &outcome),
            (Verdict::DistinctIntent, None) => "distinct intents".into(),
            (Verdict::DuplicateSideEffect, None) => "duplicate side effect".into(),
        }
    }
}
