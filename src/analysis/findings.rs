//! Findings on a group beyond its verdict (docs/design.md §5: late responses,
//! cancels after completion, JSON-RPC id reuse, keys per attempt,
//! fingerprint mismatch and drift, tools without contracts), and the ones
//! that look across groups.

use super::{
    Config, EvidenceRef, Group, Lifecycle, Scheme, canonical_action, fingerprint, shared_keys,
    written_fingerprint,
};
use crate::model::GroupIdx;
use crate::model::{ActionRecord, Arguments, Model};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// Extra findings on a group (docs/design.md §5.9).
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
    /// Another group of the same tool, actor and scope differs from this
    /// one in exactly one argument field (docs/design.md §5.13).
    NearDuplicate,
    /// The tool has no replay contract.
    NoReplayContract,
    /// The journal does not record the full tool arguments, so distinct
    /// intents may look alike.
    ArgumentsNotLogged,
    /// Two outcome events of one execution disagree on whether the target
    /// acted (a response, then a status query that says otherwise).
    OutcomeContradiction,
    /// The journal holds events of the execution but no accepted record:
    /// its tool, arguments and caller are unknown, so it cannot be compared
    /// with the calls it may repeat (a bad line may have held it).
    NoAcceptedRecord,
}

impl FindingKind {
    /// Every kind, in the order findings are listed.
    pub const ALL: &'static [FindingKind] = <FindingKind as strum::VariantArray>::VARIANTS;

    /// The snake_case name used in `flags`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// One finding with its explanation and evidence.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// What kind.
    pub kind: FindingKind,
    /// What was seen, in words. Shared by the findings that say the same
    /// (`Texts`): most of a journal's groups say one of a few things.
    pub detail: std::sync::Arc<str>,
    /// Supporting journal lines.
    pub evidence: Vec<EvidenceRef>,
}

/// One shared copy of each finding text made through it: judging a
/// journal's groups writes "no replay contract for deploy_release: …" or
/// "a new idempotency key on each of 3 attempts …" for most of them, and a
/// hundred thousand copies of a few texts were a quarter of the analysis's
/// memory (docs/design.md §9.8). The text is written into a reused buffer;
/// only a text not seen before is copied out. Kept for one judging pass
/// (on every core, one per piece of work), then dropped.
#[derive(Default)]
pub(crate) struct Texts {
    buf: String,
    pool: crate::model::Pool<str>,
}

impl Texts {
    /// The shared text that `args` writes.
    pub(crate) fn of(&mut self, args: std::fmt::Arguments<'_>) -> std::sync::Arc<str> {
        use std::fmt::Write;
        self.buf.clear();
        // Writing into a String cannot fail.
        let _ = self.buf.write_fmt(args);
        self.pool.of(&self.buf)
    }
}

/// The `fingerprint_drift` finding of a group whose drift key (its record
/// with known equivalents normalized) is that of the groups `others`.
pub(super) fn drift_finding(others: &[&str]) -> Finding {
    Finding {
        kind: FindingKind::FingerprintDrift,
        detail: format!(
            "same intent as {} once numeric strings and numbers are normalized; the fingerprints differ",
            others.join(", ")
        )
        .into(),
        evidence: vec![],
    }
}

/// The `jsonrpc_id_reuse` finding of a group that shares JSON-RPC id `id`
/// on MCP session `mcp` with the groups `others` (docs/design.md §10.1).
pub(super) fn jsonrpc_finding(mcp: &str, id: &str, others: &[&str]) -> Finding {
    Finding {
        kind: FindingKind::JsonrpcIdReuse,
        detail: format!(
            "JSON-RPC id {id} on MCP session {mcp} also carried a different intent ({})",
            others.join(", ")
        )
        .into(),
        evidence: vec![],
    }
}

