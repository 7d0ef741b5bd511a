//! OpenTelemetry traces of MCP calls, as OTLP JSON (docs/formats.md#otlp-json):
//! the OpenTelemetry Collector's `file` exporter (one `TracesData` object
//! per line), or one OTLP/HTTP JSON request body (one object, on one line
//! or pretty-printed).
//!
//! Spans are parsed with their byte ranges ([`span`]), then read as tool
//! calls by the instrumentation that wrote them ([`calls`]). A span that
//! cannot be read is reported with its line and skipped; a last line cut
//! short (a file still being written) is noted, not an error.

mod calls;
mod span;

pub use calls::CANCEL_MARGIN;
pub(crate) use calls::Spans;

use super::{
    BadLine, Capabilities, ChainKeys, Format, FormatFacts, JournalError, JournalReader,
    JournalSource, ReadCtx, for_each_line, lines,
};
use crate::model::{JournalId, Layer};
use rayon::prelude::*;
use span::{Batch, Span};
use std::io::Read;

/// Reader for OTLP JSON trace exports.
pub struct OtlpReader;

/// OTLP JSON traces: spans of clients, gateways and servers, joined by
/// trace context.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "otlp-json",
    description: "OpenTelemetry traces as OTLP JSON (Collector file exporter, or an OTLP/HTTP JSON body)",
    noun: "the OpenTelemetry trace export",
    capabilities: Capabilities {
        execution_identity: false,
        authorization: false,
        delivery: true,
        sessions: true,
        authenticated_actor: false,
    },
    no_chain: "OpenTelemetry traces carry no hash chain",
    delivery_layer: Some(Layer::Client),
    reader: &OtlpReader,
};

/// Whether text begins a `TracesData` object: `{"resourceSpans"` (or the
/// snake_case spelling), with any whitespace between.
fn opens_traces_data(text: &[u8]) -> bool {
    let t = text.trim_ascii_start();
    let Some(rest) = t.strip_prefix(b"{") else {
        return false;
    };
    let rest = rest.trim_ascii_start();
    rest.starts_with(b"\"resourceSpans\"") || rest.starts_with(b"\"resource_spans\"")
}

/// The spans of every OpenTelemetry journal loaded together, so that each
/// journal's calls are read with the spans of the others at hand: a client
/// and the server it calls each export to a file of their own, and a
/// Collector's `file` exporter that rotates puts a trace's spans into two
/// files (docs/formats.md#otlp-json). Only looked up (a span's parent, its
/// children, the gateway span that fits it): each journal emits its own
/// spans' calls, and reports its own bad lines.
#[derive(Default)]
pub struct TraceSet {
    /// The spans of each journal, by journal, in load order.
    journals: Vec<(JournalId, Vec<Span>)>,
    /// Of a followed journal ([`TraceSet::renew`]): how many of its spans,
    /// first in its list, are in its file's recent lines; those after them
    /// left (a rotated file's, lines the window moved past) and are kept as
    /// partners, of its own recent spans too.
    recent: std::collections::HashMap<JournalId, usize>,
}

impl TraceSet {
    /// Parses the spans of the OpenTelemetry journals among `journals`
    /// (journal id, source, format), on every core; `None` unless there are
    /// two or more (one journal's reader has its own spans). What cannot be
    /// parsed is left out here: the journal's own read reports it.
    pub(crate) fn read(journals: &[(JournalId, &JournalSource, Format)]) -> Option<TraceSet> {
        let otlp: Vec<(JournalId, &JournalSource)> = journals
            .iter()
            .filter(|(_, _, f)| *f == Format::OtlpJson)
            .map(|&(id, s, _)| (id, s))
            .collect();
        if otlp.len() < 2 {
            return None;
        }
        let journals = otlp
            .par_iter()
            .map(|&(id, source)| (id, spans_of(id, source)))
            .collect();
        Some(TraceSet {
            journals,
            recent: Default::default(),
        })
    }

