//! The postmortem as plain data: what [`super::Report::build`] gathers and
//! the renderers ([`super::markdown`], [`super::json`], [`super::csv`]) write.

use crate::query::{Decision, Severity, Verdict};
use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

/// One journal the report rests on.
#[derive(Debug, Clone, Serialize)]
pub struct JournalInfo {
    /// Name (the path as given).
    pub name: String,
    /// Format it was read as.
    pub format: &'static str,
    /// Lines read.
    pub lines: u64,
    /// Lines that could not be read.
    pub bad_lines: u64,
}

/// The case file the decisions come from.
#[derive(Debug, Clone, Serialize)]
pub struct CaseInfo {
    /// Name.
    pub name: String,
    /// Whether the file exists.
    pub exists: bool,
    /// Chain status in words.
    pub chain: String,
    /// Whether the chain verified.
    pub intact: bool,
}

/// Chain status of one source of evidence (docs/design.md §6: evidence from an
/// unverified or broken span is marked as such).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainState {
    /// The chain verified.
    Intact,
    /// The chain is broken.
    Broken,
    /// The source has no hash chain: its lines cannot be shown unaltered.
    Unchained,
    /// The lines carry chain fields that this export did not check.
    NotVerified,
}

impl ChainState {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainState::Intact => "intact",
            ChainState::Broken => "broken",
            ChainState::Unchained => "unchained",
            ChainState::NotVerified => "not_verified",
        }
    }
}

/// Chain status of one journal or of the case file.
#[derive(Debug, Clone, Serialize)]
pub struct ChainLine {
    /// Journal or case file name.
    pub source: String,
    /// `journal` or `case_file`.
    pub kind: &'static str,
    /// Status.
    pub status: ChainState,
    /// In words.
    pub detail: String,
}

/// One timeline row.
#[derive(Debug, Clone, Serialize)]
pub struct TimelineRow {
    /// When (UTC).
    pub at: DateTime<Utc>,
    /// Milliseconds since the group's first event.
    pub offset_ms: i64,
    /// Execution.
    pub execution_id: Option<String>,
    /// The call, for events that a call caused (`accepted`, `attached`).
    pub call_id: Option<String>,
    /// Lifecycle stage (event name), or `reviewer_decision`.
    pub stage: String,
    /// Key details.
    pub detail: String,
    /// Where it is recorded (`file:line seq N`, or the case file entry).
    pub source: String,
}

/// One of the five questions with its answer and evidence.
#[derive(Debug, Clone, Serialize)]
pub struct QuestionReport {
    /// 1 to 5.
    pub question: u8,
    /// The question.
    pub asks: &'static str,
    /// The answer.
    pub answer: String,
    /// Whether the journal cannot answer.
    pub unknown: bool,
    /// Evidence citations (`file:line seq N (record execution)`).
    pub evidence: Vec<String>,
}

/// A finding with evidence.
#[derive(Debug, Clone, Serialize)]
pub struct FindingReport {
    /// Name.
    pub kind: &'static str,
    /// Detail.
    pub detail: String,
    /// Evidence citations.
    pub evidence: Vec<String>,
}

/// A group one argument field away from the exported one (docs/design.md
/// §5.13).
#[derive(Debug, Clone, Serialize)]
pub struct NearDuplicateReport {
    /// The linked group's id (a pseudonym under `--anonymize`).
    pub group_id: String,
    /// Its verdict.
    pub verdict: Verdict,
    /// Its calls.
    pub calls: usize,
    /// The argument field the two groups differ in, as a path (`body`,
    /// `options.region`); argument names are kept under `--anonymize`.
    pub field: String,
}

/// One reviewer decision about an execution of the group.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionReport {
    /// When it was recorded.
    pub at: DateTime<Utc>,
    /// Execution.
    pub execution_id: String,
    /// Decision.
    pub decision: Decision,
    /// Reviewer.
    pub reviewer: String,
    /// Note.
    pub note: String,
    /// Case file entry.
    pub case_entry: u64,
    /// What it did to the analysis.
    pub effect: String,
}

