//! Judging a group: every execution's own status, every later call against
//! the earlier executions it may repeat, the most severe verdict deciding.

use super::findings::Texts;
use super::verdict::{
    self, Delivery, Dispatch, LaterCall, LaterFate, PairAnswers, Processes, Timing, Window,
};
use super::{
    Draft, EvidenceRef, Finding, FindingKind, KeyConflict, Severity, ToolContract, Verdict,
    accepted_ref, questions,
};
use crate::journal::Capabilities;
use crate::model::{Arguments, EventIdx, ExecIdx};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeSet;

/// A pair (earlier execution, later call) or a single execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Basis {
    /// The earlier execution.
    pub earlier: ExecIdx,
    /// The later execution; equal to `earlier` for an attached call or a
    /// single execution.
    pub later: ExecIdx,
    /// The answers for the pair, when there is a later call.
    pub pair: Option<PairAnswers>,
    /// The `attached` event on `earlier`, when the later call attached.
    pub call: Option<EventIdx>,
}

/// What gave a group its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "by")]
pub enum Cause {
    /// A later call judged against the execution it repeats, or one
    /// execution's own status.
    Lifecycle(Basis),
    /// One idempotency key carried this intent and others (group ids).
    KeyConflict {
        /// The key.
        key: String,
        /// The other groups.
        others: Vec<String>,
    },
}

/// All calls sharing (intent fingerprint, actor, intent scope), judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// Stable id (`GroupKey::id`). Front ends accept any unique prefix.
    pub id: String,
    /// Recomputed intent fingerprint.
    pub fingerprint: String,
    /// Actor.
    pub actor: String,
    /// Intent scope.
    pub intent_scope: String,
    /// Tool name.
    pub tool: std::sync::Arc<str>,
    /// Target, when the action record names one.
    pub target: Option<std::sync::Arc<str>>,
    /// The executions, in time order.
    pub executions: Vec<ExecIdx>,
    /// Calls: executions created plus calls attached.
    pub calls: usize,
    /// Dispatches to the target over all executions.
    pub dispatches: usize,
    /// First event.
    pub first_at: Option<DateTime<Utc>>,
    /// Last event.
    pub last_at: Option<DateTime<Utc>>,
    /// The verdict.
    pub verdict: Verdict,
    /// What gave the verdict; `explain` turns it into words.
    pub cause: Cause,
    /// The pair (or execution) the five questions are asked about: the one
    /// that decided the verdict, or for a verdict about one execution, the
    /// group's first later call.
    pub asked: Basis,
    /// Extra findings.
    pub findings: Vec<Finding>,
    /// Groups that differ from this one in one argument field, with the
    /// field (docs/design.md §5.13); each also gives a `near_duplicate`
    /// finding.
    pub near_duplicates: Vec<super::near::NearDuplicate>,
    /// Each execution's own status verdict (the docs/design.md §5 rows about one
    /// execution: rejected, pending verification, undelivered result, safe
    /// retry, clean), aligned with `executions`; `None` when a later call
    /// superseded it (an undelivered result that was retried, a pending
    /// outcome that a later replay with the same key settled). The review
    /// queue reads it.
    pub statuses: Vec<Option<Verdict>>,
    /// Side effects beyond the first that are duplicates: later executions
    /// that repeat an earlier one as a `duplicate_side_effect`, and
    /// executions whose second dispatch the target acted on again
    /// (docs/design.md §5.2, §5.3). A repeat from a distinct process, or
    /// after the earlier result was delivered, is not one of them.
    pub duplicates: usize,
    /// The tool contract applied.
    /// Shared by the groups that apply the same contract.
    pub contract: std::sync::Arc<ToolContract>,
}

impl Group {
    /// The verdict's severity.
    pub fn severity(&self) -> Severity {
        self.verdict.severity()
    }
    /// Whether the group is worth listing by default (docs/design.md §7: two or
    /// more calls, a verdict other than `clean`, or the same intent seen in
    /// another group under another fingerprint, §4.3: its repeat may be
    /// there).
    pub fn worth_a_look(&self) -> bool {
        self.calls >= 2
            || self.verdict != Verdict::Clean
            || self.has(FindingKind::FingerprintDrift)
            || self.has(FindingKind::NoAcceptedRecord)
    }
    /// Whether a finding of this kind is present.
    pub fn has(&self, k: FindingKind) -> bool {
        self.findings.iter().any(|f| f.kind == k)
    }
}

