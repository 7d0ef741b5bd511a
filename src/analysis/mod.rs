//! Analysis: fingerprints, tool contracts, grouping, the five questions and
//! the verdicts (DESIGN.md §4–§5). Pure functions of the [`Model`]; nothing
//! here knows about terminals or output formats.

pub mod contracts;
pub mod fingerprint;
pub mod lifecycle;
mod questions;
pub mod resolution;
pub mod verdict;

pub use contracts::{ActionClass, ContractError, Contracts, ToolContract};
pub use fingerprint::{FingerprintKey, JournalFingerprint, KeyError, Scheme};
pub use lifecycle::Lifecycle;
pub use resolution::{Decision, Resolution};
pub use verdict::{Severity, Verdict};

use crate::journal::Capabilities;
use crate::model::{Execution, JournalId, Model};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use verdict::{Delivery, Dispatch, LaterCall, LaterFate, PairAnswers, Processes, Timing, Window};

/// Inputs that change how journals are read into intents.
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// Tool contracts (`--contracts`).
    pub contracts: Contracts,
    /// Deployment key (`--key-file`).
    pub key: FingerprintKey,
    /// Reviewer decisions (from the case file), applied to unknown outcomes.
    pub resolutions: Vec<Resolution>,
}

/// A pointer to evidence: an event of an execution, or a session record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case", tag = "type")]
pub enum EvidenceRef {
    /// `model.executions[execution].events[event]`.
    Event {
        /// Execution index.
        execution: usize,
        /// Event index within the execution.
        event: usize,
    },
    /// `model.sessions[index]`.
    Session {
        /// Session index.
        index: usize,
    },
}

/// The answer to one of the five questions (DESIGN.md §5), with evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Answer {
    /// 1 to 5.
    pub question: u8,
    /// The answer in words. Unknown answers start with `unknown:` and say
    /// what the journal lacks.
    pub text: String,
    /// True when the journal cannot answer.
    pub unknown: bool,
    /// Journal lines that support the answer.
    pub evidence: Vec<EvidenceRef>,
}

/// The five questions, in the seed's order.
pub const QUESTIONS: [&str; 5] = [
    "Did one agent process or two distinct processes send the calls?",
    "Did the first call receive authorization and enter dispatch?",
    "Did the gateway receive a response or exit status from the target?",
    "Did result delivery fail after target completion?",
    "Did the second call reuse the original execution id, carry an idempotency key, or create a fresh attempt?",
];

/// Extra findings on a group (DESIGN.md §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    /// A cancel arrived after the target completed; the effect stands.
    CancelAfterCompletion,
    /// An outcome arrived by a late response.
    LateResponse,
    /// One (MCP session, JSON-RPC id) carried two intents.
    JsonrpcIdReuse,
    /// One intent got a new idempotency key on each attempt.
    KeyPerAttempt,
    /// One idempotency key carried two intents.
    KeyReusedAcrossIntents,
    /// The journal's fingerprint differs from the recomputed one.
    FingerprintMismatch,
    /// Another group holds the same intent once known equivalents are normalized.
    FingerprintDrift,
    /// The tool has no replay contract.
    NoReplayContract,
}

impl FindingKind {
    /// The snake_case name used in `flags`.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::CancelAfterCompletion => "cancel_after_completion",
            FindingKind::LateResponse => "late_response",
            FindingKind::JsonrpcIdReuse => "jsonrpc_id_reuse",
            FindingKind::KeyPerAttempt => "key_per_attempt",
            FindingKind::KeyReusedAcrossIntents => "key_reused_across_intents",
            FindingKind::FingerprintMismatch => "fingerprint_mismatch",
            FindingKind::FingerprintDrift => "fingerprint_drift",
            FindingKind::NoReplayContract => "no_replay_contract",
        }
    }
}

/// One finding with its explanation and evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What kind.
    pub kind: FindingKind,
    /// What was seen, in words.
    pub detail: String,
    /// Supporting journal lines.
    pub evidence: Vec<EvidenceRef>,
}