/// Everything about one group.
#[derive(Debug, Clone, Serialize)]
pub struct GroupReport {
    /// Group id.
    pub group_id: String,
    /// Verdict.
    pub verdict: Verdict,
    /// Severity.
    pub severity: Severity,
    /// Why, in one sentence.
    pub reason: String,
    /// Whose decision the verdict rests on, if a reviewer's.
    pub provenance: Option<String>,
    /// Tool.
    pub tool: String,
    /// Target.
    pub target: Option<String>,
    /// Actor.
    pub actor: String,
    /// Intent scope.
    pub intent_scope: String,
    /// Intent fingerprint.
    pub fingerprint: String,
    /// Arguments that were fingerprinted (canonical record).
    pub arguments: Value,
    /// What the journals lack of the arguments (`no: …`, `partly: …`);
    /// absent when they hold them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments_recorded: Option<String>,
    /// Action class of the contract applied.
    pub contract_class: String,
    /// Attach window of the contract applied.
    pub attach_window: String,
    /// Whether the contract was configured.
    pub contract_configured: bool,
    /// What the class rests on, in words (`contract`, `no contract:
    /// default`, `no contract: github's readOnlyHint (an untrusted hint)`).
    pub contract_basis: String,
    /// Calls.
    pub calls: usize,
    /// Execution ids, in time order.
    pub executions: Vec<String>,
    /// Dispatches.
    pub dispatches: usize,
    /// First event.
    pub first_at: Option<DateTime<Utc>>,
    /// Last event.
    pub last_at: Option<DateTime<Utc>>,
    /// The timeline, in time order: every row, or of a timeline built
    /// abridged ([`GroupReport::left_out`]), the rows a document shows.
    pub timeline: Vec<TimelineRow>,
    /// Of a timeline built for a document ([`super::Request::abridge`]) of
    /// a group of more than [`super::abridge::FULL_EXECUTIONS`]
    /// executions, where rows were left out and what each run held
    /// (docs/design.md §7.5); `None` when `timeline` holds every row. Not
    /// part of the JSON export, which always has every row.
    #[serde(skip)]
    pub left_out: Option<Vec<super::abridge::LeftOut>>,
    /// The five questions.
    pub questions: Vec<QuestionReport>,
    /// Findings.
    pub findings: Vec<FindingReport>,
    /// Groups one argument field away (docs/design.md §5.13), each also a
    /// `near_duplicate` finding.
    pub near_duplicates: Vec<NearDuplicateReport>,
    /// Reviewer decisions.
    pub decisions: Vec<DecisionReport>,
    /// Chain status of the evidence.
    pub chain: Vec<ChainLine>,
    /// Mermaid `sequenceDiagram` source.
    pub sequence_diagram: String,
    /// Whether the diagram (and the Markdown timeline) leaves executions
    /// out: a group of more than [`super::abridge::FULL_EXECUTIONS`]
    /// (docs/design.md §7.5). The JSON timeline is whole either way.
    pub abridged: bool,
    /// Executions the target acted on (the journal or a reviewer says so).
    pub acted: usize,
    /// Of those, the ones only a reviewer's decision shows.
    pub acted_by_reviewer: usize,
    /// Side effects beyond the first that are duplicates
    /// ([`crate::query::Effects::duplicates`]).
    pub duplicates: usize,
    /// Dispatched executions whose outcome nothing settled.
    pub unknown: usize,
    /// What to change so that it does not happen again.
    pub action_items: Vec<ActionItemReport>,
}

/// One action item.
#[derive(Debug, Clone, Serialize)]
pub struct ActionItemReport {
    /// Its kind (`attach_retries`, `write_contract`, ...).
    pub kind: &'static str,
    /// The item in one sentence.
    pub text: String,
}

/// What the exported groups did, together: the postmortem's summary.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Impact {
    /// Duplicate side effects: in groups whose verdict is
    /// `duplicate_side_effect`, the later executions that duplicated an
    /// earlier one's effect ([`GroupReport::duplicates`]); a repeat from a
    /// distinct process, or after a delivered result, is not counted.
    pub duplicate_side_effects: usize,
    /// Groups that may hold a duplicate (`possible_duplicate`).
    pub possible_duplicates: usize,
    /// Executions whose outcome is still unknown.
    pub unknown_outcomes: usize,
    /// Targets acted on more than once, or possibly so.
    pub targets: Vec<String>,
    /// First event of the groups that hold (possible) duplicates.
    pub from: Option<DateTime<Utc>>,
    /// Last event of those groups.
    pub to: Option<DateTime<Utc>>,
}

/// A whole export.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// `retrace <version>`.
    pub generator: String,
    /// Whether `--anonymize` was applied.
    pub anonymized: bool,
    /// Journals.
    pub journals: Vec<JournalInfo>,
    /// Case file, if any.
    pub case_file: Option<CaseInfo>,
    /// Analysis notes.
    pub notes: Vec<String>,
    /// What happened, in numbers.
    pub impact: Impact,
    /// Groups, in the order asked for.
    pub groups: Vec<GroupReport>,
}