/// Keeps the most severe candidate (the first one found among equals).
fn consider(
    best: &mut Option<Candidate>,
    v: Verdict,
    e: ExecIdx,
    f: ExecIdx,
    p: Option<PairAnswers>,
    call: Option<EventIdx>,
) {
    if best.as_ref().is_none_or(|b| v < b.0) {
        *best = Some((v, e, f, p, call));
    }
}

/// How many earlier executions of a group one later execution is compared
/// with, most recent first (within the attach window).
const PAIR_SCAN: usize = 64;

/// Groups with more executions than this are judged on every core: what
/// their pairs read of each execution is found in parallel, and their
/// later executions are compared in runs of this many. Front ends that
/// read a group's executions one by one (an export's timeline, a long
/// finding's evidence) go parallel above the same size.
pub(crate) const PARALLEL_GROUP: usize = 4096;

/// The most severe pair verdict among the later executions at `later`
/// (places in `xs`, each from 1) against the earlier ones they may repeat
/// (`ascending`: whether `xs` is in index order):
/// the first, and every earlier one still inside the attach window, most
/// recent first. The walk is bounded (PAIR_SCAN) so that a group of a
/// hundred thousand calls stays linear; a later execution's walk stops
/// once it is found to be a duplicate side effect. The first found among
/// equals is kept, as by [`consider`], so runs judged apart and then
/// considered in order give what one walk gives.
///
/// Also the number of those later executions that are a duplicate side
/// effect of an earlier one (docs/design.md §5.3): what the postmortem
/// counts, where the target's every action beyond the first would count
/// a repeat from a distinct process or after a delivered result too.
fn best_pair(
    ctx: &questions::Ctx<'_>,
    xs: &[ExecIdx],
    known: &[Known<'_>],
    (window, ascending): (std::time::Duration, bool),
    later: std::ops::Range<usize>,
) -> (Option<Candidate>, usize) {
    let mut best: Option<Candidate> = None;
    let mut duplicates = 0;
    // `earlier` holds (execution, its place in the group), sorted by
    // execution as before.
    let mut earlier: Vec<(ExecIdx, usize)> = Vec::with_capacity(PAIR_SCAN + 1);
    for j in later {
        let (Some(&f), Some(kf)) = (xs.get(j), known.get(j)) else {
            break;
        };
        if j == 0 {
            continue;
        }
        let f_start = kf.start;
        earlier.clear();
        earlier.push((xs[0], 0));
        for (i, &e) in xs[..j].iter().enumerate().rev().take(PAIR_SCAN) {
            let outside = known[i].outside(f_start);
            if outside && e != xs[j - 1] {
                break;
            }
            earlier.push((e, i));
        }
        // The walk went backwards: in a group whose executions are in
        // index order (as the model orders them, by start), turning it
        // round sorts it.
        if ascending {
            earlier[1..].reverse();
        } else {
            earlier.sort_unstable();
        }
        earlier.dedup();
        for &(e, i) in &earlier {
            let p = ctx.pair_answers_known(e, f, window, &known[i], kf);
            if let Some(v) = verdict::pair_verdict(&p) {
                consider(&mut best, v, e, f, Some(p), None);
                if v == Verdict::DuplicateSideEffect {
                    duplicates += 1;
                    break;
                }
            }
        }
    }
    (best, duplicates)
}

/// What the pairs of a group read of each of its executions, found once
/// per execution: what its journals show together, when it began, when it
/// was dispatched and its outcome known, and who called it. A group of
/// 200,000 calls makes millions of pairs; each then compares what is here.
pub(super) struct Known<'m> {
    caps: Capabilities,
    start: Option<DateTime<Utc>>,
    /// The end of the attach window opened at `start`; `None` when there
    /// is no start or the end is beyond what a time can hold. A later
    /// start after it is outside the window: what comparing the gap with
    /// the window says, without a subtraction for each of the millions of
    /// pairs of a large group.
    until: Option<DateTime<Utc>>,
    /// [`Lifecycle::dispatch_time`](super::Lifecycle::dispatch_time).
    dispatched_at: Option<DateTime<Utc>>,
    /// [`Lifecycle::outcome_time`](super::Lifecycle::outcome_time).
    outcome_at: Option<DateTime<Utc>>,
    /// [`Lifecycle::delivery_times`](super::Lifecycle::delivery_times).
    delivery: super::lifecycle::DeliveryTimes,
    /// Time of its first event.
    first_at: Option<DateTime<Utc>>,
    /// Time of its last event.
    last_at: Option<DateTime<Utc>>,
    /// The session id its accepted call names; `None` when there is no
    /// accepted record or it names no session (Q1 is then unknown).
    session: Option<&'m str>,
    /// Its lifecycle's idempotency key, with a hash of it that two keys
    /// are compared by first (the texts only when the hashes agree).
    key: Option<(u64, &'m str)>,
    /// That session's process identity
    /// ([`Session::process_key`](crate::model::Session::process_key)),
    /// when the model has the session and it names a process.
    process: Option<String>,
}

impl<'m> Known<'m> {
    /// What the pairs read of execution `x`, for an attach window of
    /// `window`.
    pub(super) fn of(
        ctx: &questions::Ctx<'m>,
        x: ExecIdx,
        window: std::time::Duration,
    ) -> Known<'m> {
        let model: &'m crate::model::Model = ctx.model;
        let xe = model.execution(x);
        let lifecycles: &'m [super::Lifecycle] = ctx.lifecycles;
        let lc = &lifecycles[x.get()];
        // One read of the execution's events for all of it.
        let times = lc.times(xe);
        let start = times.started_at;
        let until =
            start.and_then(|s| s.checked_add_signed(chrono::Duration::from_std(window).ok()?));
        let session = times.session;
        let process = session
            .and_then(|id| model.session(id))
            .and_then(|s| s.process_key());
        let key = lc.idempotency_key(xe).map(|k| {
            use std::hash::BuildHasher;
            (foldhash::fast::FixedState::default().hash_one(k), k)
        });
        Known {
            caps: ctx.caps_of(x),
            start,
            until,
            key,
            dispatched_at: times.dispatched_at,
            outcome_at: times.delivery.outcome_at(),
            first_at: times.first_at,
            last_at: times.last_at,
            delivery: times.delivery,
            session,
            process,
        }
    }

    /// Whether a later execution that began at `later` began outside the
    /// attach window of this one (never when either start is unknown).
    fn outside(&self, later: Option<DateTime<Utc>>) -> bool {
        matches!((self.until, later), (Some(u), Some(b)) if b > u)
    }

    /// The later call's relation to this execution's idempotency key.
    fn later_call(&self, later: &Known<'_>) -> LaterCall {
        match (self.key, later.key) {
            (Some((ha, a)), Some((hb, b))) if ha == hb && a == b => LaterCall::SameKey,
            (Some(_), Some(_)) => LaterCall::NewKey,
            _ => LaterCall::NoKey,
        }
    }

    /// Q1 for this execution and a later one, by the rule
    /// [`questions::processes_of`], from what both hold.
    pub(super) fn processes(&self, later: &Known<'_>) -> Processes {
        questions::processes_of(self.session, later.session, |_, _| {
            (self.process.as_deref(), later.process.as_deref())
        })
    }
}

