//! Analysis: fingerprints, tool contracts, grouping, the five questions and
//! the verdicts (docs/design.md §4–§5). Pure functions of the [`Model`]; nothing
//! here knows about terminals or output formats.

pub mod actions;
mod carry;
pub mod contracts;
pub mod draft;
pub mod findings;
pub mod fingerprint;
mod group;
pub mod incremental;
pub mod lifecycle;
pub mod near;
mod questions;
pub mod resolution;
pub mod verdict;

pub use actions::{ActionItem, ActionKind};
pub use carry::{Carried, Grown, analyze_followed, reanalyze};
pub use contracts::{
    ActionClass, ClassHint, ContractBasis, ContractError, Contracts, ToolContract, for_each_secret,
};
pub use findings::{Finding, FindingKind};
use findings::{Texts, default_drift_findings, drift_findings, jsonrpc_findings, setup_notes};
pub use fingerprint::{FingerprintKey, JournalFingerprint, KeyError, Scheme};
pub(crate) use group::PARALLEL_GROUP;
use group::judge;
pub use group::{Basis, Cause, Group};
pub use lifecycle::Lifecycle;
pub use resolution::{Decision, Resolution, Settles};
pub use verdict::{Severity, Verdict};

use crate::journal::Capabilities;
use crate::model::{
    EventIdx, ExecIdx, ExecutionRef, FastMap, GroupIdx, JournalId, Model, Pool, SessionIdx,
};
use fingerprint::IntentDigest;
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

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
    /// An event of an execution.
    Event {
        /// The execution.
        execution: ExecIdx,
        /// The event within it.
        event: EventIdx,
    },
    /// A session record.
    Session {
        /// The session.
        index: SessionIdx,
    },
    /// A server's `tools/list` answer that declared a tool's annotations
    /// (docs/design.md §4.5).
    Hint {
        /// Where the answer is.
        source: crate::model::SourceRef,
    },
}

/// The answer to one of the five questions (docs/design.md §5), with evidence.
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

/// The five questions, in the order of docs/design.md §5.1.
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
    /// The five answers, in the order of docs/design.md §5.1.
    pub answers: Vec<Answer>,
}

/// The result of analysing a model.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    /// Groups, worst first, then by first event.
    pub groups: Vec<Group>,
    /// Lifecycle of every execution, aligned with `model.executions`.
    pub lifecycles: Vec<Lifecycle>,
    /// The group of every execution, aligned with `model.executions`.
    pub execution_group: Vec<GroupIdx>,
    /// Fingerprint scheme in use.
    pub scheme: Option<Scheme>,
    /// Notes about the analysis as a whole (e.g. secrets redacted without a key).
    pub notes: Vec<String>,
    /// What [`reanalyze`] needs to follow the model as it grows (kept only
    /// by [`analyze_followed`] and [`reanalyze`], never by a clone).
    pub carried: Carried,
}

impl Analysis {
    /// The lifecycle of an execution.
    ///
    /// # Panics
    /// When `x` is not an execution of the analysed model.
    pub fn lifecycle(&self, x: ExecIdx) -> &Lifecycle {
        &self.lifecycles[x.get()]
    }

    /// The group an execution belongs to, if it is one of the model's.
    pub fn group_of(&self, x: ExecIdx) -> Option<GroupIdx> {
        self.execution_group.get(x.get()).copied()
    }
}

/// What analysis needs to know about each journal.
pub trait JournalCaps: Sync {
    /// Capabilities of journal `id`.
    fn caps(&self, id: JournalId) -> Capabilities;
    /// Display name of journal `id`.
    fn name(&self, id: JournalId) -> &str;

    /// For a format of several layers, the layer of journal `id` whose
    /// records show delivery ([`crate::journal::FormatFacts::delivery_layer`]);
    /// `None`: any record that can.
    fn delivery_layer(&self, _id: JournalId) -> Option<crate::model::Layer> {
        None
    }

