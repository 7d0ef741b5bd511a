//! Walks one execution through its lifecycle (docs/design.md §2; docs/design.md §2.1): accepted → authorized → dispatched →
//! outcome observed → result delivered, with the exits rejected,
//! dispatch_failed and cancelled.

use super::resolution::{Decision, Resolution};
use super::verdict::{Delivery, Dispatch, ExecutionAnswers, TargetAnswer};
use crate::model::{
    EventIdx, EventRef, ExecutionRef, JsonRpcIdRef, KindRef, ObservedVia, OutcomeKind,
};
use chrono::{DateTime, Utc};

/// HTTP statuses that do not tell whether the target acted (docs/design.md §10.6: 408, 502, 504 and 503 on a POST are ambiguous; a 500 may follow
/// partial work).
pub const AMBIGUOUS_STATUSES: [u16; 5] = [408, 500, 502, 503, 504];

/// Lifecycle facts of one execution, as indexes into its event list.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Lifecycle {
    /// The `accepted` event.
    pub accepted: Option<EventIdx>,
    /// The first `authorized` event.
    pub authorized: Option<EventIdx>,
    /// The first `rejected` event.
    pub rejected: Option<EventIdx>,
    /// The first `dispatched` event.
    pub dispatched: Option<EventIdx>,
    /// Number of `dispatched` events (a continued execution may dispatch
    /// again), saturating at `u32::MAX`.
    pub dispatches: u32,
    /// The first `dispatch_failed` event.
    pub dispatch_failed: Option<EventIdx>,
    /// The outcome event that settles what the target did (the last one that
    /// is not `unknown`).
    pub decisive_outcome: Option<EventIdx>,
    /// The first `cancelled` event.
    pub cancelled: Option<EventIdx>,
    /// The `outcome` events, then the `delivered` / `delivery_failed`
    /// events, then the `attached` events, each in time order, in one
    /// slice of its exact length: a lifecycle is kept for every execution,
    /// and one allocation holds what three did. Read them with
    /// [`Lifecycle::outcomes`], [`Lifecycle::deliveries`] and
    /// [`Lifecycle::attached`].
    lists: Box<[EventIdx]>,
    /// Where the deliveries start in `lists`, and where the attached
    /// events start.
    ends: [u32; 2],
    /// The event that names the idempotency key sent to the target (the
    /// last `dispatched` that names one, else the last `accepted` that
    /// does): read it with [`Lifecycle::idempotency_key`]. A position, not
    /// a copy of the key: a lifecycle is kept for every execution.
    key_event: Option<EventIdx>,
    /// What the target answered, reduced for duplicate analysis.
    pub answer: TargetAnswer,
    /// The reviewer decision that resolved an unknown outcome, if any.
    /// Boxed, as is `delivery_resolution`: most executions have none, and
    /// a lifecycle is kept for every execution.
    pub resolution: Option<Box<Resolution>>,
    /// Two definite outcome events that disagree on whether the target
    /// acted: (the first, the one that contradicts it).
    pub contradiction: Option<(EventIdx, EventIdx)>,
    /// A layer nearer the target said nothing was sent (its
    /// `dispatch_failed`), and no layer as near or nearer saw the call
    /// reach the target: the outer layers' `dispatched` was the call
    /// leaving them, not reaching the target (docs/design.md §5.12).
    pub stopped_inside: bool,
    /// An outcome was paired with this execution's request by position and
    /// may be another call's ([`crate::model::Pairing::is_uncertain`]): a
    /// reviewer may say what the target really did.
    pub uncertain_pairing: bool,
    /// The reviewer decision that said whether a completed execution's
    /// result reached the agent, where the journal does not record it.
    pub delivery_resolution: Option<Box<Resolution>>,
    /// Every journal that recorded the call's `accepted` event does not
    /// record dispatches ([`crate::model::ReaderFacts::dispatch_unrecorded`]):
    /// with no answer, whether it was dispatched is unknown, not "no"
    /// (docs/design.md §2.1).
    pub dispatch_unrecorded: bool,
}

/// What [`Lifecycle::times`] reads of an execution.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Times<'m> {
    /// Time of the first event.
    pub first_at: Option<DateTime<Utc>>,
    /// Time of the last event.
    pub last_at: Option<DateTime<Utc>>,
    /// When the execution began ([`ExecutionRef::started_at`]).
    pub started_at: Option<DateTime<Utc>>,
    /// [`Lifecycle::dispatch_time`].
    pub dispatched_at: Option<DateTime<Utc>>,
    /// [`Lifecycle::delivery_times`].
    pub delivery: DeliveryTimes,
    /// The session the accepted call names.
    pub session: Option<&'m str>,
}

