//! Sallyport audit journals (`~/.sallyport/audit/audit-000001.jsonl`),
//! docs/formats.md#sallyport (OlegSotnikov/sallyport,
//! SallyportVault/Audit/Audit.swift, SallyportKit/Keystore/ECIES.swift).
//!
//! Each line is a sealed row, canonical JSON:
//! `{"prev_hash","sealed","seq","sig"?,"this_hash"}`.
//!
//! * Chain (checked with no key): `this_hash = hex(sha256(prev_hash ‖
//!   CanonicalJSON({"sealed":…,"seq":…})))`, `prev_hash` hashed as its 64
//!   ASCII hex characters, genesis 64 zeros, `seq` contiguous from 1, every
//!   line terminated by a newline.
//! * Signatures (with `--signer-key`, the signer's X9.63 P-256 public key):
//!   `sig = base64(DER(ECDSA-P256-SHA256(utf8(this_hash))))`.
//! * Events (with `--audit-identity`, the exported 32-byte P-256 audit
//!   identity): `sealed` is base64 of `u16be(65) ‖ ephemeral X9.63 public
//!   key ‖ nonce(12) ‖ ciphertext ‖ tag(16)`; the key is HKDF-SHA256 over
//!   the ECDH secret, salt = the ephemeral key's raw X‖Y (64 bytes), info
//!   `"sallyport-identity-v1"`, 32 bytes; the cipher ChaCha20-Poly1305.
//!   The plaintext is the event's canonical JSON (docs/formats.md#sallyport-events).
//!
//! Events: a tool call writes an intent row (`decision` ending in `.start`)
//! before it runs and a result row after; retrace pairs them by identity,
//! channel, tool, target, argument preview, session and decision, so one
//! executed call is one execution (accepted, authorized, dispatched at the
//! intent; the outcome at the result). An intent with no result row is an
//! unknown outcome. A refused call (`deny`, `ask→denied`, `ask→timeout`) is
//! one row: accepted and rejected. Session keys (`"<pid>:<start ns>"`) and
//! `session.ended` / `session.revoked` / `session.orphaned` rows become
//! sessions with their process identity.

mod events;
mod seal;

use seal::open;

use super::chain::{
    ChainRule, ChainTracker, GENESIS, LinkInput, RuleParams, SigResult, SignatureCheck,
};
use super::fields::{missing, parse_object};
use super::keys::{KeyFile, KeyFileError};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use base64::Engine;
use events::Events;
use p256::ecdsa::signature::Verifier;
use seal::audit_identity;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::fmt::Write as _;

/// Reader for Sallyport audit journals.
pub struct SallyportReader;

/// Sallyport audit journals: sealed events with authorization and
/// process-identified sessions.
pub(super) static FACTS: FormatFacts = FormatFacts {
    name: "sallyport",
    description: "Sallyport audit journal (sealed events, hash chain, ECDSA signatures)",
    noun: "the Sallyport audit journal",
    capabilities: Capabilities {
        execution_identity: false,
        authorization: true,
        delivery: false,
        sessions: true,
        authenticated_actor: false,
    },
    no_chain: "no sealed row was read",
    delivery_layer: None,
    reader: &SallyportReader,
};

/// Rows longer than this are refused, as Sallyport's reader does.
const MAX_ROW: usize = 1 << 20;

impl JournalReader for SallyportReader {
    fn sniff(&self, first_lines: &[&[u8]]) -> bool {
        first_lines.iter().any(|l| {
            parse_object(l).is_ok_and(|m| {
                m.contains_key("sealed")
                    && m.contains_key("this_hash")
                    && m.contains_key("prev_hash")
                    && m.contains_key("seq")
            })
        })
    }

