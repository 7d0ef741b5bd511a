//! Groups as the query layer hands them out: [`GroupFilter`] says which
//! groups to list, and [`GroupRef`] reads one group of an investigation
//! (its verdict, calls, executions, findings and contract) without exposing
//! the analysis behind it.

use super::views::{
    AnswerView, Effects, FindingView, GroupDetail, GroupSummary, NearDuplicateView,
};
use super::{
    ExecIdx, FindingKind, GroupIdx, Investigation, Resolution, Severity, ToolContract, Verdict,
    words,
};
use crate::analysis::verdict::TargetAnswer;
use crate::analysis::{self, ActionItem, Group};
use chrono::{DateTime, Utc};
use serde_json::Value;

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
            .map(move |&x| model.execution(x).id())
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
    /// more calls, a verdict other than `clean`, or a `fingerprint_drift`
    /// or `no_accepted_record` finding).
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

    /// What the journals lack of the first execution's tool arguments
    /// (`no: …`, `partly: …`, [`crate::model::Arguments::label`]); `None`
    /// when they hold them, so that `{}` is never read as "called with no
    /// arguments" when the journal does not log them.
    pub fn arguments_recorded(&self) -> Option<String> {
        let x = *self.g.executions.first()?;
        self.inv.model.execution(x).arguments_recorded()?.label()
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

impl GroupRef<'_> {
    /// The summary (docs/design.md §7: the `groups --json` element).
    pub fn summary(&self) -> GroupSummary {
        let g = self.g;
        GroupSummary {
            group_id: g.id.clone(),
            verdict: g.verdict,
            severity: g.severity(),
            tool: g.tool.to_string(),
            actor: g.actor.clone(),
            intent_scope: g.intent_scope.clone(),
            fingerprint: g.fingerprint.clone(),
            calls: g.calls,
            executions: g.executions.len(),
            dispatches: g.dispatches,
            first_at: g.first_at,
            last_at: g.last_at,
            execution_ids: self.execution_ids().map(str::to_string).collect(),
            flags: self.flags(),
            class_basis: g.contract.basis(),
            resolutions: self.resolutions().cloned().collect(),
            before_window: g
                .executions
                .iter()
                .filter(|&&x| self.inv.before_window(x))
                .map(|&x| self.inv.model.execution(x).id().to_string())
                .collect(),
        }
    }

    /// Why the group got its verdict, in one sentence (computed on demand).
    pub fn reason(&self) -> String {
        self.explain().reason
    }

    /// The five answers with their evidence, resolved (computed on demand).
    pub fn answers(&self) -> Vec<AnswerView> {
        self.explain()
            .answers
            .iter()
            .map(|a| self.inv.answer_view(a))
            .collect()
    }

    /// The reason for the verdict and the five answers, resolved: what
    /// [`GroupRef::reason`] and [`GroupRef::answers`] give, from one
    /// explanation of the group.
    pub fn explanation(&self) -> (String, Vec<AnswerView>) {
        let ex = self.explain();
        let answers = ex.answers.iter().map(|a| self.inv.answer_view(a)).collect();
        (ex.reason, answers)
    }

    /// The findings with their evidence, resolved.
    pub fn findings(&self) -> Vec<FindingView> {
        self.g
            .findings
            .iter()
            .map(|f| self.inv.finding_view(f))
            .collect()
    }

    /// The groups one argument field away from this one, with their
    /// verdicts (docs/design.md §5.13).
    pub fn near_duplicates(&self) -> Vec<NearDuplicateView> {
        self.g
            .near_duplicates
            .iter()
            .filter_map(|n| {
                let o = self.inv.group(&n.group_id).ok()?;
                Some(NearDuplicateView {
                    group_id: n.group_id.clone(),
                    index: o.index(),
                    verdict: o.verdict(),
                    severity: o.severity(),
                    calls: o.calls(),
                    field: n.field.clone(),
                })
            })
            .collect()
    }

    /// The canonical action record the fingerprint was computed from.
    pub fn canonical_action(&self) -> Value {
        analysis::canonical_action(&self.inv.model, &self.inv.config, self.g)
    }

    /// Everything `retrace investigate` shows about the group.
    pub fn detail(&self) -> GroupDetail {
        let (reason, questions) = self.explanation();
        GroupDetail {
            summary: self.summary(),
            target: self.g.target.as_deref().map(str::to_string),
            reason,
            questions,
            findings: self.findings(),
            near_duplicates: self.near_duplicates(),
            executions_detail: self
                .executions()
                .map(|x| self.inv.execution_summary(x))
                .collect(),
            contract: (*self.g.contract).clone(),
            canonical_action: self.canonical_action(),
            arguments_recorded: self.arguments_recorded(),
            action_items: self.action_items(),
            effects: self.effects(),
        }
    }

    /// What to change so that the group's problem does not happen again
    /// (docs/design.md §5.9).
    pub fn action_items(&self) -> Vec<ActionItem> {
        let delivery = self.executions().all(|x| self.inv.caps_of(x).delivery);
        crate::analysis::actions::action_items(
            &self.inv.model,
            &self.inv.analysis.lifecycles,
            self.g,
            delivery,
        )
    }

    /// What the target did across the group's executions.
    pub fn effects(&self) -> Effects {
        let mut e = Effects {
            duplicates: self.g.duplicates,
            ..Effects::default()
        };
        for x in self.executions() {
            let l = self.inv.analysis.lifecycle(x);
            let ex = self.inv.model.execution(x);
            match l.answer {
                TargetAnswer::Performed => {
                    e.acted += 1;
                    // A stored resolution on a performed execution is the
                    // reviewer's: decisions never override the journal.
                    e.acted_by_reviewer += usize::from(l.resolution.is_some());
                    if let Some(t) = l.dispatch_time(ex) {
                        e.acted_at.push(t);
                    }
                }
                a if a.is_unknown() && l.dispatches > 0 => e.unknown += 1,
                _ => {}
            }
        }
        e
    }

    fn explain(&self) -> analysis::Explanation {
        analysis::explain(
            &self.inv.model,
            &self.inv.analysis,
            &self.inv.journals,
            self.g,
        )
    }
}