    /// What the journals an execution's events come from show together
    /// (one journal, or several layers of one call, docs/design.md §5.12).
    /// A journal shows delivery for the execution only through the layer
    /// that knows it ([`JournalCaps::delivery_layer`]): a server's span
    /// cannot tell whether the answer reached the agent.
    fn caps_of(&self, x: ExecutionRef<'_>) -> Capabilities {
        let of = |j: JournalId| {
            let mut c = self.caps(j);
            if c.delivery
                && let Some(layer) = self.delivery_layer(j)
            {
                c.delivery = x
                    .events()
                    .any(|e| e.source().journal() == j && e.facts().layer == Some(layer));
            }
            c
        };
        let mut journals = x.journals();
        let Some(first) = journals.next() else {
            return self.caps(0);
        };
        let mut caps = of(first);
        let mut seen = vec![first];
        for j in journals {
            if !seen.contains(&j) {
                caps = caps.or(of(j));
                seen.push(j);
            }
        }
        caps
    }
}

/// The key calls are grouped by (docs/design.md §1): the recomputed
/// intent fingerprint, the actor and the intent scope.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct GroupKey {
    /// Recomputed intent fingerprint (`hmac-sha256:…`, `sha256:…`), or
    /// `orphan:<execution id>` for events with no accepted record.
    pub fingerprint: String,
    /// Actor (`unknown` when the journal names none).
    pub actor: String,
    /// Intent scope (`unscoped` when the journal names none).
    pub intent_scope: String,
}

impl GroupKey {
    /// The key of an execution whose journal holds no accepted record: a
    /// group of its own, so that nothing the journal holds is dropped.
    fn orphan(x: ExecutionRef<'_>) -> GroupKey {
        GroupKey {
            fingerprint: format!("orphan:{}", x.id()),
            actor: "unknown".into(),
            intent_scope: "unscoped".into(),
        }
    }

    /// Whether this is an orphan's key (`GroupKey::orphan`).
    pub fn is_orphan(&self) -> bool {
        self.fingerprint.starts_with("orphan:")
    }

    /// The group id: `g` and 10 hex digits of SHA-256 over the key's three
    /// parts, one per line; stable for the same key.
    pub fn id(&self) -> String {
        let mut h = Sha256::new();
        h.update(self.fingerprint.as_bytes());
        h.update(b"\n");
        h.update(self.actor.as_bytes());
        h.update(b"\n");
        h.update(self.intent_scope.as_bytes());
        let h = h.finalize();
        format!("g{}", hex::encode(&h[..5]))
    }
}

/// What one execution asked for, computed in parallel before grouping.
///
/// Its key is borrowed from the model and its fingerprints kept as
/// digests: one is made for every execution before any is grouped, and a
/// journal of ten million events has two million executions.
struct Intent<'a> {
    /// The intent fingerprint.
    fingerprint: IntentDigest,
    /// Actor, as [`GroupKey::actor`].
    actor: &'a str,
    /// Intent scope, as [`GroupKey::intent_scope`].
    intent_scope: &'a str,
    tool: &'a str,
    contract: &'a ToolContract,
    /// The drift key's fingerprint; `None`: the intent fingerprint itself.
    drift: Option<IntentDigest>,
    mismatch: Option<String>,
    unkeyed: bool,
}

impl<'a> Intent<'a> {
    /// The group key, borrowed from the model: what executions are
    /// grouped by.
    fn borrowed_key(&self) -> (IntentDigest, &'a str, &'a str) {
        (self.fingerprint, self.actor, self.intent_scope)
    }

    /// The group key.
    fn key(&self) -> GroupKey {
        GroupKey {
            fingerprint: self.fingerprint.text(),
            actor: self.actor.to_string(),
            intent_scope: self.intent_scope.to_string(),
        }
    }

    /// The drift key: the fingerprint of the record with known equivalents
    /// normalized.
    fn drift_key(&self) -> IntentDigest {
        self.drift.unwrap_or(self.fingerprint)
    }
}

/// A group before it is judged: its key, tool, contract and executions.
pub(crate) struct Draft {
    key: GroupKey,
    tool: Arc<str>,
    target: Option<Arc<str>>,
    contract: Arc<ToolContract>,
    /// The drift key, as a digest: compared, never written.
    drift: Option<IntentDigest>,
    executions: Vec<ExecIdx>,
}

