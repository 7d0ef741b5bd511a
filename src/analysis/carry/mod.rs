//! Analysis that follows what a model gained (the TUI's follow mode,
//! docs/design.md §7.7 "Follow mode"): [`reanalyze`] gives what
//! [`super::analyze`] gives over the grown model, doing work in proportion
//! to the records added and the groups they reach, not to the model.
//!
//! An analysis made to be followed ([`analyze_followed`]) keeps a
//! [`Carried`] state beside its results: the unranked order of its groups
//! (the order [`super::analyze`] drafts them in, which is the order of their
//! first execution, so a new group only ever comes after the ones held),
//! each group's key and drift key, and the indexes the passes that look
//! across groups use (idempotency keys, JSON-RPC ids, near-duplicate
//! classes, default-drift buckets). Given which executions a model gained
//! and which of its held executions gained events ([`Growth`]):
//!
//! 1. lifecycles are computed for the new and the touched executions only,
//!    intents (RFC 8785 canonical form and fingerprint) for the new ones
//!    only: a held execution gained no `accepted` record, so what it asked
//!    for is what it asked for before;
//! 2. the groups judged again are those that gained or hold a touched
//!    execution, the new ones, and every group of an idempotency key whose
//!    groups changed (docs/design.md §5: the key conflict);
//! 3. the findings that look across groups are redone for the groups
//!    judged again and for every group that shares a drift key, a
//!    default-drift bucket, a near-duplicate class (docs/design.md §5.13)
//!    or a JSON-RPC id with a group whose members changed; a group's own
//!    findings are kept apart from those by their kinds;
//! 4. ranking keeps the order of the groups not judged again and merges
//!    the others in.
//!
//! What stays in proportion to the model: the group of every execution is
//! written again (ranks move), and the groups are moved into draft order and
//! back (a copy of each, no work on them). Whenever the result could differ
//! from a whole analysis, [`reanalyze`] runs the whole one: no state kept,
//! reviewer decisions (a decision may name an execution not read yet), new
//! tool hints (hinted contracts change), a session record for a session the
//! model held or that calls already named (actors and processes change), or
//! a model that could not keep its executions in place ([`Growth`] absent).

use super::findings::Seen;
use super::fingerprint::IntentDigest;
use super::near::Digest16;
use super::{Analysis, Config, FindingKind, Group, GroupKey, JournalCaps};
use crate::model::{ExecIdx, FastMap, Growth, Model};
use owners::{Owners, bucket_digest, id_digest, key_digest, own};
use std::collections::HashSet;

mod cross;
mod follow;
mod owners;

/// The state an analysis keeps to be followed by [`reanalyze`]; empty in
/// an analysis made otherwise. A clone of an analysis does not keep it (a
/// copy shown on screen is never followed), so cloning costs no more than
/// before.
#[derive(Default)]
pub struct Carried(pub(super) Option<Box<Carry>>);

impl Clone for Carried {
    fn clone(&self) -> Self {
        Carried(None)
    }
}

impl Carried {
    /// How many analyses were made by following the model
    /// ([`reanalyze`]) since the last whole one; 0 when nothing is kept.
    pub fn follows(&self) -> usize {
        self.0.as_ref().map_or(0, |c| c.follows)
    }
}

impl std::fmt::Debug for Carried {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Carried(kept)"
        } else {
            "Carried(none)"
        })
    }
}

/// What a whole analysis computes on the way that following needs again:
/// each draft's drift key and near-duplicate entries, the fingerprint
/// mismatches, whether a secret was redacted without a key, and the draft
/// at each rank.
pub(super) struct Parts {
    pub(super) drift: Vec<Option<IntentDigest>>,
    pub(super) mismatches: Vec<(ExecIdx, String)>,
    pub(super) unkeyed: bool,
    pub(super) near: Vec<Vec<(Digest16, Digest16)>>,
    pub(super) order: Vec<usize>,
}