/// All calls sharing (intent fingerprint, actor, intent scope), judged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Group {
    /// Stable id: `g` and 10 hex digits of SHA-256 over fingerprint, actor
    /// and scope. Front ends accept any unique prefix.
    pub id: String,
    /// Recomputed intent fingerprint.
    pub fingerprint: String,
    /// Actor.
    pub actor: String,
    /// Intent scope.
    pub intent_scope: String,
    /// Tool name.
    pub tool: String,
    /// Target, when the action record names one.
    pub target: Option<String>,
    /// Execution indexes, in time order.
    pub executions: Vec<usize>,
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
    /// Why, in one sentence.
    pub reason: String,
    /// The five answers, for the pair (or execution) that decided the verdict.
    pub answers: Vec<Answer>,
    /// The (earlier, later) executions the answers are about; equal when a
    /// single execution decided, `None` for groups without executions.
    pub decisive: Option<(usize, usize)>,
    /// Extra findings.
    pub findings: Vec<Finding>,
    /// Each execution's own status verdict (the DESIGN.md §5 rows about one
    /// execution: rejected, pending verification, undelivered result, safe
    /// retry, clean), aligned with `executions`; `None` when a later call
    /// superseded it (an undelivered result that was retried, a pending
    /// outcome that a later replay with the same key settled). The review
    /// queue reads it.
    pub statuses: Vec<Option<Verdict>>,
    /// The tool contract applied.
    pub contract: ToolContract,
    /// The record that was hashed.
    pub canonical: Value,
}

impl Group {
    /// The verdict's severity.
    pub fn severity(&self) -> Severity {
        self.verdict.severity()
    }
    /// Whether the group is worth listing by default (DESIGN.md §7: two or
    /// more calls, or a verdict other than `clean`).
    pub fn worth_a_look(&self) -> bool {
        self.calls >= 2 || self.verdict != Verdict::Clean
    }
    /// Whether a finding of this kind is present.
    pub fn has(&self, k: FindingKind) -> bool {
        self.findings.iter().any(|f| f.kind == k)
    }
}

/// The result of analysing a model.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Groups, worst first, then by first event.
    pub groups: Vec<Group>,
    /// Lifecycle of every execution, aligned with `model.executions`.
    pub lifecycles: Vec<Lifecycle>,
    /// Group index of every execution.
    pub execution_group: Vec<usize>,
    /// Fingerprint scheme in use.
    pub scheme: Option<Scheme>,
    /// Notes about the analysis as a whole (e.g. secrets redacted without a key).
    pub notes: Vec<String>,
}

/// What analysis needs to know about each journal.
pub trait JournalCaps {
    /// Capabilities of journal `id`.
    fn caps(&self, id: JournalId) -> Capabilities;
    /// Display name of journal `id`.
    fn name(&self, id: JournalId) -> &str;
}

struct Draft {
    key: (String, String, String),
    tool: String,
    target: Option<String>,
    contract: ToolContract,
    canonical: Value,
    drift: Option<String>,
    executions: Vec<usize>,
}

fn group_id(fp: &str, actor: &str, scope: &str) -> String {
    let h = Sha256::digest(format!("{fp}\n{actor}\n{scope}").as_bytes());
    format!("g{}", &hex::encode(h)[..10])
}