/// When an execution's outcome was known and its deliveries were recorded
/// ([`Lifecycle::delivery_times`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeliveryTimes {
    /// [`Lifecycle::outcome_time`].
    outcome_at: Option<DateTime<Utc>>,
    /// Each of [`Lifecycle::deliveries`]: when, whether it was
    /// `delivered` (else `delivery_failed`), and which event.
    deliveries: Vec<(DateTime<Utc>, bool, EventIdx)>,
}

impl DeliveryTimes {
    /// [`Lifecycle::outcome_time`].
    pub fn outcome_at(&self) -> Option<DateTime<Utc>> {
        self.outcome_at
    }
}

/// Whether two definite answers disagree on whether the target acted.
fn contradicts(a: TargetAnswer, b: TargetAnswer) -> bool {
    let acted = |t: TargetAnswer| matches!(t, TargetAnswer::Performed | TargetAnswer::Replayed);
    let definite = |t: TargetAnswer| !t.is_unknown();
    definite(a) && definite(b) && acted(a) != acted(b)
}

/// Reduces one outcome event to what matters for duplicates.
///
/// * success, `replayed: true` → [`TargetAnswer::Replayed`]
/// * HTTP 409 → [`TargetAnswer::Conflict`]; 422, or 400 when a key was
///   sent → [`TargetAnswer::KeyRefused`] (Idempotency-Key draft §2.7)
/// * success → performed; not_executed → not performed
/// * any answer whose pairing with its request a reader marked uncertain
///   ([`crate::model::Pairing::is_uncertain`]: it may be another call's, so
///   the call's own outcome is not known; docs/design.md §2.5) →
///   ambiguous, a success as much as a failure
/// * failure with an ambiguous status ([`AMBIGUOUS_STATUSES`]) or a non-zero
///   SSH exit status (the command ran) → ambiguous; other failures → not
///   performed
/// * unknown → no answer
pub fn target_answer(e: EventRef<'_>, key_sent: bool) -> TargetAnswer {
    let KindRef::Outcome {
        outcome,
        target_status,
        exit_status,
        replayed,
        ..
    } = e.kind()
    else {
        return TargetAnswer::NoAnswer;
    };
    match (outcome, target_status) {
        (OutcomeKind::Unknown, _) => TargetAnswer::NoAnswer,
        // docs/design.md §2.5: an answer that may be another call's says
        // nothing about this call.
        _ if e.facts().pairing.is_uncertain() => TargetAnswer::Ambiguous,
        (OutcomeKind::Success, _) if replayed => TargetAnswer::Replayed,
        (_, Some(409)) => TargetAnswer::Conflict,
        (_, Some(422)) => TargetAnswer::KeyRefused,
        (_, Some(400)) if key_sent => TargetAnswer::KeyRefused,
        (OutcomeKind::Success, _) => TargetAnswer::Performed,
        (OutcomeKind::NotExecuted, _) => TargetAnswer::NotPerformed,
        (OutcomeKind::Failure, Some(s)) if AMBIGUOUS_STATUSES.contains(&s) => {
            TargetAnswer::Ambiguous
        }
        (OutcomeKind::Failure, None) if exit_status.is_some_and(|x| x != 0) => {
            TargetAnswer::Ambiguous
        }
        (OutcomeKind::Failure, _) => TargetAnswer::NotPerformed,
    }
}

impl Lifecycle {
    /// Every `outcome` event, in time order.
    pub fn outcomes(&self) -> &[EventIdx] {
        &self.lists[..self.end(0)]
    }

    /// Every `delivered` / `delivery_failed` event, in time order (those of
    /// the outermost layer that recorded any, docs/design.md §5.12).
    pub fn deliveries(&self) -> &[EventIdx] {
        &self.lists[self.end(0)..self.end(1)]
    }

    /// The `attached` events, in time order.
    pub fn attached(&self) -> &[EventIdx] {
        &self.lists[self.end(1)..]
    }

    /// Where list `k` of [`Lifecycle::lists`] ends.
    fn end(&self, k: usize) -> usize {
        self.ends[k] as usize
    }

    /// Keeps the three lists in one slice.
    fn set_lists(&mut self, outcomes: &[EventIdx], deliveries: &[EventIdx], attached: &[EventIdx]) {
        let mut all = Vec::with_capacity(outcomes.len() + deliveries.len() + attached.len());
        all.extend_from_slice(outcomes);
        all.extend_from_slice(deliveries);
        all.extend_from_slice(attached);
        // An execution's events are numbered by `EventIdx`, a `u32`: so
        // are the ends of its lists.
        let at = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        self.ends = [at(outcomes.len()), at(outcomes.len() + deliveries.len())];
        self.lists = all.into_boxed_slice();
    }