/// One shared copy of each contract that drafts apply, found by the
/// identity of the contract the intents borrow (the configuration's, a
/// server hint's, or the one for tools without any), which outlives it:
/// a journal's hundreds of thousands of groups mostly apply a handful.
#[derive(Default)]
pub(crate) struct SharedContracts(FastMap<usize, Arc<ToolContract>>);

impl SharedContracts {
    /// The shared copy of `c`.
    fn of(&mut self, c: &ToolContract) -> Arc<ToolContract> {
        let copy = self
            .0
            .entry(std::ptr::from_ref(c) as usize)
            .or_insert_with(|| Arc::new(c.clone()));
        Arc::clone(copy)
    }
}

impl Draft {
    /// The group of its own of an execution with no accepted record
    /// ([`GroupKey::orphan`]).
    fn orphan(x: ExecutionRef<'_>, xi: ExecIdx, unconfigured: Arc<ToolContract>) -> Draft {
        Draft {
            key: GroupKey::orphan(x),
            tool: Arc::from("?"),
            target: None,
            contract: unconfigured,
            drift: None,
            executions: vec![xi],
        }
    }

    /// A new group, of the execution `xi` (`x`) and what it asked for.
    fn first(
        intent: &Intent<'_>,
        x: ExecutionRef<'_>,
        xi: ExecIdx,
        pools: (&mut SharedContracts, &mut Pool<str>),
    ) -> Draft {
        Begun::of(intent, x).draft(pools, vec![xi])
    }
}

/// What a group's first execution with an intent gives its draft: made on
/// any thread, before the names and contracts it shares with other groups
/// are shared ([`Begun::draft`]).
struct Begun<'a> {
    key: GroupKey,
    tool: &'a str,
    target: Option<&'a str>,
    contract: &'a ToolContract,
    drift: IntentDigest,
}

impl<'a> Begun<'a> {
    fn of(intent: &Intent<'a>, x: ExecutionRef<'a>) -> Begun<'a> {
        Begun {
            key: intent.key(),
            tool: intent.tool,
            target: x.action().and_then(|a| a.target()),
            contract: intent.contract,
            drift: intent.drift_key(),
        }
    }

    /// The draft, of `executions`, with the one copy of its tool name,
    /// target and contract.
    fn draft(
        self,
        (contracts, names): (&mut SharedContracts, &mut Pool<str>),
        executions: Vec<ExecIdx>,
    ) -> Draft {
        Draft {
            key: self.key,
            tool: names.of(self.tool),
            target: self.target.map(|t| names.of(t)),
            contract: contracts.of(self.contract),
            drift: Some(self.drift),
            executions,
        }
    }
}

/// One idempotency key that this group shares with others (docs/design.md
/// §5: one key carried two intents).
pub(crate) struct KeyConflict {
    key: String,
    /// Ids of the other groups, in group order.
    others: Vec<String>,
    /// The group's executions that carried the key.
    executions: Vec<ExecIdx>,
}

/// The note on secrets redacted without a key.
const UNKEYED_NOTE: &str = "secret fields were redacted without a key (no --key-file): intents that differ only in a secret look alike";

/// Analyses a model: groups executions by intent and judges each group.
pub fn analyze(model: &Model, journals: &dyn JournalCaps, config: &Config) -> Analysis {
    whole(model, journals, config, false).0
}

