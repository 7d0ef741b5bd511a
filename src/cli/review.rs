//! `retrace review list|decide|export`: the headless twin of the review
//! queue screen. Journal strings pass through [`escape`] before they are
//! written.

use super::{CliError, open, write_json};
use crate::export::atomic;
use crate::query::words::{Plain, call_words};
use crate::query::{Decision, DecisionRequest, QueueItem, Setup};
use crate::review::{self, Access, CaseFile, case};
use crate::sanitize::escape;
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::io::Write;
use std::path::Path;

fn utc(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "-".into(),
        |t| t.format("%Y-%m-%d %H:%M:%S%.3fZ").to_string(),
    )
}

fn case_line(ctx: &review::CaseContext) -> String {
    match (ctx.name(), &ctx.chain, ctx.origin) {
        (None, _, _) => "no case file (the bundled sample; give one with --case FILE)".into(),
        (Some(n), None, _) => format!("case file {} (not created yet)", escape(&n)),
        (Some(n), Some(c), _) => format!("case file {}: {}", escape(&n), escape(&c.describe())),
    }
}

/// `retrace review list [--json]`.
///
/// # Errors
/// Input or output errors.
pub fn review_list(setup: &Setup, json: bool, out: &mut dyn Write) -> Result<(), CliError> {
    let inv = open(setup)?;
    let items = inv.review_queue();
    if json {
        return write_json(out, &items);
    }
    writeln!(
        out,
        "Review queue: {} execution(s) wait for a reviewer, oldest first. {}.",
        items.len(),
        case_line(inv.case())
    )?;
    for it in &items {
        write_item(out, it)?;
    }
    Ok(())
}

fn write_item(out: &mut dyn Write, it: &QueueItem) -> std::io::Result<()> {
    let e = |s: &str| escape(s).into_owned();
    writeln!(out)?;
    writeln!(
        out,
        "{}  {}  group {} {} [{}]",
        e(&it.execution_id),
        it.asks.topic(),
        it.group_id,
        it.group_verdict,
        it.severity
    )?;
    writeln!(out, "  tool            {}", e(&it.tool))?;
    writeln!(
        out,
        "  target          {}",
        e(it.target.as_deref().unwrap_or("(not recorded)"))
    )?;
    writeln!(out, "  actor           {}", e(&it.actor))?;
    writeln!(out, "  intent scope    {}", e(&it.intent_scope))?;
    writeln!(
        out,
        "  arguments       {}",
        e(&crate::query::words::arguments_words(
            &it.arguments.to_string(),
            it.arguments_recorded.as_deref()
        ))
    )?;
    writeln!(out, "  accepted        {}", utc(it.accepted_at))?;
    writeln!(out, "  first dispatch  {}", utc(it.first_dispatch_at))?;
    writeln!(out, "  asks            {}", it.question)?;
    writeln!(out, "  state           {}", it.state)?;
    writeln!(out, "  known outcome   {}", e(&it.known_outcome))?;
    for (i, c) in it.calls.iter().enumerate() {
        let bits = e(&call_words((&c.call).into(), &mut Plain));
        writeln!(
            out,
            "  {}{} {} call {}{}",
            if i == 0 {
                "calls           "
            } else {
                "                "
            },
            utc(Some(c.at)),
            c.role,
            e(c.call.call_id.as_deref().unwrap_or("-")),
            if bits.is_empty() {
                String::new()
            } else {
                format!(" ({bits})")
            }
        )?;
    }
    for a in &it.later_attempts {
        writeln!(
            out,
            "  later attempt   {} accepted {}, dispatched {}, {}",
            e(&a.execution_id),
            utc(a.at),
            utc(a.dispatched_at),
            a.state
        )?;
    }
    writeln!(out, "  not sent again? {}", e(&it.why_not_sent_again))?;
    for d in &it.decisions {
        writeln!(
            out,
            "  decided         {} by {} at {} (case entry {}): {}",
            d.payload.decision,
            e(&d.payload.reviewer),
            utc(Some(d.at)),
            d.seq,
            e(&d.payload.note)
        )?;
    }
    for v in &it.evidence {
        writeln!(out, "  evidence        {} ({})", e(&v.cite()), v.record)?;
    }
    writeln!(
        out,
        "  decide with     retrace review decide {} [JOURNAL…] --decision {} --note \"what the target shows\"",
        e(&it.execution_id),
        it.allowed
            .iter()
            .map(|d| d.as_str())
            .collect::<Vec<_>>()
            .join("|")
    )?;
    Ok(())
}

/// `retrace review decide EXECUTION_ID --decision D --note N`: one case
/// file entry in one transaction through the query layer's decision
/// service, then the verdict change with its provenance.
///
/// # Errors
/// [`CliError::Decision`]: a refused request (unknown execution, not
/// waiting for review, already decided, a decision the journal
/// contradicts, no note or reviewer) exits 2; read-only mode, a broken case
/// file or a failed write exits 1.
pub fn review_decide(
    setup: &Setup,
    execution_id: &str,
    decision: Decision,
    note: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if setup.read_only {
        return Err(crate::query::DecisionError::ReadOnly.into());
    }
    let mut inv = open(setup)?;
    let done = inv.decide(
        &DecisionRequest {
            execution_id: execution_id.to_string(),
            decision,
            note: note.to_string(),
        },
        Utc::now(),
    )?;
    let r = &done.record;
    writeln!(
        out,
        "recorded: {} {} by {} at {} (case file {} entry {}, hash {}…)",
        escape(&r.payload.execution_id),
        r.payload.decision,
        escape(&r.payload.reviewer),
        utc(Some(r.at)),
        escape(&done.case_file),
        r.seq,
        &r.hash[..12.min(r.hash.len())]
    )?;
    let change = if done.verdict_before == done.verdict_after {
        format!("{} (unchanged)", done.verdict_after)
    } else {
        format!("{} → {}", done.verdict_before, done.verdict_after)
    };
    writeln!(
        out,
        "group {}: {change}; the resolution comes from reviewer {} at {}, not from the journal",
        done.group_id,
        escape(&r.payload.reviewer),
        utc(Some(r.at))
    )?;
    if let Some(n) = &done.note {
        writeln!(out, "note: {}", escape(n))?;
    }
    Ok(())
}

