//! The postmortem as Markdown (CommonMark with GitHub tables and a Mermaid
//! block). Journal text is passed through [`crate::sanitize::escape`] and
//! then Markdown-escaped, so that it shows as written and cannot open HTML,
//! links or code. A group of many executions is abridged (see
//! [`super::abridge`]).

use super::abridge::{ENDS, FINDINGS_PER_KIND, Piece, Shown, left_out, thousands};
use super::{ChainState, GroupReport, Report};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::fmt::Write;

/// Escapes text for Markdown prose and table cells: every character that
/// could start markup (emphasis, code, links, HTML, entities, table cells)
/// gets a backslash (CommonMark §2.4: any ASCII punctuation may be
/// backslash-escaped), so the text renders as written and still reads
/// naturally where the Markdown is pasted raw (no `&lt;` entities).
pub fn text(s: &str) -> String {
    let clean = crate::sanitize::escape(s);
    let mut out = String::with_capacity(clean.len() + 8);
    for c in clean.chars() {
        if matches!(
            c,
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '#' | '~' | '!' | '<' | '>' | '&'
        ) {
            out.push('\\');
        }
        out.push(c);
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

fn minutes(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%d %H:%M").to_string()
}

/// Time since the group's first event: `+4.000s`, `+2m10.000s`,
/// `+1h02m03.000s`, and beyond a day `+120d 01h38m` (a reviewer's decision
/// months later reads as such, not as thousands of hours).
fn offset(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "+" };
    let ms = ms.unsigned_abs();
    if ms >= 86_400_000 {
        format!(
            "{sign}{}d {:02}h{:02}m",
            ms / 86_400_000,
            ms / 3_600_000 % 24,
            ms / 60_000 % 60
        )
    } else if ms >= 3_600_000 {
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

/// Renders the whole report: summary and impact, action items, then each
/// group (verdict, timeline, sequence, the five questions, findings,
/// decisions, chain status), and the journals it rests on.
pub fn render(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Postmortem: duplicate MCP tool calls\n");
    let _ = writeln!(
        s,
        "Drafted by {} from {} journal(s){}. Every statement below cites its evidence (journal and line).\n",
        text(&r.generator),
        r.journals.len(),
        if r.anonymized {
            "; actors, targets, arguments, ids, names and free text are replaced by consistent pseudonyms"
        } else {
            ""
        }
    );
    if r.groups.is_empty() {
        let _ = writeln!(
            s,
            "## Summary\n\nNo group is worth a look: no intent was called twice or more, and every call has the verdict `clean` (one call, one execution, completed and delivered). There is nothing to report; `retrace groups --all` lists every group.\n"
        );
        sources(&mut s, r);
        return s;
    }
    summary(&mut s, r);
    action_items(&mut s, r);
    for g in &r.groups {
        group(&mut s, g);
    }
    sources(&mut s, r);
    s
}

/// What a reader of the summary must know before repeating it: a broken
/// chain under the evidence (docs/design.md §6.3: evidence from a break on
/// is unverified), and arguments the journal did not log (calls that
/// differed only in them look alike, §4.2).
fn caveats(s: &mut String, r: &Report) {
    let mut out: Vec<String> = Vec::new();
    let mut broken: Vec<&str> = Vec::new();
    for g in &r.groups {
        for c in &g.chain {
            if c.status == ChainState::Broken && !broken.contains(&c.source.as_str()) {
                broken.push(&c.source);
                out.push(format!(
                    "the audit chain of {} is broken ({}): evidence from the break on is unverified",
                    code(&c.source),
                    text(&c.detail)
                ));
            }
        }
    }
    let unlogged: Vec<String> = r
        .groups
        .iter()
        .filter(|g| g.findings.iter().any(|f| f.kind == "arguments_not_logged"))
        .map(|g| code(&g.tool))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !unlogged.is_empty() {
        out.push(format!(
            "arguments were not (fully) logged for {}: calls that differed only in what is missing look like one intent",
            unlogged.join(", ")
        ));
    }
    if out.is_empty() {
        return;
    }
    let _ = writeln!(s, "**Caveats:**\n");
    for c in out {
        let _ = writeln!(s, "- {c}.");
    }
    let _ = writeln!(s);
}

/// What happened and what it cost.
fn summary(s: &mut String, r: &Report) {
    let _ = writeln!(s, "## Summary\n");
    let i = &r.impact;
    let mut impact = Vec::new();
    if i.duplicate_side_effects > 0 {
        impact.push(format!(
            "**{} duplicate side effect(s)**",
            i.duplicate_side_effects
        ));
    }
    if i.possible_duplicates > 0 {
        impact.push(format!(
            "**{} possible duplicate(s)** the journals cannot settle",
            i.possible_duplicates
        ));
    }
    if i.unknown_outcomes > 0 {
        impact.push(format!(
            "{} execution(s) whose outcome is still unknown",
            i.unknown_outcomes
        ));
    }
    if impact.is_empty() {
        let _ = writeln!(
            s,
            "**Impact:** no duplicate side effect: every repeated call was attached, deduplicated, safe or a distinct intent.\n"
        );
    } else {
        let targets = if i.targets.is_empty() {
            String::new()
        } else {
            format!(
                " on {}",
                i.targets
                    .iter()
                    .map(|t| code(t))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let when = match (i.from, i.to) {
            (Some(a), Some(b)) => format!(", between {} and {} UTC", minutes(a), minutes(b)),
            _ => String::new(),
        };
        let _ = writeln!(s, "**Impact:** {}{targets}{when}.\n", impact.join(", "));
    }
    caveats(s, r);
    let _ = writeln!(s, "**What happened:**\n");
    for g in &r.groups {
        let target = g
            .target
            .as_deref()
            .map(|t| format!(" on {}", code(t)))
            .unwrap_or_default();
        let _ = writeln!(
            s,
            "- {} ({}) {}{target}: {}.",
            code(g.verdict.as_str()),
            g.severity.as_str(),
            code(&g.tool),
            text(g.reason.trim_end_matches('.'))
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "| Group | Verdict | Severity | Tool | Target | Calls | Executions | Dispatches | First (UTC) |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|---:|---:|---:|---|");
    for g in &r.groups {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            code(&g.group_id),
            code(g.verdict.as_str()),
            g.severity.as_str(),
            code(&g.tool),
            g.target.as_deref().map(code).unwrap_or_else(|| "—".into()),
            g.calls,
            g.executions.len(),
            g.dispatches,
            g.first_at.map(utc).unwrap_or_default()
        );
    }
    let _ = writeln!(s);
}

/// Every group's action items, each once, as a task list.
fn action_items(s: &mut String, r: &Report) {
    let mut seen: Vec<&str> = Vec::new();
    let mut lines = Vec::new();
    for g in &r.groups {
        for a in &g.action_items {
            if !seen.contains(&a.text.as_str()) {
                seen.push(&a.text);
                lines.push(format!(
                    "- [ ] {} (group {})",
                    text(&a.text),
                    code(&g.group_id)
                ));
            }
        }
    }
    let _ = writeln!(s, "## Action items\n");
    if lines.is_empty() {
        let _ = writeln!(s, "None: nothing in these journals calls for a change.");
    } else {
        let _ = writeln!(s, "{}", lines.join("\n"));
    }
}

/// The journals and the case file the report rests on.
fn sources(s: &mut String, r: &Report) {
    let _ = writeln!(s, "\n## Journals\n");
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
}

/// Evidence citations as list items under `indent`; a long list (one
/// finding about 200,000 attempts) up to [`FINDINGS_PER_KIND`] items, then
/// counted.
fn evidence(s: &mut String, indent: &str, all: &[String]) {
    for e in all.iter().take(FINDINGS_PER_KIND) {
        let _ = writeln!(s, "{indent}- evidence: {}", code(e));
    }
    if all.len() > FINDINGS_PER_KIND {
        let _ = writeln!(
            s,
            "{indent}- … and {} more (the JSON export lists every one)",
            thousands(all.len() - FINDINGS_PER_KIND)
        );
    }
}

/// The group's execution ids; of an abridged group, the first and last
/// few and the count.
fn executions(g: &GroupReport, shown: &Shown<'_>) -> String {
    let ids = |xs: &[String]| xs.iter().map(|x| code(x)).collect::<Vec<_>>().join(", ");
    if !shown.abridged() {
        return ids(&g.executions);
    }
    let n = g.executions.len();
    format!(
        "{}, … {} ({} in all)",
        ids(&g.executions[..ENDS]),
        ids(&g.executions[n - ENDS..]),
        thousands(n)
    )
}

fn group(s: &mut String, g: &GroupReport) {
    let shown = Shown::of(g);
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
        (
            "Arguments (fingerprinted)",
            match &g.arguments_recorded {
                None => code(&g.arguments.to_string()),
                Some(r) => text(&crate::query::words::arguments_words(
                    &g.arguments.to_string(),
                    Some(r),
                )),
            },
        ),
        (
            "Contract",
            format!(
                "{} · attach window {}{}",
                code(&g.contract_class),
                text(&g.attach_window),
                if g.contract_configured {
                    String::new()
                } else {
                    format!(" ({})", text(&g.contract_basis))
                }
            ),
        ),
        (
            "Calls · executions · dispatches",
            format!("{} · {} · {}", g.calls, g.executions.len(), g.dispatches),
        ),
        ("Executions", executions(g, &shown)),
    ];
    for (k, v) in rows {
        let _ = writeln!(s, "| {k} | {v} |");
    }

    let _ = writeln!(s, "\n### Timeline\n");
    if shown.abridged() {
        let _ = writeln!(
            s,
            "Abridged: of {} executions, the {} that the verdict and the answers name or that open and close the group are shown; the JSON and CSV exports list every event.\n",
            thousands(g.executions.len()),
            thousands(shown.count(g.executions.len()))
        );
    }
    let _ = writeln!(
        s,
        "| UTC time | Since first event | Execution | Call | Stage | Detail | Evidence |"
    );
    let _ = writeln!(s, "|---|---:|---|---|---|---|---|");
    for piece in shown.timeline(g) {
        let r = match piece {
            Piece::Row(r) => r,
            Piece::Gap { events, executions } => {
                let _ = writeln!(
                    s,
                    "| … | | | | | {} not shown | |",
                    left_out(events, executions)
                );
                continue;
            }
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} |",
            utc(r.at),
            offset(r.offset_ms),
            r.execution_id.as_deref().map(code).unwrap_or_default(),
            r.call_id.as_deref().map(code).unwrap_or_default(),
            code(&r.stage),
            text(&r.detail),
            code(&r.source)
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
        evidence(s, "   ", &q.evidence);
        let _ = writeln!(s);
    }

    if !g.findings.is_empty() {
        let _ = writeln!(s, "### Findings\n");
        // A kind found many times is listed up to a count, then counted.
        let mut listed: HashMap<&str, usize> = HashMap::new();
        for f in &g.findings {
            let n = listed.entry(f.kind).or_default();
            *n += 1;
            if *n > FINDINGS_PER_KIND {
                continue;
            }
            let _ = writeln!(s, "- {}: {}", code(f.kind), text(&f.detail));
            evidence(s, "  ", &f.evidence);
        }
        let mut more: Vec<(&str, usize)> = listed
            .into_iter()
            .filter(|(_, n)| *n > FINDINGS_PER_KIND)
            .collect();
        more.sort_unstable();
        for (kind, n) in more {
            let _ = writeln!(
                s,
                "- … and {} more {} findings (the JSON export lists every one)",
                thousands(n - FINDINGS_PER_KIND),
                code(kind)
            );
        }
        let _ = writeln!(s);
    }

    // docs/design.md §5.13: the groups one argument field away.
    if !g.near_duplicates.is_empty() {
        let _ = writeln!(s, "### Near duplicates (one argument field away)\n");
        let _ = writeln!(s, "| Group | Verdict | Calls | Differs in |");
        let _ = writeln!(s, "|---|---|---:|---|");
        for n in &g.near_duplicates {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} |",
                code(&n.group_id),
                code(n.verdict.as_str()),
                n.calls,
                code(&n.field)
            );
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

    /// GitHub-flavoured Markdown as comrak renders it (tables on).
    fn gfm(md: &str) -> String {
        let mut o = comrak::Options::default();
        o.extension.table = true;
        o.extension.tasklist = true;
        comrak::markdown_to_html(md, &o)
    }

    #[test]
    fn text_cannot_open_html_links_or_cells() {
        let hostile = "<script>|[x](y)`*_&amp;\x1b[2J";
        let t = text(hostile);
        assert!(!t.contains('\x1b'));
        let html = gfm(&format!("| a | b |\n|---|---|\n| {t} | c |\n"));
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("<a "), "{html}");
        assert!(!html.contains("<code>"), "{html}");
        // One row of two cells: the `|` did not split the cell.
        assert_eq!(html.matches("<td>").count(), 2, "{html}");
        // What shows is what the journal wrote (entities are the
        // renderer's own escaping of `<`, `>` and `&`).
        assert!(
            html.contains("&lt;script&gt;|[x](y)`*_&amp;amp;\\x1b[2J"),
            "{html}"
        );
        // Pasted raw, it reads without entities.
        assert!(!t.contains("&lt;") && !t.contains("&amp;amp;"), "{t}");
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
        // A decision months later, once "+2881h38m23.432s".
        assert_eq!(offset(10_377_503_432), "+120d 02h38m");
    }
}
