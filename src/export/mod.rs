//! Postmortem export (`retrace export`): per group, the verdict and
//! severity, a timeline, the five questions with their answers and
//! evidence, the reviewer decisions, the chain status of the evidence, and
//! a Mermaid `sequenceDiagram` of agent, gateway and target.
//!
//! [`Report::build`] gathers everything through the query layer into one
//! plain [`Report`]; [`markdown`], [`json`] and [`csv`] render it. Every
//! field passes through an [`anonymize::Namer`] while the report is built,
//! so `--anonymize` is one switch for every format. [`atomic::write`] puts
//! the result on disk without ever leaving a half-written file.

pub mod abridge;
pub mod anonymize;
pub mod atomic;
mod chain;
pub mod csv;
pub mod json;
pub mod markdown;
pub mod mermaid;
mod pseudonyms;
mod report;

pub use chain::{ChainCheck, evidence_chain_fields, evidence_chain_verified, unverified_mark};
pub use report::{
    ActionItemReport, CaseInfo, ChainLine, ChainState, DecisionReport, FindingReport, GroupReport,
    Impact, JournalInfo, NearDuplicateReport, QuestionReport, Report, TimelineRow,
};

use crate::model::{EventKind, JournalId, SourceRef};
use crate::query::words::event_detail;
use crate::query::{
    Decision, EventView, EvidenceView, ExecIdx, GroupRef, Investigation, Settles, Verdict,
};
use crate::review::{CaseContext, DecisionRecord};
use anonymize::{Class, Namer};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::BTreeSet;

/// Output format of `retrace export`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A postmortem document with tables and a Mermaid diagram.
    Markdown,
    /// The same content for tools.
    Json,
    /// The timeline, one row per event.
    Csv,
}

impl Format {
    /// Renders a report.
    pub fn render(self, r: &Report) -> String {
        match self {
            Format::Markdown => markdown::render(r),
            Format::Json => json::render(r),
            Format::Csv => csv::render(r),
        }
    }
}

/// What to export and how.
pub struct Request<'a> {
    /// Groups, in order.
    pub groups: Vec<GroupRef<'a>>,
    /// The case file and its decisions.
    pub case: &'a CaseContext,
    /// Replace identities consistently.
    pub anonymize: bool,
    /// Journal chain check ([`evidence_chain_verified`] by default).
    pub chain_check: Option<&'a ChainCheck<'a>>,
}

pub(crate) fn hms(t: DateTime<Utc>) -> String {
    t.format("%H:%M:%S%.3f").to_string()
}

struct Builder<'a, N: Namer> {
    inv: &'a Investigation,
    namer: N,
}