/// [`analyze`], with what following the model needs of the way
/// ([`carry::Parts`]); without `follow`, the parts' near-duplicate entries
/// are left empty (the rest is small).
fn whole(
    model: &Model,
    journals: &dyn JournalCaps,
    config: &Config,
    follow: bool,
) -> (Analysis, carry::Parts) {
    let mut notes = Vec::new();
    let lifecycles = lifecycles(model, &config.resolutions, &mut notes);
    let unconfigured = ToolContract::unconfigured();
    let hinted = hinted_contracts(model, config);
    let (mut drafts, mismatches, secrets_unkeyed) =
        draft_groups(model, config, (&hinted, &unconfigured));
    if secrets_unkeyed {
        notes.push(UNKEYED_NOTE.into());
    }
    setup_notes(model, config, &mut notes);

    let mut execution_group = vec![GroupIdx::default(); model.execution_count()];
    for (gi, d) in drafts.iter().enumerate() {
        for &x in &d.executions {
            execution_group[x.get()] = GroupIdx::new(gi);
        }
    }
    let conflicts = key_conflicts(model, &lifecycles, &execution_group, &drafts);
    let ctx = questions::Ctx {
        model,
        lifecycles: &lifecycles,
        journals,
    };
    // Judging does not read the drift keys: taken, not copied.
    let drift: Vec<Option<IntentDigest>> = drafts.iter_mut().map(|d| d.drift.take()).collect();
    let mut groups: Vec<Group> = drafts
        .into_par_iter()
        .zip(conflicts)
        .map_init(Texts::default, |texts, (d, c)| judge(&ctx, d, &c, texts))
        .collect();

    // Findings that look across groups; they never change a verdict.
    let kept = mismatches.clone();
    for (xi, detail) in mismatches {
        let g = execution_group[xi.get()].get();
        groups[g].findings.push(Finding {
            kind: FindingKind::FingerprintMismatch,
            detail: format!("{}: {detail}", model.execution(xi).id()).into(),
            evidence: accepted_ref(&lifecycles, xi).into_iter().collect(),
        });
    }
    drift_findings(&drift, &mut groups);
    default_drift_findings(model, config, &mut groups);
    let near = near::near_duplicate_findings(model, config, &mut groups, follow);
    jsonrpc_findings(model, &lifecycles, &execution_group, &mut groups);
    for g in &mut groups {
        g.findings
            .sort_by(|a, b| a.kind.cmp(&b.kind).then(a.detail.cmp(&b.detail)));
        g.findings
            .dedup_by(|a, b| a.kind == b.kind && a.detail == b.detail);
        // A group's findings are kept as long as the analysis: a list grown
        // by pushing holds room for four.
        g.findings.shrink_to_fit();
    }
    let (groups, order) = rank(groups, &mut execution_group);
    let parts = carry::Parts {
        drift,
        mismatches: kept,
        unkeyed: secrets_unkeyed,
        near,
        order,
    };
    let a = Analysis {
        groups,
        lifecycles,
        execution_group,
        scheme: Some(config.key.scheme()),
        notes,
        carried: Carried::default(),
    };
    (a, parts)
}

/// Every execution's lifecycle, with the reviewer decisions applied to the
/// unknown outcomes they resolve (a decision never overrides what the
/// journal shows; docs/design.md §5.8).
fn lifecycles(
    model: &Model,
    resolutions: &[Resolution],
    notes: &mut Vec<String>,
) -> Vec<Lifecycle> {
    let mut lifecycles: Vec<Lifecycle> = model.par_executions().map(Lifecycle::of).collect();
    let mut foreign = Vec::new();
    for r in resolutions {
        match model.execution_index(&r.execution_id) {
            Some(x) => {
                if !lifecycles[x].resolve(r) && r.decision != Decision::Escalated {
                    let shows = match r.decision.settles() {
                        Settles::Delivery => {
                            "records whether its result was delivered (or it did not complete)"
                        }
                        _ => "already shows its outcome",
                    };
                    notes.push(format!(
                        "{} decided {} for {}, but the journal {shows}; the journal stands",
                        r.reviewer, r.decision, r.execution_id
                    ));
                }
            }
            None => foreign.push(r),
        }
    }
    // A case file shared by a folder's journals holds decisions on the
    // others' executions: counted once, never applied (docs/design.md §5.10).
    match foreign.as_slice() {
        [] => {}
        [r] => notes.push(format!(
            "a review decision ({}) names execution {}, which is not in these journals",
            r.source, r.execution_id
        )),
        [r, ..] => notes.push(format!(
            "{} review decisions name executions that are not in these journals (another journal's, sharing the case file?), the first {} ({}); none of them applies here",
            foreign.len(),
            r.execution_id,
            r.source
        )),
    }
    lifecycles
}

