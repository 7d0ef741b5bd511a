//! The one reviewer-decision service (docs/design.md §5: a decision
//! resolves the unknown outcome it is about, and verdicts update with its
//! provenance). `retrace review decide` and the TUI's decision dialog both
//! go through it: the preconditions ([`Investigation::cannot_decide`],
//! [`Investigation::decision_flow`]), the write
//! ([`Investigation::record`]: one case file transaction, checked against
//! the case file as it is at that moment), and the analysis again
//! ([`Investigation::reanalysis`], [`Investigation::apply`]), which the TUI
//! runs off its UI thread.

use super::queue::{NotQueued, find};
use super::{GroupIdx, Investigation, QueueItem};
use crate::analysis::{self, Analysis, Config, Decision, Verdict};
use crate::review::{self, Access, CaseContext, CaseFile, DecisionRecord, Effect, Flow, Subject};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::path::Path;

/// A decision as a headless front end collected it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecisionRequest {
    /// The execution decided about.
    pub execution_id: String,
    /// What the reviewer decided.
    pub decision: Decision,
    /// What the target shows (required).
    pub note: String,
}

/// Why a decision was not recorded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecisionError {
    /// `--read-only`.
    #[error("read-only mode (--read-only): decisions are disabled; nothing was recorded")]
    ReadOnly,
    /// The bundled sample without `--case`.
    #[error(
        "the bundled sample has no case file: give one with --case FILE to record decisions about it"
    )]
    NoCaseFile,
    /// A broken case file chain is never extended.
    #[error(
        "decisions disabled: a broken case file chain is never extended, nothing was recorded (run `retrace verify`); case file {path}: chain {chain}"
    )]
    BrokenCase {
        /// The case file.
        path: String,
        /// Its chain status in words.
        chain: String,
    },
    /// No reviewer name.
    #[error("no reviewer name: give one with --reviewer NAME (no login name in USER or LOGNAME)")]
    NoReviewer,
    /// The execution does not wait for this decision.
    #[error(transparent)]
    NotQueued(#[from] NotQueued),
    /// The decision flow refused it (no note, a decision the journal
    /// contradicts).
    #[error("{0}")]
    Refused(String),
    /// The case file could not be written; nothing was recorded.
    #[error("{0}")]
    Write(String),
}

impl DecisionError {
    /// Whether the request itself was refused (bad input: exit 2), as
    /// opposed to a write that was refused or failed (exit 1).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            DecisionError::NoCaseFile
                | DecisionError::NoReviewer
                | DecisionError::NotQueued(_)
                | DecisionError::Refused(_)
        )
    }
}

/// A decision written to the case file, with the case file as read back
/// after the write.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// The entry as stored.
    pub record: DecisionRecord,
    /// The case file after the write (every verified entry, its chain).
    pub case: CaseContext,
}

/// A new analysis of the same journals with the case file's decisions:
/// made with [`Investigation::reanalysis`] (anywhere, it only reads), taken
/// in with [`Investigation::apply`].
#[derive(Debug)]
pub struct Reanalysis {
    analysis: Analysis,
    config: Config,
    case: CaseContext,
    /// For each group of the new analysis, its position in the old one
    /// (`None` if it had none): reorders views kept per group.
    pub order: Vec<Option<GroupIdx>>,
}

