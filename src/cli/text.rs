//! Plain-text renderings of the headless commands. Journal strings pass
//! through [`escape`] before they are written.

use crate::query::{
    ChainMark, ChainStatus, EvidenceView, FindingKind, GroupDetail, GroupRef, Investigation,
    VerifyReport,
};
use crate::query::{Severity, Verdict};
use crate::sanitize::escape;
use anstyle::{AnsiColor, Style};
use chrono::{DateTime, Utc};
use std::io::{self, Write};

/// How many bad lines text output names per journal; `verify --json` lists
/// every one (docs/design.md §6.2).
pub const SHOWN_BAD_LINES: usize = 10;

/// The style of a severity in text output (the output stream strips it
/// when colour is off: `--color`, `NO_COLOR`, a pipe).
fn severity_style(s: Severity) -> Style {
    let c = |c: AnsiColor| Style::new().fg_color(Some(c.into()));
    match s {
        Severity::Critical => c(AnsiColor::Red).bold(),
        Severity::High => c(AnsiColor::Red),
        Severity::Review => c(AnsiColor::Magenta),
        Severity::Warn => c(AnsiColor::Yellow),
        Severity::Info => c(AnsiColor::Cyan),
        Severity::Ok => c(AnsiColor::Green),
    }
}

/// `text` padded to `width` columns, in `style`.
fn styled(text: &str, width: usize, style: Style) -> String {
    format!("{style}{text:<width$}{style:#}")
}

/// A verdict padded to `width`, in its severity's style.
fn verdict(v: Verdict, width: usize) -> String {
    styled(v.as_str(), width, severity_style(v.severity()))
}

fn t(at: Option<DateTime<Utc>>) -> String {
    at.map_or_else(|| "-".into(), |t| t.format("%Y-%m-%d %H:%M:%S").to_string())
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut c: String = s.chars().take(n.saturating_sub(1)).collect();
        c.push('…');
        c
    }
}

/// One line per journal with its chain status (docs/design.md §6).
pub fn chain_header(inv: &Investigation, out: &mut dyn Write) -> io::Result<()> {
    for j in inv.journals() {
        writeln!(out, "{}: {}", escape(&j.name), escape(&j.chain.summary()))?;
    }
    if !inv.journals().is_empty() {
        writeln!(out)?;
    }
    Ok(())
}

/// The mark shown after a piece of evidence from a broken or unchecked span.
fn mark(e: &EvidenceView) -> String {
    let chain = match e.chain {
        ChainMark::Unverified => " [UNVERIFIED: at or after a chain break]",
        ChainMark::Verified | ChainMark::NoChain => "",
    };
    // A line its hash does not pin down (docs/design.md §6.4).
    match &e.ambiguous {
        Some(a) => format!("{chain} [AMBIGUOUS: {}]", escape(a)),
        None => chain.to_string(),
    }
}

/// `retrace verify` as text.
pub fn verify(reports: &[VerifyReport], out: &mut dyn Write) -> io::Result<()> {
    for r in reports {
        let name = escape(&r.journal);
        if let Some(c) = &r.case_file {
            let (verdict, style) = if c.is_intact() {
                ("OK", severity_style(Severity::Ok))
            } else {
                ("BROKEN", severity_style(Severity::Critical))
            };
            writeln!(
                out,
                "{} {name} (case file): {}",
                styled(verdict, 11, style),
                escape(&c.chain.describe())
            )?;
            if let Some(rule) = r.rule {
                writeln!(out, "            rule: {rule}")?;
            }
            for n in &r.notes {
                writeln!(out, "            note: {}", escape(n))?;
            }
            continue;
        }
        match (&r.chain, &r.error) {
            (Some(c), _) => {
                let (verdict, style) = match c {
                    ChainStatus::Intact { .. } => ("OK", severity_style(Severity::Ok)),
                    ChainStatus::NoChain { .. } => ("NO CHAIN", Style::new().dimmed()),
                    ChainStatus::Broken { .. } => ("BROKEN", severity_style(Severity::Critical)),
                    ChainStatus::NotChecked { .. } => {
                        ("NOT CHECKED", severity_style(Severity::Warn))
                    }
                };
                // A journal that contradicts its anchor (docs/design.md §6.7).
                let (verdict, style) = if r.anchor.as_ref().is_some_and(|a| a.is_tampered()) {
                    ("TAMPERED", severity_style(Severity::Critical))
                } else {
                    (verdict, style)
                };
                writeln!(
                    out,
                    "{} {name}: {}",
                    styled(verdict, 11, style),
                    escape(&c.summary())
                )?;
                if let Some(rule) = r.rule {
                    writeln!(out, "            rule: {rule}")?;
                }
                if r.bad_lines > 0 {
                    writeln!(
                        out,
                        "            {} line(s) could not be read as records",
                        r.bad_lines
                    )?;
                    for b in r.bad_line_details.iter().take(SHOWN_BAD_LINES) {
                        writeln!(out, "            line {}: {}", b.line, escape(&b.reason))?;
                    }
                    if r.bad_lines > SHOWN_BAD_LINES as u64 {
                        writeln!(
                            out,
                            "            {} more not shown; `retrace verify --json` lists every one",
                            r.bad_lines - SHOWN_BAD_LINES as u64
                        )?;
                    }
                }
                for n in &r.notes {
                    writeln!(out, "            note: {}", escape(n))?;
                }
                if let Some(a) = &r.anchor {
                    writeln!(out, "            anchor: {}", escape(&a.describe()))?;
                }
                if let Some(c) = r.caveat {
                    writeln!(out, "            caveat: {c}")?;
                }
            }
            (None, e) => {
                writeln!(
                    out,
                    "{} {name}: {}",
                    styled("UNREADABLE", 11, severity_style(Severity::Critical)),
                    escape(e.as_deref().unwrap_or("unreadable"))
                )?;
            }
        }
    }
    Ok(())
}