/// The contracts servers' hints give the tools no contract covers
/// (docs/design.md §4.5; [`ToolContract::from_hints`]), by tool.
fn hinted_contracts(model: &Model, config: &Config) -> HashMap<String, ToolContract> {
    let mut by_tool: HashMap<&str, Vec<&crate::model::ToolHint>> = HashMap::new();
    for h in &model.tool_hints {
        by_tool.entry(h.tool.as_str()).or_default().push(h);
    }
    by_tool
        .into_iter()
        .filter(|(t, _)| config.contracts.lookup(t).is_none())
        .filter_map(|(t, all)| {
            let c = ToolContract::from_hints(&crate::model::ToolHints { all })?;
            Some((t.to_string(), c))
        })
        .collect()
}

/// What each execution asked for: its group key (fingerprint, actor,
/// scope), contract, drift form and any fingerprint mismatch, computed on
/// every core; `None` for an execution with no accepted record. Of the
/// executions from position `from` on, aligned with them.
fn intents<'a>(
    model: &'a Model,
    config: &'a Config,
    (hinted, unconfigured): (&'a HashMap<String, ToolContract>, &'a ToolContract),
    from: usize,
) -> Vec<Option<Intent<'a>>> {
    intents_of(
        model,
        config,
        (hinted, unconfigured),
        from..model.execution_count(),
    )
}

/// What the executions of `range` asked for ([`intents`]).
fn intents_of<'a>(
    model: &'a Model,
    config: &'a Config,
    (hinted, unconfigured): (&'a HashMap<String, ToolContract>, &'a ToolContract),
    range: std::ops::Range<usize>,
) -> Vec<Option<Intent<'a>>> {
    let n = model.execution_count();
    (range.start.min(n)..range.end.min(n))
        .into_par_iter()
        .map(|i| {
            let x = model.execution(ExecIdx::new(i));
            let (_, accepted) = x.accepted()?;
            let call = accepted.call;
            let action = x.action()?;
            let tool = action.tool().unwrap_or("?");
            let contract = config
                .contracts
                .lookup(tool)
                .or_else(|| hinted.get(tool))
                .unwrap_or(unconfigured);
            let mut unkeyed = false;
            // Most records are their own canonical record, already in RFC
            // 8785 form: hashed as stored, without building a value tree.
            let (text, tree) = match fingerprint::plain_canonical(action, contract) {
                Some(text) => (Cow::Borrowed(text), None),
                None => {
                    let c =
                        fingerprint::canonical_record(action, contract, &config.key, &mut unkeyed);
                    (Cow::Owned(fingerprint::jcs(&c).into_bytes()), Some(c))
                }
            };
            let fp = fingerprint::digest_of_text(&text, &config.key);
            let mismatch = written_fingerprint(x).and_then(|w| {
                let text = std::str::from_utf8(&text).unwrap_or_default();
                match fingerprint::check_written_fingerprint(w, &fp, text, &config.key) {
                    JournalFingerprint::Mismatch {
                        journal,
                        recomputed,
                    } => Some(format!("journal wrote {journal}, recomputed {recomputed}")),
                    _ => None,
                }
            });
            // The drift key: the fingerprint of the record with known
            // equivalents normalized; the fingerprint itself when
            // normalizing changes nothing.
            let normal = match tree {
                Some(c) => fingerprint::drift_form(&c),
                None if fingerprint::may_drift(&text) => {
                    fingerprint::drift_form(&Value::Object(action.to_map()))
                }
                None => None,
            };
            let drift = normal.map(|normal| fingerprint::intent_digest(&normal, &config.key));
            let actor = action
                .actor()
                .or_else(|| {
                    call.session_id
                        .and_then(|s| model.session(s))
                        .and_then(|s| s.actor.as_deref())
                })
                .unwrap_or("unknown");
            Some(Intent {
                fingerprint: fp,
                actor,
                intent_scope: action.intent_scope().unwrap_or("unscoped"),
                tool,
                contract,
                drift,
                mismatch,
                unkeyed,
            })
        })
        .collect()
}

