//! Reviewer decisions (DESIGN.md §5, the seed's "Approval is evidence, not
//! an idempotency mechanism"): the review queue over the query layer, a
//! pure decision state machine, and the case file (SQLite, append-only,
//! hash-chained) that records decisions, notes and bookmarks.
//!
//! How a front end uses it:
//!
//! 1. [`CaseContext::load`] finds and reads the case file; its
//!    [`CaseContext::resolutions`] go into [`crate::analysis::Config`] so
//!    that verdicts reflect earlier decisions.
//! 2. [`queue::queue`] lists what waits for a reviewer, oldest first.
//! 3. [`fsm::Flow`] walks one decision from selecting to confirming to
//!    recorded; its [`fsm::Effect::Append`] is performed by [`perform`],
//!    which writes one case file entry in one transaction and answers with
//!    the event to feed back.
//! 4. Re-run the analysis with the new resolution to show the verdict
//!    change and its provenance.

pub mod case;
pub mod fsm;
pub mod queue;

pub use case::{
    Access, CaseChain, CaseError, CaseFile, DecisionPayload, DecisionRecord, Entry, EntryKind,
    Verification,
};
pub use fsm::{Effect, Event, Flow, State, Subject};
pub use queue::{NotQueued, QueueItem};

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

/// Performs a flow effect against the case file: appends the decision in
/// one transaction, with the queue item's group context, and returns the
/// event to feed back into the flow ([`Event::Recorded`] or
/// [`Event::WriteFailed`]) together with the stored record.
pub fn perform(
    case: &mut CaseFile,
    item: &QueueItem,
    fingerprint: Option<&str>,
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
        group_id: Some(item.group_id.clone()),
        verdict_before: Some(item.group_verdict.as_str().to_string()),
        fingerprint: fingerprint.map(str::to_string),
    };
    match case.record_decision(at, &payload) {
        Ok(r) => (Event::Recorded { seq: r.seq }, Some(r)),
        Err(e) => (Event::WriteFailed(e.to_string()), None),
    }
}