/// The state itself (see the module documentation).
pub(super) struct Carry {
    /// The draft of the group at each rank.
    order: Vec<u32>,
    /// The draft of every group key (orphans have none: each is its own).
    by_key: FastMap<GroupKey, u32>,
    /// Each draft's drift key.
    drift: Vec<Option<IntentDigest>>,
    /// Drafts by drift key, in draft order.
    drift_classes: FastMap<IntentDigest, Vec<u32>>,
    /// Drafts by default-drift bucket (tool, actor, scope, target), in
    /// draft order.
    buckets: FastMap<Digest16, Vec<u32>>,
    /// Each draft's near-duplicate entries (class, value).
    near: Vec<Vec<(Digest16, Digest16)>>,
    /// Near-duplicate classes: (draft, value), sorted.
    classes: FastMap<Digest16, Vec<(u32, Digest16)>>,
    /// Drafts by idempotency key (digest).
    keys: FastMap<Digest16, Owners>,
    /// Drafts by (MCP session, JSON-RPC id) (digest).
    ids: FastMap<Digest16, Owners>,
    /// The fingerprint mismatch of each execution that has one.
    mismatches: FastMap<usize, String>,
    /// A secret was redacted without a key.
    unkeyed: bool,
    /// What the setup notes count.
    seen: Seen,
    /// Session ids calls name that the model had no session record of.
    dangling: HashSet<String>,
    /// Tool hints the model held.
    hints: usize,
    /// Analyses made by following, since the last whole one.
    follows: usize,
}

/// What a model gained since it was analysed: where its executions went
/// ([`Growth`], from [`crate::model::ModelBuilder::finish_grown`]) and the
/// ids of the session records it gained, none of which it held before.
#[derive(Debug, Clone, Copy)]
pub struct Grown<'a> {
    /// The executions held, and those of them that gained events.
    pub growth: &'a Growth,
    /// The new sessions' ids.
    pub new_sessions: &'a [String],
}

/// [`super::analyze`], keeping what [`reanalyze`] needs to follow the model
/// as it grows.
pub fn analyze_followed(model: &Model, journals: &dyn JournalCaps, config: &Config) -> Analysis {
    let (mut a, parts) = super::whole(model, journals, config, true);
    let carry = Carry::of(model, config, &a, parts);
    a.carried = Carried(carry.map(Box::new));
    a
}

/// The analysis of `model` (docs/design.md §4–§5): what
/// [`super::analyze`] gives, computed from `prev`, the analysis of the
/// model before it grew as `grown` says, when `prev` was made by
/// [`analyze_followed`] or by this function, and otherwise (or when the
/// result could differ, see the module documentation) by
/// [`analyze_followed`] over the whole model. `None` for `grown`: the model
/// is not known to have kept its executions in place.
pub fn reanalyze(
    mut prev: Analysis,
    model: &Model,
    journals: &dyn JournalCaps,
    config: &Config,
    grown: Option<Grown<'_>>,
) -> Analysis {
    let carry = prev.carried.0.take();
    let usable = |c: &Carry, g: &Grown<'_>| {
        config.resolutions.is_empty()
            && g.growth.held == prev.lifecycles.len()
            && g.growth.held <= model.execution_count()
            && prev.execution_group.len() == prev.lifecycles.len()
            && c.order.len() == prev.groups.len()
            && c.hints == model.tool_hints.len()
            && prev.scheme == Some(config.key.scheme())
            && !g.new_sessions.iter().any(|s| c.dangling.contains(s))
    };
    match (carry, grown) {
        (Some(c), Some(g)) if usable(&c, &g) => {
            match c.follow(prev, model, journals, config, g.growth) {
                Some(a) => a,
                None => analyze_followed(model, journals, config),
            }
        }
        _ => {
            // Freeing a large analysis takes a while; nothing waits for it.
            rayon::spawn(move || drop(prev));
            analyze_followed(model, journals, config)
        }
    }
}

/// Whether a finding is one of those that look across groups.
fn crossing(k: FindingKind) -> bool {
    matches!(
        k,
        FindingKind::FingerprintDrift | FindingKind::NearDuplicate | FindingKind::JsonrpcIdReuse
    )
}