/// Executions gathered by group key, in order of their first execution;
/// also the fingerprint mismatches seen and whether a secret was redacted
/// without a key.
///
/// Only the gathering is done in order, on one thread: each execution's
/// intent and its key's hash are found on every core beforehand
/// ([`intents_of`]), and each new group's key, tool and target are made
/// on every core afterwards; the one thread looks keys up and counts.
#[allow(clippy::type_complexity)]
fn draft_groups<'a>(
    model: &'a Model,
    config: &'a Config,
    contracts_in: (&'a HashMap<String, ToolContract>, &'a ToolContract),
) -> (Vec<Draft>, Vec<(ExecIdx, String)>, bool) {
    use std::hash::BuildHasher;
    // The intents are found a slice of executions at a time and gathered
    // in execution order; their keys borrow from the model, so no slice's
    // intents outlive it.
    const SLICE: usize = 1 << 16;
    let unconfigured = contracts_in.1;
    let hasher = foldhash::fast::RandomState::default();
    // Groups by their key's hash; a group's key and hash are its first
    // execution's (`None` for an execution with no accepted record, which
    // is a group of its own and never looked up).
    let mut table: hashbrown::HashTable<u32> = hashbrown::HashTable::new();
    let mut keys: Vec<(Option<(IntentDigest, &'a str, &'a str)>, u64)> = Vec::new();
    let mut members: Vec<Vec<ExecIdx>> = Vec::new();
    let mut drafts: Vec<Draft> = Vec::new();
    let mut contracts = SharedContracts::default();
    // One copy of each tool name and target: a journal's groups name a
    // few of each.
    let mut names = Pool::default();
    let mut mismatches = Vec::new();
    let mut secrets_unkeyed = false;
    let n = model.execution_count();
    for from in (0..n).step_by(SLICE) {
        let mut intents = intents_of(model, config, contracts_in, from..(from + SLICE).min(n));
        let hashes: Vec<u64> = intents
            .par_iter()
            .map(|i| i.as_ref().map_or(0, |i| hasher.hash_one(i.borrowed_key())))
            .collect();
        // The executions of this slice that begin a group, in order.
        let mut firsts: Vec<usize> = Vec::new();
        for (k, intent) in intents.iter_mut().enumerate() {
            let xi = ExecIdx::new(from + k);
            let Some(intent) = intent else {
                keys.push((None, 0));
                members.push(vec![xi]);
                firsts.push(k);
                continue;
            };
            secrets_unkeyed |= intent.unkeyed;
            if let Some(m) = intent.mismatch.take() {
                mismatches.push((xi, m));
            }
            let key = Some(intent.borrowed_key());
            let entry = table.entry(
                hashes[k],
                |&g| keys[g as usize].0 == key,
                |&g| keys[g as usize].1,
            );
            match entry {
                hashbrown::hash_table::Entry::Occupied(o) => {
                    members[*o.get() as usize].push(xi);
                }
                hashbrown::hash_table::Entry::Vacant(v) => {
                    v.insert(u32::try_from(keys.len()).unwrap_or(u32::MAX));
                    keys.push((key, hashes[k]));
                    members.push(vec![xi]);
                    firsts.push(k);
                }
            }
        }
        // `Err`: an execution with no accepted record, its own group.
        let begun: Vec<Result<Begun<'a>, ExecIdx>> = firsts
            .par_iter()
            .map(|&k| {
                let xi = ExecIdx::new(from + k);
                match &intents[k] {
                    None => Err(xi),
                    Some(i) => Ok(Begun::of(i, model.execution(xi))),
                }
            })
            .collect();
        drafts.extend(begun.into_iter().map(|b| match b {
            Ok(b) => b.draft((&mut contracts, &mut names), Vec::new()),
            Err(xi) => Draft::orphan(model.execution(xi), xi, contracts.of(unconfigured)),
        }));
    }
    for (d, m) in drafts.iter_mut().zip(members) {
        d.executions = m;
    }
    (drafts, mismatches, secrets_unkeyed)
}