/// Analyses a model: groups executions by intent and judges each group.
pub fn analyze(model: &Model, journals: &dyn JournalCaps, config: &Config) -> Analysis {
    let mut lifecycles: Vec<Lifecycle> = model.executions.iter().map(Lifecycle::of).collect();
    let mut notes = Vec::new();
    for r in &config.resolutions {
        match model.execution_index(&r.execution_id) {
            Some(x) => {
                if !lifecycles[x].resolve(r) && r.decision != Decision::Escalated {
                    notes.push(format!(
                        "{} decided {} for {}, but the journal already shows its outcome; the journal stands",
                        r.reviewer, r.decision, r.execution_id
                    ));
                }
            }
            None => notes.push(format!(
                "a review decision ({}) names execution {}, which is not in these journals",
                r.source, r.execution_id
            )),
        }
    }
    let mut secrets_unkeyed = false;
    let mut drafts: Vec<Draft> = Vec::new();
    let mut by_key: HashMap<(String, String, String), usize> = HashMap::new();
    let mut mismatches: Vec<(usize, String)> = Vec::new();

    for (xi, x) in model.executions.iter().enumerate() {
        let (key, tool, target, contract, canonical, drift) = match x.accepted() {
            Some((_, call, action)) => {
                let tool = action.tool().unwrap_or("?").to_string();
                let contract = config.contracts.get(&tool);
                let canonical = fingerprint::canonical_record(
                    action,
                    &contract,
                    &config.key,
                    &mut secrets_unkeyed,
                );
                let fp = fingerprint::fingerprint(&canonical, &config.key);
                if let Some(EvidenceWritten(w)) = written_fingerprint(x)
                    && let JournalFingerprint::Mismatch { recomputed, .. } =
                        fingerprint::check_journal_fingerprint(Some(w), &canonical, &config.key)
                {
                    mismatches.push((xi, format!("journal wrote {w}, recomputed {recomputed}")));
                }
                let actor = action
                    .actor()
                    .map(str::to_string)
                    .or_else(|| {
                        call.session_id
                            .as_deref()
                            .and_then(|s| model.session(s))
                            .and_then(|s| s.actor.clone())
                    })
                    .unwrap_or_else(|| "unknown".into());
                let scope = action.intent_scope().unwrap_or("unscoped").to_string();
                let drift = Some(fingerprint::jcs(&fingerprint::drift_form(&canonical)));
                let target = action.target().map(str::to_string);
                ((fp, actor, scope), tool, target, contract, canonical, drift)
            }
            None => (
                (
                    format!("orphan:{}", x.id),
                    "unknown".into(),
                    "unscoped".into(),
                ),
                "?".to_string(),
                None,
                ToolContract::unconfigured(),
                Value::Null,
                None,
            ),
        };
        match by_key.get(&key) {
            Some(&g) => drafts[g].executions.push(xi),
            None => {
                by_key.insert(key.clone(), drafts.len());
                drafts.push(Draft {
                    key,
                    tool,
                    target,
                    contract,
                    canonical,
                    drift,
                    executions: vec![xi],
                });
            }
        }
    }
    if secrets_unkeyed {
        notes.push(
            "secret fields were redacted without a key (no --key-file): intents that differ only in a secret look alike"
                .into(),
        );
    }

    let ctx = questions::Ctx {
        model,
        lifecycles: &lifecycles,
        journals,
    };
    let mut groups: Vec<Group> = drafts.iter().map(|d| judge(&ctx, d)).collect();
    let mut execution_group = vec![0; model.executions.len()];
    for (gi, d) in drafts.iter().enumerate() {
        for &x in &d.executions {
            execution_group[x] = gi;
        }
    }

    // Findings that look across groups.
    for (xi, detail) in mismatches {
        let g = execution_group[xi];
        let ev = accepted_ref(&lifecycles, xi);
        groups[g].findings.push(Finding {
            kind: FindingKind::FingerprintMismatch,
            detail: format!("{}: {detail}", model.executions[xi].id),
            evidence: ev.into_iter().collect(),
        });
    }
    drift_findings(&drafts, &mut groups);
    key_findings(model, &lifecycles, &execution_group, &mut groups);
    jsonrpc_findings(model, &lifecycles, &execution_group, &mut groups);

    for g in &mut groups {
        g.findings
            .sort_by(|a, b| a.kind.cmp(&b.kind).then(a.detail.cmp(&b.detail)));
        g.findings
            .dedup_by(|a, b| a.kind == b.kind && a.detail == b.detail);
    }

    // Worst first, then oldest first.
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&a, &b| {
        groups[a]
            .verdict
            .cmp(&groups[b].verdict)
            .then(groups[a].first_at.cmp(&groups[b].first_at))
            .then(groups[a].id.cmp(&groups[b].id))
    });
    let mut rank = vec![0; groups.len()];
    for (new, &old) in order.iter().enumerate() {
        rank[old] = new;
    }
    for g in &mut execution_group {
        *g = rank[*g];
    }
    let mut slots: Vec<Option<Group>> = groups.into_iter().map(Some).collect();
    let groups = order.iter().filter_map(|&i| slots[i].take()).collect();

    Analysis {
        groups,
        lifecycles,
        execution_group,
        scheme: Some(config.key.scheme()),
        notes,
    }
}

struct EvidenceWritten<'a>(&'a str);

fn written_fingerprint(x: &Execution) -> Option<EvidenceWritten<'_>> {
    x.events.iter().find_map(|e| match &e.kind {
        crate::model::EventKind::Accepted {
            fingerprint: Some(f),
            ..
        } => Some(EvidenceWritten(f.as_str())),
        _ => None,
    })
}

