//! The reviewer's storage and state machine (docs/design.md §5): a pure
//! decision flow ([`fsm::Flow`]), and the case file (SQLite, append-only,
//! hash-chained) that records decisions, notes and bookmarks.
//!
//! How it is used (through [`crate::query`]'s decision service):
//!
//! 1. [`CaseContext::load`] finds and reads the case file; its
//!    [`CaseContext::resolutions`] become analysis inputs, so that verdicts
//!    reflect earlier decisions.
//! 2. The query layer lists what waits for a reviewer and starts a
//!    [`fsm::Flow`] for one item; the flow walks one decision from
//!    selecting to confirming to recorded.
//! 3. Its [`fsm::Effect::Append`] is performed by [`perform`], which writes
//!    one case file entry in one transaction and answers with the event to
//!    feed back; the query layer then analyses again.

pub mod case;
pub mod fsm;

pub use case::{
    Access, CaseChain, CaseError, CaseFile, DecisionPayload, DecisionRecord, Entry, EntryKind,
    Verification,
};
pub use fsm::{Effect, Event, Flow, State, Subject};

use crate::analysis::Resolution;
use chrono::{DateTime, Utc};
use std::path::{Path, PathBuf};

/// Where the case file path came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseOrigin {
    /// `--case FILE`.
    Flag,
    /// The default beside the first journal ([`case::default_path`]).
    BesideJournal,
    /// No case file: the bundled sample without `--case`.
    None,
}

/// The case file as the front ends see it: where it is, and the decisions
/// read from it (verified entries only).
#[derive(Debug, Clone)]
pub struct CaseContext {
    /// The path, unless there is no case file.
    pub path: Option<PathBuf>,
    /// Where the path came from.
    pub origin: CaseOrigin,
    /// Whether the file exists.
    pub exists: bool,
    /// Decisions from verified entries, in seq order.
    pub decisions: Vec<DecisionRecord>,
    /// Every verified entry (decisions, notes, bookmarks).
    pub entries: Vec<Entry>,
    /// The chain status, when the file exists.
    pub chain: Option<CaseChain>,
}

impl CaseContext {
    /// No case file (a program that loads journals itself).
    pub fn none() -> CaseContext {
        CaseContext {
            path: None,
            origin: CaseOrigin::None,
            exists: false,
            decisions: Vec::new(),
            entries: Vec::new(),
            chain: None,
        }
    }

    /// Finds the case file (`--case`, else beside the first journal, else
    /// none for the bundled sample) and reads it without appending
    /// ([`Access::Read`], or [`Access::ReadOnly`] in read-only mode). A
    /// missing file is an empty case, never created here.
    ///
    /// # Errors
    /// [`CaseError`] when an existing file cannot be read or is not a case
    /// file.
    pub fn load(
        flag: Option<&Path>,
        journals: &[PathBuf],
        read_only: bool,
    ) -> Result<CaseContext, CaseError> {
        let (path, origin) = match (flag, journals.first()) {
            (Some(p), _) => (Some(p.to_path_buf()), CaseOrigin::Flag),
            (None, Some(j)) => (Some(case::default_path(j)), CaseOrigin::BesideJournal),
            (None, None) => (None, CaseOrigin::None),
        };
        let mut ctx = CaseContext {
            path,
            origin,
            exists: false,
            decisions: Vec::new(),
            entries: Vec::new(),
            chain: None,
        };
        let Some(p) = ctx.path.clone() else {
            return Ok(ctx);
        };
        case::check_path(&p)?;
        if !p.exists() {
            return Ok(ctx);
        }
        let access = if read_only {
            Access::ReadOnly
        } else {
            Access::Read
        };
        let c = CaseFile::open(&p, access)?;
        let (entries, chain) = c.load_guarded()?;
        ctx.exists = true;
        ctx.decisions = case::decisions_of(&entries);
        ctx.entries = entries;
        ctx.chain = Some(chain);
        Ok(ctx)
    }

    /// The display name of the case file.
    pub fn name(&self) -> Option<String> {
        self.path.as_ref().map(|p| p.display().to_string())
    }

    /// The decisions as analysis inputs, in seq order.
    pub fn resolutions(&self) -> Vec<Resolution> {
        let name = self.name().unwrap_or_default();
        self.decisions.iter().map(|d| d.resolution(&name)).collect()
    }
}

/// The reviewer name to use: `--reviewer`, else the login name from the
/// environment (`USER`, `LOGNAME`, `USERNAME`).
pub fn reviewer(flag: Option<&str>) -> Option<String> {
    if let Some(r) = flag.map(str::trim).filter(|r| !r.is_empty()) {
        return Some(r.to_string());
    }
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .map(|v| v.trim().to_string())
        .find(|v| !v.is_empty())
}

/// The group a decision is about, stored with it so that a gateway reading
/// the export knows the context.
#[derive(Debug, Clone, Copy)]
pub struct GroupContext<'a> {
    /// Group id.
    pub group_id: &'a str,
    /// The group's verdict before the decision.
    pub verdict_before: crate::analysis::Verdict,
    /// The group's intent fingerprint.
    pub fingerprint: Option<&'a str>,
    /// Anchors of the journals decided on (docs/design.md §6.7), kept with
    /// the decision.
    pub journal_anchors: &'a [serde_json::Value],
}

/// Performs a flow effect against the case file: appends the decision in
/// one transaction, with its group's context, and returns the event to feed
/// back into the flow ([`Event::Recorded`] or [`Event::WriteFailed`])
/// together with the stored record.
pub fn perform(
    case: &mut CaseFile,
    group: GroupContext<'_>,
    effect: &Effect,
    at: DateTime<Utc>,
) -> (Event, Option<DecisionRecord>) {
    let Effect::Append {
        execution_id,
        decision,
        reviewer,
        note,
    } = effect;
    let payload = DecisionPayload {
        execution_id: execution_id.clone(),
        decision: *decision,
        reviewer: reviewer.clone(),
        note: note.clone(),
        group_id: Some(group.group_id.to_string()),
        verdict_before: Some(group.verdict_before.as_str().to_string()),
        fingerprint: group.fingerprint.map(str::to_string),
        journal_anchors: group.journal_anchors.to_vec(),
    };
    match case.record_decision(at, &payload) {
        Ok(r) => (Event::Recorded { seq: r.seq }, Some(r)),
        Err(e) => (Event::WriteFailed(e.to_string()), None),
    }
}
