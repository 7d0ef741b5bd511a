//! The postmortem as JSON: the same content as the Markdown, for tools.
//! Shape: [`super::Report`] (`generator`, `anonymized`, `journals`,
//! `case_file`, `notes`, `groups[]` with `timeline`, `questions`,
//! `findings`, `decisions`, `chain`, `sequence_diagram`).

use super::Report;

/// Renders the report as pretty JSON with a final newline. Characters a
/// terminal would act on (C1 controls, bidirectional overrides, invisible
/// characters) are written as `\uXXXX` escapes: the same JSON, safe to print.
pub fn render(r: &Report) -> String {
    let mut out = Vec::new();
    // A Report holds only strings, numbers, times and plain enums, which
    // serde_json always serializes; writing into a Vec cannot fail.
    if let Err(e) = crate::sanitize::write_json_pretty(&mut out, r) {
        return format!("{{\"error\":{:?}}}\n", e.to_string());
    }
    let mut s = String::from_utf8(out).unwrap_or_default();
    s.push('\n');
    s
}
