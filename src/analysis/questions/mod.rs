//! The five investigation questions (docs/design.md §5.1), answered in words with the journal lines that
//! support each answer. Unknown answers say what the journal lacks.

use super::lifecycle::Lifecycle;
use super::verdict::{
    Delivery, Dispatch, LaterCall, LaterFate, PairAnswers, Processes, TargetAnswer,
};
use super::{Answer, EvidenceRef, JournalCaps};
use crate::model::{
    CallView, EventIdx, EventRef, ExecIdx, ExecutionRef, KindRef, Model, OutcomeKind, SessionIdx,
};
use chrono::{DateTime, Utc};

mod reason;

pub(super) struct Ctx<'a> {
    pub model: &'a Model,
    pub lifecycles: &'a [Lifecycle],
    pub journals: &'a dyn JournalCaps,
}

fn hms(t: DateTime<Utc>) -> String {
    t.format("%H:%M:%S%.3f")
        .to_string()
        .trim_end_matches(".000")
        .to_string()
}

fn ev(execution: ExecIdx, event: EventIdx) -> EvidenceRef {
    EvidenceRef::Event { execution, event }
}

fn answer(question: u8, text: String, evidence: Vec<EvidenceRef>) -> Answer {
    Answer {
        question,
        unknown: text.starts_with("unknown:"),
        text,
        evidence,
    }
}

/// `more` after `text`, as a sentence of its own: `text` ends with a full
/// stop first (an `unknown:` answer has none). `text` alone when `more`
/// is empty.
fn sentences(mut text: String, more: String) -> String {
    if more.is_empty() {
        return text;
    }
    if !text.ends_with('.') {
        text.push('.');
    }
    text.push(' ');
    text.push_str(&more);
    text
}

/// A short description of a call: call id, JSON-RPC id, session.
fn describe_call(c: CallView<'_>) -> String {
    let mut parts = Vec::new();
    if let Some(id) = &c.call_id {
        parts.push(format!("call {id}"));
    }
    if let Some(id) = &c.jsonrpc_id {
        parts.push(format!("JSON-RPC id {id}"));
    }
    if parts.is_empty() {
        "a call".into()
    } else {
        parts.join(", ")
    }
}

fn outcome_words(e: EventRef<'_>) -> String {
    match e.kind() {
        KindRef::Outcome {
            outcome,
            target_status,
            exit_status,
            error,
            replayed,
            observed_via,
            ..
        } => {
            let mut s = match (target_status, exit_status) {
                (Some(st), _) => format!("HTTP {st}"),
                (None, Some(x)) => format!("exit status {x}"),
                (None, None) => outcome.as_str().replace('_', " "),
            };
            if outcome != OutcomeKind::Success && (target_status.is_some() || exit_status.is_some())
            {
                s.push_str(&format!(" ({})", outcome.as_str().replace('_', " ")));
            }
            if replayed {
                s.push_str(", a replay of the stored result");
            }
            s.push_str(&format!(
                " at {} via {}",
                hms(e.at()),
                observed_via.as_str().replace('_', " ")
            ));
            if let Some(err) = error.filter(|e| !e.is_empty()) {
                let short: String = err.chars().take(200).collect();
                let more = if err.chars().count() > 200 { "…" } else { "" };
                s.push_str(&format!(" — {short}{more}"));
            }
            s
        }
        _ => String::new(),
    }
}