    /// The spans of followed files' recent lines (journal, the lines as a
    /// source, the line number of the first and its offset in the file),
    /// each placed where it is in its file.
    pub(crate) fn of_windows(windows: &[(JournalId, JournalSource, u32, u64)]) -> TraceSet {
        let journals = windows
            .iter()
            .map(|(id, source, first_line, first_offset)| {
                let mut spans = spans_of(*id, source);
                for s in &mut spans {
                    if let crate::model::SourceRef::Line { line, offset, .. } = &mut s.source {
                        *line = line.saturating_add(first_line.saturating_sub(1));
                        *offset = crate::model::LineOffset::new(
                            offset.get().saturating_add(*first_offset),
                        );
                    }
                }
                (*id, spans)
            })
            .collect();
        TraceSet {
            journals,
            recent: Default::default(),
        }
    }

    /// Replaces the spans with `fresh` (the files' recent spans), keeping
    /// a span no longer there while it is still a partner of one that is:
    /// a span of its trace is still there, in any journal (its parent or
    /// child), or it is the other half of a gateway pairing
    /// ([`calls::Spans::gateway_pairs`]: a ContextForge `tool.invoke` span
    /// is in a trace of its own, not its client's).
    pub(crate) fn renew(&mut self, fresh: TraceSet) {
        use std::collections::{HashMap, HashSet};
        let live: HashSet<&str> = fresh
            .journals
            .iter()
            .flat_map(|(_, spans)| spans.iter().map(|s| s.trace.as_str()))
            .collect();
        let before = std::mem::take(&mut self.journals);
        // Spans of no live trace that pair with a fresh gateway or client
        // span: looked up among the fresh spans and those.
        let paired: HashSet<(String, String)> = {
            let fresh_keys: HashSet<(&str, &str)> = fresh
                .journals
                .iter()
                .flat_map(|(_, spans)| spans.iter().map(|s| (s.trace.as_str(), s.id.as_str())))
                .collect();
            let leaving = before
                .iter()
                .flat_map(|(_, spans)| spans)
                .filter(|s| !live.contains(s.trace.as_str()));
            let idx = Spans::new(
                fresh
                    .journals
                    .iter()
                    .flat_map(|(_, spans)| spans)
                    .chain(leaving),
                Vec::new(),
            );
            let is_fresh = |s: &Span| fresh_keys.contains(&(s.trace.as_str(), s.id.as_str()));
            idx.gateway_pairs()
                .filter_map(|(c, g)| match (is_fresh(c), is_fresh(g)) {
                    (true, false) => Some(g),
                    (false, true) => Some(c),
                    _ => None,
                })
                .map(|s| (s.trace.clone(), s.id.clone()))
                .collect()
        };
        let mut old: HashMap<JournalId, Vec<Span>> = before
            .into_iter()
            .map(|(id, spans)| {
                let kept = spans
                    .into_iter()
                    .filter(|s| {
                        live.contains(s.trace.as_str())
                            || paired.contains(&(s.trace.clone(), s.id.clone()))
                    })
                    .collect();
                (id, kept)
            })
            .collect();
        let mut journals = Vec::with_capacity(fresh.journals.len());
        self.recent.clear();
        for (id, mut spans) in fresh.journals {
            self.recent.insert(id, spans.len());
            if let Some(left) = old.remove(&id) {
                let here: HashSet<(&str, &str)> = spans
                    .iter()
                    .map(|s| (s.trace.as_str(), s.id.as_str()))
                    .collect();
                let left: Vec<Span> = left
                    .into_iter()
                    .filter(|s| !here.contains(&(s.trace.as_str(), s.id.as_str())))
                    .collect();
                spans.extend(left);
            }
            journals.push((id, spans));
        }
        // A journal with no recent lines now (read again from its start
        // after a rotation) keeps its spans still needed.
        journals.extend(old.into_iter().filter(|(_, spans)| !spans.is_empty()));
        journals.sort_by_key(|(id, _)| *id);
        self.journals = journals;
    }

    /// Drops the spans of journal `journal`.
    pub(crate) fn forget(&mut self, journal: JournalId) {
        self.journals.retain(|(id, _)| *id != journal);
        self.recent.remove(&journal);
    }

    /// The spans of `journal` that left its file's recent lines (all of
    /// them for a journal not followed).
    fn left_of(&self, journal: JournalId) -> &[Span] {
        self.journals
            .iter()
            .find(|(id, _)| *id == journal)
            .map_or(&[], |(_, spans)| {
                spans
                    .get(self.recent.get(&journal).copied().unwrap_or(0)..)
                    .unwrap_or_default()
            })
    }

