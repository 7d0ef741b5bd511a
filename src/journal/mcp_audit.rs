//! elang2/mcp-audit-gateway (`mcp-audit`) `audit.jsonl`, research notes
//! `journal-formats.md` §2.1, and the in-toto `ai-agent-action` predicate
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

use super::chain::{ChainRule, ChainTracker, LinkInput, RuleParams, SigResult, SignatureCheck};
use super::exchange::{Answer, Call, Dispatch, End, exchange};
use super::fields::{missing, parse_object, parse_time};
use super::keys::{KeyFile, KeyFileError};
use super::rawjson::{self, Raw, js_number, js_str};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{ActionRecord, Arguments, CallRef, OutcomeKind, SourceRef};
use ed25519_dalek::Verifier;
use hmac::{Hmac, KeyInit, Mac};
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
        let scope = format!("journal:{}", ctx.label);
        let label = ctx.label.clone();
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
                        prev,
                        stored: None,
                        computed: &computed,
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
            emit_call(ctx, &m, &label, &scope, line.source)
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
    label: &str,
    scope: &str,
    source: SourceRef,
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
        Some(i) => format!("mcp-audit:{label}:{i}"),
        None => format!("mcp-audit:{label}:L{}", source.position()),
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
            .map(str::to_string),
        transport: None,
    };
    let mut c = Call::new(
        id,
        started,
        call,
        ActionRecord(action.as_object().cloned().unwrap_or_default()),
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

/// The attestation key: an HMAC secret and, when it is 32 bytes, also the
/// Ed25519 key it may be (a public key, or the signer's private seed).
pub struct AttestationKey {
    hmac: Vec<u8>,
    ed25519: Vec<ed25519_dalek::VerifyingKey>,
}

impl AttestationKey {
    /// Reads the key: hex text is decoded (as mcp-audit's `key.hex`), other
    /// contents are used as raw bytes.
    ///
    /// # Errors
    /// [`KeyFileError::Invalid`] for an empty key file.
    pub fn from_file(k: &KeyFile) -> Result<Self, KeyFileError> {
        let hmac = k
            .candidates()
            .into_iter()
            .next()
            .ok_or_else(|| k.invalid("the attestation key file is empty"))?;
        let mut ed25519 = Vec::new();
        for c in k.candidates() {
            if let Ok(b) = <[u8; 32]>::try_from(c.as_slice()) {
                if let Ok(vk) = ed25519_dalek::VerifyingKey::from_bytes(&b) {
                    ed25519.push(vk);
                }
                ed25519.push(ed25519_dalek::SigningKey::from_bytes(&b).verifying_key());
            }
        }
        Ok(AttestationKey { hmac, ed25519 })
    }
}

fn check_attestation(key: &AttestationKey, raw: &Raw) -> SigResult {
    let att = match raw.get("attestation") {
        Some(Raw::Str(s)) if !s.is_empty() => s,
        _ => return SigResult::Missing,
    };
    let canonical = match signing_form(raw) {
        Ok(c) => c,
        Err(e) => return SigResult::Invalid(format!("cannot form the signed bytes: {e}")),
    };
    let Ok(sig) = hex::decode(att) else {
        return SigResult::Invalid("the attestation is not hex".into());
    };
    match sig.len() {
        32 => {
            let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(&key.hmac) else {
                return SigResult::Invalid("unusable HMAC key".into());
            };
            mac.update(canonical.as_bytes());
            if mac.verify_slice(&sig).is_ok() {
                SigResult::Valid
            } else {
                SigResult::Invalid(
                    "the HMAC attestation does not match: the line was changed after it was signed, or another key signed it".into(),
                )
            }
        }
        64 => {
            let Ok(sig) = ed25519_dalek::Signature::from_slice(&sig) else {
                return SigResult::Invalid("malformed Ed25519 signature".into());
            };
            if key.ed25519.is_empty() {
                return SigResult::Invalid(
                    "Ed25519 attestation, but the key is not a 32-byte Ed25519 key".into(),
                );
            }
            if key
                .ed25519
                .iter()
                .any(|vk| vk.verify(canonical.as_bytes(), &sig).is_ok())
            {
                SigResult::Valid
            } else {
                SigResult::Invalid(
                    "the Ed25519 attestation does not verify: the line was changed after it was signed, or another key signed it".into(),
                )
            }
        }
        n => SigResult::Invalid(format!(
            "an attestation of {n} bytes is neither HMAC-SHA256 (32) nor Ed25519 (64)"
        )),
    }
}

/// `JSON.stringify` of a member, `null` when absent (`?? null`).
fn member(raw: &Raw, key: &str) -> String {
    let mut s = String::new();
    match raw.get(key) {
        None => s.push_str("null"),
        Some(v) => v.write_js(&mut s),
    }
    s
}

/// `JSON.stringify([[k, v], …])` of rendered values.
fn tuple(pairs: &[(&str, String)]) -> String {
    let mut s = String::from("[");
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push('[');
        js_str(k, &mut s);
        s.push(',');
        s.push_str(v);
        s.push(']');
    }
    s.push(']');
    s
}

