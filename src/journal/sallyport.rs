//! Sallyport audit journals (`~/.sallyport/audit/audit-000001.jsonl`),
//! research notes `journal-formats.md` §1 (OlegSotnikov/sallyport,
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
//!   The plaintext is the event's canonical JSON (§1.5).
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

use super::chain::{
    ChainRule, ChainTracker, GENESIS, LinkInput, RuleParams, SigResult, SignatureCheck,
};
use super::exchange::{self, Answer, Authorization, Call, Dispatch, End, Pending};
use super::fields::{missing, parse_object, parse_time};
use super::keys::{KeyFile, KeyFileError};
use super::{
    BadLine, Capabilities, FormatFacts, JournalError, JournalReader, ReadCtx, for_each_line,
};
use crate::model::{
    ActionRecord, Arguments, CallRef, OutcomeKind, ProcessInfo, Record, Session, SourceRef,
};
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use chrono::{DateTime, TimeZone, Utc};
use p256::ecdsa::signature::Verifier;
use p256::elliptic_curve::sec1::ToSec1Point;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, VecDeque};
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
    reader: &SallyportReader,
};

/// HKDF info of Sallyport's ECIES (`ECIES.swift`).
pub const HKDF_INFO: &[u8] = b"sallyport-identity-v1";

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
        let mut st = Events {
            scope: format!("journal:{}", ctx.label),
            label: ctx.label.clone(),
            pending: HashMap::new(),
            sessions: Vec::new(),
            session_index: HashMap::new(),
            sealed: 0,
            undecryptable: 0,
            lifecycle: 0,
        };
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
                prev: &row.prev_hash,
                stored: Some(&row.this_hash),
                computed: &computed,
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