    /// Whether it holds spans a reader of `journal`'s recent lines does
    /// not have: another journal's, or its own that left them.
    pub(crate) fn has_others(&self, journal: JournalId) -> bool {
        self.journals
            .iter()
            .any(|(id, spans)| *id != journal && !spans.is_empty())
            || !self.left_of(journal).is_empty()
    }

    /// Whether any followed journal has spans that left its recent lines.
    pub(crate) fn has_left(&self) -> bool {
        self.journals
            .iter()
            .any(|(id, _)| !self.left_of(*id).is_empty())
    }

    /// How many journals it holds spans of.
    pub(crate) fn journal_count(&self) -> usize {
        self.journals.iter().filter(|(_, s)| !s.is_empty()).count()
    }

    /// The index of `own`, the spans of journal `journal` as its reader
    /// has them, and of the other journals' spans here (for a followed
    /// file read again: its own spans are where its reader places them).
    pub(crate) fn index_with<'a>(&'a self, journal: JournalId, own: &'a [Span]) -> Spans<'a> {
        let others = self.journals.iter().filter(|(id, _)| *id != journal);
        // Its own spans that left its recent lines (a rotated file's)
        // partner its recent ones too; the recent ones, given first, are
        // the ones indexed when both hold a span.
        let left = self.left_of(journal);
        Spans::new(
            own.iter()
                .chain(others.clone().flat_map(|(_, spans)| spans))
                .chain(left),
            std::iter::once((journal, own.len()))
                .chain(others.map(|(id, spans)| (*id, spans.len())))
                .collect(),
        )
    }

    /// The index of every journal's spans, each span once, that each
    /// journal's reader looks its spans' partners up in.
    pub(crate) fn index(&self) -> Spans<'_> {
        Spans::new(
            self.journals.iter().flat_map(|(_, spans)| spans),
            self.journals
                .iter()
                .map(|(id, spans)| (*id, spans.len()))
                .collect(),
        )
    }
}

/// The spans of one journal, read as [`OtlpReader`] reads them, whatever
/// else the read finds (bad lines, notes) dropped; none when it cannot be
/// read at all.
pub(crate) fn spans_of(journal: JournalId, source: &JournalSource) -> Vec<Span> {
    let keys = ChainKeys::default();
    let mut sink = |_| {};
    let mut progress = |_| {};
    let mut ctx = ReadCtx::new(
        journal,
        source,
        String::new(),
        Format::OtlpJson,
        (&mut sink, &mut progress),
        &keys,
        Vec::new(),
    );
    match read_body(&mut ctx) {
        Ok(Some(spans)) => spans,
        Ok(None) => read_lines(&mut ctx).unwrap_or_default(),
        Err(_) => Vec::new(),
    }
}

impl JournalReader for OtlpReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        match first_lines {
            [] => false,
            [one] => opens_traces_data(one),
            [first, second, ..] => {
                opens_traces_data(first)
                    || (first.trim_ascii() == b"{" && opens_traces_data(&[b"{", *second].concat()))
            }
        }
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let spans = match read_body(ctx)? {
            Some(spans) => spans,
            None => read_lines(ctx)?,
        };
        let traces = ctx.traces;
        let c = calls::emit(ctx, &spans, traces);
        let with = match traces.map(|t| t.others(ctx.journal)) {
            Some((others, n)) if n > 0 => {
                format!(", looked up with {others} in {n} other OpenTelemetry journal(s)")
            }
            _ => String::new(),
        };
        ctx.note(format!(
            "{} spans{with}: {} tool calls sent by clients, {} handled by servers, {} through a gateway ({} joined to their client); {} other spans",
            spans.len(),
            c.client,
            c.server,
            c.gateway,
            c.gateway_joined,
            c.other
        ));
        if c.callers_inferred > 0 {
            ctx.note(format!(
                "{} server spans' callers sent trace context, but their own spans are in no journal loaded (a caller killed before its exporter ran leaves this); each is attributed to the only service seen calling its server, so that its retry is compared with it",
                c.callers_inferred
            ));
        }
        if c.read_elsewhere > 0 {
            ctx.note(format!(
                "{} of its spans are in a journal loaded before it too (the same spans twice), and are read there, once",
                c.read_elsewhere
            ));
        }
        if c.answered_elsewhere > 0 {
            ctx.note(format!(
                "{} OpenLLMetry server spans answer tool calls of another journal loaded with it, and are read with their client's spans there",
                c.answered_elsewhere
            ));
        }
        if c.orphan_writes > 0 {
            let loaded = if ctx.records_unused() {
                "not in this journal (`verify` reads each journal alone)"
            } else {
                "in no journal loaded"
            };
            ctx.note(format!(
                "{} OpenLLMetry server spans answer tool calls whose client spans are {loaded}; they name no tool and are not read: load the client's spans with them",
                c.orphan_writes
            ));
        }
        if c.client
            + c.server
            + c.gateway
            + c.answered_elsewhere
            + c.orphan_writes
            + c.read_elsewhere
            == 0
            && !spans.is_empty()
        {
            ctx.note("none of its spans is an MCP tool call");
        }
        // Sound spans that give this journal no record (none is a tool
        // call, another journal's reader reads them) are no reason to
        // refuse it: a rotated or per-service export has such files.
        if ctx.records() == 0 {
            ctx.usable_without_records(spans.len() as u64);
        }
        Ok(())
    }
}

