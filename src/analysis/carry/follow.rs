//! Following a grown model: [`Carry::follow`] (see the module
//! documentation of [`super`]).

use super::owners::{bucket_digest, disown, id_digest, key_digest, own};
use super::{Carried, Carry, Drafts, crossing};
use crate::analysis::findings::Texts;
use crate::analysis::near::{self, Digest16};
use crate::analysis::{
    Analysis, Config, Draft, Finding, FindingKind, Group, GroupKey, JournalCaps, Lifecycle,
    SharedContracts, ToolContract, accepted_ref, findings, hinted_contracts, intents, judge,
    questions,
};
use crate::model::{ExecIdx, GroupIdx, Growth, Model};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

impl Carry {
    /// The analysis of the grown model from the one before (see the module
    /// documentation); `None` when the state kept does not fit it.
    pub(super) fn follow(
        mut self,
        prev: Analysis,
        model: &Model,
        journals: &dyn JournalCaps,
        config: &Config,
        growth: &Growth,
    ) -> Option<Analysis> {
        let n = growth.held;
        let d0 = self.order.len();
        self.follows += 1;
        let Analysis {
            groups: ranked,
            mut lifecycles,
            execution_group,
            scheme,
            ..
        } = prev;
        let mut draft_of: Vec<u32> = Vec::with_capacity(model.execution_count());
        for r in &execution_group {
            draft_of.push(*self.order.get(r.get())?);
        }
        drop(execution_group);
        let mut pos = vec![0u32; d0];
        for (r, &d) in self.order.iter().enumerate() {
            *pos.get_mut(d as usize)? = r as u32;
        }
        let mut groups = Drafts {
            ranked,
            pos,
            fresh: Vec::new(),
        };

        // 1. Lifecycles of the touched and new executions; intents of the
        // new ones.
        let touched: Vec<usize> = growth.touched.iter().map(|x| x.get()).collect();
        let mut old_keys = Vec::with_capacity(touched.len());
        for &x in &touched {
            let ex = model.execution_at(x)?;
            let l = std::mem::replace(lifecycles.get_mut(x)?, Lifecycle::of(ex));
            // The held events keep their places as the model grows: the old
            // lifecycle's key is read from them.
            old_keys.push((x, l.idempotency_key(ex).map(str::to_string)));
        }
        lifecycles.par_extend(
            (n..model.execution_count())
                .into_par_iter()
                .map(|x| Lifecycle::of(model.execution(ExecIdx::new(x)))),
        );
        let unconfigured = ToolContract::unconfigured();
        let hinted = hinted_contracts(model, config);
        let new_intents = intents(model, config, (&hinted, &unconfigured), n);
        let mut contracts = SharedContracts::default();
        let mut names = crate::model::Pool::default();
        let mut fresh: Vec<Option<Draft>> = Vec::new();
        let mut gained: BTreeMap<usize, Vec<ExecIdx>> = BTreeMap::new();
        for (k, intent) in new_intents.into_iter().enumerate() {
            let xi = ExecIdx::new(n + k);
            let x = model.execution(xi);
            let d = match intent {
                None => {
                    fresh.push(Some(Draft::orphan(x, xi, contracts.of(&unconfigured))));
                    d0 + fresh.len() - 1
                }
                Some(mut intent) => {
                    self.unkeyed |= intent.unkeyed;
                    if let Some(m) = intent.mismatch.take() {
                        self.mismatches.insert(xi.get(), m);
                    }
                    let key = intent.key();
                    match self.by_key.get(&key) {
                        Some(&d) if (d as usize) < d0 => {
                            gained.entry(d as usize).or_default().push(xi);
                            d as usize
                        }
                        Some(&d) => {
                            fresh
                                .get_mut(d as usize - d0)?
                                .as_mut()?
                                .executions
                                .push(xi);
                            d as usize
                        }
                        None => {
                            let d = d0 + fresh.len();
                            self.by_key.insert(key, d as u32);
                            fresh.push(Some(Draft::first(
                                &intent,
                                x,
                                xi,
                                (&mut contracts, &mut names),
                            )));
                            d
                        }
                    }
                }
            };
            draft_of.push(d as u32);
        }
        let total = d0 + fresh.len();

        // 2. The groups judged again, and their key conflicts.
        let mut again: BTreeSet<usize> = touched.iter().map(|&x| draft_of[x] as usize).collect();
        again.extend(gained.keys().copied());
        again.extend(d0..total);
        let mut moved_keys: Vec<Digest16> = Vec::new();
        for (x, old) in old_keys {
            let new = lifecycles[x].idempotency_key(model.execution(ExecIdx::new(x)));
            if old.as_deref() == new {
                continue;
            }
            let d = draft_of[x];
            if let Some(k) = old.as_deref() {
                let k = key_digest(k);
                if disown(&mut self.keys, k, d) {
                    moved_keys.push(k);
                }
            }
            if let Some(k) = new {
                let k = key_digest(k);
                if own(&mut self.keys, k, d) {
                    moved_keys.push(k);
                }
            }
        }
        for x in n..model.execution_count() {
            if let Some(k) = lifecycles[x].idempotency_key(model.execution(ExecIdx::new(x))) {
                let k = key_digest(k);
                if own(&mut self.keys, k, draft_of[x]) {
                    moved_keys.push(k);
                }
            }
        }
        for k in &moved_keys {
            if let Some(o) = self.keys.get(k) {
                again.extend(o.drafts().map(|d| d as usize));
            }
        }
        for d in fresh.iter().flatten() {
            self.drift.push(d.drift);
        }
        let fresh_ids: Vec<String> = fresh.iter().flatten().map(|d| d.key.id()).collect();
        if fresh_ids.len() != total - d0 {
            return None;
        }
        let id_of = |d: u32| -> String {
            let d = d as usize;
            if d < d0 {
                groups[d].id.clone()
            } else {
                fresh_ids[d - d0].clone()
            }
        };
        let mut drafts = Vec::with_capacity(again.len());
        for &d in &again {
            let draft = if d < d0 {
                let g = &groups[d];
                let mut executions = g.executions.clone();
                executions.extend(gained.get(&d).into_iter().flatten());
                Draft {
                    key: GroupKey {
                        fingerprint: g.fingerprint.clone(),
                        actor: g.actor.clone(),
                        intent_scope: g.intent_scope.clone(),
                    },
                    tool: g.tool.clone(),
                    target: g.target.clone(),
                    contract: g.contract.clone(),
                    drift: self.drift[d],
                    executions,
                }
            } else {
                fresh.get_mut(d - d0)?.take()?
            };
            let conflicts = self.conflicts(model, d as u32, &draft.executions, &lifecycles, &id_of);
            drafts.push((d, draft, conflicts));
        }
        let ctx = questions::Ctx {
            model,
            lifecycles: &lifecycles,
            journals,
        };
        let judged: Vec<(usize, Group)> = drafts
            .into_par_iter()
            .map_init(Texts::default, |texts, (d, draft, c)| {
                (d, judge(&ctx, draft, &c, texts))
            })
            .collect();
        for (d, mut g) in judged {
            if !self.mismatches.is_empty() {
                for &x in &g.executions {
                    if let Some(m) = self.mismatches.get(&x.get()) {
                        g.findings.push(Finding {
                            kind: FindingKind::FingerprintMismatch,
                            detail: format!("{}: {m}", model.execution(x).id()).into(),
                            evidence: accepted_ref(&lifecycles, x).into_iter().collect(),
                        });
                    }
                }
            }
            if d < d0 {
                *groups.get_mut(d) = g;
            } else if d == groups.len() {
                groups.fresh.push(g);
            } else {
                return None;
            }
        }

        // 3. The findings that look across groups, for the groups they can
        // have changed on.
        let mut cross: BTreeSet<usize> = again.clone();
        // Classes reached, with the entries they gained.
        let mut near_classes: BTreeMap<Digest16, usize> = BTreeMap::new();
        let mut bucket_gain: BTreeMap<Digest16, usize> = BTreeMap::new();
        for d in d0..total {
            if d >= groups.len() {
                return None;
            }
            self.near.push(near::entries_of(model, config, &groups[d]));
            let (classes, bucket) = self.index_draft(d as u32, &groups[d]);
            for c in classes {
                *near_classes.entry(c).or_default() += 1;
            }
            if let Some(b) = bucket {
                *bucket_gain.entry(b).or_default() += 1;
            }
            if let Some(k) = &self.drift[d]
                && let Some(m) = self.drift_classes.get(k)
                && m.len() > 1
            {
                cross.extend(m.iter().map(|&d| d as usize));
            }
        }
        for (b, added) in bucket_gain {
            if let Some(m) = self.buckets.get(&b)
                && m.len() > 1
                && m.len() - added <= findings::MAX_BUCKET
            {
                cross.extend(m.iter().map(|&d| d as usize));
            }
        }
        for &d in &again {
            for e in &self.near[d] {
                near_classes.entry(e.0).or_default();
            }
        }
        // A class links its groups while it holds two to MAX_CLASS entries
        // (docs/design.md §5.13): its groups' links can have changed if it
        // does now or did before it gained entries.
        let links = |len: usize| (2..=near::MAX_CLASS).contains(&len);
        for (c, gained) in &near_classes {
            if let Some(m) = self.classes.get(c)
                && (links(m.len()) || (*gained > 0 && links(m.len() - gained)))
            {
                cross.extend(m.iter().map(|&(d, _)| d as usize));
            }
        }
        let mut moved_ids: Vec<Digest16> = Vec::new();
        for x in n..model.execution_count() {
            if let Some((Some(mcp), id)) =
                lifecycles[x].correlation(model.execution(ExecIdx::new(x)))
            {
                let k = id_digest(mcp, &id.to_string());
                if own(&mut self.ids, k, draft_of[x]) {
                    moved_ids.push(k);
                }
            }
        }
        for k in &moved_ids {
            if let Some(o) = self.ids.get(k).filter(|o| o.len() > 1) {
                cross.extend(o.drafts().map(|d| d as usize));
            }
        }
        let cross: Vec<usize> = cross.into_iter().collect();
        let found: Vec<(Vec<Finding>, Vec<near::NearDuplicate>)> = cross
            .par_iter()
            .map(|&d| self.crossing_findings(model, config, &lifecycles, &groups, d))
            .collect();
        let mut buckets: BTreeMap<Digest16, Vec<usize>> = BTreeMap::new();
        for &d in &cross {
            if let Some(b) = bucket_digest(&groups[d]) {
                buckets.entry(b).or_default().push(d);
            }
        }
        let mut drifted: Vec<(usize, String)> = Vec::new();
        for (b, wanted) in buckets {
            let Some(members) = self
                .buckets
                .get(&b)
                .filter(|m| (2..=findings::MAX_BUCKET).contains(&m.len()))
            else {
                continue;
            };
            let members: Vec<usize> = members.iter().map(|&d| d as usize).collect();
            let mut found = Vec::new();
            findings::bucket_drift(model, config, &groups, &members, &mut found);
            drifted.extend(
                found
                    .into_iter()
                    .filter(|(g, _)| wanted.binary_search(g).is_ok()),
            );
        }
        for (&d, (f, links)) in cross.iter().zip(found) {
            let g = groups.get_mut(d);
            if !again.contains(&d) {
                g.findings.retain(|f| !crossing(f.kind));
            }
            g.findings.extend(f);
            g.near_duplicates = links;
        }
        for (d, detail) in drifted {
            groups.get_mut(d).findings.push(Finding {
                kind: FindingKind::FingerprintDrift,
                detail: detail.into(),
                evidence: vec![],
            });
        }
        for &d in &cross {
            let g = groups.get_mut(d);
            g.findings
                .sort_by(|a, b| a.kind.cmp(&b.kind).then(a.detail.cmp(&b.detail)));
            g.findings
                .dedup_by(|a, b| a.kind == b.kind && a.detail == b.detail);
            g.near_duplicates
                .sort_by(|x, y| x.group_id.cmp(&y.group_id).then(x.field.cmp(&y.field)));
            g.near_duplicates.dedup();
        }
        self.seen
            .add_range(config, model, n..model.execution_count());
        self.note_sessions(
            model,
            touched
                .iter()
                .filter_map(|&x| model.execution_at(x))
                .chain(model.executions().skip(n)),
        );

        // 4. Ranking: the groups not judged again keep their order.
        let rank = |d: usize| {
            let g = &groups[d];
            (g.verdict, g.first_at, &g.id)
        };
        let mut moved: Vec<usize> = again.iter().copied().collect();
        moved.sort_by(|&a, &b| rank(a).cmp(&rank(b)));
        let mut order: Vec<u32> = Vec::with_capacity(total);
        let mut moved = moved.into_iter().peekable();
        for &d in &self.order {
            if again.contains(&(d as usize)) {
                continue;
            }
            while let Some(&m) = moved.peek()
                && rank(m) < rank(d as usize)
            {
                order.push(m as u32);
                moved.next();
            }
            order.push(d);
        }
        order.extend(moved.map(|m| m as u32));
        let mut rank_of = vec![0u32; total];
        for (r, &d) in order.iter().enumerate() {
            rank_of[d as usize] = r as u32;
        }
        // Most groups keep their order: taking them in the new order reads
        // the held ones front to back.
        let Drafts {
            ranked: held,
            pos,
            fresh: new,
        } = groups;
        let mut held: Vec<Option<Group>> = held.into_iter().map(Some).collect();
        let mut new: Vec<Option<Group>> = new.into_iter().map(Some).collect();
        let ranked: Vec<Group> = order
            .iter()
            .map(|&d| match (d as usize).checked_sub(d0) {
                None => held.get_mut(pos[d as usize] as usize)?.take(),
                Some(f) => new.get_mut(f)?.take(),
            })
            .collect::<Option<_>>()?;
        let execution_group: Vec<GroupIdx> = draft_of
            .iter()
            .map(|&d| GroupIdx::new(rank_of[d as usize] as usize))
            .collect();
        self.order = order;
        let mut notes = Vec::new();
        if self.unkeyed {
            notes.push(crate::analysis::UNKEYED_NOTE.into());
        }
        self.seen.notes(model, config, &mut notes);
        Some(Analysis {
            groups: ranked,
            lifecycles,
            execution_group,
            scheme,
            notes,
            carried: Carried(Some(Box::new(self))),
        })
    }
}