pub(super) fn drift_findings(
    drift: &[Option<super::fingerprint::IntentDigest>],
    groups: &mut [Group],
) {
    // The first group of each drift key, and the others (most keys have
    // none: no list is made for them).
    let mut by_drift: crate::model::FastMap<_, (usize, Vec<usize>)> =
        crate::model::FastMap::default();
    for (i, d) in drift.iter().enumerate() {
        if let Some(k) = d {
            by_drift
                .entry(*k)
                .and_modify(|(_, more)| more.push(i))
                .or_insert((i, Vec::new()));
        }
    }
    let many = by_drift.into_values().filter(|(_, more)| !more.is_empty());
    for members in many.map(|(first, more)| [vec![first], more].concat()) {
        let members = members.as_slice();
        for &i in members {
            let others: Vec<&str> = members
                .iter()
                .filter(|&&j| j != i)
                .map(|&j| groups[j].id.as_str())
                .collect();
            let f = drift_finding(&others);
            groups[i].findings.push(f);
        }
    }
}

/// Notes on how the inputs shape the result, for people who did not pass
/// contracts or a key: without them the same journal groups differently.
pub(super) fn setup_notes(model: &Model, config: &Config, notes: &mut Vec<String>) {
    let mut seen = Seen::default();
    seen.add_range(config, model, 0..model.execution_count());
    seen.notes(model, config, notes);
}

/// What the setup notes count over executions: those that carry an
/// `hmac-sha256:` fingerprint when no key was given, and, for each tool
/// whose contract lists fingerprint fields, the argument names its calls
/// carry (present once a call of the tool was seen).
#[derive(Debug, Clone, Default)]
pub(super) struct Seen {
    hmac: usize,
    tools: HashMap<String, BTreeSet<String>>,
}

impl Seen {
    /// Counts the executions of `model` at the positions `range`, on
    /// every core (what is counted does not depend on the order).
    pub(super) fn add_range(
        &mut self,
        config: &Config,
        model: &Model,
        range: std::ops::Range<usize>,
    ) {
        let sha = config.key.scheme() == Scheme::Sha256;
        let fields = config
            .contracts
            .iter()
            .any(|(_, c)| c.fingerprint_fields.is_some());
        if !sha && !fields {
            return;
        }
        let counted = range
            .into_par_iter()
            .with_min_len(4096)
            .fold(Seen::default, |mut seen, i| {
                seen.add(
                    config,
                    model.execution(crate::model::ExecIdx::new(i)),
                    sha,
                    fields,
                );
                seen
            })
            .reduce(Seen::default, |mut a, b| {
                a.merge(b);
                a
            });
        self.merge(counted);
    }

    /// Adds what `other` counted.
    fn merge(&mut self, other: Seen) {
        self.hmac += other.hmac;
        for (tool, names) in other.tools {
            self.tools.entry(tool).or_default().extend(names);
        }
    }

    fn add(&mut self, config: &Config, x: crate::model::ExecutionRef<'_>, sha: bool, fields: bool) {
        if sha && written_fingerprint(x).is_some_and(|w| w.is_hmac()) {
            self.hmac += 1;
        }
        if !fields {
            return;
        }
        let Some((a, tool)) = x.action().and_then(|a| Some((a, a.tool()?))) else {
            return;
        };
        if config
            .contracts
            .lookup(tool)
            .is_none_or(|c| c.fingerprint_fields.is_none())
        {
            return;
        }
        let seen = self.tools.entry(tool.to_string()).or_default();
        if let Some(args) = a.arguments() {
            seen.extend(args.into_iter().map(|(k, _)| k));
        }
    }

