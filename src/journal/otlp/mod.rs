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

use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line, lines,
};
use crate::model::Layer;
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
        let c = calls::emit(ctx, &spans);
        ctx.note(format!(
            "{} spans: {} tool calls sent by clients, {} handled by servers, {} through a gateway ({} joined to their client here); {} other spans",
            spans.len(),
            c.client,
            c.server,
            c.gateway,
            c.gateway_joined,
            c.other
        ));
        if c.orphan_writes > 0 {
            ctx.note(format!(
                "{} OpenLLMetry server spans answer tool calls whose client spans are not in this journal; they name no tool and are not read: export the client's spans to the same file",
                c.orphan_writes
            ));
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