/// An analysis replaced by [`Investigation::apply`], to be dropped.
#[derive(Debug)]
pub struct Retired(#[allow(dead_code)] Analysis);

/// What `retrace review decide` reports.
#[derive(Debug, Clone)]
pub struct Decided {
    /// The entry as stored.
    pub record: DecisionRecord,
    /// The case file's display name.
    pub case_file: String,
    /// The group decided about.
    pub group_id: String,
    /// Its verdict before the decision.
    pub verdict_before: Verdict,
    /// Its verdict after.
    pub verdict_after: Verdict,
    /// An analysis note about the decision (it did not apply), if any.
    pub note: Option<String>,
}

impl Investigation {
    /// Why no decision can be recorded at all now, if none can: read-only
    /// mode, no case file, a broken case file chain, no reviewer name.
    pub fn cannot_decide(&self) -> Option<DecisionError> {
        decision_blocker(self.read_only, &self.case, self.reviewer.as_deref())
    }

    /// The decision flow for a queue item, for a front end to drive.
    ///
    /// # Errors
    /// [`Investigation::cannot_decide`]'s reasons.
    pub fn decision_flow(&self, item: &QueueItem) -> Result<Flow, DecisionError> {
        if let Some(e) = self.cannot_decide() {
            return Err(e);
        }
        Ok(Flow::new(Subject {
            execution_id: item.execution_id.clone(),
            group_id: item.group_id.clone(),
            allowed: item.allowed.clone(),
            reviewer: self.reviewer.clone().unwrap_or_default(),
            read_only: self.read_only,
        }))
    }

    /// Appends what a confirmed flow asks for ([`Effect::Append`]) to the
    /// case file in one transaction (creating the file on the first
    /// decision), after checking the case file as it is now (another
    /// reviewer may have decided since the queue was read), and reads the
    /// case file back.
    ///
    /// # Errors
    /// [`DecisionError::NotQueued`] when it was decided in the meantime,
    /// [`DecisionError::Write`] when the case file cannot be written
    /// (nothing was recorded), and the reasons of
    /// [`Investigation::cannot_decide`].
    pub fn record(
        &self,
        item: &QueueItem,
        effect: &Effect,
        at: DateTime<Utc>,
    ) -> Result<Recorded, DecisionError> {
        if let Some(e) = self.cannot_decide() {
            return Err(e);
        }
        let path = self.case.path.clone().ok_or(DecisionError::NoCaseFile)?;
        let mut file = CaseFile::open(&path, Access::ReadWrite).map_err(|e| {
            DecisionError::Write(format!("{}; nothing was recorded", open_error(&path, &e)))
        })?;
        let (decisions, _) = file
            .decisions()
            .map_err(|e| DecisionError::Write(format!("{e}; nothing was recorded")))?;
        if let Err(e @ NotQueued::AlreadyDecided { .. }) =
            find(self, &decisions, &item.execution_id)
        {
            return Err(e.into());
        }
        let fingerprint = self
            .group(&item.group_id)
            .ok()
            .map(|g| g.fingerprint().to_string());
        // The journals as they were when decided on (docs/design.md §6.7).
        let anchors: Vec<serde_json::Value> = self
            .journals
            .iter()
            .filter_map(|j| super::anchor::take(Path::new(&j.name), at).ok())
            .filter_map(|a| serde_json::to_value(a).ok())
            .collect();
        let group = review::GroupContext {
            group_id: &item.group_id,
            verdict_before: item.group_verdict,
            fingerprint: fingerprint.as_deref(),
            journal_anchors: &anchors,
        };
        let (event, record) = review::perform(&mut file, group, effect, at);
        let Some(record) = record else {
            // Decided by someone else in the meantime: said as the
            // precondition says it.
            if let Ok((d, _)) = file.decisions()
                && let Err(e @ NotQueued::AlreadyDecided { .. }) =
                    find(self, &d, &item.execution_id)
            {
                return Err(e.into());
            }
            let why = match event {
                review::Event::WriteFailed(w) => w,
                _ => "the case file refused the entry".to_string(),
            };
            return Err(DecisionError::Write(why));
        };
        let mut case = self.case.clone();
        if let Ok((entries, chain)) = file.load() {
            case.decisions = review::case::decisions_of(&entries);
            case.entries = entries;
            case.chain = Some(chain);
        } else {
            case.decisions.push(record.clone());
        }
        case.exists = true;
        Ok(Recorded { record, case })
    }

    /// The analysis again with every decision of `case` applied, as a new
    /// start would make it.
    pub fn reanalysis(&self, case: CaseContext) -> Reanalysis {
        let mut config = self.config.clone();
        config.resolutions = case.resolutions();
        let analysis = analysis::analyze(&self.model, &self.journals, &config);
        let at: HashMap<&str, usize> = self
            .analysis
            .groups
            .iter()
            .enumerate()
            .map(|(i, g)| (g.id.as_str(), i))
            .collect();
        let order = analysis
            .groups
            .iter()
            .map(|g| at.get(g.id.as_str()).map(|&i| GroupIdx::new(i)))
            .collect();
        Reanalysis {
            analysis,
            config,
            case,
            order,
        }
    }

    /// Takes in a new analysis; gives back the old one, for the caller to
    /// drop where it likes (freeing a large analysis takes a while).
    pub fn apply(&mut self, r: Reanalysis) -> Retired {
        self.config = r.config;
        self.case = r.case;
        Retired(std::mem::replace(&mut self.analysis, r.analysis))
    }

    /// `retrace review decide`: checks the request, drives the decision
    /// flow headless (the command line is the confirmation), records the
    /// decision and analyses again.
    ///
    /// # Errors
    /// [`DecisionError`]; [`DecisionError::is_refusal`] tells a refused
    /// request from a refused or failed write.
    pub fn decide(
        &mut self,
        req: &DecisionRequest,
        at: DateTime<Utc>,
    ) -> Result<Decided, DecisionError> {
        // The reviewer name is asked for after the execution: an unknown
        // execution is the more useful thing to hear first.
        match self.cannot_decide() {
            Some(DecisionError::NoReviewer) | None => {}
            Some(e) => return Err(e),
        }
        let item = self.queued(&req.execution_id)?;
        let mut flow = self.decision_flow(&item)?;
        use review::{Event, State, fsm::NoteEdit};
        flow.handle(Event::Choose(req.decision));
        flow.handle(Event::EditNote(NoteEdit::Set(req.note.clone())));
        flow.handle(Event::Submit);
        if let State::Selecting {
            problem: Some(p), ..
        } = &flow.state
        {
            return Err(DecisionError::Refused(p.clone()));
        }
        let effects = flow.handle(Event::Confirm);
        let Some(effect) = effects.first() else {
            let why = match &flow.state {
                State::Confirming {
                    problem: Some(p), ..
                } => p.clone(),
                s => format!("the decision flow stopped in {s:?}"),
            };
            return Err(DecisionError::Write(why));
        };
        check_writable_place(self.case.path.as_deref(), self.case.origin)?;
        let group = self.group(&item.group_id).ok();
        let verdict_before = group.map_or(item.group_verdict, |g| g.verdict());
        let recorded = self.record(&item, effect, at)?;
        let case_file = recorded.case.name().unwrap_or_default();
        let r = self.reanalysis(recorded.case);
        drop(self.apply(r));
        let verdict_after = self
            .group(&item.group_id)
            .map_or(verdict_before, |g| g.verdict());
        let note = self
            .notes()
            .iter()
            .find(|n| n.contains(&item.execution_id))
            .cloned();
        Ok(Decided {
            record: recorded.record,
            case_file,
            group_id: item.group_id,
            verdict_before,
            verdict_after,
            note,
        })
    }
}

/// Why no decision can be recorded with these settings, if none can:
/// read-only mode, no case file, a broken case file chain, no reviewer.
pub fn decision_blocker(
    read_only: bool,
    case: &CaseContext,
    reviewer: Option<&str>,
) -> Option<DecisionError> {
    if read_only {
        return Some(DecisionError::ReadOnly);
    }
    let Some(path) = case.name() else {
        return Some(DecisionError::NoCaseFile);
    };
    if let Some(c) = &case.chain
        && !c.is_intact()
    {
        return Some(DecisionError::BrokenCase {
            path,
            chain: c.describe(),
        });
    }
    reviewer.is_none().then_some(DecisionError::NoReviewer)
}

/// Whether the place a case file goes can be written; the message says
/// what to do when not.
fn check_writable_place(
    path: Option<&Path>,
    origin: review::CaseOrigin,
) -> Result<(), DecisionError> {
    let Some(path) = path else {
        return Err(DecisionError::NoCaseFile);
    };
    if path.exists() {
        let ro = std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly());
        if ro {
            return Err(DecisionError::Write(format!(
                "case file {} is read-only; nothing was recorded (choose another with --case FILE)",
                path.display()
            )));
        }
        return Ok(());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let why = match std::fs::metadata(dir).map(|m| m.permissions().readonly()) {
        Err(e) => Some(format!("its folder {} cannot be used: {e}", dir.display())),
        Ok(true) => Some(format!("its folder {} is read-only", dir.display())),
        Ok(false) => None,
    };
    match why {
        Some(why) => Err(DecisionError::Write(format!(
            "cannot create the case file {}{}: {why}; nothing was recorded (choose a case file with --case FILE)",
            path.display(),
            if origin == review::CaseOrigin::BesideJournal {
                " beside the journals"
            } else {
                ""
            }
        ))),
        None => Ok(()),
    }
}

/// A case file that cannot be opened for writing, in words that say what to
/// do: SQLite's own message ("unable to open database file") does not say
/// that the folder is read-only.
fn open_error(path: &Path, e: &review::CaseError) -> String {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !path.exists() {
        match std::fs::metadata(dir) {
            Err(err) => {
                return format!(
                    "cannot create case file {}: its folder {} cannot be used: {err}",
                    path.display(),
                    dir.display()
                );
            }
            Ok(m) if m.permissions().readonly() => {
                return format!(
                    "cannot create case file {}: its folder {} is read-only (start retrace with --case FILE elsewhere)",
                    path.display(),
                    dir.display()
                );
            }
            Ok(_) => {}
        }
    } else if let Err(err) = std::fs::OpenOptions::new().append(true).open(path) {
        return format!(
            "case file {} cannot be written: {err}; it can still be read, but a decision needs a writable case file (copy it elsewhere and start retrace with --case FILE)",
            path.display()
        );
    } else if let Err(err) = tempfile::tempfile_in(dir) {
        return format!(
            "case file {} cannot be written: its folder {} is not writable ({err}), and SQLite writes its journal beside it; a decision needs a writable folder (copy the case file elsewhere and use --case FILE)",
            path.display(),
            dir.display()
        );
    }
    e.to_string()
}
