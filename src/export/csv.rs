//! The timeline as CSV (RFC 4180): one row per lifecycle event and per
//! reviewer decision, for every exported group.
//!
//! Columns: `group_id, verdict, severity, time_utc, offset_ms,
//! execution_id, call_id, stage, detail, evidence`. Cells that a
//! spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`,
//! TAB or CR; OWASP "CSV Injection") are prefixed with `'`. Every cell
//! passes through [`crate::sanitize::escape`] first: journal text reaches
//! whoever runs `cat` on the file, so control, escape and bidirectional
//! characters are written as visible escapes (`\x1b`, `\u{202e}`).

use super::Report;

/// The header row.
pub const HEADER: [&str; 10] = [
    "group_id",
    "verdict",
    "severity",
    "time_utc",
    "offset_ms",
    "execution_id",
    "call_id",
    "stage",
    "detail",
    "evidence",
];

/// One cell: sanitized, defused, quoted when needed.
pub fn cell(s: &str) -> String {
    let s = crate::sanitize::escape(s);
    let s = if s.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{s}")
    } else {
        s.to_string()
    };
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s
    }
}

/// Renders the timelines of every group.
pub fn render(r: &Report) -> String {
    let mut out = HEADER.join(",");
    out.push_str("\r\n");
    for g in &r.groups {
        for t in &g.timeline {
            let row = [
                g.group_id.clone(),
                g.verdict.as_str().to_string(),
                g.severity.as_str().to_string(),
                t.at.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
                t.offset_ms.to_string(),
                t.execution_id.clone().unwrap_or_default(),
                t.call_id.clone().unwrap_or_default(),
                t.stage.clone(),
                t.detail.clone(),
                t.source.clone(),
            ];
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            out.push_str(&cells.join(","));
            out.push_str("\r\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_defuses() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(cell("=cmd()"), "'=cmd()");
        assert_eq!(cell("-1,2"), "\"'-1,2\"");
    }

    #[test]
    fn terminal_controls_are_escaped() {
        assert_eq!(cell("a\x1b]0;pwned\x07b"), "a\\x1b]0;pwned\\x07b");
        assert_eq!(cell("x\u{202e}y\u{9b}z"), "x\\u{202e}y\\x9bz");
        assert_eq!(cell("two\nlines"), "two\\nlines");
        assert_eq!(cell("\t=cmd()"), "\\t=cmd()");
    }
}
