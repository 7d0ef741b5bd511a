//! elang2/mcp-audit-gateway (`mcp-audit`) `audit.jsonl`, docs/formats.md#mcp-audit, and the in-toto `ai-agent-action` predicate
//! (in-toto/attestation `spec/predicates/ai-agent-action.md`).
//!
//! Records (one JSON object a line, written by `JSON.stringify`):
//! * tool call: `id`, `timestamp`, `method`, `toolName`, `namespace`,
//!   `upstream`, `principal`, `durationMs`, `success`, `errorCode`,
//!   `decisionContextDigest`, `extensionsDigest`, `aiInvocation`, `parties`,
//!   `previousHash`, `attestation`; wrap mode adds `args`;
//! * `type: "checkpoint"`: `sequence`, `recordCount`, `previousHash`;
//! * `type: "chain_break"`: `reason`, `priorHead`, … and no `previousHash`.
//!
//! Chain: `previousHash` of a line is the SHA-256 of the previous line as
//! written (the producer hashes its own `JSON.stringify` output, so retrace
//! hashes the raw line bytes); the first is `"genesis"`. A chain-break
//! record is a break the producer declared. Lines carry no sequence number,
//! so a broken link names the line before it as changed or the lines
//! between as deleted; a later line that the link points to makes it a
//! reordering.
//!
//! Attestation (with `--attestation-key`): HMAC-SHA256 (64 hex) or Ed25519
//! (128 hex) over the tuple-array canonical form of `signer.ts` @2ba48c8:
//! `JSON.stringify([["id",…],["timestamp",…],…])`, optional fields inserted
//! at fixed places, `aiInvocation` in the M/L-tagged form. `args` is not
//! covered by the attestation, only by the next line's `previousHash`.

mod attestation;

use attestation::AttestationKey;

use super::chain::{ChainRule, ChainTracker, LinkInput, RuleParams, SigResult, SignatureCheck};
use super::exchange::{Answer, Call, Dispatch, End, exchange};
use super::fields::{missing, parse_object, parse_time};
use super::rawjson::{self, Raw};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{ActionRecord, Arguments, CallRef, OutcomeKind, SourceRef};
use attestation::check_attestation;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// Reader for mcp-audit logs.
pub struct McpAuditReader;

/// mcp-audit logs: one chained record per call, with its principal.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "mcp-audit",
    description: "mcp-audit gateway audit.jsonl (hash chain, HMAC or Ed25519 attestations)",
    noun: "the mcp-audit log",
    capabilities: Capabilities {
        execution_identity: false,
        authorization: false,
        delivery: false,
        sessions: false,
        authenticated_actor: true,
    },
    no_chain: "no chained line was read",
    delivery_layer: None,
    reader: &McpAuditReader,
};

