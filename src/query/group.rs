//! Groups as the query layer hands them out: [`GroupFilter`] says which
//! groups to list, and [`GroupRef`] reads one group of an investigation
//! (its verdict, calls, executions, findings and contract) without exposing
//! the analysis behind it.

use super::{
    ExecIdx, FindingKind, GroupIdx, Investigation, Resolution, Severity, ToolContract, Verdict,
    words,
};
use crate::analysis::Group;
use chrono::{DateTime, Utc};

/// Which groups to list.
#[derive(Debug, Clone, Default)]
pub struct GroupFilter {
    /// List every group, not only those worth a look.
    pub all: bool,
    /// Only these verdicts (empty: any).
    pub verdicts: Vec<Verdict>,
    /// Only groups whose tool name contains this text.
    pub tool: Option<String>,
}

impl GroupFilter {
    pub(super) fn passes(&self, g: &Group) -> bool {
        (self.all || g.worth_a_look() || !self.verdicts.is_empty())
            && (self.verdicts.is_empty() || self.verdicts.contains(&g.verdict))
            && self
                .tool
                .as_ref()
                .is_none_or(|t| g.tool.contains(t.as_str()))
    }
}

/// One group of the investigation, read through the query layer: all calls
/// sharing (intent fingerprint, actor, intent scope), judged
/// (docs/design.md §5).
#[derive(Debug, Clone, Copy)]
pub struct GroupRef<'a> {
    pub(super) inv: &'a Investigation,
    pub(super) index: GroupIdx,
    pub(super) g: &'a Group,
}

impl<'a> GroupRef<'a> {
    /// Its position in analysis order (worst first), for front ends that
    /// keep their own sorted or filtered views.
    pub fn index(&self) -> GroupIdx {
        self.index
    }
    /// Stable id: `g` and 10 hex digits; any unique prefix finds it.
    pub fn id(&self) -> &'a str {
        &self.g.id
    }
    /// The verdict.
    pub fn verdict(&self) -> Verdict {
        self.g.verdict
    }
    /// The verdict's severity.
    pub fn severity(&self) -> Severity {
        self.g.severity()
    }
    /// Tool name.
    pub fn tool(&self) -> &'a str {
        &self.g.tool
    }
    /// Actor (`unknown` when the journal names none).
    pub fn actor(&self) -> &'a str {
        &self.g.actor
    }
    /// Intent scope (`unscoped` when the journal names none).
    pub fn intent_scope(&self) -> &'a str {
        &self.g.intent_scope
    }
    /// Recomputed intent fingerprint (`hmac-sha256:…` or `sha256:…`).
    pub fn fingerprint(&self) -> &'a str {
        &self.g.fingerprint
    }
    /// Target, when the action record names one.
    pub fn target(&self) -> Option<&'a str> {
        self.g.target.as_deref()
    }
    /// Calls: executions created plus calls attached.
    pub fn calls(&self) -> usize {
        self.g.calls
    }
    /// Number of executions.
    pub fn execution_count(&self) -> usize {
        self.g.executions.len()
    }
    /// Dispatches to the target over all executions.
    pub fn dispatches(&self) -> usize {
        self.g.dispatches
    }
    /// First event.
    pub fn first_at(&self) -> Option<DateTime<Utc>> {
        self.g.first_at
    }
    /// Last event.
    pub fn last_at(&self) -> Option<DateTime<Utc>> {
        self.g.last_at
    }
    /// The executions, in time order.
    pub fn executions(&self) -> impl Iterator<Item = ExecIdx> + 'a {
        self.g.executions.iter().copied()
    }
    /// The execution ids, in time order.
    pub fn execution_ids(&self) -> impl Iterator<Item = &'a str> + 'a {
        let model = &self.inv.model;
        self.g
            .executions
            .iter()
            .map(move |&x| model.execution(x).id.as_str())
    }
    /// Finding names, sorted, each once.
    pub fn flags(&self) -> Vec<&'static str> {
        let mut f: Vec<&'static str> = self.g.findings.iter().map(|f| f.kind.as_str()).collect();
        f.sort_unstable();
        f.dedup();
        f
    }
    /// Whether a finding of this kind is present.
    pub fn has(&self, k: FindingKind) -> bool {
        self.g.has(k)
    }
    /// Whether the group is listed by default (docs/design.md §7: two or
    /// more calls, or a verdict other than `clean`).
    pub fn worth_a_look(&self) -> bool {
        self.g.worth_a_look()
    }
    /// The tool contract applied.
    pub fn contract(&self) -> &'a ToolContract {
        &self.g.contract
    }
    /// The tool arguments of the group's first execution as the journal
    /// recorded them, the contract's secret fields redacted.
    pub fn arguments(&self) -> Option<serde_json::Value> {
        let x = *self.g.executions.first()?;
        let args = self.inv.model.execution(x).action()?.get("arguments")?;
        Some(words::redact_secrets(&args, &self.g.contract.secret_fields))
    }

    /// Reviewer decisions applied to the group's executions.
    pub fn resolutions(&self) -> impl Iterator<Item = &'a Resolution> + 'a {
        let a = &self.inv.analysis;
        self.g.executions.iter().flat_map(move |&x| {
            let l = a.lifecycle(x);
            l.resolution
                .as_deref()
                .into_iter()
                .chain(l.delivery_resolution.as_deref())
        })
    }
}