impl Ctx<'_> {
    fn x(&self, i: ExecIdx) -> ExecutionRef<'_> {
        self.model.execution(i)
    }

    /// The lifecycle of an execution.
    pub fn lc(&self, x: ExecIdx) -> &Lifecycle {
        &self.lifecycles[x.get()]
    }

    fn format_name(&self, x: ExecIdx) -> String {
        let j = self.x(x).first().map_or(0, |e| e.source().journal());
        self.journals.name(j).to_string()
    }

    /// A session in words: `session s1 (pid 4242, agent, started …)`, or
    /// `session s1 (no session record)`.
    fn describe_session(&self, id: &str) -> String {
        match self.model.session(id) {
            Some(s) => {
                let mut d = format!("session {id}");
                if let Some(p) = &s.process {
                    let mut bits = Vec::new();
                    if let Some(pid) = p.pid {
                        bits.push(format!("pid {pid}"));
                    }
                    if let Some(n) = &p.name {
                        bits.push(n.clone());
                    }
                    if let Some(t) = p.started_at {
                        bits.push(format!("started {}", t.format("%Y-%m-%d %H:%M:%S")));
                    }
                    if !bits.is_empty() {
                        d.push_str(&format!(" ({})", bits.join(", ")));
                    }
                }
                d
            }
            None => format!("session {id} (no session record)"),
        }
    }

    /// Adds the record of session `id` to `evidence`, once, when the
    /// journals hold one.
    fn cite_session(&self, id: &str, evidence: &mut Vec<EvidenceRef>) {
        if let Some(i) = self.model.sessions.iter().position(|s| s.session_id == id) {
            let r = EvidenceRef::Session {
                index: SessionIdx::new(i),
            };
            if !evidence.contains(&r) {
                evidence.push(r);
            }
        }
    }

    /// Q1's value alone, without words, by [`processes_of`].
    pub fn processes_value(&self, e: ExecIdx, f: ExecIdx) -> Processes {
        let (Some((_, ce)), Some((_, cf))) = (self.x(e).accepted(), self.x(f).accepted()) else {
            return Processes::Unknown;
        };
        let key = |id: &str| self.model.session(id).and_then(|s| s.process_key());
        processes_of(ce.call.session_id, cf.call.session_id, |a, b| {
            (key(a), key(b))
        })
    }

    /// Q1 for two executions: the value, the answer text and the evidence.
    /// `pair` names the two calls where the group has more (`"x1 and
    /// x2"`); `None` says "both calls".
    pub fn processes(
        &self,
        e: ExecIdx,
        f: ExecIdx,
        pair: Option<&str>,
    ) -> (Processes, String, Vec<EvidenceRef>) {
        let le = self.lc(e);
        let lf = self.lc(f);
        let value = self.processes_value(e, f);
        let mut evidence: Vec<EvidenceRef> =
            [le.accepted.map(|i| ev(e, i)), lf.accepted.map(|i| ev(f, i))]
                .into_iter()
                .flatten()
                .collect();
        let (Some((_, ce)), Some((_, cf))) = (self.x(e).accepted(), self.x(f).accepted()) else {
            return (
                value,
                "unknown: an accepted record is missing, so the callers are not known".into(),
                evidence,
            );
        };
        let describe = |id: &str| self.describe_session(id);
        let (both, the_calls) = match pair {
            Some(p) => (p.to_string(), p.to_string()),
            None => ("both calls".to_string(), "the calls".to_string()),
        };
        let (ce, cf) = (ce.call, cf.call);
        for id in [ce, cf].iter().filter_map(|c| c.session_id) {
            self.cite_session(id, &mut evidence);
        }
        // A change of MCP session within one run is the reconnect itself.
        let reconnect = match (&ce.mcp_session_id, &cf.mcp_session_id) {
            (Some(a), Some(b)) if a != b => format!(
                " The second call came over a new MCP session ({b}, was {a}): the client reconnected."
            ),
            _ => String::new(),
        };
        let text = match (value, ce.session_id, cf.session_id) {
            (Processes::One, Some(a), Some(b)) if a == b => {
                format!("One process: {both} came from {}.{reconnect}", describe(a))
            }
            (Processes::One, Some(a), Some(b)) => match pair {
                Some(p) => format!(
                    "One process: {p} came from {} and {}, two runs of the same process instance.{reconnect}",
                    describe(a),
                    describe(b)
                ),
                None => format!(
                    "One process: {} and {} are two runs of the same process instance.{reconnect}",
                    describe(a),
                    describe(b)
                ),
            },
            (Processes::Distinct, Some(a), Some(b)) => match pair {
                Some(p) => format!(
                    "Two distinct processes: {p} came from {} and {}.",
                    describe(a),
                    describe(b)
                ),
                None => format!(
                    "Two distinct processes: {} and {}.",
                    describe(a),
                    describe(b)
                ),
            },
            (_, Some(a), Some(b)) => format!(
                "unknown: {the_calls} came from two agent runs, {} and {}, and the journal names no process for at least one of them; a reconnecting process can start a new run",
                describe(a),
                describe(b)
            ),
            // One side's session is known (an OpenTelemetry client span),
            // the other's not (a server span whose caller exported none).
            (_, Some(a), None) => format!(
                "unknown: the earlier call came from {}, and the later one carries no session id",
                describe(a)
            ),
            (_, None, Some(b)) => format!(
                "unknown: the later call came from {}, and the earlier one carries no session id",
                describe(b)
            ),
            _ => {
                let caps = self.journals.caps_of(self.x(e));
                match (&ce.mcp_session_id, &cf.mcp_session_id) {
                    (Some(a), Some(b)) if a == b => format!(
                        "unknown: {both} used MCP session {a}, but the journal records no agent run for them"
                    ),
                    (Some(a), Some(b)) => format!(
                        "unknown: {the_calls} came over MCP sessions {a} and {b}; a reconnecting process opens a new MCP session, and the journal names no process"
                    ),
                    _ if !caps.sessions => format!(
                        "unknown: {} records no agent session or process identity",
                        self.format_name(e)
                    ),
                    _ => format!("unknown: {the_calls} carry no session id"),
                }
            }
        };
        (value, text, evidence)
    }

    /// Q2 for one execution.
    fn q2(&self, e: ExecIdx) -> Answer {
        let x = self.x(e);
        let l = self.lc(e);
        let caps = self.journals.caps_of(x);
        let mut evidence = Vec::new();
        let auth = if let Some(i) = l.authorized {
            evidence.push(ev(e, i));
            match x.event(i).kind() {
                KindRef::Authorized { decision, approver } => format!(
                    "authorized ({decision}{}) at {}",
                    approver.map(|a| format!(" by {a}")).unwrap_or_default(),
                    hms(x.event(i).at())
                ),
                _ => String::new(),
            }
        } else if caps.authorization {
            "no authorization recorded".into()
        } else {
            format!("{} does not record authorization", self.format_name(e))
        };
        let text = match l.dispatch() {
            Dispatch::Dispatched => {
                let d = match l.dispatched {
                    Some(i) => {
                        evidence.push(ev(e, i));
                        let at = hms(x.event(i).at());
                        match &x.event(i).facts().inferred {
                            // Where the reader placed a dispatch the
                            // journal does not record, and why.
                            Some(why) => format!("dispatched at {at} (inferred: {why})"),
                            None => format!("dispatched at {at}"),
                        }
                    }
                    None => {
                        "dispatched (an outcome is recorded, the dispatch itself is not)".into()
                    }
                };
                let n = if l.dispatches > 1 {
                    format!(" ({} dispatches)", l.dispatches)
                } else {
                    String::new()
                };
                if l.authorized.is_some() {
                    format!("Yes: {auth}; {d}{n}.")
                } else {
                    // Dispatch is what the question turns on; say what the
                    // journal lacks after it.
                    format!("Yes, {d}{n}; {auth}.")
                }
            }
            Dispatch::Rejected => {
                let i = l.rejected.unwrap_or_default();
                evidence.push(ev(e, i));
                let reason = match x.event(i).kind() {
                    KindRef::Rejected { reason } => reason,
                    _ => "",
                };
                format!(
                    "No: authorization refused ({reason}) at {}.",
                    hms(x.event(i).at())
                )
            }
            Dispatch::NotDispatched => {
                if let Some(i) = l.dispatch_failed {
                    evidence.push(ev(e, i));
                    let err = match x.event(i).kind() {
                        KindRef::DispatchFailed { error } => error,
                        _ => "",
                    };
                    format!(
                        "No: {auth}, but dispatch failed at {} before anything left the gateway ({err}).",
                        hms(x.event(i).at())
                    )
                } else if let Some(i) = l.cancelled {
                    evidence.push(ev(e, i));
                    format!("No: cancelled at {} before dispatch.", hms(x.event(i).at()))
                } else {
                    format!("No: {auth}; no dispatch is recorded.")
                }
            }
            Dispatch::Unknown if l.dispatch_unrecorded => {
                if let Some(i) = l.accepted {
                    evidence.push(ev(e, i));
                }
                "Unknown: the journal records requests and answers, not dispatches, and no answer to this call; it may have reached the target.".into()
            }
            Dispatch::Unknown => {
                "unknown: the execution has no accepted record, so its dispatch cannot be placed"
                    .into()
            }
        };
        answer(2, text, evidence)
    }

    /// Q3 for one execution, with timing relative to `later_at`.
    fn q3(&self, e: ExecIdx, later_at: Option<DateTime<Utc>>) -> Answer {
        let x = self.x(e);
        let l = self.lc(e);
        let evidence: Vec<EvidenceRef> = l.outcomes().iter().map(|&i| ev(e, i)).collect();
        let sent_or_may_have = match l.dispatch() {
            Dispatch::Dispatched => true,
            Dispatch::Unknown => l.dispatch_unrecorded,
            Dispatch::Rejected | Dispatch::NotDispatched => false,
        };
        if !sent_or_may_have && l.outcomes().is_empty() {
            return answer(3, "No: nothing was sent to the target.".into(), evidence);
        }
        let reviewed = l.resolution.as_ref().map(|r| {
            format!(
                " Reviewer {} decided {} at {} ({}): {}",
                r.reviewer,
                r.decision,
                r.at.format("%Y-%m-%d %H:%M:%SZ"),
                r.source,
                r.note
            )
        });
        let text = match (l.decisive_outcome, l.answer) {
            (None, a) if reviewed.is_some() && !a.is_unknown() => {
                let journal = if l.outcomes().is_empty() {
                    "the journal records no response or exit status"
                } else {
                    "the gateway recorded the outcome as unknown"
                };
                format!(
                    "Not from the target: {journal}; a reviewer resolved it.{}",
                    reviewed.clone().unwrap_or_default()
                )
            }
            (None, _) => {
                // What each layer said of the outcome it could not tell
                // (docs/design.md §5.12), in its words.
                let said: Vec<(bool, String)> = l
                    .outcomes()
                    .iter()
                    .filter_map(|&i| {
                        let ev = x.event(i);
                        let KindRef::Outcome { error, .. } = ev.kind() else {
                            return None;
                        };
                        let err = error?;
                        let who = match ev.facts().layer {
                            Some(crate::model::Layer::Client) => "the client",
                            Some(crate::model::Layer::Gateway) => "the gateway",
                            Some(crate::model::Layer::Server) => "the server",
                            None => return Some((false, err.to_string())),
                        };
                        Some((true, format!("{who}: {err}")))
                    })
                    .collect();
                let layered = said.iter().any(|(l, _)| *l);
                let said: Vec<String> = said.into_iter().map(|(_, w)| w).collect();
                // An answer came whose error says the call timed out: read
                // as unknown by retrace, not recorded so by the gateway.
                let timed_out = l.outcomes().iter().find_map(|&i| {
                    let ev = x.event(i);
                    ev.facts().inferred.as_ref()?;
                    match ev.kind() {
                        KindRef::Outcome { error, .. } => error.map(str::to_string),
                        _ => None,
                    }
                });
                let base = match (l.outcomes().is_empty(), said.is_empty()) {
                    _ if let Some(err) = timed_out => format!(
                        "Yes, but it does not tell whether the target acted: the answer says the call timed out or its connection dropped ({err}); nothing has resolved it."
                    ),
                    (true, _) => {
                        "No: no response or exit status is recorded; the outcome is unknown.".into()
                    }
                    (false, true) => {
                        "No: the gateway recorded the outcome as unknown; nothing has resolved it."
                            .to_string()
                    }
                    (false, false) if layered => format!(
                        "No: the outcome is unknown ({}); nothing has resolved it.",
                        said.join("; ")
                    ),
                    (false, false) => format!(
                        "No: the gateway recorded the outcome as unknown ({}); nothing has resolved it.",
                        said.join("; ")
                    ),
                };
                format!("{base}{}", reviewed.clone().unwrap_or_default())
            }
            (Some(i), a) => {
                let words = outcome_words(x.event(i));
                let late = later_at.is_some_and(|t| x.event(i).at() > t);
                let lead = match a {
                    TargetAnswer::Ambiguous => "Yes, but it does not tell whether the target acted",
                    _ if late => "Not before the second call; later",
                    _ => "Yes",
                };
                // Readers that pair responses by position say so on the event.
                let p = &x.event(i).facts().pairing;
                let pairing = match (p.words(), p.why()) {
                    (Some(words), Some(why)) => format!(" (response {words}: {why})"),
                    _ => String::new(),
                };
                format!("{lead}: {words}.{pairing}")
            }
        };
        answer(3, text, evidence)
    }

    /// Q4 for one execution as of `later_at` (`None`: end of journal).
    fn q4(&self, e: ExecIdx, later_at: Option<DateTime<Utc>>) -> Answer {
        let x = self.x(e);
        let l = self.lc(e);
        let caps = self.journals.caps_of(x);
        let (d, i) = l.delivery_at(x, later_at, caps.delivery);
        let mut evidence: Vec<EvidenceRef> = i.map(|i| ev(e, i)).into_iter().collect();
        let completed = matches!(l.answer, TargetAnswer::Performed | TargetAnswer::Replayed);
        // A reviewer's word on delivery (docs/design.md §5.8), where the
        // journal records none.
        if let (Some(r), Delivery::Delivered | Delivery::Failed) = (&l.delivery_resolution, d) {
            let what = if d == Delivery::Delivered {
                "No: the result reached the agent"
            } else {
                "Yes: the target completed and its result never reached the agent"
            };
            let text = format!(
                "{what}, as reviewer {} decided ({}) at {} ({}): {}",
                r.reviewer,
                r.decision,
                r.at.format("%Y-%m-%d %H:%M:%SZ"),
                r.source,
                r.note
            );
            if let Some(o) = l.decisive_outcome {
                evidence.push(ev(e, o));
            }
            return answer(4, text, evidence);
        }
        let text = match d {
            Delivery::NotRecorded => format!(
                "unknown: {} records what the target returned to the gateway, not whether it reached the agent",
                self.format_name(e)
            ),
            Delivery::NotApplicable => {
                "Not applicable: no result had been observed to deliver.".into()
            }
            Delivery::Delivered => format!(
                "No: the result was delivered at {}.",
                hms(x.event(i.unwrap_or_default()).at())
            ),
            Delivery::Failed => {
                let (at, err) = match x.event(i.unwrap_or_default()).kind() {
                    KindRef::DeliveryFailed { error } => {
                        (x.event(i.unwrap_or_default()).at(), error.to_string())
                    }
                    _ => (x.event(i.unwrap_or_default()).at(), String::new()),
                };
                if completed {
                    format!(
                        "Yes: the target completed, then delivery failed at {} ({err}).",
                        hms(at)
                    )
                } else {
                    format!("Delivery failed at {} ({err}).", hms(at))
                }
            }
            Delivery::NotYet => {
                if let Some(o) = l.decisive_outcome {
                    evidence.push(ev(e, o));
                }
                match later_at {
                    Some(t) => format!(
                        "Yes: the target had completed but no delivery was recorded before the second call at {}.",
                        hms(t)
                    ),
                    None => "Yes: the target completed but no delivery is recorded.".into(),
                }
            }
        };
        answer(4, text, evidence)
    }

    /// Answers for a pair (earlier execution `e`, later execution `f` or
    /// attached call event `call` on `e`). `others` are the group's other
    /// calls (an execution, or with an event a call attached to it): Q1
    /// then names the two calls it compares and says where each other
    /// call came from (docs/design.md §5.1: the question is
    /// about the calls, not only the pair the verdict rests on).
    pub fn pair_texts(
        &self,
        p: &PairAnswers,
        (e, f, call): (ExecIdx, ExecIdx, Option<EventIdx>),
        others: &[(ExecIdx, Option<EventIdx>)],
    ) -> Vec<Answer> {
        let xf = self.x(f);
        let later_at = match call {
            Some(i) => Some(self.x(e).event(i).at()),
            None => self.lc(f).dispatch_time(xf),
        };
        let q1 = match call {
            Some(i) => {
                let ce = self.x(e).accepted().map(|(_, a)| a.call.session_id);
                let ca = match self.x(e).event(i).kind() {
                    KindRef::Attached { call, .. } => call.session_id,
                    _ => None,
                };
                let both = if others.is_empty() {
                    "both calls".to_string()
                } else {
                    format!(
                        "{} and the call attached to it at {}",
                        self.x(e).id(),
                        hms(self.x(e).event(i).at())
                    )
                };
                let text = match (ce.flatten(), ca) {
                    (Some(a), Some(b)) if a == b => format!("One process: {both} came from session {a}."),
                    (Some(a), Some(b)) => format!(
                        "Two sessions ({a}, {b}), but the later call attached to the same execution, so the gateway treated it as one intent."
                    ),
                    _ => "The later call attached to the same execution; the journal does not name the sessions.".into(),
                };
                let mut evidence: Vec<EvidenceRef> =
                    self.lc(e).accepted.map(|a| ev(e, a)).into_iter().collect();
                evidence.push(ev(e, i));
                let text = sentences(text, self.other_callers(e, others, &mut evidence));
                answer(1, text, evidence)
            }
            None => {
                let pair = format!("{} and {}", self.x(e).id(), xf.id());
                let pair = (!others.is_empty()).then_some(pair.as_str());
                let (_, text, mut evidence) = self.processes(e, f, pair);
                let text = sentences(text, self.other_callers(e, others, &mut evidence));
                answer(1, text, evidence)
            }
        };
        let q5 = self.q5(p, e, f, call);
        vec![
            q1,
            self.q2(e),
            self.q3(e, later_at),
            self.q4(e, if call.is_some() { None } else { later_at }),
            q5,
        ]
    }

    /// Most other calls Q1 names one by one; the rest are counted.
    const OTHER_CALLERS_NAMED: usize = 3;

    /// Q1's sentence on the group's calls beyond the pair it compares
    /// (`others`: an execution's call, or with an event the call attached
    /// to that execution): where each came from, and whether that is
    /// `e`'s process; empty when there are none. Each named call's record
    /// and session are cited.
    fn other_callers(
        &self,
        e: ExecIdx,
        others: &[(ExecIdx, Option<EventIdx>)],
        evidence: &mut Vec<EvidenceRef>,
    ) -> String {
        if others.is_empty() {
            return String::new();
        }
        let first_call = self.x(e).accepted().map(|(_, a)| a.call);
        let first = first_call.and_then(|c| c.session_id);
        let first_mcp = first_call.and_then(|c| c.mcp_session_id);
        let key = |id: &str| self.model.session(id).and_then(|s| s.process_key());
        let named = others.len().min(Self::OTHER_CALLERS_NAMED);
        // Whether a call named is known only by an MCP session other than
        // the first call's.
        let mut mcp_only = false;
        let words: Vec<String> = others[..named]
            .iter()
            .map(|&(o, attached)| {
                let x = self.x(o);
                let (who, call, cited) = match attached {
                    Some(i) => {
                        let call = match x.event(i).kind() {
                            KindRef::Attached { call, .. } => Some(call),
                            _ => None,
                        };
                        let who = format!(
                            "the call attached to {} at {}",
                            x.id(),
                            hms(x.event(i).at())
                        );
                        (who, call, Some(i))
                    }
                    None => {
                        let call = x.accepted().map(|(_, a)| a.call);
                        (x.id().to_string(), call, self.lc(o).accepted)
                    }
                };
                if let Some(i) = cited {
                    evidence.push(ev(o, i));
                }
                let Some(sid) = call.and_then(|c| c.session_id) else {
                    // Only an MCP session: the same one as the first
                    // call's, or another (a reconnect opens a new one).
                    return match call.and_then(|c| c.mcp_session_id) {
                        Some(m) if first_mcp == Some(m) => format!(
                            "{who} came over MCP session {m}, as {} did",
                            self.x(e).id()
                        ),
                        Some(m) => {
                            mcp_only = true;
                            format!("{who} came over MCP session {m}")
                        }
                        None => format!("{who} names no session"),
                    };
                };
                self.cite_session(sid, evidence);
                let process = match processes_of(first, Some(sid), |a, b| (key(a), key(b))) {
                    Processes::One => format!("the process of {}", self.x(e).id()),
                    Processes::Distinct => "another process".into(),
                    Processes::Unknown => format!(
                        "and whether that is the process of {} is not known: a session names no process",
                        self.x(e).id()
                    ),
                };
                format!("{who} came from {}, {process}", self.describe_session(sid))
            })
            .collect();
        let more = match others.len() - named {
            0 => String::new(),
            n => format!("; and {n} more"),
        };
        let noun = if others.len() == 1 { "call" } else { "calls" };
        let unnamed = if mcp_only {
            " The journal names no process for a call that came over another MCP session: a reconnecting process opens a new one."
        } else {
            ""
        };
        format!(
            "The group's other {noun}: {}{more}.{unnamed}",
            words.join("; ")
        )
    }

    fn q5(&self, p: &PairAnswers, e: ExecIdx, f: ExecIdx, call: Option<EventIdx>) -> Answer {
        let xe = self.x(e);
        let xf = self.x(f);
        let (le, lf) = (self.lc(e), self.lc(f));
        if let Some(i) = call {
            let (c, r) = match xe.event(i).kind() {
                KindRef::Attached { call, recovery } => (describe_call(call), recovery.as_str()),
                _ => (String::new(), ""),
            };
            return answer(
                5,
                format!(
                    "Reused the execution: {c} attached to {} at {} ({}).",
                    xe.id(),
                    hms(xe.event(i).at()),
                    r.replace('_', " ")
                ),
                vec![ev(e, i)],
            );
        }
        let fc = xf
            .accepted()
            .map(|(_, a)| describe_call(a.call))
            .unwrap_or_else(|| "the later call".into());
        let evidence: Vec<EvidenceRef> = [
            lf.accepted.map(|i| ev(f, i)),
            lf.dispatched.map(|i| ev(f, i)),
        ]
        .into_iter()
        .flatten()
        .collect();
        let fate = match p.fate {
            LaterFate::NotDispatched => " It never reached the target.".to_string(),
            LaterFate::Answered(_) => match lf.decisive_outcome {
                Some(i) => format!(" The target answered {}.", outcome_words(xf.event(i))),
                None if lf.dispatch() == Dispatch::Dispatched => " Its outcome is unknown.".into(),
                None => String::new(),
            },
        };
        let text = match p.later {
            LaterCall::Attached => format!("Reused the execution: {fc} attached to {}.", xe.id()),
            LaterCall::Unknown => format!(
                "unknown: {} has no execution identity, so it cannot show attachment; {fc} is counted as a fresh attempt ({}).{fate}",
                self.format_name(f),
                xf.id()
            ),
            LaterCall::SameKey => format!(
                "Fresh attempt with the same idempotency key \"{}\": {fc} created {}.{fate}",
                lf.idempotency_key(xf).unwrap_or(""),
                xf.id()
            ),
            LaterCall::NewKey => format!(
                "Fresh attempt with a new idempotency key (\"{}\", was \"{}\"): {fc} created {}.{fate}",
                lf.idempotency_key(xf).unwrap_or(""),
                le.idempotency_key(xe).unwrap_or(""),
                xf.id()
            ),
            LaterCall::NoKey => format!(
                "Fresh attempt: {fc} created a new execution {} without an idempotency key.{fate}",
                xf.id()
            ),
        };
        answer(5, text, evidence)
    }

    /// Answers for a group with a single call.
    pub fn single_texts(&self, e: ExecIdx) -> Vec<Answer> {
        let only = |q| {
            answer(
                q,
                "Only one call: no second call to compare.".into(),
                vec![],
            )
        };
        vec![
            only(1),
            self.q2(e),
            self.q3(e, None),
            self.q4(e, None),
            only(5),
        ]
    }
}

/// Q1's rule for the sessions `a` and `b` that two calls name (`None`:
/// the call names none, or there is no accepted record): one process when
/// the sessions are the same, or when their records name the same process
/// instance (pid and start time, or instance id). Two distinct processes
/// only when both records name a process and they differ: different
/// session ids alone are not enough, since a reconnecting process can start
/// a new run. `keys` gives the two sessions' process identities
/// ([`crate::model::Session::process_key`]); it is asked only when the
/// sessions differ.
pub(crate) fn processes_of<K: PartialEq>(
    a: Option<&str>,
    b: Option<&str>,
    keys: impl FnOnce(&str, &str) -> (Option<K>, Option<K>),
) -> Processes {
    match (a, b) {
        (Some(a), Some(b)) if a == b => Processes::One,
        (Some(a), Some(b)) => match keys(a, b) {
            (Some(ka), Some(kb)) if ka == kb => Processes::One,
            (Some(_), Some(_)) => Processes::Distinct,
            _ => Processes::Unknown,
        },
        _ => Processes::Unknown,
    }
}
