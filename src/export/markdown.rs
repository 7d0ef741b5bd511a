//! The postmortem as Markdown (CommonMark with GitHub tables and a Mermaid
//! block). Journal text is passed through [`crate::sanitize::escape`] and
//! then Markdown-escaped, so that it shows as written and cannot open HTML,
//! links or code.

use super::{GroupReport, Report};
use chrono::{DateTime, Utc};
use std::fmt::Write;

/// Escapes text for Markdown prose and table cells.
pub fn text(s: &str) -> String {
    let clean = crate::sanitize::escape(s);
    let mut out = String::with_capacity(clean.len() + 8);
    for c in clean.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            c => out.push(c),
        }
    }
    out
}

/// A code span that holds any text (backtick runs inside are fenced by a
/// longer run; `|` is escaped for tables).
pub fn code(s: &str) -> String {
    let clean = crate::sanitize::escape(s).replace('|', "\\|");
    let mut longest = 0;
    let mut run = 0;
    for c in clean.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if clean.starts_with('`') || clean.ends_with('`') {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{clean}{pad}{fence}")
}

fn utc(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M:%S%.3f").to_string()
}

fn offset(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let ms = ms.unsigned_abs();
    if ms >= 3_600_000 {
        format!(
            "{sign}{}h{:02}m{:02}.{:03}s",
            ms / 3_600_000,
            ms / 60_000 % 60,
            ms / 1000 % 60,
            ms % 1000
        )
    } else if ms >= 60_000 {
        format!(
            "{sign}{}m{:02}.{:03}s",
            ms / 60_000,
            ms / 1000 % 60,
            ms % 1000
        )
    } else {
        format!("{sign}{}.{:03}s", ms / 1000, ms % 1000)
    }
}

/// Renders the whole report.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Postmortem: duplicate MCP tool calls\n");
    let _ = writeln!(
        s,
        "Exported by {}{}.\n",
        text(&r.generator),
        if r.anonymized {
            "; actors, targets, arguments, ids, names and free text are replaced by consistent pseudonyms"
        } else {
            ""
        }
    );
    let _ = writeln!(s, "| Journal | Format | Lines | Unreadable lines |");
    let _ = writeln!(s, "|---|---|---:|---:|");
    for j in &r.journals {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} |",
            code(&j.name),
            j.format,
            j.lines,
            j.bad_lines
        );
    }
    if let Some(c) = &r.case_file {
        let _ = writeln!(s, "\nCase file {}: {}.", code(&c.name), text(&c.chain));
    }
    if !r.notes.is_empty() {
        let _ = writeln!(s, "\nNotes:\n");
        for n in &r.notes {
            let _ = writeln!(s, "- {}", text(n));
        }
    }
    if r.groups.is_empty() {
        let _ = writeln!(
            s,
            "\nNo group is worth a look: no intent was called twice or more, and every call has the verdict `clean` (one call, one execution, completed and delivered). There is nothing to report; `retrace groups --all` lists every group."
        );
        return s;
    }
    let _ = writeln!(s, "\n## Summary\n");
    let _ = writeln!(
        s,
        "| Group | Verdict | Severity | Tool | Calls | Executions | Dispatches | First (UTC) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---:|---:|---:|---|");
    for g in &r.groups {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} |",
            code(&g.group_id),
            code(g.verdict.as_str()),
            g.severity.as_str(),
            code(&g.tool),
            g.calls,
            g.executions.len(),
            g.dispatches,
            g.first_at.map(utc).unwrap_or_default()
        );
    }
    for g in &r.groups {
        group(&mut s, g);
    }
    s
}

