//! Work that runs off the UI thread, like loading (research notes §3.4:
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

use super::app::Data;
use crate::analysis::{self, Analysis, Config};
use crate::export::{Format, Report, Request, atomic};
use crate::review::{
    self, Access, CaseChain, CaseContext, CaseFile, DecisionRecord, Entry, Event, NotQueued,
    QueueItem, case, queue,
};
use chrono::Utc;
use std::collections::HashMap;
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

/// Recording one decision ([`review::Effect::Append`] from the flow).
#[derive(Debug, Clone)]
pub struct RecordJob {
    /// The case file (created by the first decision).
    pub case_path: PathBuf,
    /// The queue item decided about.
    pub item: QueueItem,
    /// Its group's intent fingerprint.
    pub fingerprint: String,
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
    /// The case file and its decisions, for the report's decisions.
    pub case: CaseContext,
}

/// A new analysis of the same journals after a decision.
#[derive(Debug)]
pub struct Reanalysis {
    /// The analysis with every case file decision applied.
    pub analysis: Analysis,
    /// The configuration it was made with.
    pub config: Config,
    /// For each group of the new analysis, its index in the old one
    /// (`None` if it had none): reorders the views kept per group.
    pub order: Vec<Option<usize>>,
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

/// A decision written ([`Event::Recorded`]) or not ([`Event::WriteFailed`]):
/// the event to feed back into the flow, the stored entry, and the case
/// file's verified entries and chain after the write.
#[derive(Debug)]
pub struct Written {
    /// For the flow.
    pub event: Event,
    /// The entry as stored.
    pub record: Option<DecisionRecord>,
    /// Entries and chain status read back after the write.
    pub case: Option<(Vec<Entry>, CaseChain)>,
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
    Exported(Result<Exported, String>),
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
        case: None,
    })))
}

/// Appends the decision (one transaction), reads the case file back, and
/// analyses again with every decision it holds (as a new start would).
fn record(job: &RecordJob, data: &Data, send: &mut dyn FnMut(JobMsg)) -> Option<JobMsg> {
    let path = &job.case_path;
    send(JobMsg::Progress(format!(
        "writing the decision to case file {}…",
        crate::sanitize::escape(&path.display().to_string())
    )));
    let mut file = match CaseFile::open(path, Access::ReadWrite) {
        Ok(f) => f,
        Err(e) => return failed(format!("{}; nothing was recorded", open_error(path, &e))),
    };
    // Someone may have decided since the queue was read (another reviewer
    // on the same case file).
    match file.decisions() {
        Ok((decisions, _)) => {
            if let Err(e @ NotQueued::AlreadyDecided { .. }) =
                queue::find(&data.inv, &decisions, &job.item.execution_id)
            {
                return failed(e.to_string());
            }
        }
        Err(e) => return failed(format!("{e}; nothing was recorded")),
    }
    let (event, record) = review::perform(
        &mut file,
        &job.item,
        Some(&job.fingerprint),
        &job.effect,
        Utc::now(),
    );
    let Some(record) = record else {
        return Some(JobMsg::Written(Box::new(Written {
            event,
            record: None,
            case: None,
        })));
    };
    let loaded = file.load().ok();
    let name = file.name();
    drop(file);
    let decisions = loaded
        .as_ref()
        .map(|(entries, _)| case::decisions_of(entries))
        .unwrap_or_else(|| vec![record.clone()]);
    send(JobMsg::Written(Box::new(Written {
        event,
        record: Some(record),
        case: loaded,
    })));
    send(JobMsg::Progress(
        "analysing again with the decision…".into(),
    ));
    let mut config = data.inv.config.clone();
    config.resolutions = decisions.iter().map(|d| d.resolution(&name)).collect();
    let analysis = analysis::analyze(&data.inv.model, &data.inv.journals, &config);
    let order = order(&data.inv.analysis, &analysis);
    Some(JobMsg::Reanalysed(Box::new(Reanalysis {
        analysis,
        config,
        order,
    })))
}

/// For each group of `new`, its index in `old` (matched by group id).
pub fn order(old: &Analysis, new: &Analysis) -> Vec<Option<usize>> {
    let at: HashMap<&str, usize> = old
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| (g.id.as_str(), i))
        .collect();
    new.groups
        .iter()
        .map(|g| at.get(g.id.as_str()).copied())
        .collect()
}

/// A case file that cannot be opened for writing, in words that say
/// what to do: SQLite's own message ("unable to open database file") does
/// not say that the folder is read-only.
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
    }
    e.to_string()
}

fn export(job: &ExportJob, data: &Data, send: &mut dyn FnMut(JobMsg)) -> Result<Exported, String> {
    send(JobMsg::Progress(format!(
        "writing {}…",
        crate::sanitize::escape(&job.path.display().to_string())
    )));
    let groups = job
        .groups
        .iter()
        .map(|id| data.inv.group(id).map_err(|e| e.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    let report = Report::build(
        &data.inv,
        &Request {
            groups,
            case: &job.case,
            anonymize: false,
            chain_check: None,
        },
    );
    let text = Format::Markdown.render(&report);
    let inputs = atomic::inputs(
        data.inv.journals.iter().map(|j| Path::new(j.name.as_str())),
        job.case.path.as_deref(),
    );
    atomic::check_not_input(&job.path, &inputs)
        .map_err(|e| format!("{e}; nothing was written: choose another file name"))?;
    // The error names the file.
    atomic::write(&job.path, text.as_bytes())
        .map_err(|e| format!("cannot write {e}; nothing was written"))?;
    Ok(Exported {
        path: std::path::absolute(&job.path).unwrap_or_else(|_| job.path.clone()),
        bytes: text.len(),
        what: job.what.clone(),
    })
}
