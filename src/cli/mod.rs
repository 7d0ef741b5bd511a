//! Headless commands (DESIGN.md §7): text and JSON over the query layer.
//! Every TUI view has a twin here.

mod args;
mod export;
mod review;
mod text;

pub use args::{Cli, Command, Common, ExportFormat, ReviewCommand};
pub use export::export;
pub use review::{review_decide, review_export, review_list};

use crate::analysis::{Config, Contracts, FingerprintKey};
use crate::journal::{JournalSource, Progress};
use crate::query::{GroupFilter, Investigation};
use crate::sanitize::escape;
use std::io::{self, Write};

/// What went wrong, and the process exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Unreadable input (a journal, contracts, key): exit 2.
    #[error("{0}")]
    Input(String),
    /// Writing output failed (a closed pipe is not an error).
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    /// A write was refused (read-only mode, a broken case file) or failed
    /// (the case file or an export file could not be written): exit 1.
    /// Nothing was half-written.
    #[error("{0}")]
    Write(String),
}

impl CliError {
    /// The process exit code (DESIGN.md §7: 2 on unreadable input).
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Input(_) => 2,
            CliError::Output(_) | CliError::Write(_) => 1,
        }
    }
}

/// Journals and configuration resolved from the command line. With no
/// journal, the bundled sample incident with its own contracts and key.
pub struct Inputs {
    /// Journals to load.
    pub sources: Vec<JournalSource>,
    /// Contracts and key.
    pub config: Config,
    /// True when the bundled sample is used.
    pub sample: bool,
    /// The case file and the decisions read from it.
    pub case: crate::review::CaseContext,
}

/// Resolves journals, contracts and key from the common options, and reads
/// the case file (`--case`, else `retrace-case.sqlite` beside the first
/// journal, else none for the bundled sample): its decisions become
/// [`Config::resolutions`]. A broken case chain is reported on stderr and
/// only the entries before the break are used.
///
/// # Errors
/// [`CliError::Input`] naming the file that cannot be read.
pub fn inputs(journals: &[std::path::PathBuf], common: &Common) -> Result<Inputs, CliError> {
    let sample = journals.is_empty();
    let sources = if sample {
        crate::sample::sources()
    } else {
        journals.iter().map(JournalSource::file).collect()
    };
    let contracts = match &common.contracts {
        Some(p) => Contracts::load(p).map_err(|e| CliError::Input(e.to_string()))?,
        None if sample => crate::sample::contracts(),
        None => Contracts::none(),
    };
    let key = match &common.key_file {
        Some(p) => FingerprintKey::load(p).map_err(|e| CliError::Input(e.to_string()))?,
        None if sample => crate::sample::key(),
        None => FingerprintKey::none(),
    };
    let case = crate::review::CaseContext::load(common.case.as_deref(), journals, common.read_only)
        .map_err(|e| CliError::Input(e.to_string()))?;
    if let (Some(status), Some(name)) = (&case.chain, case.name())
        && !status.is_intact()
    {
        let _ = writeln!(
            io::stderr(),
            "warning: case file {}: chain {}; later entries are ignored (run `retrace verify`)",
            escape(&name),
            escape(&status.describe())
        );
    }
    let resolutions = case.resolutions();
    Ok(Inputs {
        sources,
        config: Config {
            contracts,
            key,
            resolutions,
        },
        sample,
        case,
    })
}

/// Loads and analyses, reporting bad lines on stderr.
///
/// # Errors
/// [`CliError::Input`] with a one-line message naming file and line.
pub fn open(inputs: Inputs, common: &Common) -> Result<Investigation, CliError> {
    open_keeping(inputs, common).map(|(inv, _, _)| inv)
}

/// As [`open`], and gives back the configuration and the case file for
/// commands that re-analyse after a decision or cite the case file.
///
/// # Errors
/// As [`open`].
pub fn open_keeping(
    inputs: Inputs,
    common: &Common,
) -> Result<(Investigation, Config, crate::review::CaseContext), CliError> {
    let mut ignore = |_: Progress| {};
    let inv = Investigation::open(
        inputs.sources,
        common.input_format,
        &inputs.config,
        &mut ignore,
    )
    .map_err(|e| CliError::Input(e.to_string()))?;
    report_load(&inv);
    Ok((inv, inputs.config, inputs.case))
}

/// Prints bad-line warnings and journal notes to stderr (at most ten bad
/// lines per journal, then a count).
fn report_load(inv: &Investigation) {
    let mut err = io::stderr().lock();
    for j in &inv.journals {
        for b in j.bad_lines.iter().take(10) {
            let _ = writeln!(err, "warning: {}", escape(&b.to_string()));
        }
        if j.bad_line_count > 10 {
            let _ = writeln!(
                err,
                "warning: {}: {} more bad line(s) not shown",
                escape(&j.name),
                j.bad_line_count - 10
            );
        }
        if j.bad_line_count > 0 {
            let _ = writeln!(
                err,
                "warning: {}: {} of {} lines could not be read and were skipped; the rest were used",
                escape(&j.name),
                j.bad_line_count,
                j.lines
            );
        }
    }
    for n in &inv.analysis.notes {
        let _ = writeln!(err, "note: {}", escape(n));
    }
}

pub(crate) fn write_json(out: &mut dyn Write, v: &impl serde::Serialize) -> Result<(), CliError> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(io::Error::from)?;
    writeln!(out)?;
    Ok(())
}

/// `retrace groups`.
///
/// # Errors
/// Input or output errors.
pub fn groups(
    inv: &Investigation,
    all: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let filter = GroupFilter {
        all,
        ..GroupFilter::default()
    };
    let groups = inv.groups(&filter);
    if json {
        let v: Vec<_> = groups.iter().map(|g| inv.summary(g)).collect();
        return write_json(out, &v);
    }
    text::groups(inv, &groups, all, out)?;
    Ok(())
}

/// `retrace investigate --group ID`.
///
/// # Errors
/// An unknown or ambiguous group id is an input error.
pub fn investigate(
    inv: &Investigation,
    id: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let g = inv.group(id).map_err(|e| CliError::Input(e.to_string()))?;
    let d = inv.detail(g);
    if json {
        return write_json(out, &d);
    }
    text::investigate(&d, out)?;
    Ok(())
}