/// A verdict with what gave it: (verdict, earlier execution, later
/// execution, pair answers, attached-call event).
type Candidate = (
    Verdict,
    ExecIdx,
    ExecIdx,
    Option<PairAnswers>,
    Option<EventIdx>,
);

/// Judges one group: every execution's own status, every later call against
/// the execution it repeats, and the idempotency keys it shares with other
/// groups (`conflicts`); the most severe of them decides. The verdict is
/// decided here and nowhere else.
pub(super) fn judge(
    ctx: &questions::Ctx<'_>,
    d: Draft,
    conflicts: &[KeyConflict],
    texts: &mut Texts,
) -> Group {
    let model = ctx.model;
    let xs = &d.executions;
    let window = d.contract.attach_window;

    // Candidate (verdict, earlier, later, pair answers) items.
    let mut best: Option<Candidate> = None;
    let mut duplicates = 0usize;
    let mut statuses: Vec<Option<Verdict>> = Vec::with_capacity(xs.len());

    // For each execution, whether a later one with the same idempotency
    // key was answered with a replay: one backward pass over the group
    // (comparing every pair is quadratic in a group of many calls).
    let mut replayed_after: Vec<bool> = vec![false; xs.len()];
    {
        let mut replayed_keys: std::collections::HashSet<&str> = std::collections::HashSet::new();
        for (j, &x) in xs.iter().enumerate().rev() {
            let lc = ctx.lc(x);
            if let Some(k) = lc.idempotency_key(model.execution(x)) {
                replayed_after[j] = replayed_keys.contains(k);
                if lc.answer == verdict::TargetAnswer::Replayed {
                    replayed_keys.insert(k);
                }
            }
        }
    }

    // What every pair reads of each execution, found once per execution
    // (a group of 200,000 calls makes millions of pairs).
    // A large group's on every core (its executions' events are read
    // here), a small one's on the core judging it.
    let known: Vec<Known<'_>> = if xs.len() > PARALLEL_GROUP {
        use rayon::prelude::*;
        xs.par_iter().map(|&x| Known::of(ctx, x, window)).collect()
    } else {
        xs.iter().map(|&x| Known::of(ctx, x, window)).collect()
    };

    for (j, &x) in xs.iter().enumerate() {
        let caps = known[j].caps;
        let v = verdict::status_verdict(&ctx.lc(x).status_known(&known[j].delivery, caps.delivery));
        let later = &xs[j + 1..];
        // "undelivered_result: ... no retry yet": once a later call came,
        // the pairs judge what it did.
        let retried = !ctx.lc(x).attached().is_empty() || !later.is_empty();
        // A later attempt with the same key that the target answered with a
        // replay shows this one was performed: it is no longer pending.
        let replayed_later = replayed_after[j];
        let superseded = match v {
            Verdict::UndeliveredResult => retried,
            Verdict::PendingVerification => replayed_later,
            _ => false,
        };
        if !superseded {
            consider(&mut best, v, x, x, None, None);
        }
        // One execution dispatched more than once: each dispatch was an
        // attempt at the target.
        // (A verdict only for an execution dispatched twice or more.)
        if ctx.lc(x).dispatches >= 2 {
            let read_only = d.contract.class == crate::analysis::contracts::ActionClass::ReadOnly;
            let r = ctx.lc(x).redispatch(model.execution(x), read_only);
            if let Some(v) = verdict::redispatch_verdict(&r) {
                consider(&mut best, v, x, x, None, None);
                // Each acting dispatch beyond the first is a duplicate.
                if v == Verdict::DuplicateSideEffect {
                    duplicates += r.performed.saturating_sub(1).max(1);
                }
            }
        }
        statuses.push((!superseded).then_some(v));
        for &a in ctx.lc(x).attached() {
            let p = ctx.pair_answers_attached(x, a);
            if let Some(v) = verdict::pair_verdict(&p) {
                consider(&mut best, v, x, x, Some(p), Some(a));
            }
        }
    }
    // Each later execution against the earlier ones it may repeat
    // ([`best_pair`]). A large group's later executions are cut into runs
    // judged on every core; the runs' candidates are then kept in group
    // order, as one walk would have found them.
    let walk = (window, xs.windows(2).all(|w| w[0] < w[1]));
    if xs.len() > PARALLEL_GROUP {
        use rayon::prelude::*;
        let runs: Vec<(Option<Candidate>, usize)> = (1..xs.len())
            .step_by(PARALLEL_GROUP)
            .collect::<Vec<_>>()
            .into_par_iter()
            .map(|from| {
                best_pair(
                    ctx,
                    xs,
                    &known,
                    walk,
                    from..(from + PARALLEL_GROUP).min(xs.len()),
                )
            })
            .collect();
        for (run, n) in runs {
            duplicates += n;
            if let Some((v, e, f, p, call)) = run {
                consider(&mut best, v, e, f, p, call);
            }
        }
    } else {
        let (run, n) = best_pair(ctx, xs, &known, walk, 1..xs.len());
        duplicates += n;
        if let Some((v, e, f, p, call)) = run {
            consider(&mut best, v, e, f, p, call);
        }
    }

    let calls: usize = xs
        .iter()
        .map(|&x| usize::from(ctx.lc(x).accepted.is_some()) + ctx.lc(x).attached().len())
        .sum();
    let dispatches = xs.iter().map(|&x| ctx.lc(x).dispatches as usize).sum();
    let first_at = known.iter().filter_map(|k| k.first_at).min();
    let last_at = known.iter().filter_map(|k| k.last_at).max();

    // When a status verdict decided but the group has later calls, the
    // questions are still asked about the most telling pair.
    let (verdict, e, f, pair, call) = best.unwrap_or((Verdict::Clean, xs[0], xs[0], None, None));
    let basis = Basis {
        earlier: e,
        later: f,
        pair,
        call,
    };
    let asked = match pair {
        Some(_) => basis,
        None => first_pair(ctx, xs, window).unwrap_or(basis),
    };
    // One key carrying this intent and another is at least a key conflict
    // (docs/design.md §5.3), whatever the lifecycle says.
    let (verdict, cause) = match conflicts.first() {
        Some(c) if Verdict::IdempotencyKeyConflict < verdict => (
            Verdict::IdempotencyKeyConflict,
            Cause::KeyConflict {
                key: c.key.clone(),
                others: c.others.clone(),
            },
        ),
        _ => (verdict, Cause::Lifecycle(basis)),
    };

    let mut findings: Vec<Finding> = conflicts
        .iter()
        .map(|c| Finding {
            kind: FindingKind::KeyReusedAcrossIntents,
            detail: format!(
                "idempotency key \"{}\" also carried a different intent in {}",
                c.key,
                c.others.join(", ")
            )
            .into(),
            evidence: c
                .executions
                .iter()
                .filter_map(|&x| accepted_ref(ctx.lifecycles, x))
                .collect(),
        })
        .collect();
    if !d.contract.configured && !d.key.is_orphan() {
        let (detail, evidence) = match &d.contract.hint {
            Some(h) => (
                texts.of(format_args!(
                    "no replay contract for {}: treated as {} because {} declares it so ({}, an untrusted hint), with a {} attach window",
                    d.tool,
                    d.contract.class,
                    h.server.as_deref().unwrap_or("its server"),
                    h.annotation,
                    humantime::format_duration(d.contract.attach_window)
                )),
                vec![EvidenceRef::Hint { source: h.source }],
            ),
            None => (
                texts.of(format_args!(
                    "no replay contract for {}: treated as irreversible with a {} attach window",
                    d.tool,
                    humantime::format_duration(d.contract.attach_window)
                )),
                vec![],
            ),
        };
        findings.push(Finding {
            kind: FindingKind::NoReplayContract,
            detail,
            evidence,
        });
    }
    // A group of its own of an execution with no accepted record
    // (`GroupKey::orphan`): what it is cannot be told, so it is shown.
    if d.key.fingerprint.starts_with("orphan:")
        && let Some(&x) = xs.first()
    {
        let ex = model.execution(x);
        findings.push(Finding {
            kind: FindingKind::NoAcceptedRecord,
            detail: texts.of(format_args!(
                "the journal holds {} event(s) of {} but no accepted record: its tool, arguments and caller are unknown, so it cannot be compared with the calls it may repeat (a bad line may have held it)",
                ex.len(),
                ex.id()
            )),
            evidence: vec![EvidenceRef::Event {
                execution: x,
                event: EventIdx::new(0),
            }],
        });
    }
    for &x in xs {
        let ex = model.execution(x);
        if let Some(i) = ctx.lc(x).late_response(ex) {
            findings.push(Finding {
                kind: FindingKind::LateResponse,
                detail: format!("{}: the outcome arrived by a late response", ex.id()).into(),
                evidence: vec![EvidenceRef::Event {
                    execution: x,
                    event: i,
                }],
            });
        }
        if let Some((a, b)) = ctx.lc(x).contradiction {
            findings.push(Finding {
                kind: FindingKind::OutcomeContradiction,
                detail: format!(
                    "{}: the outcome at {} and the one at {} disagree on whether the target acted; retrace reads it as acted",
                    ex.id(),
                    ex.event(a).at().format("%H:%M:%S%.3f"),
                    ex.event(b).at().format("%H:%M:%S%.3f"),
                )
                .into(),
                evidence: vec![
                    EvidenceRef::Event { execution: x, event: a },
                    EvidenceRef::Event { execution: x, event: b },
                ],
            });
        }
        if let Some(i) = ctx.lc(x).cancel_after_completion(ex) {
            findings.push(Finding {
                kind: FindingKind::CancelAfterCompletion,
                detail: format!(
                    "{}: cancelled after the target had completed it; the effect stands",
                    ex.id()
                )
                .into(),
                evidence: vec![EvidenceRef::Event {
                    execution: x,
                    event: i,
                }],
            });
        }
    }
    // Readers say when their format does not record the arguments.
    if let Some((x, what)) = xs.iter().find_map(|&x| {
        // Another layer's record of the call may hold what this one lacks.
        let what = match model.execution(x).arguments_recorded()? {
            Arguments::Full => return None,
            Arguments::No(w) => format!("the journal does not log tool arguments ({w})"),
            Arguments::Partly(w) => format!("the journal logs tool arguments only in part ({w})"),
        };
        Some((x, what))
    }) {
        findings.push(Finding {
            kind: FindingKind::ArgumentsNotLogged,
            detail: texts.of(format_args!(
                "{what}: calls are grouped by what the journal does record, so distinct intents may look alike"
            )),
            evidence: accepted_ref(ctx.lifecycles, x).into_iter().collect(),
        });
    }
    let keys: Vec<(ExecIdx, &str)> = xs
        .iter()
        .filter_map(|&x| {
            ctx.lc(x)
                .idempotency_key(model.execution(x))
                .map(|k| (x, k))
        })
        .collect();
    let distinct: BTreeSet<&str> = keys.iter().map(|(_, k)| *k).collect();
    if keys.len() >= 2 && distinct.len() == keys.len() {
        findings.push(Finding {
            kind: FindingKind::KeyPerAttempt,
            detail: texts.of(format_args!(
                "one intent, a new idempotency key on each of {} attempts: the target cannot deduplicate them",
                keys.len()
            )),
            evidence: keys.iter().filter_map(|&(x, _)| accepted_ref(ctx.lifecycles, x)).collect(),
        });
    }

    // The draft is used up: its parts become the group's.
    let id = d.key.id();
    let Draft {
        key,
        tool,
        target,
        contract,
        executions,
        ..
    } = d;
    Group {
        id,
        fingerprint: key.fingerprint,
        actor: key.actor,
        intent_scope: key.intent_scope,
        tool,
        target,
        executions,
        calls,
        dispatches,
        first_at,
        last_at,
        verdict,
        cause,
        asked,
        findings,
        near_duplicates: Vec::new(),
        statuses,
        contract,
        duplicates,
    }
}