fn present(raw: &Raw, key: &str) -> bool {
    raw.get(key).is_some_and(|v| *v != Raw::Null)
}

/// The bytes an mcp-audit attestation signs (`canonicalizeRecord`,
/// `canonicalizeCheckpoint`, `canonicalizeChainBreak` in signer.ts @2ba48c8).
///
/// # Errors
/// [`UnsafeNumber`]: a value the M/L form refuses (a float, an unsafe integer).
pub fn signing_form(raw: &Raw) -> Result<String, UnsafeNumber> {
    match raw.get("type").and_then(Raw::as_str) {
        Some("checkpoint") => {
            let mut p = vec![
                ("id", member(raw, "id")),
                ("type", "\"checkpoint\"".to_string()),
                ("timestamp", member(raw, "timestamp")),
                ("sequence", member(raw, "sequence")),
                ("recordCount", member(raw, "recordCount")),
                ("previousHash", member(raw, "previousHash")),
            ];
            if present(raw, "parties") {
                p.push(("parties", member(raw, "parties")));
            }
            Ok(tuple(&p))
        }
        Some("chain_break") => Ok(tuple(&[
            ("id", member(raw, "id")),
            ("type", "\"chain_break\"".to_string()),
            ("timestamp", member(raw, "timestamp")),
            ("reason", member(raw, "reason")),
            ("priorHead", member(raw, "priorHead")),
            ("priorSequence", member(raw, "priorSequence")),
            ("priorRecordCount", member(raw, "priorRecordCount")),
        ])),
        _ => {
            let mut p = vec![
                ("id", member(raw, "id")),
                ("timestamp", member(raw, "timestamp")),
                ("method", member(raw, "method")),
                ("toolName", member(raw, "toolName")),
                ("namespace", member(raw, "namespace")),
                ("upstream", member(raw, "upstream")),
                ("principal", member(raw, "principal")),
                ("durationMs", member(raw, "durationMs")),
                ("success", member(raw, "success")),
                ("errorCode", member(raw, "errorCode")),
                ("previousHash", member(raw, "previousHash")),
            ];
            let mut at = 11;
            if present(raw, "decisionContextDigest") {
                p.insert(
                    10,
                    (
                        "decisionContextDigest",
                        member(raw, "decisionContextDigest"),
                    ),
                );
                at = 12;
            }
            if present(raw, "extensionsDigest") {
                p.insert(at, ("extensionsDigest", member(raw, "extensionsDigest")));
                at += 1;
            }
            if let Some(ai) = raw.get("aiInvocation").filter(|v| **v != Raw::Null) {
                let mut s = String::new();
                ml_form(ai, &mut s)?;
                p.insert(at, ("aiInvocation", s));
                at += 1;
            }
            if present(raw, "parties") {
                p.insert(at, ("parties", member(raw, "parties")));
            }
            Ok(tuple(&p))
        }
    }
}

/// A number the attestation's M/L form refuses to sign (`signer.ts`
/// `canonicalizeValue`): a float, or an integer beyond ±(2^53 − 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsafe number {number}: only safe integers are signed")]
pub struct UnsafeNumber {
    /// The number as written.
    pub number: String,
}