impl<N: Namer> Builder<'_, N> {
    fn cite(&mut self, v: &EvidenceView) -> String {
        let journal = self.namer.id(Class::File, &v.journal);
        let mut s = match v.seq {
            Some(seq) => format!("{journal}:{} seq {seq}", v.line),
            None => format!("{journal}:{}", v.line),
        };
        s.push_str(&format!(" ({}", v.record));
        if let Some(x) = &v.execution_id {
            s.push(' ');
            s.push_str(&self.namer.id(Class::Execution, x));
        }
        s.push(')');
        s.push_str(&unverified_mark(self.inv, v));
        // A line its hash does not pin down (docs/design.md §6.4).
        if let Some(a) = &v.ambiguous {
            s.push_str(&format!(" [AMBIGUOUS: {}]", self.namer.text(a)));
        }
        s
    }

    fn group(
        &mut self,
        g: &GroupRef<'_>,
        case: &CaseContext,
        check: &ChainCheck<'_>,
    ) -> GroupReport {
        let inv = self.inv;
        let detail = g.detail();

        // Timeline.
        let mut rows: Vec<(DateTime<Utc>, SourceRef, ExecIdx, EventView)> =
            Vec::with_capacity(g.executions().map(|x| inv.event_count(x)).sum());
        for x in g.executions() {
            for v in inv.events(x) {
                rows.push((v.record.at, v.record.source, x, v));
            }
        }
        rows.sort_by_key(|r| (r.0, r.1, r.2));
        let t0 = g
            .first_at()
            .or(rows.first().map(|r| r.0))
            .unwrap_or_default();
        let mut timeline = Vec::with_capacity(rows.len());
        for (at, _, x, v) in &rows {
            let e = &v.record;
            let call_id = match &e.kind {
                EventKind::Accepted { call, .. } | EventKind::Attached { call, .. } => {
                    call.call_id.clone()
                }
                _ => None,
            };
            timeline.push(TimelineRow {
                at: *at,
                offset_ms: (*at - t0).num_milliseconds(),
                execution_id: Some(self.namer.id(Class::Execution, inv.execution_id(*x))),
                call_id: call_id.map(|c| self.namer.id(Class::Call, &c)),
                stage: e.kind.name().to_string(),
                detail: event_detail(e, &[], &mut self.namer),
                source: self.cite(&v.evidence),
            });
        }
        let ids: BTreeSet<&str> = g.execution_ids().collect();
        let case_name = case.name().unwrap_or_default();
        let decisions: Vec<&DecisionRecord> = case
            .decisions
            .iter()
            .filter(|d| ids.contains(d.payload.execution_id.as_str()))
            .collect();
        let mut decision_reports = Vec::new();
        let mut provenance = Vec::new();
        for d in &decisions {
            let source = d.resolution(&case_name).source;
            let applied = inv
                .execution(&d.payload.execution_id)
                .ok()
                .is_some_and(|x| inv.resolutions_of(x).any(|r| r.source == source));
            let delivery = d.payload.decision.settles() == Settles::Delivery;
            let effect = match (d.payload.decision, applied, delivery) {
                (Decision::Escalated, _, _) => "escalated: the question stays open".to_string(),
                (_, true, false) => "resolved the unknown outcome; verdicts use it".to_string(),
                (_, true, true) => {
                    "settled whether the result reached the agent; verdicts use it".to_string()
                }
                (_, false, false) => {
                    "not applied: the journal shows the outcome, and the journal stands".to_string()
                }
                (_, false, true) => {
                    "not applied: the journal records the delivery, and the journal stands"
                        .to_string()
                }
            };
            let reviewer = self.namer.id(Class::Person, &d.payload.reviewer);
            let execution_id = self.namer.id(Class::Execution, &d.payload.execution_id);
            if effect.starts_with("resolved") {
                provenance.push(format!(
                    "{execution_id}'s outcome comes from reviewer {reviewer}'s decision {} at {} (case file entry {}), not from the journal",
                    d.payload.decision,
                    d.at.format("%Y-%m-%d %H:%M:%SZ"),
                    d.seq
                ));
            }
            let case_file = self.namer.id(Class::File, &case_name);
            timeline.push(TimelineRow {
                at: d.at,
                offset_ms: (d.at - t0).num_milliseconds(),
                execution_id: Some(execution_id.clone()),
                call_id: None,
                stage: "reviewer_decision".into(),
                detail: format!(
                    "{} by {reviewer}: {}",
                    d.payload.decision,
                    self.namer.id(Class::Text, &d.payload.note)
                ),
                source: format!("{case_file} entry {}", d.seq),
            });
            decision_reports.push(DecisionReport {
                at: d.at,
                execution_id,
                decision: d.payload.decision,
                reviewer,
                note: self.namer.id(Class::Text, &d.payload.note),
                case_entry: d.seq,
                effect,
            });
        }
        timeline.sort_by_key(|r| r.at);

        let questions = detail
            .questions
            .iter()
            .map(|q| QuestionReport {
                question: q.question,
                asks: q.asks,
                answer: self.namer.text(&q.answer),
                unknown: q.unknown,
                evidence: q.evidence.iter().map(|v| self.cite(v)).collect(),
            })
            .collect();
        // The groups a near_duplicate finding names (docs/design.md §5.13)
        // get their pseudonyms before the findings' words are replaced.
        let near_duplicates = detail
            .near_duplicates
            .iter()
            .map(|n| NearDuplicateReport {
                group_id: self.namer.id(Class::Group, &n.group_id),
                verdict: n.verdict,
                calls: n.calls,
                field: n.field.clone(),
            })
            .collect();
        let findings = detail
            .findings
            .iter()
            .map(|f| FindingReport {
                kind: f.kind,
                detail: self.namer.text(&f.detail),
                evidence: f.evidence.iter().map(|v| self.cite(v)).collect(),
            })
            .collect();

        // Chain status of the evidence: every journal the group's events
        // come from, and the case file when decisions are shown.
        let mut by_journal: std::collections::BTreeMap<JournalId, Vec<SourceRef>> =
            Default::default();
        for &(_, s, _, _) in &rows {
            by_journal.entry(s.journal()).or_default().push(s);
        }
        for q in &detail.questions {
            for v in &q.evidence {
                by_journal
                    .entry(v.source.journal())
                    .or_default()
                    .push(v.source);
            }
        }
        let mut chain = Vec::new();
        for (j, mut lines) in by_journal {
            lines.sort();
            lines.dedup();
            let (status, words) = check(inv, j, &lines);
            let name = inv
                .journals()
                .get(j as usize)
                .map_or_else(|| format!("journal#{j}"), |lj| lj.name.clone());
            chain.push(ChainLine {
                source: self.namer.id(Class::File, &name),
                kind: "journal",
                status,
                detail: self.namer.text(&words),
            });
        }
        if !decisions.is_empty()
            && let Some(status) = &case.chain
        {
            chain.push(ChainLine {
                source: self.namer.id(Class::File, &case_name),
                kind: "case_file",
                status: if status.is_intact() {
                    ChainState::Intact
                } else {
                    ChainState::Broken
                },
                detail: status.describe(),
            });
        }

        let arguments = detail
            .canonical_action
            .get("arguments")
            .map(|a| self.namer.value(a))
            .unwrap_or(Value::Null);
        let contract = g.contract();
        let mut report = GroupReport {
            group_id: self.namer.id(Class::Group, g.id()),
            verdict: g.verdict(),
            severity: g.severity(),
            reason: self.namer.text(&detail.reason),
            provenance: (!provenance.is_empty()).then(|| provenance.join("; ")),
            tool: g.tool().to_string(),
            target: g.target().map(|t| self.namer.id(Class::Target, t)),
            actor: self.name_or_placeholder(Class::Actor, g.actor()),
            intent_scope: self.name_or_placeholder(Class::Scope, g.intent_scope()),
            fingerprint: self.namer.id(Class::Fingerprint, g.fingerprint()),
            arguments,
            contract_class: contract.class.as_str().to_string(),
            attach_window: humantime::format_duration(contract.attach_window).to_string(),
            contract_configured: contract.configured,
            contract_basis: contract.basis_words(),
            calls: g.calls(),
            executions: g
                .execution_ids()
                .map(|x| self.namer.id(Class::Execution, x))
                .collect(),
            dispatches: g.dispatches(),
            first_at: g.first_at(),
            last_at: g.last_at(),
            timeline,
            questions,
            findings,
            near_duplicates,
            decisions: decision_reports,
            chain,
            sequence_diagram: String::new(),
            abridged: false,
            acted: detail.effects.acted,
            acted_by_reviewer: detail.effects.acted_by_reviewer,
            unknown: detail.effects.unknown,
            action_items: detail
                .action_items
                .iter()
                .map(|a| ActionItemReport {
                    kind: a.kind.into(),
                    text: self.namer.text(&a.text),
                })
                .collect(),
        };
        let (diagram, abridged) = {
            let shown = abridge::Shown::of(&report);
            (mermaid::sequence_diagram(&report, &shown), shown.abridged())
        };
        report.sequence_diagram = diagram;
        report.abridged = abridged;
        report
    }

    fn name_or_placeholder(&mut self, class: Class, s: &str) -> String {
        if pseudonyms::PLACEHOLDERS.contains(&s) {
            s.to_string()
        } else {
            self.namer.id(class, s)
        }
    }
}