fn audit_identity(k: &KeyFile) -> Result<p256::SecretKey, KeyFileError> {
    k.candidates()
        .iter()
        .filter(|c| c.len() == 32)
        .find_map(|c| p256::SecretKey::from_slice(c).ok())
        .ok_or_else(|| {
            k.invalid(
                "expected the exported audit identity: a 32-byte P-256 private key (raw, hex or base64)",
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

/// Which step of opening a sealed event failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// `sealed` is not base64.
    #[error("`sealed` is not base64")]
    NotBase64,
    /// The blob ends before its parts do.
    #[error("blob too short")]
    TooShort,
    /// The ephemeral public key is not a P-256 point.
    #[error("bad ephemeral key")]
    BadEphemeralKey,
    /// The derived key does not fit the cipher.
    #[error("bad key")]
    BadKey,
    /// The nonce is not 12 bytes.
    #[error("bad nonce")]
    BadNonce,
    /// The ciphertext does not authenticate with this identity.
    #[error("authentication failed")]
    AuthenticationFailed,
    /// The public key has no raw form.
    #[error("bad public key")]
    BadPublicKey,
    /// HKDF refused the output length.
    #[error("HKDF expand failed")]
    HkdfExpand,
}

/// Decrypts a sealed blob (ECIES as in the module doc).
///
/// # Errors
/// [`SealError`]: which step failed.
pub fn open(identity: &p256::SecretKey, sealed: &str) -> Result<Vec<u8>, SealError> {
    let blob = base64::engine::general_purpose::STANDARD
        .decode(sealed)
        .map_err(|_| SealError::NotBase64)?;
    let (len, rest) = blob.split_at_checked(2).ok_or(SealError::TooShort)?;
    let n = usize::from(u16::from_be_bytes([len[0], len[1]]));
    let (epk, boxed) = rest.split_at_checked(n).ok_or(SealError::TooShort)?;
    let epk = p256::PublicKey::from_sec1_bytes(epk).map_err(|_| SealError::BadEphemeralKey)?;
    let shared = p256::ecdh::diffie_hellman(identity.to_nonzero_scalar(), epk.as_affine());
    let key = ecies_key(shared.raw_secret_bytes(), &epk)?;
    let (nonce, ct) = boxed.split_at_checked(12).ok_or(SealError::TooShort)?;
    let cipher = ChaCha20Poly1305::new_from_slice(&key).map_err(|_| SealError::BadKey)?;
    let nonce = Nonce::try_from(nonce).map_err(|_| SealError::BadNonce)?;
    cipher
        .decrypt(&nonce, ct)
        .map_err(|_| SealError::AuthenticationFailed)
}

/// The ChaCha20-Poly1305 key both sides derive from the ECDH shared secret
/// (its X coordinate): HKDF-SHA256, salt = the ephemeral public key's raw
/// X‖Y (CryptoKit `rawRepresentation`), info [`HKDF_INFO`], 32 bytes.
///
/// # Errors
/// Never for valid keys; [`SealError::BadPublicKey`] or
/// [`SealError::HkdfExpand`] otherwise.
pub fn ecies_key(shared_x: &[u8], ephemeral: &p256::PublicKey) -> Result<[u8; 32], SealError> {
    let sec1 = ephemeral.to_sec1_point(false);
    let raw = sec1.as_bytes().get(1..).ok_or(SealError::BadPublicKey)?;
    let hk = hkdf::Hkdf::<Sha256>::new(Some(raw), shared_x);
    let mut okm = [0u8; 32];
    hk.expand(HKDF_INFO, &mut okm)
        .map_err(|_| SealError::HkdfExpand)?;
    Ok(okm)
}

/// Events decoded from the sealed rows, paired into executions.
struct Events {
    label: String,
    scope: String,
    /// Intent rows waiting for their result row, by pairing key.
    pending: HashMap<Vec<String>, VecDeque<Pending>>,
    /// Sessions by key, in order of first sight; emitted at the end, when
    /// their end rows have been read.
    sessions: Vec<Session>,
    session_index: HashMap<String, usize>,
    sealed: u64,
    undecryptable: u64,
    lifecycle: u64,
}

fn st(m: &Map<String, Value>, k: &str) -> String {
    m.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// `"<pid>:<start ns>"` → the process it names.
fn process_of(key: &str) -> Option<ProcessInfo> {
    let (pid, ns) = key.split_once(':')?;
    let pid: i64 = pid.parse().ok()?;
    let ns: i64 = ns.parse().ok()?;
    Some(ProcessInfo {
        pid: Some(pid),
        name: None,
        started_at: Some(Utc.timestamp_nanos(ns)),
    })
}

fn authorization(decision: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match decision {
        "allow" | "allowlist-allow" => ("policy_allow", None),
        "session-allow" => ("session_grant", None),
        "session-approved" => ("session_grant", Some("user")),
        "call-approved" | "credential-provisioned" => ("per_use_approval", Some("user")),
        _ => return None,
    })
}

fn refusal(decision: &str, rule: &str) -> Option<String> {
    Some(match decision {
        "deny" => match rule {
            "vault.locked" => "vault_locked".into(),
            "vault.quarantined" => "vault_quarantined".into(),
            "" => "denied".into(),
            r => format!("denied ({r})"),
        },
        "ask→denied" | "credential-declined" => "denied".into(),
        "ask→timeout" => "approval_timeout".into(),
        _ => return None,
    })
}

impl Events {
    /// The session of `key`, created at its first sight.
    fn session(&mut self, key: &str, at: DateTime<Utc>, source: SourceRef) -> &mut Session {
        let i = *self
            .session_index
            .entry(key.to_string())
            .or_insert_with(|| {
                self.sessions.push(Session {
                    session_id: key.to_string(),
                    process: process_of(key),
                    started_at: Some(at),
                    source,
                    ..Session::default()
                });
                self.sessions.len() - 1
            });
        &mut self.sessions[i]
    }

    fn event(
        &mut self,
        ctx: &mut ReadCtx<'_>,
        m: Map<String, Value>,
        source: SourceRef,
    ) -> Result<(), BadLine> {
        let at = parse_time("ts", &st(&m, "ts"))?;
        let channel = st(&m, "channel");
        let tool = st(&m, "tool");
        let decision = st(&m, "decision");
        let target = st(&m, "target");
        let session = st(&m, "session");
        if channel == "session" || channel == "vault" || decision == "info" {
            self.lifecycle += 1;
            self.lifecycle_row(&m, &tool, &target, at, source);
            return Ok(());
        }
        if !session.is_empty() {
            self.session(&session, at, source);
        }
        let (base, intent) = match decision.strip_suffix(".start") {
            Some(b) => (b.to_string(), true),
            None => (decision.clone(), false),
        };
        let key = vec![
            st(&m, "identity"),
            channel.clone(),
            tool.clone(),
            target.clone(),
            st(&m, "args_preview"),
            session.clone(),
            base.clone(),
        ];
        let inner_seq = m
            .get("seq")
            .and_then(Value::as_u64)
            .unwrap_or(u64::from(source.position()));
        let id = || format!("sallyport:{}:{inner_seq}", self.label);
        if intent {
            let dispatch = Dispatch::WithRequest {
                inferred: Some("Sallyport writes the intent row as the call starts".into()),
            };
            let call = exchange::request(ctx, self.call(id(), &m, &base, at, source, dispatch));
            self.pending.entry(key).or_default().push_back(call);
            return Ok(());
        }
        if let Some(reason) = refusal(&base, &st(&m, "rule")) {
            let dispatch = Dispatch::Implied {
                why: "a refusal row: the call was not dispatched".into(),
                at_request: false,
            };
            let c = self.call(id(), &m, &base, at, source, dispatch);
            let mut a = Answer::new(at, source, End::Rejected { reason });
            a.extra = rule_extra(&m);
            exchange::exchange(ctx, c, Some(a));
            return Ok(());
        }
        // A result row: the outcome of the oldest matching intent.
        let call = match self.pending.get_mut(&key).and_then(VecDeque::pop_front) {
            Some(call) => call,
            None => {
                // No intent row (an older snapshot, or the intent row is
                // missing): the result alone stands for the call.
                let dispatch = Dispatch::Implied {
                    why: "no intent row: the result row stands alone".into(),
                    at_request: false,
                };
                exchange::request(ctx, self.call(id(), &m, &base, at, source, dispatch))
            }
        };
        let is_error = m.get("is_error").and_then(Value::as_bool) == Some(true);
        let outcome = if is_error {
            OutcomeKind::Failure
        } else {
            OutcomeKind::Success
        };
        let mut a = Answer::new(
            at,
            source,
            End::response(
                outcome,
                is_error.then(|| format!("{decision}: error")),
                Some(format!("row seq {inner_seq}")),
            ),
        );
        for k in ["bytes_out", "duration_ms", "recording", "host_key_fp"] {
            if let Some(v) = m
                .get(k)
                .filter(|v| !v.is_null() && **v != json!(0) && **v != json!(""))
            {
                a.extra.insert(k.into(), v.clone());
            }
        }
        call.answer(ctx, a);
        Ok(())
    }

    /// The call an event row stands for, authorized as its decision says.
    fn call(
        &self,
        id: String,
        m: &Map<String, Value>,
        base: &str,
        at: DateTime<Utc>,
        source: SourceRef,
        dispatch: Dispatch,
    ) -> Call {
        let session = st(m, "session");
        let action = json!({
            "actor": st(m, "identity"),
            "tool": st(m, "tool"),
            "channel": st(m, "channel"),
            "target": st(m, "target"),
            "arguments": {"args_preview": st(m, "args_preview")},
            "intent_scope": self.scope,
        });
        let call = CallRef {
            call_id: m.get("seq").map(|s| format!("row seq {s}")),
            session_id: (!session.is_empty()).then_some(session),
            jsonrpc_id: None,
            mcp_session_id: None,
            transport: Some(format!("sallyport:{}", st(m, "channel"))),
        };
        let mut c = Call::new(
            id,
            at,
            call,
            ActionRecord(action.as_object().cloned().unwrap_or_default()),
            source,
            dispatch,
        );
        c.facts.arguments = Arguments::Partly(
            "Sallyport keeps an argument preview clipped to 256 bytes, so long calls that differ late look alike".into(),
        );
        c.facts.notes = m
            .get("origin")
            .map(|o| ("origin", o.clone()))
            .into_iter()
            .collect();
        c.authorization = authorization(base).map(|(decision, approver)| Authorization {
            decision: decision.into(),
            approver: approver.map(str::to_string),
            extra: rule_extra(m),
        });
        c
    }

    fn lifecycle_row(
        &mut self,
        m: &Map<String, Value>,
        tool: &str,
        target: &str,
        at: DateTime<Utc>,
        source: SourceRef,
    ) {
        let reason = match tool {
            "session.ended" => {
                // "<name>: N calls[, reason]"
                let p = st(m, "args_preview");
                Some(
                    p.split_once(", ")
                        .map(|(_, r)| r.to_string())
                        .unwrap_or_else(|| "exited".into()),
                )
            }
            "session.revoked" => Some("revoked".to_string()),
            "session.orphaned" => Some("orphaned: no end row before the app stopped".to_string()),
            _ => None,
        };
        let Some(end_reason) = reason else {
            return;
        };
        if target.is_empty() {
            return;
        }
        let origin = m.get("origin");
        let mut process = process_of(target).unwrap_or_default();
        process.name = origin
            .and_then(|o| o.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let started_at = m
            .get("duration_ms")
            .and_then(Value::as_i64)
            .filter(|d| *d > 0)
            .and_then(|d| super::started_before(at, d as f64, "duration_ms").ok());
        let actor = origin.and_then(|o| {
            o.get("signedBy")
                .or_else(|| o.get("app"))
                .and_then(Value::as_str)
                .map(|s| format!("signed-process:{s}"))
        });
        let s = self.session(target, at, source);
        if let Some(o) = origin {
            s.extra.insert("origin".into(), o.clone());
        }
        s.process = Some(ProcessInfo {
            name: process
                .name
                .or_else(|| s.process.as_ref().and_then(|p| p.name.clone())),
            ..process
        });
        s.actor = actor.or(s.actor.take());
        if let Some(t) = started_at {
            s.started_at = Some(t);
        }
        s.ended_at = Some(at);
        s.end_reason = Some(end_reason);
        // The end row is the evidence for the run as a whole.
        s.source = source;
    }

    fn finish(self, ctx: &mut ReadCtx<'_>, decrypting: bool) {
        for s in self.sessions {
            ctx.emit(Record::Session(s));
        }
        if !decrypting && self.sealed > 0 {
            ctx.note(format!(
                "{} sealed event(s) not read: the events are encrypted; give --audit-identity (the exported audit identity) to read them. The chain was verified without it.",
                self.sealed
            ));
        }
        if self.undecryptable > 0 {
            ctx.note(format!(
                "{} row(s) did not decrypt with the audit identity given",
                self.undecryptable
            ));
        }
        let mut open: Vec<u32> = self
            .pending
            .values()
            .flatten()
            .map(|p| p.source().position())
            .collect();
        open.sort_unstable();
        if !open.is_empty() {
            ctx.note(format!(
                "{} intent row(s) without a result row (lines {}): outcome unknown",
                open.len(),
                open.iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if self.lifecycle > 0 {
            ctx.note(format!(
                "{} session or vault lifecycle row(s)",
                self.lifecycle
            ));
        }
    }
}

fn rule_extra(m: &Map<String, Value>) -> Map<String, Value> {
    let mut x = Map::new();
    if let Some(r) = m
        .get("rule")
        .filter(|r| r.as_str().is_some_and(|s| !s.is_empty()))
    {
        x.insert("rule".into(), r.clone());
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::chain::{ChainStatus, FailureKind};
    use crate::journal::{ChainKeys, JournalSource, LoadOptions, load_with, verify};
    use crate::model::EventKind;
    use chacha20poly1305::aead::Aead;
    use p256::ecdsa::signature::Signer;

    const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sallyport");

    /// Test keys (never real ones): fixed scalars.
    fn signer() -> p256::ecdsa::SigningKey {
        p256::ecdsa::SigningKey::from_slice(&[0x11; 32]).unwrap()
    }
    fn identity() -> p256::SecretKey {
        p256::SecretKey::from_slice(&[0x22; 32]).unwrap()
    }

    /// Writes a Sallyport journal as the app does: each event sealed to the
    /// identity's public key, chained and signed.
    struct Writer {
        prev: String,
        seq: u64,
        sign: bool,
        lines: Vec<String>,
    }

    impl Writer {
        fn new(sign: bool) -> Self {
            Writer {
                prev: GENESIS.into(),
                seq: 0,
                sign,
                lines: Vec::new(),
            }
        }

        fn seal(seq: u64, plain: &[u8]) -> String {
            let eph = p256::SecretKey::from_slice(&[0x30 + seq as u8; 32]).unwrap();
            let epk = eph.public_key();
            let recipient = identity().public_key();
            let shared = p256::ecdh::diffie_hellman(eph.to_nonzero_scalar(), recipient.as_affine());
            let key = ecies_key(shared.raw_secret_bytes(), &epk).unwrap();
            let nonce = [seq as u8; 12];
            let ct = ChaCha20Poly1305::new_from_slice(&key)
                .unwrap()
                .encrypt(&Nonce::try_from(&nonce[..]).unwrap(), plain)
                .unwrap();
            let point = epk.to_sec1_point(false);
            let mut blob = (point.as_bytes().len() as u16).to_be_bytes().to_vec();
            blob.extend_from_slice(point.as_bytes());
            blob.extend_from_slice(&nonce);
            blob.extend_from_slice(&ct);
            base64::engine::general_purpose::STANDARD.encode(blob)
        }

        fn row(&mut self, mut event: Value) {
            self.seq += 1;
            event["seq"] = json!(self.seq);
            let sealed = Self::seal(self.seq, &serde_json::to_vec(&event).unwrap());
            let this = this_hash(&self.prev, &sealed, self.seq);
            let mut m = Map::new();
            m.insert("prev_hash".into(), json!(self.prev));
            m.insert("sealed".into(), json!(sealed));
            m.insert("seq".into(), json!(self.seq));
            if self.sign {
                let sig: p256::ecdsa::Signature = signer().sign(this.as_bytes());
                m.insert(
                    "sig".into(),
                    json!(
                        base64::engine::general_purpose::STANDARD.encode(sig.to_der().as_bytes())
                    ),
                );
            }
            m.insert("this_hash".into(), json!(this));
            self.lines.push(serde_json::to_string(&m).unwrap());
            self.prev = this;
        }
    }

    const A: &str = "4242:1784728680000000000";
    const B: &str = "5151:1784728740000000000";

    fn event(ts: &str, session: &str, tool: &str, decision: &str) -> Value {
        json!({
            "ts": ts, "identity": "agent://mac.mcp", "session": session, "channel": "mcp",
            "tool": tool, "target": "github", "args_preview": "title: Nightly build failed",
            "decision": decision, "rule": "session.approved", "policy_hash": "", "grant_id": "",
            "is_error": false, "bytes_out": 0, "duration_ms": 0, "recording": ""
        })
    }

    /// The fixture incident: a call, the same call again from a new
    /// process that never got its result, a refused SSH command, a vault
    /// lock, and the first session's end.
    fn incident(sign: bool) -> Vec<String> {
        let mut w = Writer::new(sign);
        w.row(event(
            "2026-07-22T14:00:00.000Z",
            A,
            "github.create_issue",
            "session-approved.start",
        ));
        let mut r = event(
            "2026-07-22T14:00:02.000Z",
            A,
            "github.create_issue",
            "session-approved",
        );
        r["bytes_out"] = json!(120);
        w.row(r);
        w.row(event(
            "2026-07-22T14:01:00.000Z",
            B,
            "github.create_issue",
            "session-approved.start",
        ));
        let mut d = event("2026-07-22T14:01:30.000Z", B, "ssh.exec", "ask→denied");
        d["channel"] = json!("ssh");
        d["target"] = json!("db1.internal");
        d["args_preview"] = json!("rm -rf /srv/cache");
        d["rule"] = json!("key.per-call");
        d["is_error"] = json!(true);
        w.row(d);
        w.row(
            json!({"ts": "2026-07-22T14:02:00.000Z", "identity": "", "session": "",
            "channel": "vault", "tool": "vault.locked", "target": "", "args_preview": "",
            "decision": "info", "rule": "vault.lifecycle", "policy_hash": "", "grant_id": "",
            "is_error": false, "bytes_out": 0, "duration_ms": 0, "recording": ""}),
        );
        w.row(
            json!({"ts": "2026-07-22T14:02:00.100Z", "identity": "", "session": "",
            "channel": "session", "tool": "session.ended", "target": A,
            "args_preview": "agent: 1 calls, vault locked", "decision": "info",
            "rule": "session.lifecycle", "policy_hash": "", "grant_id": "", "is_error": false,
            "bytes_out": 0, "duration_ms": 120100, "recording": "",
            "origin": {"name": "agent", "app": "com.example.agent", "pid": 4242,
                       "signed": true, "signedBy": "com.example.agent"}}),
        );
        w.lines
    }

    fn signer_hex() -> String {
        hex::encode(signer().verifying_key().to_sec1_point(false).as_bytes())
    }

    fn keys(sign: bool, ident: bool) -> LoadOptions {
        LoadOptions {
            forced: None,
            keys: ChainKeys {
                signer_key: sign
                    .then(|| KeyFile::from_bytes("signer.pub.hex", signer_hex().as_bytes())),
                audit_identity: ident.then(|| {
                    KeyFile::from_bytes("id.hex", hex::encode(identity().to_bytes()).as_bytes())
                }),
                attestation_key: None,
            },
        }
    }

    fn src(lines: &[String], newline: bool) -> JournalSource {
        let mut t = lines.join("\n");
        if newline {
            t.push('\n');
        }
        JournalSource::embedded(
            "audit-000001.jsonl",
            Box::leak(t.into_bytes().into_boxed_slice()),
        )
    }

    fn status(lines: &[String], newline: bool, sign: bool) -> ChainStatus {
        verify(src(lines, newline), &keys(sign, false))
            .unwrap()
            .chain
    }

    fn failure(st: &ChainStatus) -> (FailureKind, u32) {
        let f = st.failure().unwrap_or_else(|| panic!("{st:?}"));
        (f.kind, f.line)
    }

    #[test]
    fn derived_vector() {
        // research/journal-formats.md §1.3, verified locally from the formula.
        assert_eq!(
            this_hash(GENESIS, "AAEC", 1),
            "806b91b69947b51715b7fe77b9a85fd2155dfeea46b4fc766ebc7015cbe20c03"
        );
    }

    #[test]
    fn fixture_is_what_the_writer_writes() {
        let text = incident(true).join("\n") + "\n";
        let path = format!("{DIR}/audit-000001.jsonl");
        if std::env::var_os("RETRACE_WRITE_FIXTURES").is_some() {
            std::fs::create_dir_all(DIR).unwrap();
            std::fs::write(&path, &text).unwrap();
            std::fs::write(format!("{DIR}/signer.pub.hex"), signer_hex() + "\n").unwrap();
            std::fs::write(
                format!("{DIR}/audit-identity.hex"),
                hex::encode(identity().to_bytes()) + "\n",
            )
            .unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "rerun with RETRACE_WRITE_FIXTURES=1"
        );
    }

    #[test]
    fn chain_verifies_offline_and_signatures_with_the_key() {
        let l = incident(true);
        match status(&l, true, false) {
            ChainStatus::Intact {
                lines, signatures, ..
            } => {
                assert_eq!(lines, 6);
                assert!(matches!(signatures, SignatureCheck::NotChecked { .. }));
            }
            other => panic!("{other:?}"),
        }
        match status(&l, true, true) {
            ChainStatus::Intact { signatures, .. } => {
                assert_eq!(signatures, SignatureCheck::Verified { count: 6 })
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn every_tampering_kind() {
        let l = incident(true);
        let edit = |i: usize, f: &dyn Fn(&mut Map<String, Value>)| {
            let mut l = l.clone();
            let mut m: Map<String, Value> = serde_json::from_str(&l[i]).unwrap();
            f(&mut m);
            l[i] = serde_json::to_string(&m).unwrap();
            l
        };
        // Changed ciphertext.
        let t = edit(2, &|m| {
            let s = m["sealed"].as_str().unwrap().replacen('A', "B", 1);
            m.insert("sealed".into(), json!(s));
        });
        assert_eq!(
            failure(&status(&t, true, false)),
            (FailureKind::ChangedLine, 3)
        );
        // Re-hashed by a forger: the signature catches the row itself; with
        // no key, the next link does.
        let t = edit(2, &|m| {
            let s = m["sealed"].as_str().unwrap().replacen('A', "B", 1);
            let h = this_hash(m["prev_hash"].as_str().unwrap(), &s, 3);
            m.insert("sealed".into(), json!(s));
            m.insert("this_hash".into(), json!(h));
        });
        assert_eq!(
            failure(&status(&t, true, true)),
            (FailureKind::BadSignature, 3)
        );
        assert_eq!(
            failure(&status(&t, true, false)),
            (FailureKind::BrokenLink, 4)
        );
        // Edited link.
        let t = edit(3, &|m| {
            m.insert("prev_hash".into(), json!("1".repeat(64)));
        });
        assert_eq!(
            failure(&status(&t, true, false)),
            (FailureKind::BrokenLink, 4)
        );
        // Deleted, reordered.
        let mut t = l.clone();
        t.remove(1);
        assert_eq!(
            failure(&status(&t, true, false)),
            (FailureKind::DeletedLine, 2)
        );
        let mut t = l.clone();
        t.swap(3, 4);
        assert_eq!(
            failure(&status(&t, true, false)),
            (FailureKind::ReorderedLines, 4)
        );
        // Unsigned row with a key given; wrong signer.
        let t = edit(4, &|m| {
            m.remove("sig");
        });
        assert_eq!(failure(&status(&t, true, true)), (FailureKind::Unsigned, 5));
        let unsigned = incident(false);
        assert_eq!(
            failure(&status(&unsigned, true, true)),
            (FailureKind::Unsigned, 1)
        );
        // An unterminated last row is an error even when it verifies.
        assert_eq!(
            failure(&status(&l, false, false)),
            (FailureKind::TruncatedLastLine, 6)
        );
        let mut t = l.clone();
        let last = t.pop().unwrap();
        t.push(last[..40].to_string());
        assert_eq!(
            failure(&status(&t, false, false)),
            (FailureKind::TruncatedLastLine, 6)
        );
    }

    #[test]
    fn seq_gap_with_intact_links() {
        let mut w = Writer::new(true);
        w.row(event("2026-07-22T14:00:00Z", A, "t", "allow.start"));
        w.seq += 1;
        w.row(event("2026-07-22T14:00:01Z", A, "t", "allow"));
        assert_eq!(
            failure(&status(&w.lines, true, true)),
            (FailureKind::SeqGap, 2)
        );
    }

    #[test]
    fn events_decrypt_pair_and_become_sessions() {
        let (j, model) = load_with(
            vec![src(&incident(true), true)],
            &keys(true, true),
            &mut |_| {},
        )
        .unwrap();
        assert!(j[0].chain.is_intact());
        assert_eq!(j[0].bad_line_count, 0, "{:?}", j[0].bad_lines);
        // Two intents and one refusal: three calls, not five rows.
        assert_eq!(model.calls.len(), 3);
        let names = |x: &crate::model::Execution| -> Vec<&'static str> {
            x.events.iter().map(|e| e.kind.name()).collect()
        };
        let first = &model.executions[model.execution_index("sallyport:audit-000001:1").unwrap()];
        assert_eq!(
            names(first),
            ["accepted", "authorized", "dispatched", "outcome"]
        );
        assert_eq!(
            first.events[3].source.position(),
            2,
            "the outcome is the result row"
        );
        // The second intent never got its result row: no outcome.
        let second = &model.executions[model.execution_index("sallyport:audit-000001:3").unwrap()];
        assert_eq!(names(second), ["accepted", "authorized", "dispatched"]);
        assert!(
            j[0].notes
                .iter()
                .any(|n| n.contains("1 intent row(s) without a result row (lines 3)"))
        );
        let refused = &model.executions[model.execution_index("sallyport:audit-000001:4").unwrap()];
        assert!(
            matches!(&refused.events[1].kind, EventKind::Rejected { reason } if reason == "denied")
        );
        // Sessions with the process behind each key.
        let a = model.session(A).unwrap();
        let p = a.process.as_ref().unwrap();
        assert_eq!(p.pid, Some(4242));
        assert_eq!(p.name.as_deref(), Some("agent"));
        assert_eq!(
            p.started_at.unwrap().to_rfc3339(),
            "2026-07-22T13:58:00+00:00"
        );
        assert_eq!(a.end_reason.as_deref(), Some("vault locked"));
        assert_eq!(a.actor.as_deref(), Some("signed-process:com.example.agent"));
        assert_eq!(
            model.session(B).unwrap().process.as_ref().unwrap().pid,
            Some(5151)
        );
        assert_eq!(first.accepted().unwrap().1.session_id.as_deref(), Some(A));
    }

    #[test]
    fn without_the_identity_the_chain_still_verifies() {
        let (j, model) = load_with(
            vec![src(&incident(true), true)],
            &keys(false, false),
            &mut |_| {},
        )
        .unwrap();
        assert!(j[0].chain.is_intact());
        assert!(model.executions.is_empty());
        assert!(j[0].notes.iter().any(|n| n.contains("--audit-identity")));
        // A wrong identity: every row is unreadable, the chain is reported.
        let mut o = keys(false, false);
        o.keys.audit_identity = Some(KeyFile::from_bytes(
            "x",
            hex::encode([0x33u8; 32]).as_bytes(),
        ));
        let j = verify(src(&incident(true), true), &o).unwrap();
        assert!(j.chain.is_intact());
        assert_eq!(j.bad_line_count, 6);
        assert!(
            j.bad_lines[0].message.contains("does not decrypt"),
            "{:?}",
            j.bad_lines[0]
        );
    }
}