fn accepted_ref(lifecycles: &[Lifecycle], xi: usize) -> Option<EvidenceRef> {
    lifecycles[xi].accepted.map(|event| EvidenceRef::Event {
        execution: xi,
        event,
    })
}

/// A verdict with what gave it: (verdict, earlier execution, later
/// execution, pair answers, attached-call event).
type Candidate = (Verdict, usize, usize, Option<PairAnswers>, Option<usize>);

/// Judges one group: every execution's own status, every later call against
/// the execution it repeats, and the most severe of them decides.
fn judge(ctx: &questions::Ctx<'_>, d: &Draft) -> Group {
    let model = ctx.model;
    let lc = ctx.lifecycles;
    let xs = &d.executions;
    let window = d.contract.attach_window;

    // Candidate (verdict, earlier, later, pair answers) items.
    let mut best: Option<Candidate> = None;
    let mut statuses: Vec<Option<Verdict>> = Vec::with_capacity(xs.len());
    let mut consider =
        |v: Verdict, e: usize, f: usize, p: Option<PairAnswers>, call: Option<usize>| {
            if best.as_ref().is_none_or(|b| v < b.0) {
                best = Some((v, e, f, p, call));
            }
        };

    for (j, &x) in xs.iter().enumerate() {
        let caps = ctx.caps_of(x);
        let v = verdict::status_verdict(&lc[x].status_answers(&model.executions[x], caps.delivery));
        let later = &xs[j + 1..];
        // "undelivered_result: ... no retry yet": once a later call came,
        // the pairs judge what it did.
        let retried = !lc[x].attached.is_empty() || !later.is_empty();
        // A later attempt with the same key that the target answered with a
        // replay shows this one was performed: it is no longer pending.
        let replayed_later = lc[x].idempotency_key.is_some()
            && later.iter().any(|&f| {
                lc[f].idempotency_key == lc[x].idempotency_key
                    && lc[f].answer == verdict::TargetAnswer::Replayed
            });
        let superseded = match v {
            Verdict::UndeliveredResult => retried,
            Verdict::PendingVerification => replayed_later,
            _ => false,
        };
        if !superseded {
            consider(v, x, x, None, None);
        }
        statuses.push((!superseded).then_some(v));
        for &a in &lc[x].attached {
            let p = ctx.pair_answers_attached(x, a);
            if let Some(v) = verdict::pair_verdict(&p) {
                consider(v, x, x, Some(p), Some(a));
            }
        }
    }
    for (j, &f) in xs.iter().enumerate().skip(1) {
        let mut earlier: BTreeSet<usize> = BTreeSet::new();
        earlier.insert(xs[0]);
        earlier.insert(xs[j - 1]);
        earlier.extend(
            xs[..j]
                .iter()
                .copied()
                .filter(|&e| lc[e].answer.is_unknown()),
        );
        for e in earlier {
            let p = ctx.pair_answers(e, f, window);
            if let Some(v) = verdict::pair_verdict(&p) {
                consider(v, e, f, Some(p), None);
            }
        }
    }

    let calls: usize = xs
        .iter()
        .map(|&x| usize::from(lc[x].accepted.is_some()) + lc[x].attached.len())
        .sum();
    let dispatches = xs.iter().map(|&x| lc[x].dispatches).sum();
    let first_at = xs
        .iter()
        .filter_map(|&x| model.executions[x].first_at())
        .min();
    let last_at = xs
        .iter()
        .filter_map(|&x| model.executions[x].last_at())
        .max();

    // When a status verdict decided but the group has later calls, the
    // questions are still asked about the most telling pair.
    let (verdict, e, f, pair, call) = best.unwrap_or((Verdict::Clean, xs[0], xs[0], None, None));
    let shown_pair = match pair {
        Some(p) => Some((p, e, f, call)),
        None => first_pair(ctx, xs, window),
    };
    let answers = match shown_pair {
        Some((p, e, f, call)) => ctx.pair_texts(&p, e, f, call),
        None => ctx.single_texts(e),
    };
    let reason = ctx.reason(verdict, e, f, pair.as_ref(), call);
    let decisive = Some(match shown_pair {
        Some((_, e, f, _)) => (e, f),
        None => (e, f),
    });

    let mut findings = Vec::new();
    if !d.contract.configured && !d.key.0.starts_with("orphan:") {
        findings.push(Finding {
            kind: FindingKind::NoReplayContract,
            detail: format!(
                "no replay contract for {}: treated as irreversible with a {} attach window",
                d.tool,
                humantime::format_duration(d.contract.attach_window)
            ),
            evidence: vec![],
        });
    }
    for &x in xs {
        let ex = &model.executions[x];
        if let Some(i) = lc[x].late_response(ex) {
            findings.push(Finding {
                kind: FindingKind::LateResponse,
                detail: format!("{}: the outcome arrived by a late response", ex.id),
                evidence: vec![EvidenceRef::Event {
                    execution: x,
                    event: i,
                }],
            });
        }
        if let Some(i) = lc[x].cancel_after_completion(ex) {
            findings.push(Finding {
                kind: FindingKind::CancelAfterCompletion,
                detail: format!(
                    "{}: cancelled after the target had completed it; the effect stands",
                    ex.id
                ),
                evidence: vec![EvidenceRef::Event {
                    execution: x,
                    event: i,
                }],
            });
        }
    }
    let keys: Vec<(usize, &str)> = xs
        .iter()
        .filter_map(|&x| lc[x].idempotency_key.as_deref().map(|k| (x, k)))
        .collect();
    let distinct: BTreeSet<&str> = keys.iter().map(|(_, k)| *k).collect();
    if keys.len() >= 2 && distinct.len() == keys.len() {
        findings.push(Finding {
            kind: FindingKind::KeyPerAttempt,
            detail: format!(
                "one intent, a new idempotency key on each of {} attempts: the target cannot deduplicate them",
                keys.len()
            ),
            evidence: keys.iter().filter_map(|&(x, _)| accepted_ref(lc, x)).collect(),
        });
    }

    Group {
        id: group_id(&d.key.0, &d.key.1, &d.key.2),
        fingerprint: d.key.0.clone(),
        actor: d.key.1.clone(),
        intent_scope: d.key.2.clone(),
        tool: d.tool.clone(),
        target: d.target.clone(),
        executions: xs.clone(),
        calls,
        dispatches,
        first_at,
        last_at,
        verdict,
        reason,
        answers,
        decisive,
        findings,
        statuses,
        contract: d.contract.clone(),
        canonical: d.canonical.clone(),
    }
}