/// Adds a batch's spans, reporting its bad spans at their lines.
fn take(ctx: &mut ReadCtx<'_>, batch: Batch, spans: &mut Vec<Span>) {
    for b in batch.bad {
        ctx.bad_line(
            b.source.position(),
            b.error.context(format!("span {} of the batch", b.index)),
        );
    }
    spans.extend(batch.spans);
}

/// One `TracesData` object per line (the Collector's file exporter; also a
/// body written on one line).
fn read_lines(ctx: &mut ReadCtx<'_>) -> Result<Vec<Span>, JournalError> {
    let mut spans = Vec::new();
    let journal = ctx.journal;
    for_each_line(ctx, |ctx, line| {
        let text = std::str::from_utf8(line.bytes)
            .map_err(|e| BadLine::new(format!("not UTF-8 text: {e}")))?;
        let no = line.no();
        match span::parse_batch(text, journal, line.offset(), &mut |_| no) {
            Ok(b) => {
                take(ctx, b, &mut spans);
                Ok(())
            }
            Err(_) if !line.terminated => {
                ctx.note(format!(
                    "line {no} is cut short (no newline at the end: the file is still being written); read again for its spans"
                ));
                Ok(())
            }
            Err(e) => Err(e),
        }
    })?;
    Ok(spans)
}

/// The largest pretty-printed body read whole: 1 GiB.
const MAX_BODY: u64 = 1 << 30;

/// A single pretty-printed body (its first line is `{` alone): read whole
/// and parsed as one object, each span's line found from its offset.
/// `None` when the journal is not one (or does not parse as one: it is
/// then read line by line, each bad line reported).
fn read_body(ctx: &mut ReadCtx<'_>) -> Result<Option<Vec<Span>>, JournalError> {
    let head = ctx.source.head(4096)?;
    let first = head
        .split(|&b| b == b'\n')
        .find(|l| !lines::is_blank(l))
        .unwrap_or_default();
    let first = first.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(first);
    if first.trim_ascii() != b"{" {
        return Ok(None);
    }
    let mut bytes = Vec::new();
    ctx.source
        .open()?
        .take(MAX_BODY)
        .read_to_end(&mut bytes)
        .map_err(|e| ctx.source.io_error(e))?;
    let bom = if bytes.starts_with(b"\xEF\xBB\xBF") {
        3
    } else {
        0
    };
    let Ok(text) = std::str::from_utf8(&bytes[bom..]) else {
        return Ok(None);
    };
    let newlines: Vec<usize> = memchr::memchr_iter(b'\n', text.as_bytes()).collect();
    let mut line_of =
        |at: usize| u32::try_from(newlines.partition_point(|&n| n < at) + 1).unwrap_or(u32::MAX);
    let Ok(batch) = span::parse_batch(text, ctx.journal, bom as u64, &mut line_of) else {
        return Ok(None);
    };
    for _ in 0..=newlines.len() {
        ctx.count_line();
    }
    (ctx.progress)(bytes.len() as u64);
    let mut spans = Vec::new();
    take(ctx, batch, &mut spans);
    Ok(Some(spans))
}

#[cfg(test)]
mod tests;
