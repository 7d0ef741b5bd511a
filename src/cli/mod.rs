//! Headless commands (DESIGN.md §7): text and JSON over the query layer.
//! Every TUI view has a twin here.

mod args;
mod text;

pub use args::{Cli, Command, Common};

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
}

impl CliError {
    /// The process exit code (DESIGN.md §7: 2 on unreadable input).
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Input(_) => 2,
            CliError::Output(_) => 1,
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
}

/// Resolves journals, contracts and key from the common options.
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
    Ok(Inputs {
        sources,
        config: Config {
            contracts,
            key,
            resolutions: Vec::new(),
        },
        sample,
    })
}

/// Loads and analyses, reporting bad lines on stderr.
///
/// # Errors
/// [`CliError::Input`] with a one-line message naming file and line.
pub fn open(inputs: Inputs, common: &Common) -> Result<Investigation, CliError> {
    let mut ignore = |_: Progress| {};
    let inv = Investigation::open(
        inputs.sources,
        common.input_format,
        &inputs.config,
        &mut ignore,
    )
    .map_err(|e| CliError::Input(e.to_string()))?;
    report_load(&inv);
    Ok(inv)
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

fn write_json(out: &mut dyn Write, v: &impl serde::Serialize) -> Result<(), CliError> {
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