fn write_output(p: &Path, text: &str) -> Result<(), CliError> {
    atomic::write(p, text.as_bytes()).map_err(|e| {
        CliError::Write(format!(
            "cannot write {}: {e}; the file is untouched",
            escape(&p.display().to_string())
        ))
    })
}

/// One JSONL line of `retrace review export`.
#[derive(Debug, Serialize)]
struct ExportLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    version: u32,
    seq: u64,
    at: String,
    execution_id: &'a str,
    decision: Decision,
    reviewer: &'a str,
    note: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    group_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    verdict_before: Option<&'a str>,
    prev_hash: &'a str,
    hash: &'a str,
}

/// `retrace review export [-o FILE]`: every decision as one JSON line
/// (`"type":"retrace.review_decision"`, `version` 1, `seq`, `at`,
/// `execution_id`, `decision`, `reviewer`, `note`, `group_id`,
/// `fingerprint`, `verdict_before`, `prev_hash`, `hash`), in case file
/// order. `prev_hash`/`hash` are the case file chain, so a consumer can
/// check that no decision is missing in between; the head hash is printed
/// on stderr. A broken chain exports nothing. No case file (none created
/// yet, or the bundled sample without `--case`) is an empty export: nothing
/// on stdout (an empty file with `-o`), a note on stderr, exit 0.
///
/// `-o -` prints to stdout.
///
/// # Errors
/// [`CliError::Input`] for a file that is not a case file, or for an
/// output file that is one of the inputs (a journal, the case file); [`CliError::Write`] for a
/// broken chain, read-only mode with `-o`, an output that is not a regular
/// file, or a failed write.
pub fn review_export(
    setup: &Setup,
    output: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let output = super::export::output_file(output);
    if setup.read_only && output.is_some() {
        return Err(CliError::Write(
            "read-only mode (--read-only): not writing a file; leave out -o to print to stdout"
                .into(),
        ));
    }
    let prepared = setup.prepare().map_err(crate::query::QueryError::from)?;
    if let Some(p) = output {
        super::export::check_output(p, prepared.input_files())?;
    }
    let ctx = &prepared.case;
    // No case file yet: nothing was decided, which is an empty export.
    let name = match ctx.name() {
        Some(n) if ctx.exists => n,
        missing => {
            if let Some(p) = output {
                write_output(p, "")?;
            }
            let _ = writeln!(
                std::io::stderr(),
                "{}: 0 decisions exported",
                match missing {
                    Some(n) => format!("no case file {} yet", escape(&n)),
                    None =>
                        "no case file (the bundled sample has none unless --case FILE is given)"
                            .into(),
                }
            );
            return Ok(());
        }
    };
    let access = if setup.read_only {
        Access::ReadOnly
    } else {
        Access::Read
    };
    let file = CaseFile::open(Path::new(&name), access).map_err(|e| match e {
        e @ crate::review::case::CaseError::NotRegular { .. } => CliError::Write(e.to_string()),
        e => CliError::Input(e.to_string()),
    })?;
    let (entries, chain) = file.load().map_err(|e| CliError::Input(e.to_string()))?;
    if !chain.is_intact() {
        return Err(CliError::Write(format!(
            "case file {}: chain {}; not exporting decisions from a broken case file",
            escape(&name),
            escape(&chain.describe())
        )));
    }
    let mut text = String::new();
    let decisions = case::decisions_of(&entries);
    for d in &decisions {
        let e = entries.iter().find(|e| e.seq == d.seq);
        let line = ExportLine {
            kind: "retrace.review_decision",
            version: 1,
            seq: d.seq,
            at: case::format_at(d.at),
            execution_id: &d.payload.execution_id,
            decision: d.payload.decision,
            reviewer: &d.payload.reviewer,
            note: &d.payload.note,
            group_id: d.payload.group_id.as_deref(),
            fingerprint: d.payload.fingerprint.as_deref(),
            verdict_before: d.payload.verdict_before.as_deref(),
            prev_hash: e.map_or("", |e| e.prev_hash.as_str()),
            hash: &d.hash,
        };
        // Escaped as every JSON retrace writes: the same JSON for the
        // gateway, nothing a terminal runs for whoever prints it.
        text.push_str(&crate::sanitize::to_json_line(&line)?);
        text.push('\n');
    }
    match output {
        Some(p) => write_output(p, &text)?,
        None => out.write_all(text.as_bytes())?,
    }
    let _ = writeln!(
        std::io::stderr(),
        "{} decision(s) exported from case file {}: {}",
        decisions.len(),
        escape(&name),
        escape(&chain.describe())
    );
    Ok(())
}