/// The first later call of a group, for groups decided by a status verdict.
fn first_pair(
    ctx: &questions::Ctx<'_>,
    xs: &[usize],
    window: std::time::Duration,
) -> Option<(PairAnswers, usize, usize, Option<usize>)> {
    let first = xs[0];
    if let Some(&a) = ctx.lifecycles[first].attached.first() {
        return Some((ctx.pair_answers_attached(first, a), first, first, Some(a)));
    }
    let &second = xs.get(1)?;
    Some((ctx.pair_answers(first, second, window), first, second, None))
}

fn drift_findings(drafts: &[Draft], groups: &mut [Group]) {
    let mut by_drift: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, d) in drafts.iter().enumerate() {
        if let Some(k) = &d.drift {
            by_drift.entry(k.as_str()).or_default().push(i);
        }
    }
    for members in by_drift.values().filter(|m| m.len() > 1) {
        for &i in members {
            let others: Vec<String> = members
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| groups[j].id.clone())
                .collect();
            groups[i].findings.push(Finding {
                kind: FindingKind::FingerprintDrift,
                detail: format!(
                    "same intent as {} once numeric strings and numbers are normalized; the fingerprints differ",
                    others.join(", ")
                ),
                evidence: vec![],
            });
        }
    }
}

/// One idempotency key carrying two intents: a finding and at least the
/// `idempotency_key_conflict` verdict on every group involved.
fn key_findings(model: &Model, lc: &[Lifecycle], execution_group: &[usize], groups: &mut [Group]) {
    let mut by_key: HashMap<&str, BTreeSet<usize>> = HashMap::new();
    for (x, l) in lc.iter().enumerate() {
        if let Some(k) = l.idempotency_key.as_deref() {
            by_key.entry(k).or_default().insert(execution_group[x]);
        }
    }
    let mut keys: Vec<_> = by_key.into_iter().filter(|(_, g)| g.len() > 1).collect();
    keys.sort();
    for (key, gs) in keys {
        for &g in &gs {
            let others: Vec<String> = gs
                .iter()
                .filter(|&&o| o != g)
                .map(|&o| groups[o].id.clone())
                .collect();
            let evidence = groups[g]
                .executions
                .iter()
                .filter(|&&x| lc[x].idempotency_key.as_deref() == Some(key))
                .filter_map(|&x| accepted_ref(lc, x))
                .collect();
            let group = &mut groups[g];
            group.findings.push(Finding {
                kind: FindingKind::KeyReusedAcrossIntents,
                detail: format!(
                    "idempotency key {key:?} also carried a different intent in {}",
                    others.join(", ")
                ),
                evidence,
            });
            if Verdict::IdempotencyKeyConflict < group.verdict {
                group.verdict = Verdict::IdempotencyKeyConflict;
                group.reason = format!(
                    "idempotency key {key:?} was used for this intent and for another ({}): the target cannot tell them apart",
                    others.join(", ")
                );
            }
        }
    }
    let _ = model;
}