    fn read(&self, ctx: &mut ReadCtx<'_>) -> Result<(), JournalError> {
        let invalid = |source: KeyFileError| JournalError::Key {
            journal: ctx.source.name.clone(),
            source,
        };
        let signer = match &ctx.keys.signer_key {
            Some(k) => Some(signer_key(k).map_err(invalid)?),
            None => None,
        };
        let identity = match &ctx.keys.audit_identity {
            Some(k) => Some(audit_identity(k).map_err(invalid)?),
            None => None,
        };
        let signatures = match signer {
            Some(_) => SignatureCheck::Verified { count: 0 },
            None => SignatureCheck::NotChecked {
                reason: "no --signer-key given".into(),
            },
        };
        let mut chain = ChainTracker::new(RuleParams {
            rule: ChainRule::Sallyport,
            genesis: GENESIS.into(),
            first_seq: Some(1),
            signatures,
            require_newline: true,
        });
        let mut st = Events::new(ctx.identity.clone());
        for_each_line(ctx, |ctx, line| {
            let no = line.source.position();
            if line.bytes.len() > MAX_ROW {
                chain.unreadable(no, line.terminated, "row longer than 1 MiB");
                return Err("row longer than 1 MiB".into());
            }
            let row = match parse_object(line.bytes).and_then(Row::from_map) {
                Ok(r) => r,
                Err(e) => {
                    chain.unreadable(no, line.terminated, e.message.clone());
                    return Err(e);
                }
            };
            let computed = this_hash(&row.prev_hash, &row.sealed, row.seq);
            let sig = match &signer {
                None => SigResult::NotChecked,
                Some(vk) => check_sig(vk, &row),
            };
            chain.link(LinkInput {
                line: no,
                seq: Some(row.seq),
                prev: row.prev_hash.as_bytes(),
                stored: Some(row.this_hash.as_bytes()),
                computed: computed.as_bytes(),
                terminated: line.terminated,
                sig,
            });
            st.sealed += 1;
            if let Some(id) = &identity {
                match open(id, &row.sealed) {
                    Ok(plain) => {
                        let m = parse_object(&plain)
                            .map_err(|e| format!("decrypted event is not JSON: {e}"))?;
                        st.event(ctx, m, line.source)?;
                    }
                    Err(e) => {
                        st.undecryptable += 1;
                        return Err(BadLine::new(format!(
                            "row {} does not decrypt with this audit identity ({e})",
                            row.seq
                        )));
                    }
                }
            }
            Ok(())
        })?;
        st.finish(ctx, identity.is_some());
        ctx.set_chain(chain.finish());
        Ok(())
    }
}

/// The outer row.
struct Row {
    prev_hash: String,
    sealed: String,
    seq: u64,
    sig: Option<String>,
    this_hash: String,
}

impl Row {
    fn from_map(mut m: Map<String, Value>) -> Result<Row, BadLine> {
        let mut s = |k: &str| match m.remove(k) {
            Some(Value::String(v)) => Ok(Some(v)),
            None => Ok(None),
            Some(_) => Err(format!("field `{k}` must be a string")),
        };
        let prev_hash = s("prev_hash")?.ok_or_else(|| missing("prev_hash"))?;
        let sealed = s("sealed")?.ok_or_else(|| missing("sealed"))?;
        let this_hash = s("this_hash")?.ok_or_else(|| missing("this_hash"))?;
        let sig = s("sig")?;
        let seq = m
            .get("seq")
            .and_then(Value::as_u64)
            .ok_or("field `seq` must be a positive integer")?;
        Ok(Row {
            prev_hash,
            sealed,
            seq,
            sig,
            this_hash,
        })
    }
}

/// A string as Sallyport's `CanonicalJSON` writes it: `"`, `\` and
/// `\b \f \n \r \t` escaped, other C0 controls as lowercase `\u00xx`,
/// U+2028 and U+2029 escaped, everything else raw.
fn canonical_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{2028}' || c == '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `this_hash` of a row (`AuditLog.chainHash`): hex SHA-256 of the ASCII
/// `prev_hash` followed by `{"sealed":…,"seq":…}` in canonical JSON.
pub fn this_hash(prev_hash: &str, sealed: &str, seq: u64) -> String {
    let mut pre = String::with_capacity(prev_hash.len() + sealed.len() + 32);
    pre.push_str(prev_hash);
    pre.push_str("{\"sealed\":");
    canonical_str(sealed, &mut pre);
    let _ = write!(pre, ",\"seq\":{seq}}}");
    hex::encode(Sha256::digest(pre.as_bytes()))
}

fn signer_key(k: &KeyFile) -> Result<p256::ecdsa::VerifyingKey, KeyFileError> {
    k.candidates()
        .iter()
        .find_map(|c| p256::ecdsa::VerifyingKey::from_sec1_bytes(c).ok())
        .ok_or_else(|| {
            k.invalid(
                "expected the audit signer's P-256 public key in X9.63/SEC1 form (65 or 33 bytes; raw, hex or base64)",
            )
        })
}

fn check_sig(vk: &p256::ecdsa::VerifyingKey, row: &Row) -> SigResult {
    let Some(sig) = row.sig.as_deref().filter(|s| !s.is_empty()) else {
        return SigResult::Missing;
    };
    let Ok(der) = base64::engine::general_purpose::STANDARD.decode(sig) else {
        return SigResult::Invalid("`sig` is not base64".into());
    };
    let Ok(sig) = p256::ecdsa::Signature::from_der(&der) else {
        return SigResult::Invalid("`sig` is not a DER ECDSA signature".into());
    };
    match vk.verify(row.this_hash.as_bytes(), &sig) {
        Ok(()) => SigResult::Valid,
        Err(_) => SigResult::Invalid(format!(
            "row {} was not signed by this audit signer",
            row.seq
        )),
    }
}

#[cfg(test)]
mod tests;
