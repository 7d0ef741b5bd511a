//! `retrace watch` (docs/design.md §7.7): polls a [`Watch`] and prints its
//! changes, a line each (text, or one JSON object per line), until Ctrl-C
//! or, with `--exit-on`, the first group at or above a severity.

use super::CliError;
use crate::query::{Change, Notice, Setup, Severity, Watch, WatchOptions};
use crate::sanitize::escape;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How `retrace watch` runs.
#[derive(Debug, Clone, Copy)]
pub struct WatchArgs {
    /// One JSON object per line.
    pub json: bool,
    /// Exit 3 at the first group at or above this severity.
    pub exit_on: Option<Severity>,
    /// How long a group must be quiet before a verdict below high is
    /// printed.
    pub settle: Duration,
    /// How often the journals are looked at.
    pub interval: Duration,
}

/// Follows the setup's journals until Ctrl-C (exit 0) or a group at or
/// above `--exit-on` (exit 3). Changes go to `out`, a line each, flushed
/// at once; bad lines, rotation and truncation to stderr.
///
/// # Errors
/// [`CliError::Query`] when the journals cannot be followed;
/// [`CliError::Output`] when `out` cannot be written.
pub fn watch(setup: &Setup, args: WatchArgs, out: &mut dyn Write) -> Result<u8, CliError> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop))?;
    }
    let mut w = Watch::open(
        setup,
        WatchOptions {
            settle: args.settle,
            ..WatchOptions::default()
        },
    )?;
    let names: Vec<String> = w
        .journal_names()
        .iter()
        .map(|n| escape(n).into_owned())
        .collect();
    if let Some(why) = w.index_note() {
        eprintln!(
            "retrace: cannot make a temporary file for the evicted groups' index ({why}): \
             keeping it in memory, where it grows with the executions seen (set TMPDIR to a \
             writable directory)"
        );
    }
    eprintln!("retrace: watching {} (Ctrl-C to stop)", names.join(", "));
    let mut code = 0;
    'run: while !stop.load(Ordering::Relaxed) {
        let (notices, more) = w.poll();
        for n in &notices {
            match n {
                Notice::Change(c) => {
                    if args.json {
                        writeln!(out, "{}", json_line(c))?;
                    } else {
                        writeln!(out, "{}", text_line(c))?;
                    }
                    if args.exit_on.is_some_and(|s| c.severity <= s) {
                        code = 3;
                    }
                }
                Notice::Withdrawn {
                    group_id,
                    previous_verdict,
                } => {
                    if args.json {
                        let v = serde_json::json!({
                            "group_id": group_id,
                            "withdrawn": true,
                            "previous_verdict": previous_verdict,
                        });
                        writeln!(out, "{v}")?;
                    } else {
                        writeln!(
                            out,
                            "WITHDRAWN {group_id} (was {previous_verdict}): its calls were read again, with the lines after them, as other groups', or their lines were truncated away"
                        )?;
                    }
                }
                other => eprintln!("retrace: {}", notice_line(other)),
            }
        }
        out.flush()?;
        if code != 0 {
            break 'run;
        }
        if !more {
            // Sleep in short steps, so that Ctrl-C is answered at once.
            let mut left = args.interval;
            while !left.is_zero() && !stop.load(Ordering::Relaxed) {
                let step = left.min(Duration::from_millis(50));
                std::thread::sleep(step);
                left -= step;
            }
        }
    }
    if let Some(why) = w.index_fault() {
        eprintln!(
            "retrace: the evicted groups' index on disk failed ({why}): verdicts may be missed"
        );
    }
    let s = w.stats();
    eprintln!(
        "retrace: watched {} events, {} executions in {} groups; {} bad lines",
        s.events,
        s.executions + s.evicted_executions,
        s.groups + s.evicted_groups,
        s.bad_lines
    );
    Ok(code)
}

/// A change as one JSON object: [`Change`]'s fields and `position`
/// (`file:line` of the event that changed it).
fn json_line(c: &Change) -> String {
    let mut v = serde_json::to_value(c).unwrap_or_default();
    if let (Some(m), Some(e)) = (v.as_object_mut(), &c.changed_by) {
        m.insert(
            "position".into(),
            format!("{}:{}", e.journal, e.line).into(),
        );
    }
    v.to_string()
}

/// A change as one line of text, every journal string escaped.
fn text_line(c: &Change) -> String {
    let was = match c.previous_verdict {
        Some(p) => format!(" (was {p})"),
        None => String::new(),
    };
    let by = match &c.changed_by {
        Some(e) => format!(
            "; {} of {} at {}:{} ({})",
            e.event,
            escape(&e.execution_id),
            escape(&e.journal),
            e.line,
            e.at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
        ),
        None => String::new(),
    };
    format!(
        "{:<8} {}{was} {} {} by {}: {} execution{}, {} call{}{by}",
        c.severity.as_str().to_uppercase(),
        c.verdict,
        c.group_id,
        escape(&c.tool),
        escape(&c.actor),
        c.executions,
        if c.executions == 1 { "" } else { "s" },
        c.calls,
        if c.calls == 1 { "" } else { "s" },
    )
}

/// A notice about a journal, escaped.
fn notice_line(n: &Notice) -> String {
    match n {
        Notice::Change(c) => text_line(c),
        Notice::Withdrawn { group_id, .. } => format!("{group_id} withdrawn"),
        Notice::BadLine(e) => format!("bad line: {}", escape(&e.to_string())),
        Notice::MoreBadLines { journal, count } => {
            format!("{}: {count} more bad lines", escape(journal))
        }
        Notice::Rotated { journal } => {
            format!(
                "{}: rotated; following the new file from its start",
                escape(journal)
            )
        }
        Notice::Truncated { journal, was, now } if now < was => format!(
            "{}: truncated ({was} bytes read, {now} now); what it held before is dropped; following it again from its start",
            escape(journal)
        ),
        Notice::Truncated { journal, was, now } => format!(
            "{}: rewritten (what was read of its first {was} bytes is not there now; {now} bytes now); what it held before is dropped; following it again from its start",
            escape(journal)
        ),
        Notice::Note { journal, text } => format!("{}: {}", escape(journal), escape(text)),
    }
}