/// Whether a later execution of `xs` than the one at `pos`, begun within
/// its attach window, makes a `possible_duplicate` pair with it: what
/// opens the delivery question on an execution whose journal cannot show
/// delivery (docs/design.md §5.8). A later call refused before dispatch,
/// or begun after the window, leaves nothing open. The pairs compared are
/// the ones judging compares ([`best_pair`]): the group's first execution
/// with every later one, any other with the next [`PAIR_SCAN`].
pub(super) fn repeated_as_possible_duplicate(
    ctx: &questions::Ctx<'_>,
    xs: &[ExecIdx],
    pos: usize,
    window: std::time::Duration,
) -> bool {
    let Some(&e) = xs.get(pos) else {
        return false;
    };
    let ke = Known::of(ctx, e, window);
    let scan = if pos == 0 { usize::MAX } else { PAIR_SCAN };
    xs.iter()
        .skip(pos + 1)
        .take(scan)
        .map(|&f| (f, Known::of(ctx, f, window)))
        .take_while(|(_, kf)| !ke.outside(kf.start))
        .any(|(f, kf)| {
            let p = ctx.pair_answers_known(e, f, window, &ke, &kf);
            verdict::pair_verdict(&p) == Some(Verdict::PossibleDuplicate)
        })
}

/// The first later call of a group, for groups decided by a status verdict.
fn first_pair(
    ctx: &questions::Ctx<'_>,
    xs: &[ExecIdx],
    window: std::time::Duration,
) -> Option<Basis> {
    let first = xs[0];
    if let Some(&a) = ctx.lc(first).attached().first() {
        return Some(Basis {
            earlier: first,
            later: first,
            pair: Some(ctx.pair_answers_attached(first, a)),
            call: Some(a),
        });
    }
    let &second = xs.get(1)?;
    Some(Basis {
        earlier: first,
        later: second,
        pair: Some(ctx.pair_answers(first, second, window)),
        call: None,
    })
}