/// For every draft, the idempotency keys it shares with other drafts
/// (sorted by key): judging turns each into the `idempotency_key_conflict`
/// verdict and a `key_reused_across_intents` finding.
fn key_conflicts(
    model: &Model,
    lc: &[Lifecycle],
    execution_group: &[GroupIdx],
    drafts: &[Draft],
) -> Vec<Vec<KeyConflict>> {
    let mut keys = shared_keys(lc.len(), |x| {
        let k = lc.get(x)?.idempotency_key(model.execution_at(x)?)?;
        Some((k, *execution_group.get(x)?))
    });
    keys.sort();
    let mut out: Vec<Vec<KeyConflict>> = drafts.iter().map(|_| Vec::new()).collect();
    for (key, gs) in keys {
        for &g in &gs {
            let others = gs
                .iter()
                .filter(|&&o| o != g)
                .map(|&o| drafts[o.get()].key.id())
                .collect();
            let executions = drafts[g.get()]
                .executions
                .iter()
                .copied()
                .filter(|&x| lc[x.get()].idempotency_key(model.execution(x)) == Some(key))
                .collect();
            out[g.get()].push(KeyConflict {
                key: key.to_string(),
                others,
                executions,
            });
        }
    }
    out
}

/// The keys (idempotency keys, JSON-RPC ids) seen in two or more groups,
/// each with those groups, in no particular order, from the (key, group)
/// pair of each of `n` items that has a key (`key_of`, asked again for the
/// few items whose key's hash is another group's too). The items' hashes
/// are sorted instead of a map of every key being built: a journal of two
/// million executions holds two million keys of each kind, nearly all in
/// one group, and a map held 40 to 56 bytes a key (twice that while it
/// grew) where a hashed item is 16 bytes for a moment: the hash, the group
/// and the item's place. Items whose hashes are equal are told apart by
/// their keys.
pub(crate) fn shared_keys<K>(
    n: usize,
    key_of: impl Fn(usize) -> Option<(K, GroupIdx)>,
) -> Vec<(K, BTreeSet<GroupIdx>)>
where
    K: std::hash::Hash + Eq + Copy,
{
    use std::hash::BuildHasher;
    let hasher = foldhash::fast::RandomState::default();
    // Room for every item, most of it never touched when few have a key;
    // filled on one thread, as a parallel collect of an unknown number of
    // items holds them twice.
    let mut hashed: Vec<(u64, GroupIdx, u32)> = Vec::with_capacity(n);
    hashed.extend((0..n).filter_map(|i| {
        let (k, g) = key_of(i)?;
        Some((hasher.hash_one(k), g, u32::try_from(i).ok()?))
    }));
    hashed.par_sort_unstable_by_key(|e| e.0);
    let mut out = Vec::new();
    for run in hashed.chunk_by(|a, b| a.0 == b.0) {
        if run.iter().all(|e| e.1 == run[0].1) {
            continue;
        }
        let mut keys: Vec<(K, BTreeSet<GroupIdx>)> = Vec::new();
        for (k, g) in run.iter().filter_map(|&(_, _, i)| key_of(i as usize)) {
            match keys.iter_mut().find(|(q, _)| *q == k) {
                Some((_, set)) => {
                    set.insert(g);
                }
                None => keys.push((k, BTreeSet::from([g]))),
            }
        }
        out.extend(keys.into_iter().filter(|(_, set)| set.len() > 1));
    }
    out
}

/// Groups worst first, then oldest first, then by id; `execution_group`
/// follows the new order. Also the former position of each group, in the
/// new order.
fn rank(groups: Vec<Group>, execution_group: &mut [GroupIdx]) -> (Vec<Group>, Vec<usize>) {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    order.sort_by(|&a, &b| {
        groups[a]
            .verdict
            .cmp(&groups[b].verdict)
            .then(groups[a].first_at.cmp(&groups[b].first_at))
            .then(groups[a].id.cmp(&groups[b].id))
    });
    let mut rank = vec![GroupIdx::default(); groups.len()];
    for (new, &old) in order.iter().enumerate() {
        rank[old] = GroupIdx::new(new);
    }
    for g in execution_group.iter_mut() {
        *g = rank[g.get()];
    }
    // Put in place by following each cycle of the permutation: no second
    // list of groups is made.
    let mut groups = groups;
    let mut placed = vec![false; groups.len()];
    for start in 0..groups.len() {
        if placed[start] {
            continue;
        }
        // Slot `at` is to hold the group now at `order[at]`.
        let mut at = start;
        placed[at] = true;
        while !placed[order[at]] {
            let from = order[at];
            groups.swap(at, from);
            placed[from] = true;
            at = from;
        }
    }
    (groups, order)
}