    /// Reads the lifecycle of an execution.
    ///
    /// A call recorded by several layers (docs/design.md §5.12: client,
    /// gateway, server) is read layer by layer: each layer's (and each
    /// journal's) `dispatched` is the same dispatch seen from its side, so
    /// the dispatches are those of the one that counted most; whether the result reached the
    /// agent is the outermost layer's word (the client knows what it
    /// received; the gateway only what it sent).
    pub fn of(x: ExecutionRef<'_>) -> Lifecycle {
        let mut l = Lifecycle::default();
        // Read once, then by position: an execution's events are read
        // from its encoded bytes in order (docs/design.md §9.8).
        let events: Vec<(EventRef<'_>, KindRef<'_>)> = x.events().map(|e| (e, e.kind())).collect();
        let at = |i: EventIdx| events[i.get()].0;
        // A lifecycle is kept for every execution: its lists are gathered
        // here and kept as slices of their exact length.
        let (mut outcomes, mut deliveries, mut attached) = (Vec::new(), Vec::new(), Vec::new());
        let mut accepted_key: Option<EventIdx> = None;
        // Dispatches per layer and journal: two journals of one layer (a
        // gateway's database and its log) record the same dispatch.
        let mut dispatches: Vec<((usize, crate::model::JournalId), usize)> = Vec::new();
        let rank = |e: EventRef<'_>| e.facts().layer.map_or(3, |l| l as usize);
        // Whether some journal that records dispatches saw the call.
        let mut recorded = false;
        for (i, &(e, kind)) in events.iter().enumerate() {
            let i = EventIdx::new(i);
            match kind {
                KindRef::Accepted(a) => {
                    l.accepted.get_or_insert(i);
                    if e.facts().dispatch_unrecorded {
                        l.dispatch_unrecorded = true;
                    } else {
                        recorded = true;
                    }
                    if a.idempotency_key.is_some() {
                        accepted_key = Some(i);
                    }
                }
                KindRef::Attached { .. } => attached.push(i),
                KindRef::Authorized { .. } => {
                    l.authorized.get_or_insert(i);
                }
                KindRef::Rejected { .. } => {
                    l.rejected.get_or_insert(i);
                }
                KindRef::Dispatched { idempotency_key } => {
                    l.dispatched.get_or_insert(i);
                    let by = (rank(e), e.source().journal());
                    match dispatches.iter_mut().find(|(k, _)| *k == by) {
                        Some((_, n)) => *n += 1,
                        None => dispatches.push((by, 1)),
                    }
                    if idempotency_key.is_some() {
                        l.key_event = Some(i);
                    }
                }
                KindRef::DispatchFailed { .. } => {
                    l.dispatch_failed.get_or_insert(i);
                }
                KindRef::Outcome { .. } => outcomes.push(i),
                KindRef::Delivered | KindRef::DeliveryFailed { .. } => deliveries.push(i),
                KindRef::Cancelled { .. } => {
                    l.cancelled.get_or_insert(i);
                }
            }
        }
        l.dispatch_unrecorded &= !recorded;
        l.dispatches = dispatches
            .into_iter()
            .map(|(_, n)| u32::try_from(n).unwrap_or(u32::MAX))
            .max()
            .unwrap_or(0);
        // docs/design.md §5.12: whether the call reached the target is the
        // word of the innermost layer that says anything about it.
        let depth = |e: EventRef<'_>| match e.facts().layer {
            Some(crate::model::Layer::Client) => 0,
            None | Some(crate::model::Layer::Gateway) => 1,
            Some(crate::model::Layer::Server) => 2,
        };
        let reached = events
            .iter()
            .filter(|(_, k)| match k {
                KindRef::Dispatched { .. } => true,
                KindRef::Outcome { outcome, .. } => *outcome != OutcomeKind::Unknown,
                _ => false,
            })
            .map(|&(e, _)| depth(e))
            .max();
        let failed = events
            .iter()
            .filter(|(_, k)| matches!(k, KindRef::DispatchFailed { .. }))
            .map(|&(e, _)| depth(e))
            .max();
        if let Some(f) = failed
            && reached.is_none_or(|r| r < f)
            && l.dispatched.is_some_and(|i| depth(at(i)) < f)
        {
            l.stopped_inside = true;
            l.dispatched = None;
            l.dispatches = 0;
        }
        if let Some(outer) = deliveries.iter().map(|&i| rank(at(i))).min() {
            deliveries.retain(|&i| rank(at(i)) == outer);
        }
        l.set_lists(&outcomes, &deliveries, &attached);
        if l.key_event.is_none() {
            l.key_event = accepted_key;
        }
        l.uncertain_pairing = l
            .outcomes()
            .iter()
            .any(|&i| at(i).facts().pairing.is_uncertain());
        let key_sent = l.key_event.is_some();
        // docs/design.md §5: a later outcome (status query, durable marker, late
        // response) resolves an *unknown* one. The first definite answer
        // decides, and when it was seen is when the gateway knew. A later
        // answer that contradicts it is kept as a finding; if either says
        // the target acted, retrace reads it as acted (the cautious side).
        for k in 0..l.end(0) {
            let i = l.lists[k];
            let a = target_answer(at(i), key_sent);
            if a == TargetAnswer::NoAnswer {
                continue;
            }
            match l.decisive_outcome {
                None => {
                    l.decisive_outcome = Some(i);
                    l.answer = a;
                }
                Some(_) if l.answer == TargetAnswer::Ambiguous && a != TargetAnswer::Ambiguous => {
                    l.decisive_outcome = Some(i);
                    l.answer = a;
                }
                Some(d) if contradicts(l.answer, a) => {
                    l.contradiction.get_or_insert((d, i));
                    if a == TargetAnswer::Performed {
                        l.decisive_outcome = Some(i);
                        l.answer = a;
                    }
                }
                Some(_) => {}
            }
        }
        l
    }

    /// The idempotency key sent to the target (from `dispatched`, else
    /// `accepted`), as `x`, this lifecycle's execution, records it.
    pub fn idempotency_key<'m>(&self, x: ExecutionRef<'m>) -> Option<&'m str> {
        self.key_event
            .and_then(|i| x.event(i).kind().idempotency_key())
    }

    /// Whether an idempotency key was sent to the target
    /// ([`Lifecycle::idempotency_key`]).
    pub fn has_key(&self) -> bool {
        self.key_event.is_some()
    }

    /// Question 2 for this execution.
    pub fn dispatch(&self) -> Dispatch {
        if self.stopped_inside {
            return Dispatch::NotDispatched;
        }
        if self.dispatched.is_some() || !self.outcomes().is_empty() {
            return Dispatch::Dispatched;
        }
        if self.rejected.is_some() {
            return Dispatch::Rejected;
        }
        if self.accepted.is_none() {
            return Dispatch::Unknown;
        }
        // Gateways persist `dispatched` before handing the action over (docs/design.md §2.1), so
        // its absence means the boundary was not crossed; in a log that
        // records requests and answers only, it means nothing.
        if self.dispatch_unrecorded && self.dispatch_failed.is_none() && self.cancelled.is_none() {
            return Dispatch::Unknown;
        }
        Dispatch::NotDispatched
    }

    /// Time of the dispatch (or of acceptance when there was none).
    pub fn dispatch_time(&self, x: ExecutionRef<'_>) -> Option<DateTime<Utc>> {
        self.dispatched
            .or(self.accepted)
            .map(|i| x.event(i).at())
            .or_else(|| x.first_at())
    }

    /// Time the decisive outcome was observed (for a reviewer resolution,
    /// the time of the decision).
    pub fn outcome_time(&self, x: ExecutionRef<'_>) -> Option<DateTime<Utc>> {
        match (&self.resolution, self.decisive_outcome) {
            (_, Some(i)) => Some(x.event(i).at()),
            (Some(r), None) if r.decision != Decision::Escalated => Some(r.at),
            _ => None,
        }
    }

    /// Whether a reviewer may say what the target did: its outcome is
    /// unknown, or rests on a pairing that may be another call's.
    pub fn outcome_open(&self) -> bool {
        self.answer.is_unknown() || self.uncertain_pairing
    }

    /// Whether a reviewer may say whether the result reached the agent: the
    /// target completed and the journal records no delivery.
    pub fn delivery_open(&self) -> bool {
        matches!(
            self.answer,
            TargetAnswer::Performed | TargetAnswer::Replayed
        ) && self.deliveries().is_empty()
    }

    /// Applies a reviewer decision (docs/design.md §5.8). An outcome
    /// decision resolves only an open outcome ([`Lifecycle::outcome_open`]);
    /// a delivery decision only an open delivery
    /// ([`Lifecycle::delivery_open`]); a decision never overrides what the
    /// journal shows. Returns whether it applied.
    pub fn resolve(&mut self, r: &Resolution) -> bool {
        match r.decision {
            Decision::Escalated => {
                if self.resolution.is_none() {
                    self.resolution = Some(Box::new(r.clone()));
                }
                false
            }
            Decision::ConfirmedCompleted | Decision::ConfirmedNotExecuted => {
                if !self.outcome_open() {
                    return false;
                }
                self.answer = if r.decision == Decision::ConfirmedCompleted {
                    TargetAnswer::Performed
                } else {
                    TargetAnswer::NotPerformed
                };
                // The reviewer's word replaces an answer that may have
                // been another call's.
                if self.uncertain_pairing {
                    self.decisive_outcome = None;
                }
                self.resolution = Some(Box::new(r.clone()));
                true
            }
            Decision::ConfirmedDelivered | Decision::ConfirmedNotDelivered => {
                if !self.delivery_open() {
                    return false;
                }
                self.delivery_resolution = Some(Box::new(r.clone()));
                true
            }
        }
    }

    /// The delivery state as of time `t` (`None`: at the end of the journal).
    /// `recorded` is false when the format cannot show delivery.
    pub fn delivery_at(
        &self,
        x: ExecutionRef<'_>,
        t: Option<DateTime<Utc>>,
        recorded: bool,
    ) -> (Delivery, Option<EventIdx>) {
        self.delivery_known(&self.delivery_times(x), t, recorded)
    }

    /// What [`Lifecycle::delivery_at`] reads of the execution's events,
    /// read once: for a group's pairs, which ask it of one execution as
    /// of each later call's dispatch.
    pub fn delivery_times(&self, x: ExecutionRef<'_>) -> DeliveryTimes {
        let deliveries = self
            .deliveries()
            .iter()
            .map(|&i| {
                let e = x.event(i);
                (e.at(), matches!(e.kind(), KindRef::Delivered), i)
            })
            .collect();
        DeliveryTimes {
            outcome_at: self.outcome_time(x),
            deliveries,
        }
    }

    /// [`Lifecycle::delivery_at`] from what it reads of the events.
    pub fn delivery_known(
        &self,
        times: &DeliveryTimes,
        t: Option<DateTime<Utc>>,
        recorded: bool,
    ) -> (Delivery, Option<EventIdx>) {
        let known = times.outcome_at.is_some_and(|o| t.is_none_or(|t| o <= t));
        // A reviewer's word on delivery, for a completed execution whose
        // journal records none: it held from when the result was known.
        if let Some(r) = &self.delivery_resolution {
            return match (known, r.decision) {
                (false, _) => (Delivery::NotApplicable, None),
                (true, Decision::ConfirmedDelivered) => (Delivery::Delivered, None),
                (true, _) => (Delivery::Failed, None),
            };
        }
        if !recorded {
            return (Delivery::NotRecorded, None);
        }
        let last = times
            .deliveries
            .iter()
            .rev()
            .find(|(at, _, _)| t.is_none_or(|t| *at <= t));
        match last {
            Some(&(_, true, i)) => (Delivery::Delivered, Some(i)),
            Some(&(_, false, i)) => (Delivery::Failed, Some(i)),
            None if known => (Delivery::NotYet, None),
            None => (Delivery::NotApplicable, None),
        }
    }

    /// The status answers (Q2–Q4 at the end of the journal).
    pub fn status_answers(&self, x: ExecutionRef<'_>, delivery_recorded: bool) -> ExecutionAnswers {
        self.status_known(&self.delivery_times(x), delivery_recorded)
    }

    /// [`Lifecycle::status_answers`] from what it reads of the events.
    pub fn status_known(&self, times: &DeliveryTimes, delivery_recorded: bool) -> ExecutionAnswers {
        ExecutionAnswers {
            dispatch: self.dispatch(),
            answer: self.answer,
            delivery: self.delivery_known(times, None, delivery_recorded).0,
        }
    }

    /// The times judging reads of an execution, in one read of its events:
    /// its first and last event, its start ([`ExecutionRef::started_at`]),
    /// [`Lifecycle::dispatch_time`], [`Lifecycle::delivery_times`], and
    /// the session its accepted call names.
    pub fn times<'m>(&self, x: ExecutionRef<'m>) -> Times<'m> {
        let mut t = Times::default();
        let dispatch = self.dispatched.or(self.accepted);
        let mut deliveries = Vec::new();
        for (i, e) in x.events().enumerate() {
            let i = EventIdx::new(i);
            let at = e.at();
            t.first_at.get_or_insert(at);
            t.last_at = Some(at);
            if Some(i) == self.accepted {
                t.started_at = Some(at);
                if let KindRef::Accepted(a) = e.kind() {
                    t.session = a.call.session_id;
                }
            }
            if Some(i) == dispatch {
                t.dispatched_at = Some(at);
            }
            if Some(i) == self.decisive_outcome {
                t.delivery.outcome_at = Some(at);
            }
            if self.deliveries().contains(&i) {
                deliveries.push((at, matches!(e.kind(), KindRef::Delivered), i));
            }
        }
        t.started_at = t.started_at.or(t.first_at);
        t.dispatched_at = t.dispatched_at.or(t.first_at);
        if self.decisive_outcome.is_none() {
            t.delivery.outcome_at = self.outcome_time(x);
        }
        // In event order, as the lifecycle's list is.
        t.delivery.deliveries = deliveries;
        t
    }

    /// The state name (docs/design.md §2.4) of the execution at the end of the journal
    /// (`completed_result_not_delivered`, `dispatched`, ...), for display.
    pub fn state_name(&self, x: ExecutionRef<'_>, delivery_recorded: bool) -> &'static str {
        match self.dispatch() {
            Dispatch::Rejected => return "rejected",
            Dispatch::NotDispatched if self.dispatch_failed.is_some() => return "dispatch_failed",
            Dispatch::NotDispatched if self.cancelled.is_some() => return "cancelled",
            Dispatch::NotDispatched if self.authorized.is_some() => return "authorized",
            Dispatch::NotDispatched => return "accepted",
            Dispatch::Unknown if self.dispatch_unrecorded && self.outcomes().is_empty() => {
                return "unanswered";
            }
            Dispatch::Dispatched | Dispatch::Unknown => {}
        }
        match self.answer {
            TargetAnswer::NoAnswer => "dispatched_outcome_unknown",
            TargetAnswer::Ambiguous => "outcome_ambiguous",
            TargetAnswer::NotPerformed => match self.decisive_outcome.map(|i| x.event(i).kind()) {
                Some(KindRef::Outcome {
                    outcome: OutcomeKind::NotExecuted,
                    ..
                }) => "not_executed",
                _ => "failed",
            },
            TargetAnswer::Conflict => "refused_conflict",
            TargetAnswer::KeyRefused => "refused_key_reuse",
            TargetAnswer::Replayed | TargetAnswer::Performed => {
                match self.delivery_at(x, None, delivery_recorded).0 {
                    Delivery::Delivered => "completed",
                    Delivery::NotRecorded => "completed_delivery_not_recorded",
                    _ => "completed_result_not_delivered",
                }
            }
        }
    }

    /// What matters when the gateway dispatched this execution more than
    /// once; `read_only`: whether its tool is (its group's contract).
    pub fn redispatch(&self, x: ExecutionRef<'_>, read_only: bool) -> super::verdict::Redispatch {
        let key_sent = self.key_event.is_some();
        // One read of the events: each outcome's answer, the last dispatch.
        let mut answers: Vec<(EventIdx, TargetAnswer)> = Vec::new();
        let mut last_dispatch = None;
        for (i, e) in x.events().enumerate() {
            let i = EventIdx::new(i);
            match e.kind() {
                KindRef::Dispatched { .. } => last_dispatch = Some(i),
                KindRef::Outcome { .. } if self.outcomes().contains(&i) => {
                    answers.push((i, target_answer(e, key_sent)));
                }
                _ => {}
            }
        }
        let before_last: Vec<TargetAnswer> = answers
            .iter()
            .filter(|(i, _)| last_dispatch.is_some_and(|d| *i < d))
            .map(|&(_, a)| a)
            .filter(|a| *a != TargetAnswer::NoAnswer)
            .collect();
        super::verdict::Redispatch {
            dispatches: self.dispatches as usize,
            performed: answers
                .iter()
                .filter(|(_, a)| *a == TargetAnswer::Performed)
                .count(),
            deduplicated: key_sent
                && answers
                    .iter()
                    .any(|(_, a)| matches!(a, TargetAnswer::Replayed | TargetAnswer::Conflict)),
            cleared_before_last: !before_last.is_empty()
                && before_last.iter().all(|a| a.no_new_effect()),
            read_only,
        }
    }

    /// Whether any outcome came by a late response.
    pub fn late_response(&self, x: ExecutionRef<'_>) -> Option<EventIdx> {
        self.outcomes().iter().copied().find(|&i| {
            matches!(
                x.event(i).kind(),
                KindRef::Outcome {
                    observed_via: ObservedVia::LateResponse,
                    ..
                }
            )
        })
    }

    /// A cancel recorded after the target had completed the action.
    pub fn cancel_after_completion(&self, x: ExecutionRef<'_>) -> Option<EventIdx> {
        let c = self.cancelled?;
        let done = self.decisive_outcome?;
        (self.answer == TargetAnswer::Performed && x.event(done).at() <= x.event(c).at())
            .then_some(c)
    }

    /// Protocol correlation of the creating call: (MCP session, JSON-RPC id).
    pub fn correlation<'a>(
        &self,
        x: ExecutionRef<'a>,
    ) -> Option<(Option<&'a str>, JsonRpcIdRef<'a>)> {
        let (_, a) = x.accepted()?;
        Some((a.call.mcp_session_id, a.call.jsonrpc_id?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Event, EventKind, Execution, Layer, Pairing, ReaderFacts, SourceRef};

    /// A lifecycle is kept for every execution: two million of them for
    /// ten million events.
    #[test]
    fn a_lifecycle_is_small() {
        assert!(std::mem::size_of::<Lifecycle>() <= 88);
    }

    fn at(s: u32) -> DateTime<Utc> {
        DateTime::from_timestamp(1_800_000_000 + i64::from(s), 0).unwrap()
    }

    fn ev(t: u32, kind: EventKind, layer: Layer) -> Event {
        Event::new(at(t), kind, SourceRef::default()).with_facts(ReaderFacts {
            layer: Some(layer),
            ..ReaderFacts::default()
        })
    }

    fn accepted(t: u32, layer: Layer) -> Event {
        ev(t, EventKind::Accepted(Box::default()), layer)
    }

    fn dispatched(t: u32, layer: Layer) -> Event {
        ev(
            t,
            EventKind::Dispatched {
                idempotency_key: None,
            },
            layer,
        )
    }

    fn failed(t: u32, layer: Layer) -> Event {
        ev(
            t,
            EventKind::DispatchFailed {
                error: "ConnectError".into(),
            },
            layer,
        )
    }

    fn unknown(t: u32, layer: Layer) -> Event {
        ev(
            t,
            EventKind::response_outcome(OutcomeKind::Unknown, None, None),
            layer,
        )
    }

    fn x(events: Vec<Event>) -> Execution {
        Execution {
            id: "x".into(),
            events,
        }
    }

    fn lc(x: Execution) -> Lifecycle {
        Lifecycle::of(x.view())
    }

    /// The three lists share one slice: each must give back its own
    /// events, in time order, whatever the others hold.
    #[test]
    fn outcomes_deliveries_and_attached_calls_are_each_their_own() {
        let g = Layer::Gateway;
        let attached = |t: u32| {
            ev(
                t,
                EventKind::Attached {
                    call: Box::default(),
                    recovery: crate::model::Recovery::Continued,
                },
                g,
            )
        };
        let l = lc(x(vec![
            accepted(0, g),
            attached(1),
            dispatched(2, g),
            unknown(3, g),
            attached(4),
            unknown(5, g),
            ev(6, EventKind::Delivered, g),
            attached(7),
        ]));
        let at = |v: &[EventIdx]| v.iter().map(|i| i.get()).collect::<Vec<_>>();
        assert_eq!(at(l.outcomes()), [3, 5]);
        assert_eq!(at(l.deliveries()), [6]);
        assert_eq!(at(l.attached()), [1, 4, 7]);
        // None of one kind: the others keep theirs.
        let l = lc(x(vec![accepted(0, g), attached(1)]));
        assert!(l.outcomes().is_empty() && l.deliveries().is_empty());
        assert_eq!(at(l.attached()), [1]);
        let l = lc(x(vec![accepted(0, g), ev(1, EventKind::Delivered, g)]));
        assert!(l.outcomes().is_empty() && l.attached().is_empty());
        assert_eq!(at(l.deliveries()), [1]);
    }

    /// An `accepted` event of a log that records requests and answers,
    /// not dispatches.
    fn request_only(t: u32) -> Event {
        Event::new(
            at(t),
            EventKind::Accepted(Box::default()),
            SourceRef::default(),
        )
        .with_facts(ReaderFacts {
            dispatch_unrecorded: true,
            ..ReaderFacts::default()
        })
    }

    /// docs/design.md §2.1: no `dispatched` is "not dispatched" only where
    /// the journal records dispatches.
    #[test]
    fn no_dispatch_in_a_log_that_cannot_show_one_is_unknown() {
        let g = Layer::Gateway;
        let l = lc(x(vec![request_only(0)]));
        assert!(l.dispatch_unrecorded);
        assert_eq!(l.dispatch(), Dispatch::Unknown);
        assert_eq!(
            l.state_name(x(vec![request_only(0)]).view(), false),
            "unanswered"
        );
        // What the log does say still counts: a failure before sending, a
        // cancellation, a refusal, an answer.
        let cancelled = EventKind::Cancelled {
            by: "client".into(),
        };
        let refused = EventKind::Rejected {
            reason: "policy".into(),
        };
        for (then, want) in [
            (failed(1, g), Dispatch::NotDispatched),
            (ev(1, cancelled, g), Dispatch::NotDispatched),
            (ev(1, refused, g), Dispatch::Rejected),
            (unknown(1, g), Dispatch::Dispatched),
        ] {
            let kind = then.kind.name();
            assert_eq!(
                lc(x(vec![request_only(0), then])).dispatch(),
                want,
                "{kind}"
            );
        }
        // Another journal of the same call records dispatches, and has none.
        let l = lc(x(vec![request_only(0), accepted(0, g)]));
        assert!(!l.dispatch_unrecorded);
        assert_eq!(l.dispatch(), Dispatch::NotDispatched);
        // Native journals record dispatches.
        let l = lc(x(vec![accepted(0, g)]));
        assert_eq!(l.dispatch(), Dispatch::NotDispatched);
        assert_eq!(
            l.state_name(x(vec![accepted(0, g)]).view(), false),
            "accepted"
        );
    }

    #[test]
    fn a_gateway_that_could_not_connect_overrules_the_clients_send() {
        let l = lc(x(vec![
            accepted(0, Layer::Client),
            dispatched(0, Layer::Client),
            accepted(0, Layer::Gateway),
            failed(1, Layer::Gateway),
            unknown(1, Layer::Client),
        ]));
        assert!(l.stopped_inside);
        assert_eq!(l.dispatch(), Dispatch::NotDispatched);
        assert_eq!(l.dispatches, 0);
    }

    #[test]
    fn a_server_that_saw_the_call_overrules_a_gateways_failure() {
        let l = lc(x(vec![
            accepted(0, Layer::Client),
            dispatched(0, Layer::Client),
            failed(1, Layer::Gateway),
            dispatched(1, Layer::Server),
        ]));
        assert!(!l.stopped_inside);
        assert_eq!(l.dispatch(), Dispatch::Dispatched);
    }

    #[test]
    fn an_outer_failure_says_nothing_of_an_inner_dispatch() {
        // The client could not hand the call on (its failure), yet the
        // gateway's record shows it dispatched: the inner word stands.
        let l = lc(x(vec![
            accepted(0, Layer::Client),
            failed(1, Layer::Client),
            dispatched(1, Layer::Gateway),
        ]));
        assert!(!l.stopped_inside);
        assert_eq!(l.dispatch(), Dispatch::Dispatched);
    }

    fn outcome(outcome: OutcomeKind, status: Option<u16>, pairing: Pairing) -> Event {
        let mut kind = EventKind::response_outcome(outcome, None, None);
        if let EventKind::Outcome { target_status, .. } = &mut kind {
            *target_status = status;
        }
        Event::new(
            chrono::DateTime::from_timestamp(1_780_000_000, 0).unwrap_or_default(),
            kind,
            SourceRef::Line {
                journal: 0,
                line: 3,
                offset: crate::model::LineOffset::new(0),
                len: 0,
            },
        )
        .with_facts(ReaderFacts {
            pairing,
            ..ReaderFacts::default()
        })
    }

    /// docs/design.md §2.5: an answer that may be another call's says
    /// nothing about this call, whatever it says; a pairing that is only by
    /// position, or by content, is read as written.
    #[test]
    fn an_uncertain_pairing_makes_any_answer_ambiguous() {
        let uncertain = || Pairing::ByPosition {
            why: "the answers differ".into(),
            uncertain: true,
        };
        let position = || Pairing::ByPosition {
            why: "2 requests were in flight".into(),
            uncertain: false,
        };
        let content = || Pairing::ByContent {
            why: "the error names it".into(),
        };
        for (o, status, plain) in [
            (OutcomeKind::Success, None, TargetAnswer::Performed),
            (OutcomeKind::Failure, None, TargetAnswer::NotPerformed),
            (OutcomeKind::Failure, Some(409), TargetAnswer::Conflict),
            (OutcomeKind::NotExecuted, None, TargetAnswer::NotPerformed),
            (OutcomeKind::Failure, Some(503), TargetAnswer::Ambiguous),
        ] {
            assert_eq!(
                target_answer(EventRef::from(&outcome(o, status, uncertain())), false),
                TargetAnswer::Ambiguous,
                "{o:?} {status:?}"
            );
            for p in [Pairing::ById, position(), content()] {
                assert_eq!(
                    target_answer(EventRef::from(&outcome(o, status, p)), false),
                    plain
                );
            }
        }
        // No answer stays no answer.
        assert_eq!(
            target_answer(
                EventRef::from(&outcome(OutcomeKind::Unknown, None, uncertain())),
                false
            ),
            TargetAnswer::NoAnswer
        );
    }
}
