//! Analysis: fingerprints, tool contracts, grouping, the five questions and
//! the verdicts (DESIGN.md §4–§5). Pure functions of the [`Model`]; nothing
//! here knows about terminals or output formats.

pub mod contracts;
pub mod findings;
pub mod fingerprint;
mod group;
pub mod lifecycle;
mod questions;
pub mod resolution;
pub mod verdict;

pub use contracts::{ActionClass, ContractError, Contracts, ToolContract};
pub use findings::{Finding, FindingKind};
use findings::{
    default_drift_findings, drift_findings, jsonrpc_findings, key_findings, setup_notes,
};
pub use fingerprint::{FingerprintKey, JournalFingerprint, KeyError, Scheme};
use group::judge;
pub use group::{Basis, Cause, Group};
pub use lifecycle::Lifecycle;
pub use resolution::{Decision, Resolution};
pub use verdict::{Severity, Verdict};

use crate::journal::Capabilities;
use crate::model::{Execution, JournalId, Model};
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;

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

/// The verdict in words, and the five answers with evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Explanation {
    /// Why, in one sentence.
    pub reason: String,
    /// The five answers, in the seed's order.
    pub answers: Vec<Answer>,
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

/// What one execution asked for, computed in parallel before grouping.
struct Intent<'a> {
    key: (String, String, String),
    tool: &'a str,
    contract: &'a ToolContract,
    drift: String,
    mismatch: Option<String>,
    unkeyed: bool,
}

/// Maps `f` over `items` on every core (scoped threads over contiguous
/// chunks); results keep the order of `items`.
fn par_map<'a, T: Sync, R: Send>(items: &'a [T], f: impl Fn(usize, &'a T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    if threads <= 1 || items.len() < 1024 {
        return items.iter().enumerate().map(|(i, x)| f(i, x)).collect();
    }
    let chunk = items.len().div_ceil(threads);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(chunk)
            .enumerate()
            .map(|(c, part)| {
                s.spawn(move || {
                    part.iter()
                        .enumerate()
                        .map(|(i, x)| f(c * chunk + i, x))
                        .collect::<Vec<R>>()
                })
            })
            .collect();
        handles
            .into_iter()
            // A panic in `f` is a bug; re-raise it here.
            .flat_map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    })
}

pub(crate) struct Draft {
    key: (String, String, String),
    tool: String,
    target: Option<String>,
    contract: ToolContract,
    drift: Option<String>,
    executions: Vec<usize>,
}

pub(crate) fn group_id(fp: &str, actor: &str, scope: &str) -> String {
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
    // Fingerprinting is per execution and independent: spread it over the
    // cores, then group in order.
    let intents = par_map(&model.executions, |_, x| {
        let (_, call, action) = x.accepted()?;
        let tool = action.tool().unwrap_or("?");
        let contract = config.contracts.lookup(tool).unwrap_or(&unconfigured);
        let mut unkeyed = false;
        let canonical = fingerprint::canonical_record(action, contract, &config.key, &mut unkeyed);
        let fp = fingerprint::fingerprint(&canonical, &config.key);
        let mismatch = match written_fingerprint(x) {
            Some(EvidenceWritten(w)) => {
                match fingerprint::check_journal_fingerprint(Some(w), &canonical, &config.key) {
                    JournalFingerprint::Mismatch { recomputed, .. } => {
                        Some(format!("journal wrote {w}, recomputed {recomputed}"))
                    }
                    _ => None,
                }
            }
            None => None,
        };
        // The drift key: the fingerprint of the record with known
        // equivalents normalized; the fingerprint itself when normalizing
        // changes nothing.
        let drift = match fingerprint::drift_form(&canonical) {
            Some(normal) => fingerprint::fingerprint(&normal, &config.key),
            None => fp.clone(),
        };
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
        Some(Intent {
            key: (fp, actor, scope),
            tool,
            contract,
            drift,
            mismatch,
            unkeyed,
        })
    });
    for (xi, intent) in intents.into_iter().enumerate() {
        let x = &model.executions[xi];
        let Some(intent) = intent else {
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
        secrets_unkeyed |= intent.unkeyed;
        if let Some(m) = intent.mismatch {
            mismatches.push((xi, m));
        }
        match by_key.get(&intent.key) {
            Some(&g) => drafts[g].executions.push(xi),
            None => {
                by_key.insert(intent.key.clone(), drafts.len());
                drafts.push(Draft {
                    key: intent.key,
                    tool: intent.tool.to_string(),
                    target: x.action().and_then(|a| a.target()).map(str::to_string),
                    contract: intent.contract.clone(),
                    drift: Some(intent.drift),
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

pub(crate) struct EvidenceWritten<'a>(pub(crate) &'a str);

pub(crate) fn written_fingerprint(x: &Execution) -> Option<EvidenceWritten<'_>> {
    x.events.iter().find_map(|e| match &e.kind {
        crate::model::EventKind::Accepted {
            fingerprint: Some(f),
            ..
        } => Some(EvidenceWritten(f.as_str())),
        _ => None,
    })
}

pub(crate) fn accepted_ref(lifecycles: &[Lifecycle], xi: usize) -> Option<EvidenceRef> {
    lifecycles[xi].accepted.map(|event| EvidenceRef::Event {
        execution: xi,
        event,
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

#[cfg(test)]
mod tests;
