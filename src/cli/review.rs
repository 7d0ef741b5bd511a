//! `retrace review list|decide|export`: the headless twin of the review
//! queue screen. Journal strings pass through [`escape`] before they are
//! written.

use super::{CliError, Common, Inputs, open_keeping, write_json};
use crate::analysis::{self, Decision};
use crate::export::atomic;
use crate::query::Investigation;
use crate::review::{
    self, Access, CaseFile, CaseOrigin, Event, Flow, QueueItem, State, Subject, case, queue,
};
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
pub fn review_list(
    inputs: Inputs,
    common: &Common,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let (inv, _, ctx) = open_keeping(inputs, common)?;
    let items = queue::queue(&inv, &ctx.decisions);
    if json {
        return write_json(out, &items);
    }
    writeln!(
        out,
        "Review queue: {} execution(s) wait for a reviewer, oldest first. {}.",
        items.len(),
        case_line(&ctx)
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
        it.status,
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
    writeln!(out, "  arguments       {}", e(&it.arguments.to_string()))?;
    writeln!(out, "  accepted        {}", utc(it.accepted_at))?;
    writeln!(out, "  first dispatch  {}", utc(it.first_dispatch_at))?;
    writeln!(out, "  state           {}", it.state)?;
    writeln!(out, "  known outcome   {}", e(&it.known_outcome))?;
    for (i, c) in it.calls.iter().enumerate() {
        let mut bits = Vec::new();
        if let Some(s) = &c.session_id {
            bits.push(format!("session {}", e(s)));
        }
        if let Some(j) = &c.jsonrpc_id {
            bits.push(format!("JSON-RPC id {}", e(j)));
        }
        if let Some(m) = &c.mcp_session_id {
            bits.push(format!("MCP session {}", e(m)));
        }
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
            e(c.call_id.as_deref().unwrap_or("-")),
            if bits.is_empty() {
                String::new()
            } else {
                format!(" ({})", bits.join(", "))
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

/// What `retrace review decide` reports, also as the shape of a future
/// `--json`.
#[derive(Debug, Serialize)]
struct Decided {
    execution_id: String,
    decision: Decision,
    reviewer: String,
    at: DateTime<Utc>,
    case_file: String,
    entry: u64,
    hash: String,
    group_id: String,
    verdict_before: analysis::Verdict,
    verdict_after: analysis::Verdict,
}

/// Whether the folder a new case file would go into can be written; the
/// message says what to do when not.
fn check_writable_place(path: &Path, origin: CaseOrigin) -> Result<(), CliError> {
    if path.exists() {
        let ro = std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly());
        if ro {
            return Err(CliError::Write(format!(
                "case file {} is read-only; nothing was recorded (choose another with --case FILE)",
                path.display()
            )));
        }
        return Ok(());
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let ro = std::fs::metadata(dir).map(|m| m.permissions().readonly());
    let why = match ro {
        Err(e) => Some(format!("its folder {} cannot be used: {e}", dir.display())),
        Ok(true) => Some(format!("its folder {} is read-only", dir.display())),
        Ok(false) => None,
    };
    match why {
        Some(why) => Err(CliError::Write(format!(
            "cannot create the case file {}{}: {why}; nothing was recorded (choose a case file with --case FILE)",
            path.display(),
            if origin == CaseOrigin::BesideJournal {
                " beside the journals"
            } else {
                ""
            }
        ))),
        None => Ok(()),
    }
}

/// `retrace review decide EXECUTION_ID --decision D --note N`: drives the
/// decision state machine (a headless decision is confirmed by the command
/// itself), appends one case file entry in one transaction, then analyses
/// again and prints the verdict change with its provenance.
///
/// # Errors
/// [`CliError::Input`] when the execution cannot be decided (unknown, not
/// waiting for review, already decided, a decision that contradicts the
/// journal); [`CliError::Write`] in read-only mode or when the case file
/// cannot be written.
pub fn review_decide(
    inputs: Inputs,
    common: &Common,
    execution_id: &str,
    decision: Decision,
    note: &str,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    if common.read_only {
        return Err(CliError::Write(
            "read-only mode (--read-only): no decision was recorded".into(),
        ));
    }
    let (mut inv, mut config, ctx) = open_keeping(inputs, common)?;
    let Some(path) = ctx.path.clone() else {
        return Err(CliError::Input(
            "the bundled sample has no case file: give one with --case FILE to record decisions about it"
                .into(),
        ));
    };
    if let Some(c) = &ctx.chain
        && !c.is_intact()
    {
        return Err(CliError::Write(format!(
            "case file {}: chain {}; a broken chain is never extended, nothing was recorded",
            path.display(),
            c.describe()
        )));
    }
    let item = queue::find(&inv, &ctx.decisions, execution_id)
        .map_err(|e| CliError::Input(escape(&e.to_string()).into_owned()))?;
    let Some(reviewer) = review::reviewer(common.reviewer.as_deref()) else {
        return Err(CliError::Input(
            "no reviewer name: give one with --reviewer NAME (no login name in USER or LOGNAME)"
                .into(),
        ));
    };
    let group = &inv.analysis.groups[inv.analysis.execution_group[item.execution_index]];
    let (group_id, verdict_before, fingerprint) =
        (group.id.clone(), group.verdict, group.fingerprint.clone());

    let mut flow = Flow::new(Subject {
        execution_id: item.execution_id.clone(),
        group_id: group_id.clone(),
        allowed: item.allowed.clone(),
        reviewer: reviewer.clone(),
        read_only: common.read_only,
    });
    flow.handle(Event::Choose(decision));
    flow.handle(Event::EditNote(review::fsm::NoteEdit::Set(
        note.to_string(),
    )));
    flow.handle(Event::Submit);
    if let State::Selecting {
        problem: Some(p), ..
    } = &flow.state
    {
        return Err(CliError::Input(p.clone()));
    }
    let effects = flow.handle(Event::Confirm);

    check_writable_place(&path, ctx.origin)?;
    let mut file = CaseFile::open(&path, Access::ReadWrite)
        .map_err(|e| CliError::Write(format!("{e}; nothing was recorded")))?;
    let mut record = None;
    for fx in &effects {
        let (ev, rec) = review::perform(&mut file, &item, Some(&fingerprint), fx, Utc::now());
        flow.handle(ev);
        record = record.or(rec);
    }
    let (State::Recorded { .. }, Some(record)) = (&flow.state, record) else {
        // Decided by someone else since the queue was read: a refused
        // decision (exit 2), said as `review decide` says it up front.
        if let Ok((decisions, _)) = file.decisions()
            && let Err(e @ review::NotQueued::AlreadyDecided { .. }) =
                queue::find(&inv, &decisions, &item.execution_id)
        {
            return Err(CliError::Input(escape(&e.to_string()).into_owned()));
        }
        let why = match &flow.state {
            State::Confirming {
                problem: Some(p), ..
            } => p.clone(),
            s => format!("the decision flow stopped in {s:?}"),
        };
        return Err(CliError::Write(why));
    };

    // Analyse again with the new decision.
    config
        .resolutions
        .push(record.resolution(&path.display().to_string()));
    inv.analysis = analysis::analyze(&inv.model, &inv.journals, &config);
    let verdict_after = inv
        .group(&group_id)
        .map(|g| g.verdict)
        .unwrap_or(verdict_before);
    let done = Decided {
        execution_id: item.execution_id.clone(),
        decision,
        reviewer: reviewer.clone(),
        at: record.at,
        case_file: path.display().to_string(),
        entry: record.seq,
        hash: record.hash.clone(),
        group_id: group_id.clone(),
        verdict_before,
        verdict_after,
    };
    writeln!(
        out,
        "recorded: {} {} by {} at {} (case file {} entry {}, hash {}…)",
        escape(&done.execution_id),
        done.decision,
        escape(&done.reviewer),
        utc(Some(done.at)),
        escape(&done.case_file),
        done.entry,
        &done.hash[..12]
    )?;
    let change = if verdict_before == verdict_after {
        format!("{verdict_after} (unchanged)")
    } else {
        format!("{verdict_before} → {verdict_after}")
    };
    writeln!(
        out,
        "group {group_id}: {change}; the resolution comes from reviewer {} at {}, not from the journal",
        escape(&reviewer),
        utc(Some(done.at))
    )?;
    if let Some(n) = note_on(&inv, &done.execution_id) {
        writeln!(out, "{}", escape(&n))?;
    }
    Ok(())
}

/// The analysis note about a decision that did not apply, if any.
fn note_on(inv: &Investigation, execution_id: &str) -> Option<String> {
    inv.analysis
        .notes
        .iter()
        .find(|n| n.contains(execution_id))
        .map(|n| format!("note: {n}"))
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
    journals: &[std::path::PathBuf],
    common: &Common,
    output: Option<&Path>,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let output = super::export::output_file(output);
    if common.read_only && output.is_some() {
        return Err(CliError::Write(
            "read-only mode (--read-only): not writing a file; leave out -o to print to stdout"
                .into(),
        ));
    }
    let ctx = review::CaseContext::load(common.case.as_deref(), journals, common.read_only)
        .map_err(|e| CliError::Input(e.to_string()))?;
    if let Some(p) = output {
        let inputs = super::export::read_files(
            journals.iter().map(|j| j.as_path()),
            ctx.path.as_deref(),
            common,
        );
        super::export::check_output(p, &inputs)?;
    }
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
    let access = if common.read_only {
        Access::ReadOnly
    } else {
        Access::Read
    };
    let file =
        CaseFile::open(Path::new(&name), access).map_err(|e| CliError::Input(e.to_string()))?;
    let (entries, chain) = file.load().map_err(|e| CliError::Input(e.to_string()))?;
    if !chain.is_intact() {
        return Err(CliError::Write(format!(
            "case file {name}: chain {}; not exporting decisions from a broken case file",
            chain.describe()
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
        text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::from)?);
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
        chain.describe()
    );
    Ok(())
}
