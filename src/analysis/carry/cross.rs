//! The key conflicts and the findings that look across groups, for one
//! group at a time, as the whole analysis finds them.

use super::owners::{id_digest, key_digest};
use super::{Carry, Drafts};
use crate::analysis::{Config, Finding, KeyConflict, Lifecycle, findings, near};
use crate::model::{ExecIdx, Model};
use std::collections::{BTreeMap, BTreeSet};

impl Carry {
    /// The key conflicts of draft `d` with executions `xs` (docs/design.md
    /// §5), as the whole analysis finds them: by key, the other groups in
    /// draft order.
    pub(super) fn conflicts(
        &self,
        model: &Model,
        d: u32,
        xs: &[ExecIdx],
        lc: &[Lifecycle],
        id_of: &dyn Fn(u32) -> String,
    ) -> Vec<KeyConflict> {
        let mut keys: BTreeMap<&str, Vec<ExecIdx>> = BTreeMap::new();
        for &x in xs {
            if let Some(k) = lc[x.get()].idempotency_key(model.execution(x)) {
                keys.entry(k).or_default().push(x);
            }
        }
        keys.into_iter()
            .filter_map(|(key, executions)| {
                let o = self.keys.get(&key_digest(key)).filter(|o| o.len() > 1)?;
                Some(KeyConflict {
                    key: key.to_string(),
                    others: o.drafts().filter(|&g| g != d).map(id_of).collect(),
                    executions,
                })
            })
            .collect()
    }

    /// The drift, near-duplicate and JSON-RPC findings of draft `d` (the
    /// default-drift ones are found by bucket), with its near-duplicate
    /// links.
    pub(super) fn crossing_findings(
        &self,
        model: &Model,
        config: &Config,
        lc: &[Lifecycle],
        groups: &Drafts,
        d: usize,
    ) -> (Vec<Finding>, Vec<near::NearDuplicate>) {
        let mut out = Vec::new();
        if let Some(k) = &self.drift[d]
            && let Some(m) = self.drift_classes.get(k)
            && m.len() > 1
        {
            let others: Vec<&str> = m
                .iter()
                .filter(|&&o| o as usize != d)
                .map(|&o| groups[o as usize].id.as_str())
                .collect();
            out.push(findings::drift_finding(&others));
        }
        let mut links = Vec::new();
        for (other, field) in near::links_of(model, config, groups, &self.classes, &self.near[d], d)
        {
            let (link, f) = near::link_finding(&groups[other], &field);
            links.push(link);
            out.push(f);
        }
        let mut ids: BTreeSet<(&str, String)> = BTreeSet::new();
        for &x in &groups[d].executions {
            if let Some((Some(mcp), id)) = lc[x.get()].correlation(model.execution(x)) {
                ids.insert((mcp, id.to_string()));
            }
        }
        for (mcp, id) in ids {
            let Some(o) = self.ids.get(&id_digest(mcp, &id)).filter(|o| o.len() > 1) else {
                continue;
            };
            let others: Vec<&str> = o
                .drafts()
                .filter(|&g| g as usize != d)
                .map(|g| groups[g as usize].id.as_str())
                .collect();
            out.push(findings::jsonrpc_finding(mcp, &id, &others));
        }
        (out, links)
    }
}