/// The fingerprint the first accepted record of `x` wrote, if any.
pub(crate) fn written_fingerprint(x: ExecutionRef<'_>) -> Option<crate::model::WrittenRef<'_>> {
    x.events().find_map(|e| match e.kind() {
        crate::model::KindRef::Accepted(a) => a.fingerprint,
        _ => None,
    })
}

pub(crate) fn accepted_ref(lifecycles: &[Lifecycle], xi: ExecIdx) -> Option<EvidenceRef> {
    lifecycles[xi.get()]
        .accepted
        .map(|event| EvidenceRef::Event {
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
        .and_then(|&x| model.execution(x).action())
    else {
        return Value::Null;
    };
    let mut unkeyed = false;
    fingerprint::canonical_record(action, &g.contract, &config.key, &mut unkeyed)
}

/// Whether a later execution of group `g` than `x` repeats `x` as a
/// `possible_duplicate` pair: the repeat that makes whether `x`'s result
/// was delivered worth a reviewer's question (docs/design.md §5.8). False
/// when `x` is not in `g`.
pub fn repeated_as_possible_duplicate(
    model: &Model,
    analysis: &Analysis,
    journals: &dyn JournalCaps,
    g: &Group,
    x: ExecIdx,
) -> bool {
    let ctx = questions::Ctx {
        model,
        lifecycles: &analysis.lifecycles,
        journals,
    };
    g.executions
        .iter()
        .position(|&e| e == x)
        .is_some_and(|pos| {
            group::repeated_as_possible_duplicate(
                &ctx,
                &g.executions,
                pos,
                g.contract.attach_window,
            )
        })
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
    let mut reason = match &g.cause {
        Cause::Lifecycle(b) => ctx.reason(g.verdict, b.earlier, b.later, b.pair.as_ref()),
        Cause::KeyConflict { key, others } => format!(
            "idempotency key \"{key}\" was used for this intent and for another ({}): the target cannot tell them apart",
            others.join(", ")
        ),
    };
    // A verdict that rests on a server's hint says so (docs/design.md §4.5).
    if let Some(h) = &g.contract.hint {
        reason.push_str(&format!(
            "; {} is {} only by {}'s {} (an untrusted hint; a contract would settle it)",
            g.tool,
            g.contract.class,
            h.server.as_deref().unwrap_or("the server"),
            h.annotation
        ));
    }
    // A lone call whose intent drifted into another group (a default left
    // out, a number written as a string) may have been repeated there: "no
    // retry followed" must not be the last word (docs/design.md §4.3).
    if g.executions.len() == 1
        && let Some(f) = g
            .findings
            .iter()
            .find(|f| f.kind == FindingKind::FingerprintDrift)
    {
        reason.push_str(&format!(
            "; but it may have been repeated under another fingerprint: {}",
            f.detail
        ));
    }
    let a = &g.asked;
    let answers = match &a.pair {
        Some(p) => {
            // The group's calls beyond the pair: other executions, and
            // calls attached to any execution but the pair's own.
            let mut others: Vec<(ExecIdx, Option<EventIdx>)> = g
                .executions
                .iter()
                .filter(|&&x| x != a.earlier && x != a.later)
                .map(|&x| (x, None))
                .collect();
            for &x in &g.executions {
                let attached = analysis.lifecycles[x.get()].attached();
                others.extend(
                    attached
                        .iter()
                        .filter(|&&i| a.call != Some(i) || x != a.earlier)
                        .map(|&i| (x, Some(i))),
                );
            }
            ctx.pair_texts(p, (a.earlier, a.later, a.call), &others)
        }
        None => ctx.single_texts(a.earlier),
    };
    Explanation { reason, answers }
}

#[cfg(test)]
mod tests;
