//! `retrace contracts draft` and `retrace contracts lint` (docs/design.md
//! §4.6): text and JSON over the query layer's drafts and lint findings.

use super::CliError;
use super::export::open_for_output;
use crate::query::Setup;
use crate::sanitize::escape;
use std::io::Write;
use std::path::Path;

/// `retrace contracts draft`: the drafted contracts file (or its drafts as
/// JSON) to `out`, or atomically to `output`.
///
/// # Errors
/// Unreadable journals, an output that is one of the inputs, a failed write.
pub fn draft(
    setup: &Setup,
    output: Option<&Path>,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (output, inv) = open_for_output(setup, output)?;
    let text = if json {
        let mut buf = Vec::new();
        super::write_json(&mut buf, &inv.draft_contracts())?;
        String::from_utf8_lossy(&buf).into_owned()
    } else {
        inv.draft_contracts_toml()
    };
    match output {
        Some(p) => crate::export::atomic::write(p, text.as_bytes()).map_err(|e| {
            CliError::Write(format!(
                "cannot write {}: {e}; the file is untouched",
                p.display()
            ))
        })?,
        None => out.write_all(text.as_bytes())?,
    }
    Ok(())
}

/// `retrace contracts lint`: the findings, and exit code 1 when one says
/// the calls contradict the contracts ([`crate::analysis::draft::LintKind::contradicts`];
/// 0 when the contracts fit the calls, a contract of a tool never called
/// included).
///
/// # Errors
/// Unreadable journals or contracts; output errors.
pub fn lint(setup: &Setup, json: bool, out: &mut dyn Write) -> Result<u8, CliError> {
    let inv = super::open(setup)?;
    let findings = inv.lint_contracts();
    if json {
        super::write_json(out, &findings)?;
    } else if findings.is_empty() {
        writeln!(out, "contracts lint: nothing to report")?;
    } else {
        writeln!(out, "contracts lint: {} finding(s)", findings.len())?;
        for f in &findings {
            let kind: &'static str = f.kind.into();
            writeln!(out, "  {kind:<22} {}", escape(&f.message))?;
        }
    }
    Ok(u8::from(findings.iter().any(|f| f.kind.contradicts())))
}