    /// The notes on how the inputs shape the result (see [`setup_notes`]).
    pub(super) fn notes(&self, model: &Model, config: &Config, notes: &mut Vec<String>) {
        if config.contracts.is_empty() && model.execution_count() > 0 {
            notes.push(
                "no tool contracts (--contracts): every tool is treated as irreversible with a 15m attach window (read_only where its server declares readOnlyHint: an untrusted hint), and argument defaults are not filled in, so a retry that leaves one out lands in another group"
                    .into(),
            );
        }
        let hmac = self.hmac;
        if config.key.scheme() == Scheme::Sha256 && hmac > 0 {
            notes.push(format!(
                "{hmac} execution(s) carry hmac-sha256 fingerprints but no --key-file was given: retrace fingerprints with plain sha256 and cannot check the journal's own"
            ));
        }
        // A contract's fingerprint field that no call of its tool carries is
        // most likely a typo: the fingerprint then ignores the real field.
        for (tool, contract) in config.contracts.iter() {
            let Some(fields) = &contract.fingerprint_fields else {
                continue;
            };
            // Only a tool some call used is checked.
            let Some(seen) = self.tools.get(tool) else {
                continue;
            };
            let missing: Vec<&str> = fields
                .iter()
                .map(String::as_str)
                .filter(|f| !seen.contains(*f) && !contract.defaults.contains_key(*f))
                .collect();
            if !missing.is_empty() {
                notes.push(format!(
                    "the contract for {tool} lists fingerprint field(s) {} that no call of {tool} carries: a typo leaves the real field out of the fingerprint",
                    missing.join(", ")
                ));
            }
        }
    }
}

/// Groups that would be one intent if the arguments one of them leaves out
/// took the other's values as defaults (docs/design.md §4: "records become equal
/// once defaults are materialized"). Without a contract naming the default,
/// this is the trace a missing default leaves: the same call with one
/// argument fewer.
pub(super) fn default_drift_findings(model: &Model, config: &Config, groups: &mut [Group]) {
    // Cheap buckets first; only groups that share tool, actor, scope and
    // target can be the same intent.
    let mut buckets: crate::model::FastMap<(&str, &str, &str, Option<&str>), Vec<usize>> =
        crate::model::FastMap::default();
    for (i, g) in groups.iter().enumerate() {
        if &*g.tool != "?" {
            buckets
                .entry((&g.tool, &g.actor, &g.intent_scope, g.target.as_deref()))
                .or_default()
                .push(i);
        }
    }
    // Buckets are independent: judged on every core, their findings
    // gathered after (the order they are added in does not matter: a
    // group's findings are sorted once all are in).
    let buckets: Vec<&Vec<usize>> = buckets
        .values()
        .filter(|m| m.len() > 1 && m.len() <= MAX_BUCKET)
        .collect();
    let shared: &[Group] = groups;
    let found: Vec<(usize, String)> = buckets
        .into_par_iter()
        .flat_map_iter(|members| {
            let mut found = Vec::new();
            bucket_drift(model, config, shared, members, &mut found);
            found
        })
        .collect();
    for (g, detail) in found {
        groups[g].findings.push(Finding {
            kind: FindingKind::FingerprintDrift,
            detail: detail.into(),
            evidence: vec![],
        });
    }
}

/// The most groups a default-drift bucket (one tool, actor, scope and
/// target) may hold and still be compared.
pub(super) const MAX_BUCKET: usize = 4096;

