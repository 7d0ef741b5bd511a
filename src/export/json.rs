//! The postmortem as JSON: the same content as the Markdown, for tools.
//! Shape: [`super::Report`] (`generator`, `anonymized`, `journals`,
//! `case_file`, `notes`, `groups[]` with `timeline`, `questions`,
//! `findings`, `decisions`, `chain`, `sequence_diagram`).

use super::Report;

/// Renders the report as pretty JSON with a final newline.
pub fn render(r: &Report) -> String {
    // A Report holds only strings, numbers, times and plain enums, which
    // serde_json always serializes.
    let mut s = serde_json::to_string_pretty(r)
        .unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()));
    s.push('\n');
    s
}