fn group(s: &mut String, g: &GroupReport) {
    let _ = writeln!(
        s,
        "\n## Group {} · {} · {}\n",
        code(&g.group_id),
        code(&g.tool),
        code(g.verdict.as_str())
    );
    let _ = writeln!(
        s,
        "**Verdict:** {} (severity **{}**). {}\n",
        code(g.verdict.as_str()),
        g.severity.as_str(),
        text(&g.reason)
    );
    if let Some(p) = &g.provenance {
        let _ = writeln!(s, "**Resolved by a reviewer:** {}.\n", text(p));
    }
    let _ = writeln!(s, "| Field | Value |\n|---|---|");
    let rows: [(&str, String); 9] = [
        ("Tool", code(&g.tool)),
        (
            "Target",
            g.target.as_deref().map(code).unwrap_or_else(|| "—".into()),
        ),
        ("Actor", code(&g.actor)),
        ("Intent scope", code(&g.intent_scope)),
        ("Intent fingerprint", code(&g.fingerprint)),
        ("Arguments (fingerprinted)", code(&g.arguments.to_string())),
        (
            "Contract",
            format!(
                "{} · attach window {}{}",
                code(&g.contract_class),
                text(&g.attach_window),
                if g.contract_configured {
                    ""
                } else {
                    " (no replay contract: default)"
                }
            ),
        ),
        (
            "Calls · executions · dispatches",
            format!("{} · {} · {}", g.calls, g.executions.len(), g.dispatches),
        ),
        (
            "Executions",
            g.executions
                .iter()
                .map(|x| code(x))
                .collect::<Vec<_>>()
                .join(", "),
        ),
    ];
    for (k, v) in rows {
        let _ = writeln!(s, "| {k} | {v} |");
    }

    let _ = writeln!(s, "\n### Timeline\n");
    let _ = writeln!(
        s,
        "| UTC time | Offset | Execution | Call | Stage | Detail | Evidence |"
    );
    let _ = writeln!(s, "|---|---:|---|---|---|---|---|");
    for r in &g.timeline {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            utc(r.at),
            offset(r.offset_ms),
            r.execution_id.as_deref().map(code).unwrap_or_default(),
            r.call_id.as_deref().map(code).unwrap_or_default(),
            code(&r.stage),
            text(&r.detail),
            text(&r.source)
        );
    }

    let _ = writeln!(s, "\n### Sequence\n");
    let _ = writeln!(s, "```mermaid\n{}```", g.sequence_diagram);

    let _ = writeln!(s, "\n### The five questions\n");
    for q in &g.questions {
        let _ = writeln!(s, "{}. **{}**  ", q.question, text(q.asks));
        // An unknown answer reads `unknown: <what the journal lacks>`.
        let answer = match q.answer.strip_prefix("unknown:") {
            Some(rest) if q.unknown => format!("*Unknown:* {}", text(rest.trim_start())),
            _ if q.unknown => format!("*Unknown:* {}", text(&q.answer)),
            _ => text(&q.answer),
        };
        let _ = writeln!(s, "   {answer}");
        for e in &q.evidence {
            let _ = writeln!(s, "   - evidence: {}", text(e));
        }
        let _ = writeln!(s);
    }

    if !g.findings.is_empty() {
        let _ = writeln!(s, "### Findings\n");
        for f in &g.findings {
            let _ = writeln!(s, "- {}: {}", code(f.kind), text(&f.detail));
            for e in &f.evidence {
                let _ = writeln!(s, "  - evidence: {}", text(e));
            }
        }
        let _ = writeln!(s);
    }

    let _ = writeln!(s, "### Reviewer decisions\n");
    if g.decisions.is_empty() {
        let _ = writeln!(s, "None recorded.\n");
    } else {
        let _ = writeln!(
            s,
            "| Recorded (UTC) | Execution | Decision | Reviewer | Note | Case entry | Effect |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---:|---|");
        for d in &g.decisions {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {} | {} | {} |",
                utc(d.at),
                code(&d.execution_id),
                code(d.decision.as_str()),
                text(&d.reviewer),
                text(&d.note),
                d.case_entry,
                text(&d.effect)
            );
        }
        let _ = writeln!(s);
    }

    let _ = writeln!(s, "### Chain status of the evidence\n");
    let _ = writeln!(s, "| Source | Kind | Status | Detail |\n|---|---|---|---|");
    for c in &g.chain {
        let _ = writeln!(
            s,
            "| {} | {} | **{}** | {} |",
            code(&c.source),
            c.kind,
            c.status.as_str(),
            text(&c.detail)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_cannot_open_html_links_or_cells() {
        let t = text("<script>|[x](y)`*_\x1b[2J");
        assert!(!t.contains('<') && !t.contains('\x1b'));
        assert!(t.contains("\\|") && t.contains("\\[") && t.contains("\\`"));
    }

    #[test]
    fn code_spans_hold_backticks() {
        assert_eq!(code("a`b"), "``a`b``");
        assert_eq!(code("`x"), "`` `x ``");
        assert_eq!(code("a|b"), "`a\\|b`");
    }

    #[test]
    fn offsets_read_naturally() {
        assert_eq!(offset(0), "+0.000s");
        assert_eq!(offset(61_004), "+1m01.004s");
        assert_eq!(offset(3_723_000), "+1h02m03.000s");
    }
}