/// The default-drift findings among the groups `members` of one bucket
/// (positions in `groups`, in order), as (group, detail), added to `found`.
pub(super) fn bucket_drift<G: std::ops::Index<usize, Output = Group> + ?Sized>(
    model: &Model,
    config: &Config,
    groups: &G,
    members: &[usize],
    found: &mut Vec<(usize, String)>,
) {
    // How many arguments the calls of a group carry, as written: one call
    // leaving out an argument another carries needs two different counts.
    let counts: Vec<usize> = members
        .iter()
        .map(|&i| argument_count_of(model, &groups[i]))
        .collect();
    match counts.first() {
        Some(&first) if counts.iter().any(|&c| c != first) => {}
        _ => return,
    }
    let unrecorded = unrecorded_drift(model, groups, (members, &counts), found);
    // For each group: the canonical record without its arguments, and
    // its arguments; then every "arguments minus one" form.
    let mut full: HashMap<String, usize> = HashMap::new();
    let mut reduced: Vec<(String, usize, String, Value)> = Vec::new();
    for (&i, blind) in members.iter().zip(unrecorded) {
        // A call whose arguments were not recorded leaves none of them
        // out: it is met by `unrecorded_drift` instead.
        if blind {
            continue;
        }
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

/// Groups of a bucket whose calls' arguments were not recorded (a journal
/// that logs the arguments of some calls only: ContextForge's
/// `LOG_DETAILED_SAMPLE_RATE` below 1, a capture switched off in one
/// process) met with the groups of the same bucket whose arguments were,
/// when their calls ran within the attach window of each other: the
/// unrecorded call fingerprints as a call with no arguments, so a retry of
/// a recorded call, unrecorded, lands in a group of its own
/// (docs/design.md §4.3). Added to `found` as (group, detail), both ways.
/// `counts` are the members' argument counts; returns, member by member,
/// whether its arguments were not recorded.
fn unrecorded_drift<G: std::ops::Index<usize, Output = Group> + ?Sized>(
    model: &Model,
    groups: &G,
    (members, counts): (&[usize], &[usize]),
    found: &mut Vec<(usize, String)>,
) -> Vec<bool> {
    let mut blind: Vec<(usize, String)> = Vec::new();
    let mut sighted: Vec<usize> = Vec::new();
    let mut unrecorded = vec![false; members.len()];
    for (k, (&i, &n)) in members.iter().zip(counts).enumerate() {
        let first = groups[i].executions.first();
        match first.and_then(|&x| model.execution(x).arguments_recorded()) {
            Some(Arguments::No(why)) if n == 0 => {
                unrecorded[k] = true;
                blind.push((i, why.clone()));
            }
            Some(Arguments::No(_)) => {}
            _ if n > 0 => sighted.push(i),
            _ => {}
        }
    }
    if blind.is_empty() || sighted.is_empty() {
        return unrecorded;
    }
    // Within the attach window: a call of one group started no further
    // than the window from a call of the other (not the groups' whole
    // spans: the unrecorded calls of a tool are one group, whose span may
    // cover a day).
    let blind_starts: Vec<_> = blind
        .iter()
        .map(|(b, _)| super::near::start_times(model, &groups[*b]))
        .collect();
    let sighted_starts: HashMap<usize, Vec<_>> = sighted
        .iter()
        .map(|&s| (s, super::near::start_times(model, &groups[s])))
        .collect();
    let near = |bi: usize, b: usize, s: usize| {
        let w = groups[b]
            .contract
            .attach_window
            .max(groups[s].contract.attach_window);
        super::near::within(&blind_starts[bi], &sighted_starts[&s], w)
    };
    for (bi, (b, why)) in blind.iter().enumerate() {
        let matched: Vec<usize> = sighted
            .iter()
            .copied()
            .filter(|&s| near(bi, *b, s))
            .collect();
        if matched.is_empty() {
            continue;
        }
        let ids: Vec<&str> = matched.iter().map(|&s| groups[s].id.as_str()).collect();
        found.push((
            *b,
            format!(
                "may be the same intent as {}: its calls' arguments were not recorded ({why}), so they fingerprint as a call without arguments, and calls of the same tool by the same actor ran within the attach window there",
                ids.join(", ")
            ),
        ));
        for s in matched {
            found.push((
                s,
                format!(
                    "calls of the same tool by the same actor whose arguments were not recorded ({}) ran within the attach window: they may repeat this intent",
                    groups[*b].id
                ),
            ));
        }
    }
    unrecorded
}

/// How many arguments the first call of `g` carries, as written.
fn argument_count_of(model: &Model, g: &Group) -> usize {
    g.executions
        .first()
        .and_then(|&x| model.execution(x).action())
        .map_or(0, argument_count)
}

/// [`ActionRecord::argument_count`], read from the record's RFC 8785 text
/// when it is kept as such ([`crate::canonical::members`]): no argument
/// value is parsed.
fn argument_count(action: &ActionRecord) -> usize {
    let counted = action.canonical_bytes().and_then(|text| {
        let top = crate::canonical::members(text)?;
        let Some(args) = top
            .iter()
            .find(|m| &text[m.name.0..m.name.1] == b"arguments")
        else {
            // No arguments at all.
            return Some(0);
        };
        let value = &text[args.value.0..args.value.1];
        if value.first() != Some(&b'{') {
            // Not an object: no arguments.
            return Some(0);
        }
        crate::canonical::members(value).map(|m| m.len())
    });
    counted.unwrap_or_else(|| action.argument_count())
}

/// One (MCP session, JSON-RPC id) used for two intents (docs/design.md §10.1: ids
/// identify messages, not actions).
pub(super) fn jsonrpc_findings(
    model: &Model,
    lc: &[Lifecycle],
    execution_group: &[GroupIdx],
    groups: &mut [Group],
) {
    // By the id itself: its text (a number, a quoted string) names no two
    // ids alike, so the same ids meet as when keyed by text.
    let key_of = |x: usize| match lc.get(x)?.correlation(model.execution_at(x)?) {
        Some((Some(mcp), id)) => Some(((mcp, id), *execution_group.get(x)?)),
        _ => None,
    };
    let mut ids: Vec<((String, String), BTreeSet<GroupIdx>)> = shared_keys(lc.len(), key_of)
        .into_iter()
        .map(|((mcp, id), gs)| ((mcp.to_string(), id.to_string()), gs))
        .collect();
    ids.sort();
    for ((mcp, id), gs) in ids {
        for &g in &gs {
            let others: Vec<&str> = gs
                .iter()
                .filter(|&&o| o != g)
                .map(|&o| groups[o.get()].id.as_str())
                .collect();
            let f = jsonrpc_finding(&mcp, &id, &others);
            groups[g.get()].findings.push(f);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A text written again is the first one's copy, not a new one; a
    /// different text is its own, and neither changes what is written.
    #[test]
    fn texts_share_what_they_say_twice() {
        let mut texts = Texts::default();
        let a = texts.of(format_args!("no replay contract for {}", "deploy"));
        let b = texts.of(format_args!("no replay contract for {}", "deploy"));
        let c = texts.of(format_args!("no replay contract for {}", "rotate"));
        assert_eq!(&*a, "no replay contract for deploy");
        assert!(std::sync::Arc::ptr_eq(&a, &b));
        assert_eq!(&*c, "no replay contract for rotate");
        assert!(!std::sync::Arc::ptr_eq(&a, &c));
        // The buffer is reused: a shorter text after a longer one is whole.
        assert_eq!(&*texts.of(format_args!("x{}", 1)), "x1");
    }

    /// Counted from the text, the arguments are as many as the record
    /// parsed holds, whatever they are (none, not an object, nested).
    #[test]
    fn argument_count_from_text_is_the_records() {
        let records = [
            serde_json::json!({"tool": "t"}),
            serde_json::json!({"arguments": "x", "tool": "t"}),
            serde_json::json!({"arguments": {}, "tool": "t"}),
            serde_json::json!({"arguments": {"a": {"b": [1, "}"]}, "c": "\\\"", "d": null}}),
            serde_json::json!({"arguments": {"f": 1.5, "g": 2}, "actor": "a"}),
        ];
        for r in records {
            let Value::Object(m) = r else { continue };
            let a = ActionRecord::from_map(m);
            assert_eq!(argument_count(&a), a.argument_count(), "{a:?}");
        }
        let a = ActionRecord::from_map(
            serde_json::json!({"arguments": {"x": 1, "y": 2}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
        );
        assert_eq!(argument_count(&a), 2);
    }

    /// The names are a contract (`flags` in `groups --json`,
    /// docs/design.md §5.9): every kind, in the order findings are listed.
    #[test]
    fn finding_names_are_a_contract() {
        let names: Vec<&str> = FindingKind::ALL.iter().map(|k| k.as_str()).collect();
        assert_eq!(
            names,
            [
                "cancel_after_completion",
                "late_response",
                "jsonrpc_id_reuse",
                "key_per_attempt",
                "key_reused_across_intents",
                "fingerprint_mismatch",
                "fingerprint_drift",
                "near_duplicate",
                "no_replay_contract",
                "arguments_not_logged",
                "outcome_contradiction",
                "no_accepted_record",
            ]
        );
        for k in FindingKind::ALL {
            assert_eq!(k.as_str().parse::<FindingKind>().ok(), Some(*k));
            assert_eq!(
                serde_json::to_value(k).ok(),
                Some(serde_json::Value::from(k.as_str()))
            );
        }
    }
}
