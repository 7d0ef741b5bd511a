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
    /// The journal does not record the full tool arguments, so distinct
    /// intents may look alike.
    ArgumentsNotLogged,
    /// Two outcome events of one execution disagree on whether the target
    /// acted (a response, then a status query that says otherwise).
    OutcomeContradiction,
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
            FindingKind::ArgumentsNotLogged => "arguments_not_logged",
            FindingKind::OutcomeContradiction => "outcome_contradiction",
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

/// A pair (earlier execution, later call) or a single execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Basis {
    /// The earlier execution (model index).
    pub earlier: usize,
    /// The later execution; equal to `earlier` for an attached call or a
    /// single execution.
    pub later: usize,
    /// The answers for the pair, when there is a later call.
    pub pair: Option<PairAnswers>,
    /// The `attached` event on `earlier`, when the later call attached.
    pub call: Option<usize>,
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

/// The verdict in words, and the five answers with evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Why, in one sentence.
    pub reason: String,
    /// The five answers, in the seed's order.
    pub answers: Vec<Answer>,
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
    /// What gave the verdict; [`explain`] turns it into words.
    pub cause: Cause,
    /// The pair (or execution) the five questions are asked about: the one
    /// that decided the verdict, or for a verdict about one execution, the
    /// group's first later call.
    pub asked: Basis,
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

    let unconfigured = ToolContract::unconfigured();
    for (xi, x) in model.executions.iter().enumerate() {
        let Some((_, call, action)) = x.accepted() else {
            // Events with no accepted record: a group of their own, so that
            // nothing the journal holds is dropped.
            drafts.push(Draft {
                key: (
                    format!("orphan:{}", x.id),
                    "unknown".into(),
                    "unscoped".into(),
                ),
                tool: "?".into(),
                target: None,
                contract: unconfigured.clone(),
                drift: None,
                executions: vec![xi],
            });
            continue;
        };
        let tool = action.tool().unwrap_or("?");
        let contract = config.contracts.lookup(tool).unwrap_or(&unconfigured);
        let canonical =
            fingerprint::canonical_record(action, contract, &config.key, &mut secrets_unkeyed);
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
        let key = (fp, actor, scope);
        match by_key.get(&key) {
            Some(&g) => drafts[g].executions.push(xi),
            None => {
                // The drift key: the fingerprint of the record with known
                // equivalents normalized; the fingerprint itself when
                // normalizing changes nothing.
                let drift = Some(match fingerprint::drift_form(&canonical) {
                    Some(normal) => fingerprint::fingerprint(&normal, &config.key),
                    None => key.0.clone(),
                });
                by_key.insert(key.clone(), drafts.len());
                drafts.push(Draft {
                    key,
                    tool: tool.to_string(),
                    target: action.target().map(str::to_string),
                    contract: contract.clone(),
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
    setup_notes(model, config, &mut notes);

    let ctx = questions::Ctx {
        model,
        lifecycles: &lifecycles,
        journals,
    };
    let mut execution_group = vec![0; model.executions.len()];
    for (gi, d) in drafts.iter().enumerate() {
        for &x in &d.executions {
            execution_group[x] = gi;
        }
    }
    let drift: Vec<Option<String>> = drafts.iter_mut().map(|d| d.drift.take()).collect();
    let mut groups: Vec<Group> = drafts.into_iter().map(|d| judge(&ctx, d)).collect();

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
    drift_findings(&drift, &mut groups);
    default_drift_findings(model, config, &mut groups);
    key_findings(&lifecycles, &execution_group, &mut groups);
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

/// Keeps the most severe candidate (the first one found among equals).
fn consider(
    best: &mut Option<Candidate>,
    v: Verdict,
    e: usize,
    f: usize,
    p: Option<PairAnswers>,
    call: Option<usize>,
) {
    if best.as_ref().is_none_or(|b| v < b.0) {
        *best = Some((v, e, f, p, call));
    }
}

/// How many earlier executions of a group one later execution is compared
/// with, most recent first (within the attach window).
const PAIR_SCAN: usize = 64;

/// A verdict with what gave it: (verdict, earlier execution, later
/// execution, pair answers, attached-call event).
type Candidate = (Verdict, usize, usize, Option<PairAnswers>, Option<usize>);

/// Judges one group: every execution's own status, every later call against
/// the execution it repeats, and the most severe of them decides.
fn judge(ctx: &questions::Ctx<'_>, d: Draft) -> Group {
    let model = ctx.model;
    let lc = ctx.lifecycles;
    let xs = &d.executions;
    let window = d.contract.attach_window;

    // Candidate (verdict, earlier, later, pair answers) items.
    let mut best: Option<Candidate> = None;
    let mut statuses: Vec<Option<Verdict>> = Vec::with_capacity(xs.len());

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
            consider(&mut best, v, x, x, None, None);
        }
        // One execution dispatched more than once: each dispatch was an
        // attempt at the target.
        if let Some(v) = verdict::redispatch_verdict(&lc[x].redispatch(&model.executions[x])) {
            consider(&mut best, v, x, x, None, None);
        }
        statuses.push((!superseded).then_some(v));
        for &a in &lc[x].attached {
            let p = ctx.pair_answers_attached(x, a);
            if let Some(v) = verdict::pair_verdict(&p) {
                consider(&mut best, v, x, x, Some(p), Some(a));
            }
        }
    }
    // Each later execution against the earlier ones it may repeat: the
    // first, and every earlier one still inside the attach window, most
    // recent first. The walk is bounded (PAIR_SCAN) so that a group of a
    // hundred thousand calls stays linear; it stops early once the worst
    // verdict is found.
    'outer: for (j, &f) in xs.iter().enumerate().skip(1) {
        let f_start = model.executions[f].started_at();
        let mut earlier: Vec<usize> = vec![xs[0]];
        for &e in xs[..j].iter().rev().take(PAIR_SCAN) {
            let e_start = model.executions[e].started_at();
            let outside = match (e_start, f_start) {
                (Some(a), Some(b)) => (b - a).to_std().unwrap_or_default() > window,
                _ => false,
            };
            if outside && e != xs[j - 1] {
                break;
            }
            earlier.push(e);
        }
        earlier.sort_unstable();
        earlier.dedup();
        for e in earlier {
            let p = ctx.pair_answers(e, f, window);
            if let Some(v) = verdict::pair_verdict(&p) {
                consider(&mut best, v, e, f, Some(p), None);
            }
            if best
                .as_ref()
                .is_some_and(|b| b.0 == Verdict::DuplicateSideEffect)
            {
                break 'outer;
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
        if let Some((a, b)) = lc[x].contradiction {
            findings.push(Finding {
                kind: FindingKind::OutcomeContradiction,
                detail: format!(
                    "{}: the outcome at {} and the one at {} disagree on whether the target acted; retrace reads it as acted",
                    ex.id,
                    ex.events[a].at.format("%H:%M:%S%.3f"),
                    ex.events[b].at.format("%H:%M:%S%.3f"),
                ),
                evidence: vec![
                    EvidenceRef::Event { execution: x, event: a },
                    EvidenceRef::Event { execution: x, event: b },
                ],
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
    // Readers say when their format does not record the arguments.
    if let Some((x, what)) = xs.iter().find_map(|&x| {
        let (e, _, _) = model.executions[x].accepted()?;
        let v = e.extra.get(crate::journal::ARGUMENTS_LOGGED)?.as_str()?;
        Some((x, v))
    }) {
        findings.push(Finding {
            kind: FindingKind::ArgumentsNotLogged,
            detail: format!(
                "{what}: calls are grouped by what the journal does record, so distinct intents may look alike"
            ),
            evidence: accepted_ref(lc, x).into_iter().collect(),
        });
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
        cause: Cause::Lifecycle(basis),
        asked,
        findings,
        statuses,
        contract: d.contract,
    }
}

/// The first later call of a group, for groups decided by a status verdict.
fn first_pair(
    ctx: &questions::Ctx<'_>,
    xs: &[usize],
    window: std::time::Duration,
) -> Option<Basis> {
    let first = xs[0];
    if let Some(&a) = ctx.lifecycles[first].attached.first() {
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

/// The canonical action record a group's fingerprint was computed from
/// (recomputed on demand; it is only shown, never needed for judging).
pub fn canonical_action(model: &Model, config: &Config, g: &Group) -> Value {
    let Some(action) = g
        .executions
        .first()
        .and_then(|&x| model.executions[x].action())
    else {
        return Value::Null;
    };
    let mut unkeyed = false;
    fingerprint::canonical_record(action, &g.contract, &config.key, &mut unkeyed)
}

/// The verdict of a group in words and its five answers with evidence.
/// Computed on demand: only groups someone looks at need words.
pub fn explain(
    model: &Model,
    analysis: &Analysis,
    journals: &dyn JournalCaps,
    g: &Group,
) -> Explanation {
    let ctx = questions::Ctx {
        model,
        lifecycles: &analysis.lifecycles,
        journals,
    };
    let reason = match &g.cause {
        Cause::Lifecycle(b) => ctx.reason(g.verdict, b.earlier, b.later, b.pair.as_ref()),
        Cause::KeyConflict { key, others } => format!(
            "idempotency key {key:?} was used for this intent and for another ({}): the target cannot tell them apart",
            others.join(", ")
        ),
    };
    let a = &g.asked;
    let answers = match &a.pair {
        Some(p) => ctx.pair_texts(p, a.earlier, a.later, a.call),
        None => ctx.single_texts(a.earlier),
    };
    Explanation { reason, answers }
}

fn drift_findings(drift: &[Option<String>], groups: &mut [Group]) {
    let mut by_drift: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, d) in drift.iter().enumerate() {
        if let Some(k) = d {
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

/// Notes on how the inputs shape the result, for people who did not pass
/// contracts or a key: without them the same journal groups differently.
fn setup_notes(model: &Model, config: &Config, notes: &mut Vec<String>) {
    if config.contracts.is_empty() && !model.executions.is_empty() {
        notes.push(
            "no tool contracts (--contracts): every tool is treated as irreversible with a 15m attach window, and argument defaults are not filled in, so a retry that leaves one out lands in another group"
                .into(),
        );
    }
    if config.key.scheme() == Scheme::Sha256 {
        let hmac = model
            .executions
            .iter()
            .filter(|x| written_fingerprint(x).is_some_and(|w| w.0.starts_with("hmac-sha256:")))
            .count();
        if hmac > 0 {
            notes.push(format!(
                "{hmac} execution(s) carry hmac-sha256 fingerprints but no --key-file was given: retrace fingerprints with plain sha256 and cannot check the journal's own"
            ));
        }
    }
    // A contract's fingerprint field that no call of its tool carries is
    // most likely a typo: the fingerprint then ignores the real field.
    for (tool, contract) in config.contracts.iter() {
        let Some(fields) = &contract.fingerprint_fields else {
            continue;
        };
        let mut seen_tool = false;
        let mut seen: BTreeSet<&str> = BTreeSet::new();
        for x in &model.executions {
            let Some(a) = x.action().filter(|a| a.tool() == Some(tool)) else {
                continue;
            };
            seen_tool = true;
            if let Some(args) = a.arguments() {
                seen.extend(args.keys().map(String::as_str));
            }
        }
        let missing: Vec<&str> = fields
            .iter()
            .map(String::as_str)
            .filter(|f| !seen.contains(f) && !contract.defaults.contains_key(*f))
            .collect();
        if seen_tool && !missing.is_empty() {
            notes.push(format!(
                "the contract for {tool} lists fingerprint field(s) {} that no call of {tool} carries: a typo leaves the real field out of the fingerprint",
                missing.join(", ")
            ));
        }
    }
}

/// Groups that would be one intent if the arguments one of them leaves out
/// took the other's values as defaults (DESIGN.md §4: "records become equal
/// once defaults are materialized"). Without a contract naming the default,
/// this is the trace a missing default leaves: the same call with one
/// argument fewer.
fn default_drift_findings(model: &Model, config: &Config, groups: &mut [Group]) {
    // Cheap buckets first; only groups that share tool, actor, scope and
    // target can be the same intent.
    let mut buckets: HashMap<(&str, &str, &str, Option<&str>), Vec<usize>> = HashMap::new();
    for (i, g) in groups.iter().enumerate() {
        if g.tool != "?" {
            buckets
                .entry((&g.tool, &g.actor, &g.intent_scope, g.target.as_deref()))
                .or_default()
                .push(i);
        }
    }
    let mut found: Vec<(usize, String)> = Vec::new();
    for members in buckets.values().filter(|m| m.len() > 1 && m.len() <= 4096) {
        // For each group: the canonical record without its arguments, and
        // its arguments; then every "arguments minus one" form.
        let mut full: HashMap<String, usize> = HashMap::new();
        let mut reduced: Vec<(String, usize, String, Value)> = Vec::new();
        for &i in members {
            let mut rec = canonical_action(model, config, &groups[i]);
            let Some(Value::Object(args)) = rec.as_object_mut().and_then(|r| r.remove("arguments"))
            else {
                continue;
            };
            let shape = fingerprint::jcs(&rec);
            full.insert(
                format!("{shape}|{}", fingerprint::jcs(&Value::Object(args.clone()))),
                i,
            );
            for (k, v) in &args {
                let mut less = args.clone();
                less.remove(k);
                reduced.push((
                    format!("{shape}|{}", fingerprint::jcs(&Value::Object(less))),
                    i,
                    k.clone(),
                    v.clone(),
                ));
            }
        }
        for (key, with, arg, value) in reduced {
            if let Some(&without) = full.get(&key)
                && without != with
            {
                found.push((
                    without,
                    format!(
                        "same intent as {} if the argument it leaves out, {arg}, defaults to {value}: a contract default would make them one group",
                        groups[with].id
                    ),
                ));
                found.push((
                    with,
                    format!(
                        "same intent as {}, which leaves out {arg} = {value}: a contract default would make them one group",
                        groups[without].id
                    ),
                ));
            }
        }
    }
    for (g, detail) in found {
        groups[g].findings.push(Finding {
            kind: FindingKind::FingerprintDrift,
            detail,
            evidence: vec![],
        });
    }
}

/// One idempotency key carrying two intents: a finding and at least the
/// `idempotency_key_conflict` verdict on every group involved.
fn key_findings(lc: &[Lifecycle], execution_group: &[usize], groups: &mut [Group]) {
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
                group.cause = Cause::KeyConflict {
                    key: key.to_string(),
                    others,
                };
            }
        }
    }
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
        let gap = match (xe.started_at(), xf.started_at()) {
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
            processes: self.processes_value(e, f),
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