/// What the groups did together: extra side effects, possible ones,
/// unknown outcomes, the targets and the time they span.
fn impact(groups: &[GroupReport]) -> Impact {
    let mut i = Impact::default();
    for g in groups {
        let duplicate = g.verdict == Verdict::DuplicateSideEffect;
        let possible = g.verdict == Verdict::PossibleDuplicate;
        if duplicate {
            i.duplicate_side_effects += g.acted.saturating_sub(1).max(1);
        }
        i.possible_duplicates += usize::from(possible);
        i.unknown_outcomes += g.unknown;
        if duplicate || possible {
            if let Some(t) = &g.target
                && !i.targets.contains(t)
            {
                i.targets.push(t.clone());
            }
            i.from = match (i.from, g.first_at) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            i.to = i.to.max(g.last_at);
        }
    }
    i
}

impl Report {
    /// Builds the report for the requested groups.
    pub fn build(inv: &Investigation, req: &Request<'_>) -> Report {
        if req.anonymize {
            let p = pseudonyms::collect(inv, &req.groups, req.case);
            Self::build_with(inv, req, p)
        } else {
            Self::build_with(inv, req, anonymize::Plain)
        }
    }

    fn build_with<N: Namer>(inv: &Investigation, req: &Request<'_>, namer: N) -> Report {
        let mut b = Builder { inv, namer };
        let default_check = evidence_chain_verified;
        let check: &ChainCheck<'_> = req.chain_check.unwrap_or(&default_check);
        let groups: Vec<GroupReport> = req
            .groups
            .iter()
            .map(|g| b.group(g, req.case, check))
            .collect();
        let journals = inv
            .journals()
            .iter()
            .map(|j| JournalInfo {
                name: b.namer.id(Class::File, &j.name),
                format: j.format.name(),
                lines: j.lines,
                bad_lines: j.bad_line_count,
            })
            .collect();
        let case_file = req.case.name().map(|n| CaseInfo {
            name: b.namer.id(Class::File, &n),
            exists: req.case.exists,
            chain: req
                .case
                .chain
                .as_ref()
                .map_or_else(|| "no case file yet".into(), |c| c.describe()),
            intact: req.case.chain.as_ref().is_none_or(|c| c.is_intact()),
        });
        let notes = inv.notes().iter().map(|n| b.namer.text(n)).collect();
        let impact = impact(&groups);
        Report {
            generator: format!("retrace {}", env!("CARGO_PKG_VERSION")),
            anonymized: b.namer.anonymizes(),
            journals,
            case_file,
            notes,
            impact,
            groups,
        }
    }
}