impl JournalReader for McpAuditReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.iter().any(|l| {
            parse_object(l).is_ok_and(|m| {
                m.contains_key("id")
                    && m.contains_key("timestamp")
                    && (m.contains_key("previousHash") || m.contains_key("priorHead"))
                    && (m.contains_key("attestation") || m.contains_key("method"))
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let key = match &ctx.keys.attestation_key {
            Some(k) => Some(
                AttestationKey::from_file(k).map_err(|source| JournalError::Key {
                    journal: ctx.source.name.clone(),
                    source,
                })?,
            ),
            None => None,
        };
        let signatures = match key {
            Some(_) => SignatureCheck::Verified { count: 0 },
            None => SignatureCheck::NotChecked {
                reason: "no --attestation-key given".into(),
            },
        };
        let mut chain = ChainTracker::new(RuleParams {
            rule: ChainRule::McpAudit,
            genesis: "genesis".into(),
            first_seq: None,
            signatures,
            require_newline: false,
        });
        let scope = ctx.journal_scope();
        let mut other = 0u64;
        for_each_line(ctx, |ctx, line| {
            let no = line.source.position();
            let raw = match std::str::from_utf8(line.bytes) {
                Ok(text) => rawjson::parse(text).map_err(|e| e.to_string()),
                Err(_) => Err("not UTF-8".to_string()),
            };
            let raw = match raw {
                Ok(r @ Raw::Obj(_)) => r,
                Ok(_) => {
                    chain.unreadable(no, line.terminated, "not a JSON object");
                    return Err("expected a JSON object".into());
                }
                Err(e) => {
                    chain.unreadable(no, line.terminated, e.clone());
                    return Err(BadLine::new(format!("not valid JSON: {e}")));
                }
            };
            let kind = raw.get("type").and_then(Raw::as_str).unwrap_or("tool_call");
            if kind == "chain_break" {
                let reason = raw
                    .get("reason")
                    .and_then(Raw::as_str)
                    .unwrap_or("no reason");
                chain.declared_break(no, reason);
                other += 1;
                return Ok(());
            }
            let computed = hex::encode(Sha256::digest(line.bytes));
            match raw.get("previousHash").and_then(Raw::as_str) {
                Some(prev) => {
                    let sig = match &key {
                        None => SigResult::NotChecked,
                        Some(k) => check_attestation(k, &raw),
                    };
                    chain.link(LinkInput {
                        line: no,
                        seq: None,
                        prev: prev.as_bytes(),
                        stored: None,
                        computed: computed.as_bytes(),
                        terminated: line.terminated,
                        sig,
                    });
                }
                None => chain.unreadable(no, line.terminated, "missing previousHash"),
            }
            if kind != "tool_call" {
                other += 1;
                return Ok(());
            }
            let m = parse_object(line.bytes)?;
            emit_call(ctx, &m, &scope, (line.source, line.bytes))
        })?;
        if other > 0 {
            ctx.note(format!(
                "{other} checkpoint or chain-break record(s) (chain only)"
            ));
        }
        ctx.set_chain(chain.finish());
        Ok(())
    }
}

/// Records one tool call: accepted at `timestamp - durationMs`, dispatched
/// at once when the outcome shows it was (the gateway calls the upstream
/// right after its policy check), then the outcome at `timestamp`.
fn emit_call(
    ctx: &mut ReadCtx<'_>,
    m: &Map<String, Value>,
    scope: &str,
    (source, bytes): (SourceRef, &[u8]),
) -> Result<(), BadLine> {
    if m.get("method").and_then(Value::as_str) != Some("tools/call") {
        return Ok(());
    }
    let at = match m.get("timestamp") {
        Some(Value::String(s)) => parse_time("timestamp", s)?,
        _ => return Err(missing("timestamp")),
    };
    let tool = m
        .get("toolName")
        .and_then(Value::as_str)
        .ok_or("tools/call record without `toolName`")?;
    let id = match m.get("id").and_then(Value::as_str) {
        Some(i) => format!("mcp-audit:{}:{i}", ctx.identity),
        None => format!("mcp-audit:{}", ctx.line_id(bytes)),
    };
    let duration = m.get("durationMs").and_then(Value::as_f64).unwrap_or(0.0);
    let started = super::started_before(at, duration, "durationMs")?;
    let arguments = match m.get("args") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => json!({}),
    };
    let action = json!({
        "actor": m.get("principal").and_then(Value::as_str).unwrap_or("anonymous"),
        "tool": tool,
        "channel": "mcp",
        "target": m.get("upstream").cloned().unwrap_or(Value::Null),
        "method": "tools/call",
        "arguments": arguments,
        "intent_scope": scope,
    });
    let ai = m.get("aiInvocation");
    let call = CallRef {
        call_id: m.get("id").and_then(Value::as_str).map(str::to_string),
        session_id: None,
        jsonrpc_id: None,
        mcp_session_id: ai
            .and_then(|a| a.get("sessionId"))
            .and_then(Value::as_str)
            .map(Into::into),
        transport: None,
    };
    let mut c = Call::new(
        id,
        started,
        call,
        ActionRecord::from_map(action.as_object().cloned().unwrap_or_default()),
        source,
        Dispatch::Implied {
            why: "the log records the call when it ends; the gateway calls the upstream right after its policy check".into(),
            at_request: true,
        },
    );
    if !m.contains_key("args") {
        c.facts.arguments = Arguments::No("gateway mode logs no tool arguments".into());
    }
    for k in [
        "namespace",
        "aiInvocation",
        "decisionContextDigest",
        "parties",
    ] {
        if let Some(v) = m.get(k).filter(|v| !v.is_null()) {
            c.extra.insert(k.into(), v.clone());
        }
    }
    let success = m.get("success").and_then(Value::as_bool) == Some(true);
    let code = m.get("errorCode").and_then(Value::as_i64);
    let upstream_known = m.get("upstream").is_some_and(|u| !u.is_null());
    let answer = if success {
        Answer::new(at, source, End::response(OutcomeKind::Success, None, None))
    } else if code == Some(-32602) && !upstream_known {
        Answer::new(
            at,
            source,
            End::DispatchFailed {
                error: "unknown tool (-32602): nothing was sent upstream".into(),
            },
        )
    } else {
        // -32603 stands for a policy refusal and for an upstream error
        // alike (gateway.ts): the log cannot tell whether it was dispatched.
        let mut a = Answer::new(
            at,
            source,
            End::response(
                OutcomeKind::Unknown,
                Some(format!(
                    "failed with error code {}: a policy refusal or an upstream error; the log does not say which, nor whether the call was sent",
                    code.map_or_else(|| "none".into(), |c| c.to_string())
                )),
                None,
            ),
        );
        if let Some(c) = code {
            a.extra.insert("errorCode".into(), json!(c));
        }
        a
    };
    exchange(ctx, c, Some(answer));
    Ok(())
}

#[cfg(test)]
mod tests;