pub fn groups(
    inv: &Investigation,
    groups: &[GroupRef<'_>],
    all: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    if groups.is_empty() {
        let total = inv.group_count();
        if let Some(msg) = inv.narrowed().and_then(|n| n.empty_window()) {
            writeln!(out, "{msg}")?;
            return Ok(());
        }
        if total == 0 {
            writeln!(out, "No tool call in the journals: nothing to group.")?;
            return Ok(());
        }
        writeln!(
            out,
            "No group worth a look: {total} group(s), each one call with a clean verdict.{}",
            if all || total == 0 {
                ""
            } else {
                " Use --all to list them."
            }
        )?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<12} {:<24} {:<8} {:<26} {:>5} {:>5} {:>5}  {:<19}  FLAGS",
        "GROUP", "VERDICT", "SEVERITY", "TOOL", "CALLS", "EXECS", "DISP", "FIRST (UTC)"
    )?;
    for g in groups {
        let mut flags: Vec<String> = g.flags().into_iter().map(str::to_string).collect();
        // A verdict that rests on a reviewer's decision says whose.
        for r in g.resolutions() {
            let flag = format!("reviewed:{}", escape(&r.reviewer));
            // One reviewer who settled both outcome and delivery, or
            // several executions, is named once.
            if !flags.contains(&flag) {
                flags.push(flag);
            }
        }
        writeln!(
            out,
            "{:<12} {} {} {:<26} {:>5} {:>5} {:>5}  {:<19}  {}",
            g.id(),
            verdict(g.verdict(), 24),
            styled(g.severity().as_str(), 8, severity_style(g.severity())),
            clip(&escape(g.tool()), 26),
            g.calls(),
            g.execution_count(),
            g.dispatches(),
            t(g.first_at()),
            flags.join(",")
        )?;
    }
    let hidden = inv.group_count() - groups.len();
    if hidden > 0 && !all {
        // A clean single call can still be half of a repeat written
        // differently; say so rather than hide it silently.
        let drifted = inv
            .all_groups()
            .filter(|g| !g.worth_a_look() && g.has(FindingKind::FingerprintDrift))
            .count();
        let mut drift = if drifted > 0 {
            format!(
                ", {drifted} of them flagged fingerprint_drift (the same intent written differently)"
            )
        } else {
            String::new()
        };
        let near = inv
            .all_groups()
            .filter(|g| !g.worth_a_look() && g.has(FindingKind::NearDuplicate))
            .count();
        if near > 0 {
            drift.push_str(&format!(
                ", {near} flagged near_duplicate (one argument field away from another group)"
            ));
        }
        writeln!(
            out,
            "({hidden} clean single-call group(s) not shown{drift}; --all lists them)"
        )?;
    }
    Ok(())
}

/// Characters of a group's arguments `investigate` shows on their line;
/// `--json` and the export give them whole.
const ARGUMENTS_SHOWN: usize = 240;

/// A group's arguments on one line: compact JSON, cut after
/// [`ARGUMENTS_SHOWN`] characters with a pointer to the whole.
fn arguments_line(args: &serde_json::Value) -> String {
    let text = args.to_string();
    match text.char_indices().nth(ARGUMENTS_SHOWN) {
        Some((i, _)) => format!("{}… (--json shows them whole)", &text[..i]),
        None => text,
    }
}

