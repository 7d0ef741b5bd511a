//! `retrace export`: the postmortem in Markdown, JSON or CSV, to stdout or
//! atomically to a file.

use super::{CliError, ExportFormat};
use crate::export::{Format, Report, Request, atomic};
use crate::query::{GroupFilter, Investigation, QueryError, Setup};
use std::io::Write;
use std::path::{Path, PathBuf};

/// `-o -` means stdout, as no `-o` does.
pub(super) fn output_file(output: Option<&Path>) -> Option<&Path> {
    output.filter(|p| p.as_os_str() != "-")
}

/// Opens the investigation of a command that writes a file (`-o`, `-`
/// for stdout): refused in read-only mode, the output checked against the
/// inputs before anything is read, warnings and load notes said on stderr.
/// Returns the output file (`None`: stdout) and the investigation.
///
/// # Errors
/// As [`check_output`]; [`CliError::Write`] for `-o` in read-only mode;
/// the setup's and the journals' errors.
pub(super) fn open_for_output<'a>(
    setup: &Setup,
    output: Option<&'a Path>,
) -> Result<(Option<&'a Path>, Investigation), CliError> {
    let output = output_file(output);
    if setup.read_only && output.is_some() {
        return Err(CliError::Write(
            "read-only mode (--read-only): not writing a file; leave out -o to print to stdout"
                .into(),
        ));
    }
    let prepared = setup.prepare().map_err(QueryError::from)?;
    if let Some(p) = output {
        check_output(p, prepared.input_files())?;
    }
    super::warn(&prepared.warnings);
    super::notes(&prepared.skipped);
    let said = prepared.skipped.len();
    let inv = Investigation::load(prepared, &mut |_| {})?;
    super::notes(inv.skipped().get(said..).unwrap_or_default());
    super::report_load(&inv);
    Ok((output, inv))
}

/// Checks an output file before anything is read or written: never one of
/// the command's inputs (exit 2), never a special file or a link (exit 1).
///
/// # Errors
/// [`CliError::Input`] for an input, [`CliError::Write`] for a special file.
pub(super) fn check_output(path: &Path, inputs: &[(PathBuf, String)]) -> Result<(), CliError> {
    atomic::check_not_input(path, inputs).map_err(|e| {
        CliError::Input(format!(
            "{e} (choose another file with -o, or leave out -o to print to stdout)"
        ))
    })?;
    if let Some(kind) = atomic::not_regular(path) {
        return Err(CliError::Write(format!(
            "{} is {kind}, not a regular file; only a regular file is ever replaced (write to another file, or leave out -o to print to stdout)",
            crate::sanitize::escape(&path.display().to_string())
        )));
    }
    Ok(())
}

/// `retrace export (--group ID | --all) --format F [-o FILE] [--anonymize]`.
/// `-o -` prints to stdout.
///
/// # Errors
/// [`CliError::Input`] for an unknown group, or an output file that is one
/// of the inputs (a journal, the case file, contracts, keys);
/// [`CliError::Write`] in read-only mode with `-o`, for an output that is
/// not a regular file, or when the file cannot be written (it is then
/// untouched).
pub fn export(
    setup: &Setup,
    group: Option<&str>,
    format: ExportFormat,
    output: Option<&Path>,
    anonymize: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (output, inv) = open_for_output(setup, output)?;
    let groups = match group {
        Some(id) => vec![inv.group(id)?],
        None => inv.groups(&GroupFilter::default()),
    };
    let report = Report::build(
        &inv,
        &Request {
            groups,
            case: inv.case(),
            anonymize,
            chain_check: None,
            abridge: matches!(format, ExportFormat::Markdown),
        },
    );
    let format = match format {
        ExportFormat::Markdown => Format::Markdown,
        ExportFormat::Json => Format::Json,
        ExportFormat::Csv => Format::Csv,
    };
    let text = format.render(&report);
    match output {
        Some(p) => atomic::write(p, text.as_bytes()).map_err(|e| {
            CliError::Write(format!(
                "cannot write {}: {e}; the file is untouched",
                p.display()
            ))
        })?,
        None => out.write_all(text.as_bytes())?,
    }
    Ok(())
}
