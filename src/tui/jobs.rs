//! Work that runs off the UI thread, like loading (docs/design.md §9.3:
//! slow work reports over a channel; gitui's asyncgit): recording a
//! reviewer decision in the case file and analysing again, and writing a
//! postmortem export.
//!
//! [`run`] does one job and is what the tests call; [`spawn`] runs it on a
//! thread and sends its messages. A job reads the loaded journals through
//! an `Arc` that it lets go of *before* it sends its last message, so that
//! the UI thread, which applies that message, is again the only owner and
//! can swap the new analysis in ([`super::App::on_job`]). One job runs at a
//! time ([`super::App::job`]).

use super::data::Data;
use crate::export::{Format, Report, Request, atomic};
use crate::query::{DecisionRecord, QueryError, QueueItem, Reanalysis};
use crate::review::{self, Event};
use chrono::Utc;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A job for the background.
#[derive(Debug, Clone)]
pub enum Job {
    /// Append a decision to the case file, then analyse again.
    Record(Box<RecordJob>),
    /// Write a Markdown postmortem.
    Export(Box<ExportJob>),
}

impl Job {
    /// What the job does, for the key line while it runs.
    pub fn describe(&self) -> String {
        match self {
            Job::Record(r) => format!(
                "recording a decision about {}",
                crate::sanitize::escape(&r.item.execution_id)
            ),
            Job::Export(e) => format!(
                "writing {}",
                crate::sanitize::escape(&e.path.display().to_string())
            ),
        }
    }
}

/// Recording one decision ([`review::Effect::Append`] from the flow) in
/// the investigation's case file (created by the first decision).
#[derive(Debug, Clone)]
pub struct RecordJob {
    /// The queue item decided about.
    pub item: QueueItem,
    /// What the flow asks to append.
    pub effect: review::Effect,
}

/// Writing a Markdown postmortem of some groups.
#[derive(Debug, Clone)]
pub struct ExportJob {
    /// The file to write (atomically).
    pub path: PathBuf,
    /// Group ids, in order.
    pub groups: Vec<String>,
    /// `group g…` or `3 groups`, for the message.
    pub what: String,
}

/// A written export.
#[derive(Debug, Clone)]
pub struct Exported {
    /// Where (absolute when it could be made so).
    pub path: PathBuf,
    /// Size in bytes.
    pub bytes: usize,
    /// What it covers.
    pub what: String,
}

/// Why a postmortem was not written (nothing was: the file is written whole
/// or not at all).
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// A group the export names is not in the analysis.
    #[error(transparent)]
    Group(#[from] QueryError),
    /// The file named is one of the inputs retrace reads.
    #[error("{0}; nothing was written: choose another file name")]
    Input(#[from] atomic::IsInput),
    /// The file could not be written (the error names it).
    #[error("cannot write {0}; nothing was written")]
    Write(#[from] std::io::Error),
}

/// A decision written ([`Event::Recorded`]) or not ([`Event::WriteFailed`]):
/// the event to feed back into the flow, and the stored entry.
#[derive(Debug)]
pub struct Written {
    /// For the flow.
    pub event: Event,
    /// The entry as stored.
    pub record: Option<DecisionRecord>,
}

/// What a job reports.
#[derive(Debug)]
pub enum JobMsg {
    /// What it is doing now.
    Progress(String),
    /// The decision was written, or not.
    Written(Box<Written>),
    /// The analysis with the decision applied.
    Reanalysed(Box<Reanalysis>),
    /// The export was written, or why not.
    Exported(Result<Exported, ExportError>),
    /// The job stopped on an internal error.
    Failed(String),
}

/// Runs `job` on a thread; every message goes to `send`. The last one is
/// sent after the job has dropped its share of `data`.
///
/// A job that panics is reported as [`JobMsg::Failed`] instead of leaving
/// the UI waiting (a case file entry is committed whole or not at all, so
/// reopening shows where it stands).
pub fn spawn(job: Job, data: Arc<Data>, send: impl Fn(JobMsg) + Send + 'static) {
    std::thread::spawn(move || {
        let last = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            run(job, &data, &mut |m| send(m))
        }));
        drop(data);
        match last {
            Ok(Some(m)) => send(m),
            Ok(None) => {}
            Err(p) => {
                let why = p
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| p.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a panic".into());
                send(JobMsg::Failed(why));
            }
        }
    });
}

/// Does `job` here: progress and intermediate messages go to `send`; the
/// last message ([`JobMsg::Reanalysed`], [`JobMsg::Exported`], or a
/// failed [`JobMsg::Written`]) is returned, for the caller to deliver once
/// it no longer reads `data`.
pub fn run(job: Job, data: &Data, send: &mut dyn FnMut(JobMsg)) -> Option<JobMsg> {
    match job {
        Job::Record(r) => record(&r, data, send),
        Job::Export(e) => Some(JobMsg::Exported(export(&e, data, send))),
    }
}

fn failed(why: String) -> Option<JobMsg> {
    Some(JobMsg::Written(Box::new(Written {
        event: Event::WriteFailed(why),
        record: None,
    })))
}

/// Records the decision through the query layer's decision service (one
/// case file transaction, checked against the case file as it is now),
/// then analyses again with every decision the case file holds.
fn record(job: &RecordJob, data: &Data, send: &mut dyn FnMut(JobMsg)) -> Option<JobMsg> {
    let path = data.inv.case().name().unwrap_or_default();
    send(JobMsg::Progress(format!(
        "writing the decision to case file {}…",
        crate::sanitize::escape(&path)
    )));
    let recorded = match data.inv.record(&job.item, &job.effect, Utc::now()) {
        Ok(r) => r,
        // Decided by someone else in the meantime, or the write failed:
        // the flow shows it and lets the reviewer retry or go back.
        Err(e) => return failed(e.to_string()),
    };
    send(JobMsg::Written(Box::new(Written {
        event: Event::Recorded {
            seq: recorded.record.seq,
        },
        record: Some(recorded.record.clone()),
    })));
    send(JobMsg::Progress(
        "analysing again with the decision…".into(),
    ));
    Some(JobMsg::Reanalysed(Box::new(
        data.inv.reanalysis(recorded.case),
    )))
}

fn export(
    job: &ExportJob,
    data: &Data,
    send: &mut dyn FnMut(JobMsg),
) -> Result<Exported, ExportError> {
    send(JobMsg::Progress(format!(
        "writing {}…",
        crate::sanitize::escape(&job.path.display().to_string())
    )));
    let groups = job
        .groups
        .iter()
        .map(|id| data.inv.group(id))
        .collect::<Result<Vec<_>, _>>()?;
    let report = Report::build(
        &data.inv,
        &Request {
            groups,
            case: data.inv.case(),
            anonymize: false,
            chain_check: None,
            abridge: true,
        },
    );
    let text = Format::Markdown.render(&report);
    let inputs = atomic::inputs(
        data.inv
            .journals()
            .iter()
            .map(|j| Path::new(j.name.as_str())),
        data.inv.case().path.as_deref(),
    );
    atomic::check_not_input(&job.path, &inputs)?;
    // The error names the file.
    atomic::write(&job.path, text.as_bytes())?;
    Ok(Exported {
        path: std::path::absolute(&job.path).unwrap_or_else(|_| job.path.clone()),
        bytes: text.len(),
        what: job.what.clone(),
    })
}
