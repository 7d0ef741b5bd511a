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
#[cfg(test)]
mod tests;

pub use chain::{ChainCheck, evidence_chain_fields, evidence_chain_verified, unverified_mark};
pub use report::{
    ActionItemReport, CaseInfo, ChainLine, ChainState, DecisionReport, FindingReport, GroupReport,
    Impact, JournalInfo, NearDuplicateReport, QuestionReport, Report, TimelineRow,
};

use crate::model::{JournalId, SourceRef};
use crate::query::words::event_detail;
use crate::query::{
    Decision, EventView, EvidenceView, ExecIdx, GroupRef, Investigation, Settles, Verdict,
};
use crate::review::{CaseContext, DecisionRecord};
use anonymize::{Class, Namer};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

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
    /// Build the report for a document (Markdown): the timeline of a group
    /// of more than [`abridge::FULL_EXECUTIONS`] executions holds only the
    /// rows of the executions the document shows, and counts the runs it
    /// leaves out ([`GroupReport::left_out`]; docs/design.md §7.5), so
    /// that a group of 200,000 calls is not worded a million times to be
    /// left out. `false` keeps every row, as the JSON and CSV exports need.
    pub abridge: bool,
}

pub(crate) fn hms(t: DateTime<Utc>) -> String {
    t.format("%H:%M:%S%.3f").to_string()
}