impl questions::Ctx<'_> {
    fn caps_of(&self, x: ExecIdx) -> Capabilities {
        self.journals.caps_of(self.model.execution(x))
    }

    fn pair_answers_attached(&self, x: ExecIdx, _event: EventIdx) -> PairAnswers {
        let l = self.lc(x);
        PairAnswers {
            processes: Processes::One,
            dispatch: l.dispatch(),
            answer: l.answer,
            timing: Timing::BeforeLater,
            delivery: Delivery::NotApplicable,
            later: LaterCall::Attached,
            window: Window::Within,
            fate: LaterFate::NotDispatched,
        }
    }

    fn pair_answers(&self, e: ExecIdx, f: ExecIdx, window: std::time::Duration) -> PairAnswers {
        let (ke, kf) = (Known::of(self, e, window), Known::of(self, f, window));
        self.pair_answers_known(e, f, window, &ke, &kf)
    }

    /// [`Self::pair_answers`] with what it reads of each execution's
    /// journals and start already found.
    fn pair_answers_known(
        &self,
        e: ExecIdx,
        f: ExecIdx,
        window: std::time::Duration,
        ke: &Known<'_>,
        kf: &Known<'_>,
    ) -> PairAnswers {
        let (le, lf) = (self.lc(e), self.lc(f));
        let t = kf.dispatched_at;
        let timing = match (ke.outcome_at, t) {
            (Some(o), Some(t)) if o > t => Timing::AfterLater,
            _ => Timing::BeforeLater,
        };
        let (caps_e, caps_f) = (ke.caps, kf.caps);
        let later = if !caps_f.execution_identity || !caps_e.execution_identity {
            LaterCall::Unknown
        } else {
            ke.later_call(kf)
        };
        let window = if window.is_zero() || ke.outside(kf.start) {
            Window::Outside
        } else {
            Window::Within
        };
        let fate = match lf.dispatch() {
            Dispatch::Rejected | Dispatch::NotDispatched => LaterFate::NotDispatched,
            Dispatch::Dispatched | Dispatch::Unknown => LaterFate::Answered(lf.answer),
        };
        PairAnswers {
            processes: ke.processes(kf),
            dispatch: le.dispatch(),
            answer: le.answer,
            timing,
            delivery: le.delivery_known(&ke.delivery, t, caps_e.delivery).0,
            later,
            window,
            fate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `Known` with nothing known but the native journal's
    /// capabilities.
    fn unknown() -> Known<'static> {
        Known {
            caps: crate::journal::Format::Native.capabilities(),
            start: None,
            until: None,
            dispatched_at: None,
            outcome_at: None,
            delivery: Default::default(),
            first_at: None,
            last_at: None,
            session: None,
            key: None,
            process: None,
        }
    }

    /// The window's end says what comparing the gap with the window said:
    /// later starts before, at, just after and long after the end, before
    /// the earlier start, and windows of zero, a millisecond, fifteen
    /// minutes and beyond what a time can hold.
    #[test]
    fn outside_the_window_is_the_gap_beyond_it() {
        let t = |ms: i64| {
            DateTime::<Utc>::from_timestamp_millis(1_784_000_000_000 + ms).unwrap_or_default()
        };
        let windows = [0, 1, 900_000, u64::MAX / 2].map(std::time::Duration::from_millis);
        let gaps = [-5_000, -1, 0, 1, 899_999, 900_000, 900_001, 10_000_000];
        for window in windows {
            for gap in gaps {
                let (a, b) = (t(0), t(gap));
                let until = chrono::Duration::from_std(window)
                    .ok()
                    .and_then(|w| a.checked_add_signed(w));
                let k = Known {
                    caps: crate::journal::Format::Native.capabilities(),
                    start: Some(a),
                    until,
                    ..unknown()
                };
                let by_gap = (b - a).to_std().unwrap_or_default() > window;
                assert_eq!(
                    k.outside(Some(b)),
                    by_gap,
                    "gap {gap} ms, window {window:?}"
                );
                assert!(!k.outside(None));
            }
        }
        let none = unknown();
        assert!(!none.outside(Some(t(0))));
    }
}