pub fn investigate(d: &GroupDetail, out: &mut dyn Write) -> io::Result<()> {
    let s = &d.summary;
    let style = severity_style(s.severity);
    writeln!(
        out,
        "Group {}  {style}{}{style:#}  [{}]",
        escape(&s.group_id),
        s.verdict.as_str().to_uppercase(),
        s.severity
    )?;
    writeln!(out, "  {}", escape(&d.reason))?;
    writeln!(out)?;
    writeln!(out, "  tool         {}", escape(&s.tool))?;
    if let Some(tg) = &d.target {
        writeln!(out, "  target       {}", escape(tg))?;
    }
    // The arguments of the intent as fingerprinted (secret fields as
    // their keyed references): which release, which invoice.
    // A journal that logs no arguments fingerprints `{}`, which is not
    // what the call asked for: said as the review queue says it.
    if let Some(args) = d.canonical_action.get("arguments") {
        let shown = crate::query::words::arguments_words(
            &arguments_line(args),
            d.arguments_recorded.as_deref(),
        );
        writeln!(out, "  arguments    {}", escape(&shown))?;
    }
    writeln!(out, "  actor        {}", escape(&s.actor))?;
    writeln!(out, "  intent scope {}", escape(&s.intent_scope))?;
    // An orphan's fingerprint names its execution id: journal text.
    writeln!(out, "  fingerprint  {}", escape(&s.fingerprint))?;
    writeln!(
        out,
        "  contract     {} · attach window {}{}",
        d.contract.class.as_str(),
        humantime::format_duration(d.contract.attach_window),
        if d.contract.configured {
            String::new()
        } else {
            format!(" ({})", d.contract.basis_words())
        }
    )?;
    writeln!(
        out,
        "  calls {} · executions {} · dispatches {}",
        s.calls, s.executions, s.dispatches
    )?;
    writeln!(out)?;
    writeln!(out, "Executions")?;
    for x in &d.executions_detail {
        let before = if x.before_window {
            "  (before the window: an earlier call of this intent)"
        } else {
            ""
        };
        writeln!(out, "  {}  {}{before}", escape(&x.execution_id), x.state)?;
        let lane: Vec<String> = x
            .stages
            .marks()
            .iter()
            .map(|(name, m)| match m {
                Some(m) if m.event.replace('_', " ") != *name => {
                    format!(
                        "{} {}",
                        m.event.replace('_', " "),
                        m.at.format("%H:%M:%S%.3f")
                    )
                }
                Some(m) => format!("{name} {}", m.at.format("%H:%M:%S%.3f")),
                None => format!("{name} -"),
            })
            .collect();
        writeln!(out, "      {}", lane.join(" → "))?;
        if let Some(o) = &x.outcome {
            writeln!(out, "      outcome: {}", escape(&clip(o, 160)))?;
        }
        if let Some(r) = &x.resolution {
            writeln!(
                out,
                "      reviewer: {} decided {} at {} ({}): {}",
                escape(&r.reviewer),
                r.decision,
                r.at.format("%Y-%m-%d %H:%M:%SZ"),
                escape(&r.source),
                escape(&r.note)
            )?;
        }
        for a in &x.attached {
            writeln!(
                out,
                "      attached {} {}{}",
                a.at.format("%H:%M:%S%.3f"),
                a.recovery,
                a.call_id
                    .as_deref()
                    .map(|c| format!(" (call {})", escape(c)))
                    .unwrap_or_default()
            )?;
        }
    }
    writeln!(out)?;
    writeln!(out, "The five questions")?;
    for a in &d.questions {
        writeln!(out, "  {}. {}", a.question, a.asks)?;
        writeln!(out, "     {}", escape(&a.answer))?;
        for e in &a.evidence {
            writeln!(
                out,
                "       evidence: {} ({}{}){}",
                escape(&e.cite()),
                e.record,
                e.execution_id
                    .as_deref()
                    .map(|x| format!(" {}", escape(x)))
                    .unwrap_or_default(),
                mark(e)
            )?;
        }
    }
    if !d.findings.is_empty() {
        writeln!(out)?;
        writeln!(out, "Findings")?;
        for f in &d.findings {
            writeln!(out, "  {}: {}", f.kind, escape(&f.detail))?;
            for e in &f.evidence {
                writeln!(out, "       evidence: {}{}", escape(&e.cite()), mark(e))?;
            }
        }
    }
    // docs/design.md §5.13: the groups one argument field away.
    if !d.near_duplicates.is_empty() {
        writeln!(out)?;
        writeln!(out, "Near duplicates (one argument field away)")?;
        for n in &d.near_duplicates {
            writeln!(
                out,
                "  {:<12} {} {:>3} call{}  differs in {}",
                n.group_id,
                verdict(n.verdict, 24),
                n.calls,
                if n.calls == 1 { " " } else { "s" },
                escape(&n.field)
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_arguments_are_cut_on_a_character_with_a_pointer_to_the_whole() {
        let short = serde_json::json!({"service": "catalog"});
        assert_eq!(arguments_line(&short), r#"{"service":"catalog"}"#);
        let long = serde_json::json!({"note": "é".repeat(400)});
        let line = arguments_line(&long);
        assert!(line.ends_with("… (--json shows them whole)"), "{line}");
        assert_eq!(
            line.chars().count(),
            ARGUMENTS_SHOWN + "… (--json shows them whole)".chars().count()
        );
    }
}