struct Builder<'a, N: Namer> {
    inv: &'a Investigation,
    namer: N,
    /// [`Request::abridge`].
    abridge: bool,
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
        // What `retrace investigate` shows about the group, less the
        // summary of every execution, which the report does not use.
        let (reason, answers) = g.explanation();
        let effects = g.effects();

        // The questions and the executions' names first: which executions
        // a document shows depends on them.
        let questions: Vec<QuestionReport> = answers
            .iter()
            .map(|q| QuestionReport {
                question: q.question,
                asks: q.asks,
                answer: self.namer.text(&q.answer),
                unknown: q.unknown,
                evidence: q.evidence.iter().map(|v| self.cite(v)).collect(),
            })
            .collect();
        let reason = self.namer.text(&reason);
        let executions: Vec<String> = g
            .execution_ids()
            .map(|x| self.namer.id(Class::Execution, x))
            .collect();
        let kept = if self.abridge {
            abridge::kept(&reason, &questions, &executions)
        } else {
            None
        };
        let shown = |k: usize| kept.as_ref().is_none_or(|kept| kept[k]);

        // Timeline: every event of the group, in time order; only those of
        // the executions shown are worded.
        let xs: Vec<ExecIdx> = g.executions().collect();
        let stamps = stamps(inv, &xs);
        let views: Vec<Vec<EventView>> = xs
            .iter()
            .enumerate()
            .map(|(k, &x)| if shown(k) { inv.events(x) } else { Vec::new() })
            .collect();
        let t0 = g
            .first_at()
            .or(stamps.first().map(|r| r.0))
            .unwrap_or_default();
        let mut timeline = Vec::with_capacity(stamps.len());
        for &(at, _, _, k, i) in &stamps {
            if !shown(k) {
                timeline.push(Entry::Hidden { at, execution: k });
                continue;
            }
            let v = &views[k][i];
            let e = &v.record;
            let call_id = e.kind.call().and_then(|c| c.call_id.clone());
            timeline.push(Entry::Row(Box::new(TimelineRow {
                at,
                offset_ms: (at - t0).num_milliseconds(),
                execution_id: Some(executions[k].clone()),
                call_id: call_id.map(|c| self.namer.id(Class::Call, &c)),
                stage: e.kind.name().to_string(),
                detail: event_detail(e.into(), &[], &mut self.namer),
                source: self.cite(&v.evidence),
            })));
        }
        drop(views);
        // The case file's decisions about the group's executions, and
        // where each execution is in the group, to tell whether a decision
        // about it is shown (nothing to find when the case has none).
        let (decisions, position): (Vec<&DecisionRecord>, HashMap<&str, usize>) =
            if case.decisions.is_empty() {
                Default::default()
            } else {
                let ids: BTreeSet<&str> = g.execution_ids().collect();
                let position = match kept {
                    Some(_) => g.execution_ids().enumerate().map(|(k, x)| (x, k)).collect(),
                    None => Default::default(),
                };
                let decisions = case
                    .decisions
                    .iter()
                    .filter(|d| ids.contains(d.payload.execution_id.as_str()))
                    .collect();
                (decisions, position)
            };
        let case_name = case.name().unwrap_or_default();
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
            match position.get(d.payload.execution_id.as_str()) {
                Some(&k) if !shown(k) => timeline.push(Entry::Hidden {
                    at: d.at,
                    execution: k,
                }),
                _ => timeline.push(Entry::Row(Box::new(TimelineRow {
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
                }))),
            }
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
        timeline.sort_by_key(Entry::at);
        let (timeline, left_out) = rows_shown(timeline, kept.is_some());
        // The groups a near_duplicate finding names (docs/design.md §5.13)
        // get their pseudonyms before the findings' words are replaced.
        let near_duplicates = g
            .near_duplicates()
            .iter()
            .map(|n| NearDuplicateReport {
                group_id: self.namer.id(Class::Group, &n.group_id),
                verdict: n.verdict,
                calls: n.calls,
                field: n.field.clone(),
            })
            .collect();
        let findings = g
            .findings()
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
        for &(_, s, _, _, _) in &stamps {
            by_journal.entry(s.journal()).or_default().push(s);
        }
        for q in &answers {
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

        let arguments = g
            .canonical_action()
            .get("arguments")
            .map(|a| self.namer.value(a))
            .unwrap_or(Value::Null);
        let contract = g.contract();
        let mut report = GroupReport {
            group_id: self.namer.id(Class::Group, g.id()),
            verdict: g.verdict(),
            severity: g.severity(),
            reason,
            provenance: (!provenance.is_empty()).then(|| provenance.join("; ")),
            tool: g.tool().to_string(),
            target: g.target().map(|t| self.namer.id(Class::Target, t)),
            actor: self.name_or_placeholder(Class::Actor, g.actor()),
            intent_scope: self.name_or_placeholder(Class::Scope, g.intent_scope()),
            fingerprint: self.namer.id(Class::Fingerprint, g.fingerprint()),
            arguments,
            arguments_recorded: g.arguments_recorded(),
            contract_class: contract.class.as_str().to_string(),
            attach_window: humantime::format_duration(contract.attach_window).to_string(),
            contract_configured: contract.configured,
            contract_basis: contract.basis_words(),
            calls: g.calls(),
            executions,
            dispatches: g.dispatches(),
            first_at: g.first_at(),
            last_at: g.last_at(),
            timeline,
            left_out,
            questions,
            findings,
            near_duplicates,
            decisions: decision_reports,
            chain,
            sequence_diagram: String::new(),
            abridged: false,
            acted: effects.acted,
            acted_by_reviewer: effects.acted_by_reviewer,
            duplicates: effects.duplicates,
            unknown: effects.unknown,
            action_items: g
                .action_items()
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

/// Every event of the executions `xs` (of one group) as (time, line,
/// execution, its place in `xs`, the event's place in the execution), in
/// time order, then line, then execution: the order of a report's
/// timeline. A large group's are read and sorted on every core.
fn stamps(
    inv: &Investigation,
    xs: &[ExecIdx],
) -> Vec<(DateTime<Utc>, SourceRef, ExecIdx, usize, usize)> {
    use rayon::prelude::*;
    const PARALLEL: usize = crate::analysis::PARALLEL_GROUP;
    let of = |(k, &x): (usize, &ExecIdx)| {
        inv.event_stamps(x)
            .enumerate()
            .map(move |(i, (at, source))| (at, source, x, k, i))
    };
    // Both sorts are stable: equal keys keep the order of `xs`.
    let key = |r: &(DateTime<Utc>, SourceRef, ExecIdx, usize, usize)| (r.0, r.1, r.2);
    if xs.len() > PARALLEL {
        let mut stamps: Vec<_> = xs.par_iter().enumerate().flat_map_iter(of).collect();
        stamps.par_sort_by_key(key);
        stamps
    } else {
        let mut stamps = Vec::with_capacity(xs.iter().map(|&x| inv.event_count(x)).sum());
        stamps.extend(xs.iter().enumerate().flat_map(of));
        stamps.sort_by_key(key);
        stamps
    }
}

/// A timeline row of a group's report while it is built: worded, or
/// left out of a document (only counted).
enum Entry {
    /// Boxed: a timeline of a million events, most of them left out of an
    /// abridged document, is a million entries the size of the largest.
    Row(Box<TimelineRow>),
    Hidden {
        at: DateTime<Utc>,
        execution: usize,
    },
}

impl Entry {
    fn at(&self) -> DateTime<Utc> {
        match self {
            Entry::Row(r) => r.at,
            Entry::Hidden { at, .. } => *at,
        }
    }
}

/// The rows of a timeline in time order that are worded, and, when the
/// timeline is `abridged`, each run of rows left out as counted where it
/// was ([`GroupReport::left_out`]): as many events, of as many executions
/// (by their place in the group), as [`abridge::Shown::timeline`] counts
/// over the whole timeline.
fn rows_shown(
    entries: Vec<Entry>,
    abridged: bool,
) -> (Vec<TimelineRow>, Option<Vec<abridge::LeftOut>>) {
    let mut rows = Vec::with_capacity(if abridged { 0 } else { entries.len() });
    let mut left_out = Vec::new();
    // The run of hidden entries being counted: its events and executions.
    // An execution is counted in a run once: `seen[k]` is the number of the
    // last run (from 1) it was counted in.
    let mut run: Option<(usize, usize)> = None;
    let mut runs = 0usize;
    let mut seen: Vec<usize> = Vec::new();
    let close = |run: &mut Option<(usize, usize)>,
                 rows: &Vec<TimelineRow>,
                 left_out: &mut Vec<abridge::LeftOut>| {
        if let Some((events, executions)) = run.take() {
            left_out.push(abridge::LeftOut {
                before: rows.len(),
                events,
                executions,
            });
        }
    };
    for e in entries {
        match e {
            Entry::Row(r) => {
                close(&mut run, &rows, &mut left_out);
                rows.push(*r);
            }
            Entry::Hidden { execution, .. } => {
                let (events, executions) = run.get_or_insert_with(|| {
                    runs += 1;
                    (0, 0)
                });
                *events += 1;
                if seen.len() <= execution {
                    seen.resize(execution + 1, 0);
                }
                if seen[execution] != runs {
                    seen[execution] = runs;
                    *executions += 1;
                }
            }
        }
    }
    close(&mut run, &rows, &mut left_out);
    (rows, abridged.then_some(left_out))
}

/// What the groups did together: extra side effects, possible ones,
/// unknown outcomes, the targets and the time they span.
fn impact(groups: &[GroupReport]) -> Impact {
    let mut i = Impact::default();
    for g in groups {
        let duplicate = g.verdict == Verdict::DuplicateSideEffect;
        let possible = g.verdict == Verdict::PossibleDuplicate;
        if duplicate {
            i.duplicate_side_effects += g.duplicates.max(1);
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
        let mut b = Builder {
            inv,
            namer,
            abridge: req.abridge,
        };
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
