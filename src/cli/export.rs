//! `retrace export`: the postmortem in Markdown, JSON or CSV, to stdout or
//! atomically to a file.

use super::{CliError, Common, ExportFormat, Inputs, open_keeping};
use crate::export::{Format, Report, Request, atomic};
use crate::query::GroupFilter;
use std::io::Write;
use std::path::Path;

/// `retrace export (--group ID | --all) --format F [-o FILE] [--anonymize]`.
///
/// # Errors
/// [`CliError::Input`] for an unknown group; [`CliError::Write`] in
/// read-only mode with `-o`, or when the file cannot be written (it is then
/// untouched).
pub fn export(
    inputs: Inputs,
    common: &Common,
    group: Option<&str>,
    format: ExportFormat,
    output: Option<&Path>,
    anonymize: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if common.read_only && output.is_some() {
        return Err(CliError::Write(
            "read-only mode (--read-only): not writing a file; leave out -o to print to stdout"
                .into(),
        ));
    }
    let (inv, _, case) = open_keeping(inputs, common)?;
    let groups = match group {
        Some(id) => vec![inv.group(id).map_err(|e| CliError::Input(e.to_string()))?],
        None => inv.groups(&GroupFilter::default()),
    };
    let report = Report::build(
        &inv,
        &Request {
            groups,
            case: &case,
            anonymize,
            chain_check: None,
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
