//! mcp-audit attestations (`signer.ts` @2ba48c8): the tuple-array form
//! each record is signed in, and its HMAC-SHA256 or Ed25519 check.

use crate::journal::chain::SigResult;
use crate::journal::keys::{KeyFile, KeyFileError};
use crate::journal::rawjson::{Raw, js_number, js_str};
use ed25519_dalek::Verifier;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

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

/// Checks a record's attestation with the key given.
pub(super) fn check_attestation(key: &AttestationKey, raw: &Raw) -> SigResult {
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