/// `JSON.stringify(canonicalizeValue(v))`: objects as `["M", [[k, v]…]]`
/// with keys in UTF-16 code-unit order, arrays as `["L", […]]`, numbers
/// only as safe integers.
///
/// # Errors
/// [`UnsafeNumber`]: a float or an integer beyond ±(2^53 − 1).
pub fn ml_form(v: &Raw, out: &mut String) -> Result<(), UnsafeNumber> {
    match v {
        Raw::Null => out.push_str("null"),
        Raw::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Raw::Num(n) => {
            let safe = n
                .parse::<f64>()
                .is_ok_and(|f| f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_991.0);
            if !safe {
                return Err(UnsafeNumber { number: n.clone() });
            }
            out.push_str(&js_number(n));
        }
        Raw::Str(s) => js_str(s, out),
        Raw::Arr(a) => {
            out.push_str("[\"L\",[");
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                ml_form(x, out)?;
            }
            out.push_str("]]");
        }
        Raw::Obj(m) => {
            let mut members: Vec<&(String, Raw)> = m.iter().collect();
            members.sort_by(|a, b| a.0.encode_utf16().cmp(b.0.encode_utf16()));
            out.push_str("[\"M\",[");
            for (i, (k, x)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push('[');
                js_str(k, out);
                out.push(',');
                ml_form(x, out)?;
                out.push(']');
            }
            out.push_str("]]");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::chain::{ChainStatus, FailureKind};
    use crate::journal::{ChainKeys, JournalSource, LoadOptions, verify};
    use ed25519_dalek::Signer;

    fn sha(s: &str) -> String {
        hex::encode(Sha256::digest(s.as_bytes()))
    }

    fn ml(json: &str) -> Result<String, UnsafeNumber> {
        let mut s = String::new();
        ml_form(&rawjson::parse(json).unwrap(), &mut s)?;
        Ok(s)
    }

    // Conformance vectors by value from elang2/mcp-audit-gateway
    // test/vectors/checkpoint.json @17721254 (`canonicalize_value`,
    // `extensions_digest`, `checkpoint_canonicalization`).
    #[test]
    fn ml_form_matches_the_conformance_vectors() {
        let a = ml(r#"{ "z": 1, "a": { "y": 2, "b": 3 } }"#).unwrap();
        assert_eq!(a, r#"["M",[["a",["M",[["b",3],["y",2]]]],["z",1]]]"#);
        assert_eq!(
            sha(&a),
            "780dbde7596450dde10d8362bc4590826315109f85a55a2349f13539f023a07c"
        );
        assert_eq!(
            sha(&ml(r#"{"items": [3, 2, 1]}"#).unwrap()),
            "24ec68e95f9bb0b135d4a8dd89b5939ac05fd7d4d43b2a7c85d800151441f2e9"
        );
        let u = ml(r#"{ "ñ": 1, "a": 2, "z": 3, "à": 4 }"#).unwrap();
        assert_eq!(u, r#"["M",[["a",2],["z",3],["à",4],["ñ",1]]]"#);
        assert_eq!(
            sha(&u),
            "6f8e940801e3f524e3f0db529e705583a0ab57c5ad5966cb29d6808fd064bc49"
        );
        // UTF-16 code-unit order: U+10000 (0xD800…) sorts before U+FF61.
        let astral = ml("{ \"｡\": 1, \"𐀀\": 2 }").unwrap();
        assert_eq!(
            sha(&astral),
            "17e0391b630e2a8ba408b2d47f689fbb6c4fd4e63c606691d3eca219d1843495"
        );
        assert!(ml("0.1").unwrap_err().to_string().contains("unsafe number"));
        assert_eq!(
            sha(&ml(r#"{ "model": "gpt-4", "max_tokens": 1024 }"#).unwrap()),
            "bae5f878e0a23ed1918f2cb454e70d1306a862aa9bdc96117bbdc7d5b25b0d02"
        );
    }

    #[test]
    fn signing_form_matches_the_conformance_vectors() {
        let rec = rawjson::parse(
            r#"{"id":"550e8400-e29b-41d4-a716-446655440099","timestamp":"2026-08-22T21:00:00.000Z","method":"tools/call","toolName":"query_db","namespace":"data","upstream":"data-server","principal":"user:alice@example.com","durationMs":150,"success":true,"errorCode":null,"previousHash":"genesis","extensionsDigest":"bae5f878e0a23ed1918f2cb454e70d1306a862aa9bdc96117bbdc7d5b25b0d02"}"#,
        )
        .unwrap();
        assert_eq!(
            sha(&signing_form(&rec).unwrap()),
            "f5aa5b0cfbfcfd141c3e70a5ad2b4bee51ec170bdc88391829d1c05230550967"
        );
        let ckpt = rawjson::parse(
            r#"{"id":"ckpt_990e8400-e29b-41d4-a716-446655440001","type":"checkpoint","timestamp":"2026-08-22T20:00:00.000Z","sequence":1,"recordCount":5,"previousHash":"4e9c29d6e22fc2ef1f931994997b01f48f054c1294a7c287bfeece79417e5d43"}"#,
        )
        .unwrap();
        assert_eq!(
            sha(&signing_form(&ckpt).unwrap()),
            "29fcb385d7306fe136b50eb46fd55731ff3c2aadbecb18554267890c3b625794"
        );
        let ckpt = rawjson::parse(
            r#"{"id":"ckpt_990e8400-e29b-41d4-a716-446655440002","type":"checkpoint","timestamp":"2026-08-22T20:01:00.000Z","sequence":2,"recordCount":10,"previousHash":"abc123def456789","parties":[{"party":"gateway","role":"witness","scope":["sequence","recordCount","previousHash"]}]}"#,
        )
        .unwrap();
        assert_eq!(
            sha(&signing_form(&ckpt).unwrap()),
            "0b23e3a13467b142f6baaa206450428c03c9757889753d91e496f02c4b1c9d0f"
        );
    }

    /// How a test journal is attested.
    enum Att<'a> {
        Hmac(&'a [u8]),
        Ed(&'a ed25519_dalek::SigningKey),
    }

    /// Writes an mcp-audit chain the way the gateway does: each record
    /// gets `previousHash` (sha256 of the previous line) and an
    /// attestation over its signing form, and is written compact.
    fn write(records: &[&str], att: &Att<'_>) -> Vec<String> {
        let mut prev = "genesis".to_string();
        let mut out = Vec::new();
        for r in records {
            let mut raw = rawjson::parse(r).unwrap();
            if let Raw::Obj(m) = &mut raw {
                m.push(("previousHash".into(), Raw::Str(prev.clone())));
            }
            let form = signing_form(&raw).unwrap();
            let sig = match att {
                Att::Hmac(k) => {
                    let mut mac = Hmac::<Sha256>::new_from_slice(k).unwrap();
                    mac.update(form.as_bytes());
                    hex::encode(mac.finalize().into_bytes())
                }
                Att::Ed(k) => hex::encode(k.sign(form.as_bytes()).to_bytes()),
            };
            if let Raw::Obj(m) = &mut raw {
                m.push(("attestation".into(), Raw::Str(sig)));
            }
            let mut line = String::new();
            raw.write_js(&mut line);
            prev = sha(&line);
            out.push(line);
        }
        out
    }

    fn records() -> Vec<String> {
        (1..=5)
            .map(|i| {
                format!(
                    r#"{{"id":"rec-{i}","timestamp":"2026-08-22T20:10:0{i}.000Z","method":"tools/call","toolName":"fs/write_file","namespace":"fs","upstream":"fs-server","principal":"user:bob@example.com","durationMs":{},"success":true,"errorCode":null,"args":{{"path":"/tmp/{i}.txt","content":"ü"}}}}"#,
                    10 * i
                )
            })
            .collect()
    }

    fn run(lines: &[String], key: Option<&[u8]>, newline: bool) -> ChainStatus {
        let mut text = lines.join("\n");
        if newline {
            text.push('\n');
        }
        let bytes: &'static [u8] = Box::leak(text.into_bytes().into_boxed_slice());
        let keys = ChainKeys {
            attestation_key: key.map(|k| KeyFile::from_bytes("key.hex", k)),
            ..ChainKeys::default()
        };
        verify(
            JournalSource::embedded("audit.jsonl", bytes),
            &LoadOptions { forced: None, keys },
        )
        .unwrap()
        .chain
    }

    fn failure(st: &ChainStatus) -> (FailureKind, u32) {
        let f = st.failure().unwrap_or_else(|| panic!("{st:?}"));
        (f.kind, f.line)
    }

    const KEY_HEX: &[u8] = b"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

    fn key() -> Vec<u8> {
        hex::decode(KEY_HEX).unwrap()
    }

    fn journal() -> Vec<String> {
        let r = records();
        let refs: Vec<&str> = r.iter().map(String::as_str).collect();
        write(&refs, &Att::Hmac(&key()))
    }

    #[test]
    fn intact_with_and_without_the_key() {
        match run(&journal(), Some(KEY_HEX), true) {
            ChainStatus::Intact {
                lines, signatures, ..
            } => {
                assert_eq!(lines, 5);
                assert_eq!(signatures, SignatureCheck::Verified { count: 5 });
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            run(&journal(), None, true),
            ChainStatus::Intact {
                signatures: SignatureCheck::NotChecked { .. },
                ..
            }
        ));
    }

    #[test]
    fn every_tampering_kind() {
        // An attested field changed: the attestation finds the line itself;
        // without the key the next link shows it.
        let mut l = journal();
        l[1] = l[1].replace("\"durationMs\":20", "\"durationMs\":21");
        assert_eq!(
            failure(&run(&l, Some(KEY_HEX), true)),
            (FailureKind::BadSignature, 2)
        );
        assert_eq!(failure(&run(&l, None, true)), (FailureKind::BrokenLink, 3));
        // Only `args` changed: not attested, so only the next link shows it.
        let mut l = journal();
        l[1] = l[1].replace("/tmp/2.txt", "/etc/passwd");
        assert_eq!(
            failure(&run(&l, Some(KEY_HEX), true)),
            (FailureKind::BrokenLink, 3)
        );
        // Deleted, reordered, duplicated.
        let mut l = journal();
        l.remove(2);
        let st = run(&l, Some(KEY_HEX), true);
        assert_eq!(failure(&st), (FailureKind::BrokenLink, 3));
        assert!(st.failure().unwrap().message.contains("deleted"));
        let mut l = journal();
        l.swap(1, 2);
        assert_eq!(
            failure(&run(&l, Some(KEY_HEX), true)),
            (FailureKind::ReorderedLines, 2)
        );
        let mut l = journal();
        let dup = l[1].clone();
        l.insert(2, dup);
        assert_eq!(
            failure(&run(&l, None, true)),
            (FailureKind::InsertedLine, 3)
        );
        // An edited link breaks at that line.
        let mut l = journal();
        l[2] = l[2].replace("\"previousHash\":\"", "\"previousHash\":\"f");
        assert_eq!(
            failure(&run(&l, Some(KEY_HEX), true)),
            (FailureKind::BrokenLink, 3)
        );
        // A second genesis.
        let mut l = journal();
        let r = records();
        let refs: Vec<&str> = r.iter().map(String::as_str).collect();
        l[3] = write(&refs[3..4], &Att::Hmac(&key())).remove(0);
        let st = run(&l, Some(KEY_HEX), true);
        assert_eq!(failure(&st), (FailureKind::BrokenLink, 4));
        // Unsigned and truncated.
        let mut l = journal();
        l[3] = l[3].replace("\"attestation\":\"", "\"attestation_removed\":\"");
        assert_eq!(
            failure(&run(&l, Some(KEY_HEX), true)),
            (FailureKind::Unsigned, 4)
        );
        let mut l = journal();
        let last = l.pop().unwrap();
        l.push(last[..last.len() - 30].to_string());
        assert_eq!(
            failure(&run(&l, None, false)),
            (FailureKind::TruncatedLastLine, 5)
        );
        // Signed by another key.
        assert_eq!(
            failure(&run(&journal(), Some(&[b'1'; 64]), true)),
            (FailureKind::BadSignature, 1)
        );
    }

    #[test]
    fn ed25519_attestations_with_public_key_or_seed() {
        let seed = [7u8; 32];
        let sk = ed25519_dalek::SigningKey::from_bytes(&seed);
        let r = records();
        let refs: Vec<&str> = r.iter().map(String::as_str).collect();
        let l = write(&refs, &Att::Ed(&sk));
        let public = hex::encode(sk.verifying_key().to_bytes());
        assert!(run(&l, Some(public.as_bytes()), true).is_intact());
        assert!(
            run(&l, Some(&seed), true).is_intact(),
            "the signer's key file"
        );
        let mut t = l.clone();
        t[0] = t[0].replace("fs/write_file", "fs/delete_file");
        assert_eq!(
            failure(&run(&t, Some(public.as_bytes()), true)),
            (FailureKind::BadSignature, 1)
        );
        let other = hex::encode([9u8; 32]);
        assert_eq!(
            failure(&run(&l, Some(other.as_bytes()), true)),
            (FailureKind::BadSignature, 1)
        );
    }
}