impl Carry {
    fn of(model: &Model, config: &Config, a: &Analysis, parts: Parts) -> Option<Carry> {
        let d = parts.order.len();
        if parts.drift.len() != d || parts.near.len() != d || a.groups.len() != d {
            return None;
        }
        let order: Vec<u32> = parts.order.iter().map(|&o| o as u32).collect();
        // The groups by draft.
        let mut by_draft: Vec<Option<&Group>> = vec![None; d];
        for (r, &o) in parts.order.iter().enumerate() {
            *by_draft.get_mut(o)? = a.groups.get(r);
        }
        let by_draft: Vec<&Group> = by_draft.into_iter().collect::<Option<_>>()?;
        let mut c = Carry {
            order,
            by_key: FastMap::default(),
            drift: parts.drift,
            drift_classes: FastMap::default(),
            buckets: FastMap::default(),
            near: parts.near,
            classes: FastMap::default(),
            keys: FastMap::default(),
            ids: FastMap::default(),
            mismatches: parts
                .mismatches
                .into_iter()
                .map(|(x, m)| (x.get(), m))
                .collect(),
            unkeyed: parts.unkeyed,
            seen: Seen::default(),
            dangling: HashSet::new(),
            hints: model.tool_hints.len(),
            follows: 0,
        };
        for (i, g) in by_draft.iter().enumerate() {
            c.index_draft(i as u32, g);
        }
        let mut keys = FastMap::default();
        let mut ids = FastMap::default();
        for (x, ex) in model.executions().enumerate() {
            let d = c.order[a.execution_group.get(x)?.get()];
            let lc = &a.lifecycles[x];
            if let Some(k) = lc.idempotency_key(ex) {
                own(&mut keys, key_digest(k), d);
            }
            if let Some((Some(mcp), id)) = lc.correlation(ex) {
                own(&mut ids, id_digest(mcp, &id.to_string()), d);
            }
        }
        c.seen.add_range(config, model, 0..model.execution_count());
        c.keys = keys;
        c.ids = ids;
        c.note_sessions(model, model.executions());
        Some(c)
    }

    /// Puts a draft's group key, drift key and bucket in the indexes, and
    /// its near-duplicate entries in their classes; the classes and
    /// buckets that gained it.
    fn index_draft(&mut self, d: u32, g: &Group) -> (Vec<Digest16>, Option<Digest16>) {
        if !g.fingerprint.starts_with("orphan:") {
            self.by_key.insert(
                GroupKey {
                    fingerprint: g.fingerprint.clone(),
                    actor: g.actor.clone(),
                    intent_scope: g.intent_scope.clone(),
                },
                d,
            );
        }
        if let Some(k) = self.drift.get(d as usize).copied().flatten() {
            self.drift_classes.entry(k).or_default().push(d);
        }
        let bucket = bucket_digest(g);
        if let Some(b) = bucket {
            self.buckets.entry(b).or_default().push(d);
        }
        let mut classes = Vec::new();
        for &(class, value) in self.near.get(d as usize).map_or(&[][..], |v| &v[..]) {
            let members = self.classes.entry(class).or_default();
            let at = members.partition_point(|&m| m < (d, value));
            members.insert(at, (d, value));
            classes.push(class);
        }
        (classes, bucket)
    }

    /// Remembers the sessions that calls of `xs` name and the model holds
    /// no record of.
    fn note_sessions<'a>(
        &mut self,
        model: &Model,
        xs: impl Iterator<Item = crate::model::ExecutionRef<'a>>,
    ) {
        for x in xs {
            for e in x.events() {
                let Some(call) = e.kind().call() else {
                    continue;
                };
                if let Some(s) = call.session_id
                    && model.session(s).is_none()
                    && !self.dangling.contains(s)
                {
                    self.dangling.insert(s.to_string());
                }
            }
        }
    }
}

/// The groups by draft (the order [`super::analyze`] drafts them in): the
/// held ones where they are, at their rank, then the new ones. Following
/// a model reads and replaces groups through it, so the held groups are
/// not moved into draft order and back.
pub(super) struct Drafts {
    ranked: Vec<Group>,
    /// The rank of each held draft.
    pos: Vec<u32>,
    fresh: Vec<Group>,
}

impl Drafts {
    fn held(&self) -> usize {
        self.pos.len()
    }
    fn len(&self) -> usize {
        self.held() + self.fresh.len()
    }
    fn get_mut(&mut self, d: usize) -> &mut Group {
        match d.checked_sub(self.held()) {
            None => &mut self.ranked[self.pos[d] as usize],
            Some(f) => &mut self.fresh[f],
        }
    }
}

impl std::ops::Index<usize> for Drafts {
    type Output = Group;
    fn index(&self, d: usize) -> &Group {
        match d.checked_sub(self.held()) {
            None => &self.ranked[self.pos[d] as usize],
            Some(f) => &self.fresh[f],
        }
    }
}

#[cfg(test)]
mod tests;