/// One (MCP session, JSON-RPC id) used for two intents (research A2: ids
/// identify messages, not actions).
fn jsonrpc_findings(
    model: &Model,
    lc: &[Lifecycle],
    execution_group: &[usize],
    groups: &mut [Group],
) {
    let mut by_id: HashMap<(String, String), BTreeSet<usize>> = HashMap::new();
    for (x, ex) in model.executions.iter().enumerate() {
        if let Some((Some(mcp), id)) = lc[x].correlation(ex) {
            by_id
                .entry((mcp.to_string(), id.to_string()))
                .or_default()
                .insert(execution_group[x]);
        }
    }
    let mut ids: Vec<_> = by_id.into_iter().filter(|(_, g)| g.len() > 1).collect();
    ids.sort();
    for ((mcp, id), gs) in ids {
        for &g in &gs {
            let others: Vec<String> = gs
                .iter()
                .filter(|&&o| o != g)
                .map(|&o| groups[o].id.clone())
                .collect();
            groups[g].findings.push(Finding {
                kind: FindingKind::JsonrpcIdReuse,
                detail: format!(
                    "JSON-RPC id {id} on MCP session {mcp} also carried a different intent ({})",
                    others.join(", ")
                ),
                evidence: vec![],
            });
        }
    }
}

impl questions::Ctx<'_> {
    fn caps_of(&self, x: usize) -> Capabilities {
        let j = self.model.executions[x]
            .events
            .first()
            .map_or(0, |e| e.source.journal);
        self.journals.caps(j)
    }

    fn pair_answers_attached(&self, x: usize, _event: usize) -> PairAnswers {
        let l = &self.lifecycles[x];
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

    fn pair_answers(&self, e: usize, f: usize, window: std::time::Duration) -> PairAnswers {
        let (xe, xf) = (&self.model.executions[e], &self.model.executions[f]);
        let (le, lf) = (&self.lifecycles[e], &self.lifecycles[f]);
        let t = lf.dispatch_time(xf);
        let timing = match (le.outcome_time(xe), t) {
            (Some(o), Some(t)) if o > t => Timing::AfterLater,
            _ => Timing::BeforeLater,
        };
        let caps_e = self.caps_of(e);
        let caps_f = self.caps_of(f);
        let later = if !caps_f.execution_identity || !caps_e.execution_identity {
            LaterCall::Unknown
        } else {
            match (&le.idempotency_key, &lf.idempotency_key) {
                (Some(a), Some(b)) if a == b => LaterCall::SameKey,
                (Some(_), Some(_)) => LaterCall::NewKey,
                _ => LaterCall::NoKey,
            }
        };
        let gap = match (xe.first_at(), xf.first_at()) {
            (Some(a), Some(b)) => (b - a).to_std().unwrap_or_default(),
            _ => std::time::Duration::ZERO,
        };
        let window = if window.is_zero() || gap > window {
            Window::Outside
        } else {
            Window::Within
        };
        let fate = match lf.dispatch() {
            Dispatch::Rejected | Dispatch::NotDispatched => LaterFate::NotDispatched,
            Dispatch::Dispatched | Dispatch::Unknown => LaterFate::Answered(lf.answer),
        };
        PairAnswers {
            processes: self.processes(e, f).0,
            dispatch: le.dispatch(),
            answer: le.answer,
            timing,
            delivery: le.delivery_at(xe, t, caps_e.delivery).0,
            later,
            window,
            fate,
        }
    }
}

#[cfg(test)]
mod tests;
