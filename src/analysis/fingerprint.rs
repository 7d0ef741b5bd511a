//! Intent fingerprints (docs/design.md §4; docs/design.md §4.1).
//!
//! canonical action record → drop fields without semantic meaning →
//! materialize contract defaults → keep only the contract's fingerprint
//! fields → replace secret fields by a keyed reference → JSON
//! Canonicalization Scheme (RFC 8785) → HMAC-SHA256 with the deployment key,
//! written `hmac-sha256:<hex>`; without a key, `sha256:<hex>`.

use super::contracts::ToolContract;
use crate::model::{ActionRecord, WrittenRef};
use hmac::{Hmac, KeyInit, Mac};
use serde::Serialize;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The fields dropped before hashing; defined with the record
/// (docs/design.md §4.1).
pub use crate::model::{NON_SEMANTIC_ARGUMENTS, NON_SEMANTIC_FIELDS};

/// How a fingerprint was computed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Scheme {
    /// HMAC-SHA256 with the deployment key.
    HmacSha256,
    /// Plain SHA-256 (no key given).
    Sha256,
}

impl Scheme {
    /// The prefix written before the hex digest.
    pub fn prefix(self) -> &'static str {
        match self {
            Scheme::HmacSha256 => "hmac-sha256",
            Scheme::Sha256 => "sha256",
        }
    }
}

/// The deployment key for HMAC fingerprints and secret references.
#[derive(Clone, Default)]
pub struct FingerprintKey(Option<Vec<u8>>);

impl std::fmt::Debug for FingerprintKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "FingerprintKey(set)"
        } else {
            "FingerprintKey(none)"
        })
    }
}

/// Errors reading a key file.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// The file could not be read.
    #[error("{path}: cannot read key: {source}")]
    Read {
        /// File.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is empty.
    #[error("{path}: the key file is empty")]
    Empty {
        /// File.
        path: String,
    },
}

impl FingerprintKey {
    /// No key: fingerprints are plain SHA-256.
    pub fn none() -> Self {
        FingerprintKey(None)
    }

    /// A key from raw bytes.
    pub fn from_bytes(b: &[u8]) -> Self {
        FingerprintKey(Some(b.to_vec()))
    }

    /// Parses key file contents: surrounding whitespace is ignored; text
    /// that is all hex digits (even length) is decoded as hex, anything
    /// else is used as raw bytes. Returns `None` for an empty file.
    pub fn from_file_contents(bytes: &[u8]) -> Option<Self> {
        let trimmed = bytes.trim_ascii();
        if trimmed.is_empty() {
            return None;
        }
        let key = match hex::decode(trimmed) {
            Ok(k) if !k.is_empty() => k,
            _ => trimmed.to_vec(),
        };
        Some(FingerprintKey(Some(key)))
    }

    /// Reads a key file (see [`FingerprintKey::from_file_contents`]).
    ///
    /// # Errors
    /// [`KeyError`] naming the file.
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        let bytes = std::fs::read(path).map_err(|e| KeyError::Read {
            path: path.display().to_string(),
            source: e,
        })?;
        Self::from_file_contents(&bytes).ok_or_else(|| KeyError::Empty {
            path: path.display().to_string(),
        })
    }

    /// The scheme fingerprints use with this key.
    pub fn scheme(&self) -> Scheme {
        if self.0.is_some() {
            Scheme::HmacSha256
        } else {
            Scheme::Sha256
        }
    }

    fn hmac(&self, data: &[u8]) -> Option<String> {
        self.hmac_bytes(data).map(hex::encode)
    }

    fn hmac_bytes(&self, data: &[u8]) -> Option<[u8; 32]> {
        let key = self.0.as_ref()?;
        let mut mac = Hmac::<Sha256>::new_from_slice(key).ok()?;
        mac.update(data);
        Some(mac.finalize().into_bytes().into())
    }
}

/// Builds the record that is hashed, following the steps in the module doc.
/// `secrets_unkeyed` is set when a secret field had to be redacted without a
/// key (two different secrets then look alike).
pub fn canonical_record(
    action: &ActionRecord,
    contract: &ToolContract,
    key: &FingerprintKey,
    secrets_unkeyed: &mut bool,
) -> Value {
    let mut rec: Map<String, Value> = action.to_map();
    rec.retain(|k, _| !NON_SEMANTIC_FIELDS.contains(&k.as_str()));
    let mut args: Map<String, Value> = match rec.remove("arguments") {
        Some(Value::Object(m)) => m,
        Some(Value::Null) | None => Map::new(),
        Some(other) => {
            let mut m = Map::new();
            m.insert("_value".into(), other);
            m
        }
    };
    args.retain(|k, _| !NON_SEMANTIC_ARGUMENTS.contains(&k.as_str()));
    for (k, v) in &contract.defaults {
        args.entry(k.clone()).or_insert_with(|| v.clone());
    }
    if let Some(fields) = &contract.fingerprint_fields {
        args.retain(|k, _| fields.iter().any(|f| f == k));
    }
    let mut args = Value::Object(args);
    super::contracts::for_each_secret(&mut args, &contract.secret_fields, &mut |field, v| {
        let jcs = jcs(v);
        *v = Value::String(match key.hmac(format!("secret:{field}:{jcs}").as_bytes()) {
            Some(h) => format!("secret-ref:hmac-sha256:{}", &h[..32]),
            None => {
                *secrets_unkeyed = true;
                "secret-ref:redacted".to_string()
            }
        });
    });
    rec.insert("arguments".into(), args);
    Value::Object(rec)
}

/// The RFC 8785 text of the record [`canonical_record`] would build, when
/// that record is the action record itself: the contract adds no defaults,
/// keeps every argument and redacts nothing, and the record has nothing to
/// drop (see [`ActionRecord::plain_canonical_bytes`]). Saves taking the
/// record apart for most executions; `None` means "build it".
pub fn plain_canonical<'a>(action: &'a ActionRecord, contract: &ToolContract) -> Option<&'a [u8]> {
    if contract.defaults.is_empty()
        && contract.fingerprint_fields.is_none()
        && contract.secret_fields.is_empty()
    {
        action.plain_canonical_bytes()
    } else {
        None
    }
}

/// Whether RFC 8785 text may hold a string that [`drift_form`] would
/// normalize: a string of 1 to 18 decimal digits. `false` means
/// [`drift_form`] of the parsed text is `None`; `true` means "parse and
/// see" (the digits may be a member name or inside a longer string).
pub fn may_drift(canonical_json: &[u8]) -> bool {
    canonical_json
        .split(|&b| b == b'"')
        .skip(1)
        .any(|s| (1..=18).contains(&s.len()) && s.iter().all(u8::is_ascii_digit))
}

/// RFC 8785 canonical JSON of a value (see [`crate::canonical`]).
pub fn jcs(v: &Value) -> String {
    crate::canonical::to_string(v)
}

/// The fingerprint of a canonical record with the key's scheme.
pub fn fingerprint(canonical: &Value, key: &FingerprintKey) -> String {
    fingerprint_of_text(jcs(canonical).as_bytes(), key)
}

/// The fingerprint of a canonical record's RFC 8785 text with the key's
/// scheme: what [`fingerprint`] gives for the record.
pub fn fingerprint_of_text(canonical_json: &[u8], key: &FingerprintKey) -> String {
    digest_of_text(canonical_json, key).text()
}

/// An intent fingerprint as its digest: the 32 bytes of HMAC-SHA256 under
/// the key, or of SHA-256 without one, and which of the two. What analysis
/// keeps per execution until a group needs the text
/// ([`IntentDigest::text`]): 33 bytes in place of a 71- or 76-byte string.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct IntentDigest {
    hmac: bool,
    bytes: [u8; 32],
}

impl IntentDigest {
    /// The fingerprint's text: `hmac-sha256:<64 hex>` or `sha256:<64 hex>`,
    /// as [`fingerprint_of_text`] gives it.
    pub(crate) fn text(&self) -> String {
        let prefix = if self.hmac { "hmac-sha256:" } else { "sha256:" };
        prefixed_hex(prefix, &self.bytes)
    }
}

/// The digest of a canonical record's RFC 8785 text with the key's scheme
/// ([`fingerprint_of_text`] is its text).
pub(crate) fn digest_of_text(canonical_json: &[u8], key: &FingerprintKey) -> IntentDigest {
    match key.hmac_bytes(canonical_json) {
        Some(bytes) => IntentDigest { hmac: true, bytes },
        None => IntentDigest {
            hmac: false,
            bytes: Sha256::digest(canonical_json).into(),
        },
    }
}

/// [`fingerprint`] as its digest.
pub(crate) fn intent_digest(canonical: &Value, key: &FingerprintKey) -> IntentDigest {
    digest_of_text(jcs(canonical).as_bytes(), key)
}

/// `prefix` and the lowercase hex of `bytes`, in one allocation (one per
/// execution is made: `format!` of `hex::encode` makes two).
fn prefixed_hex(prefix: &str, bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(prefix.len() + 2 * bytes.len());
    s.push_str(prefix);
    for &b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

/// The digest of canonical JSON under a given scheme; `None` for HMAC
/// without a key.
pub fn digest(canonical_json: &str, scheme: Scheme, key: &FingerprintKey) -> Option<String> {
    match scheme {
        Scheme::Sha256 => Some(prefixed_hex("sha256:", &Sha256::digest(canonical_json))),
        Scheme::HmacSha256 => key
            .hmac(canonical_json.as_bytes())
            .map(|h| format!("hmac-sha256:{h}")),
    }
}

/// What a journal's own fingerprint says when compared with the recomputed one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum JournalFingerprint {
    /// The journal wrote none.
    Absent,
    /// It matches.
    Matches,
    /// It differs from the recomputed value.
    Mismatch {
        /// As written.
        journal: String,
        /// As recomputed under the same scheme.
        recomputed: String,
    },
    /// It cannot be checked (HMAC without a key, or an unknown scheme).
    Unverifiable {
        /// As written.
        journal: String,
        /// Why.
        reason: String,
    },
}

/// Checks a journal fingerprint against the canonical record.
pub fn check_journal_fingerprint(
    written: Option<&str>,
    canonical: &Value,
    key: &FingerprintKey,
) -> JournalFingerprint {
    check_journal_text_fingerprint(written, &jcs(canonical), key)
}

/// Checks a journal fingerprint against a canonical record's RFC 8785
/// text (see [`check_journal_fingerprint`]).
pub fn check_journal_text_fingerprint(
    written: Option<&str>,
    canonical_json: &str,
    key: &FingerprintKey,
) -> JournalFingerprint {
    let Some(w) = written else {
        return JournalFingerprint::Absent;
    };
    let scheme = if w.starts_with("hmac-sha256:") {
        Scheme::HmacSha256
    } else if w.starts_with("sha256:") {
        Scheme::Sha256
    } else {
        return JournalFingerprint::Unverifiable {
            journal: w.to_string(),
            reason: "unknown fingerprint scheme (expected hmac-sha256: or sha256:)".into(),
        };
    };
    match digest(canonical_json, scheme, key) {
        None => JournalFingerprint::Unverifiable {
            journal: w.to_string(),
            reason: "HMAC fingerprint and no --key-file".into(),
        },
        Some(r) if r == w => JournalFingerprint::Matches,
        Some(r) => JournalFingerprint::Mismatch {
            journal: w.to_string(),
            recomputed: r,
        },
    }
}

/// [`check_journal_text_fingerprint`] of a fingerprint as the journal
/// wrote it, where `recomputed` is the digest of `canonical_json` under
/// the key's scheme ([`digest_of_text`]). A written digest of that same
/// scheme is compared byte for byte, without hashing the record again or
/// writing either as text; anything else is checked as text.
pub(crate) fn check_written_fingerprint(
    written: WrittenRef<'_>,
    recomputed: &IntentDigest,
    canonical_json: &str,
    key: &FingerprintKey,
) -> JournalFingerprint {
    match written.digest() {
        Some((hmac, bytes)) if hmac == recomputed.hmac => {
            if *bytes == recomputed.bytes {
                JournalFingerprint::Matches
            } else {
                JournalFingerprint::Mismatch {
                    journal: written.text(),
                    recomputed: recomputed.text(),
                }
            }
        }
        _ => check_journal_text_fingerprint(Some(&written.text()), canonical_json, key),
    }
}

/// The record with known equivalents normalized, for `fingerprint_drift`:
/// strings of decimal digits become numbers (a real gh-aw log names one
/// pull request as `"38281"` and as `38281`), recursively. `None` when
/// nothing needed normalizing (the record is its own normal form).
pub fn drift_form(v: &Value) -> Option<Value> {
    fn numeric(s: &str) -> Option<u64> {
        (!s.is_empty()
            && s.len() <= 18
            && s.bytes().all(|b| b.is_ascii_digit())
            && (s == "0" || !s.starts_with('0')))
        .then(|| s.parse().ok())
        .flatten()
    }
    fn needs(v: &Value) -> bool {
        match v {
            Value::String(s) => numeric(s).is_some(),
            Value::Array(a) => a.iter().any(needs),
            Value::Object(m) => m.values().any(needs),
            _ => false,
        }
    }
    fn normal(v: &Value) -> Value {
        match v {
            Value::String(s) => numeric(s).map_or_else(|| v.clone(), Value::from),
            Value::Array(a) => Value::Array(a.iter().map(normal).collect()),
            Value::Object(m) => {
                Value::Object(m.iter().map(|(k, v)| (k.clone(), normal(v))).collect())
            }
            other => other.clone(),
        }
    }
    needs(v).then(|| normal(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checking a fingerprint held as written gives what checking its
    /// text gives: either scheme, with a key or none, matching or not, in
    /// the usual form or any other.
    #[test]
    fn a_written_digest_is_checked_as_its_text_would_be() {
        let canonical = r#"{"arguments":{"env":"prod"},"tool":"deploy"}"#;
        let other = r#"{"arguments":{"env":"dev"},"tool":"deploy"}"#;
        for key in [FingerprintKey::none(), FingerprintKey::from_bytes(b"k")] {
            let recomputed = digest_of_text(canonical.as_bytes(), &key);
            let mut written = Vec::new();
            for scheme in [Scheme::Sha256, Scheme::HmacSha256] {
                for text in [canonical, other] {
                    for k in [&key, &FingerprintKey::from_bytes(b"k")] {
                        if let Some(w) = digest(text, scheme, k) {
                            written.push(w.to_uppercase().replacen("SHA256:", "sha256:", 1));
                            written.push(w);
                        }
                    }
                }
            }
            written.extend(["sha256:abc".into(), "md5:00".into(), String::new()]);
            for w in &written {
                assert_eq!(
                    check_written_fingerprint(
                        crate::model::WrittenFingerprint::new(w).view(),
                        &recomputed,
                        canonical,
                        &key
                    ),
                    check_journal_text_fingerprint(Some(w), canonical, &key),
                    "{w}"
                );
            }
        }
    }

    #[test]
    fn prefixed_hex_is_the_prefix_and_hex_encode() {
        for bytes in [
            &[][..],
            &[0u8, 1, 15, 16, 127, 128, 255][..],
            &Sha256::digest(b"x")[..],
        ] {
            assert_eq!(
                prefixed_hex("sha256:", bytes),
                format!("sha256:{}", hex::encode(bytes))
            );
        }
    }
    use serde_json::json;

    fn action(v: Value) -> ActionRecord {
        ActionRecord::from_map(v.as_object().cloned().unwrap())
    }

    #[test]
    fn order_whitespace_and_noise_do_not_change_the_fingerprint() {
        let c = ToolContract::unconfigured();
        let k = FingerprintKey::none();
        let mut u = false;
        let a = action(
            json!({"tool":"deploy_release","actor":"a","arguments":{"service":"catalog","version":"1"},"request_id":"r1"}),
        );
        let b = action(
            json!({"request_id":"r2","arguments":{"version":"1","service":"catalog","_meta":{"progressToken":7}},"actor":"a","tool":"deploy_release"}),
        );
        assert_eq!(
            fingerprint(&canonical_record(&a, &c, &k, &mut u), &k),
            fingerprint(&canonical_record(&b, &c, &k, &mut u), &k)
        );
    }

    /// The shortcut that hashes a stored record as it is must give the
    /// fingerprint the full recipe gives, and be refused whenever the
    /// recipe would change the record.
    #[test]
    fn a_plain_record_hashes_as_stored() {
        let plain = action(json!({"tool":"d","actor":"a","arguments":{"service":"catalog","n":3}}));
        for key in [FingerprintKey::none(), FingerprintKey::from_bytes(b"k")] {
            let c = ToolContract::unconfigured();
            let mut u = false;
            let text = plain_canonical(&plain, &c).unwrap();
            assert_eq!(
                fingerprint_of_text(text, &key),
                fingerprint(&canonical_record(&plain, &c, &key, &mut u), &key)
            );
            let fp = fingerprint_of_text(text, &key);
            let text = std::str::from_utf8(text).unwrap();
            assert_eq!(
                check_journal_text_fingerprint(Some(&fp), text, &key),
                JournalFingerprint::Matches
            );
            let other = check_journal_text_fingerprint(Some("sha256:00"), text, &key);
            let canonical = canonical_record(&plain, &c, &key, &mut u);
            assert_eq!(
                other,
                check_journal_fingerprint(Some("sha256:00"), &canonical, &key)
            );
        }
        let mut c = ToolContract::unconfigured();
        c.defaults.insert("region".into(), json!("us-east-1"));
        assert!(plain_canonical(&plain, &c).is_none());
        let mut c = ToolContract::unconfigured();
        c.fingerprint_fields = Some(vec!["service".into()]);
        assert!(plain_canonical(&plain, &c).is_none());
        let mut c = ToolContract::unconfigured();
        c.secret_fields = vec!["service".into()];
        assert!(plain_canonical(&plain, &c).is_none());
        let noisy = action(json!({"tool":"d","request_id":"r","arguments":{}}));
        assert!(plain_canonical(&noisy, &ToolContract::unconfigured()).is_none());
    }

    #[test]
    fn may_drift_is_set_by_every_string_drift_form_normalizes() {
        for (v, normalized) in [
            (json!({"a": "38281"}), true),
            (json!({"a": ["x", {"b": "0"}]}), true),
            (json!({"a": "2.4.1", "b": 38281, "c": "x38281"}), false),
            (json!({"a": "1234567890123456789"}), false),
        ] {
            let text = jcs(&v);
            assert_eq!(drift_form(&v).is_some(), normalized, "{v}");
            assert!(may_drift(text.as_bytes()) || !normalized, "{v}");
            assert_eq!(may_drift(text.as_bytes()), normalized, "{v}");
        }
        // Digits as a member name: parse and see.
        assert!(may_drift(br#"{"123":"x"}"#));
        assert!(drift_form(&json!({"123": "x"})).is_none());
    }

    #[test]
    fn defaults_are_materialized() {
        let mut c = ToolContract::unconfigured();
        c.defaults.insert("region".into(), json!("us-east-1"));
        let k = FingerprintKey::from_bytes(b"k");
        let mut u = false;
        let implicit = action(json!({"tool":"d","arguments":{"service":"catalog"}}));
        let explicit =
            action(json!({"tool":"d","arguments":{"service":"catalog","region":"us-east-1"}}));
        let other =
            action(json!({"tool":"d","arguments":{"service":"catalog","region":"eu-west-1"}}));
        let mut fp = |a| fingerprint(&canonical_record(a, &c, &k, &mut u), &k);
        assert_eq!(fp(&implicit), fp(&explicit));
        assert_ne!(fp(&implicit), fp(&other));
        assert!(fp(&implicit).starts_with("hmac-sha256:"));
    }

    #[test]
    fn secrets_never_reach_the_record() {
        let mut c = ToolContract::unconfigured();
        c.secret_fields = vec!["token".into()];
        let a = action(json!({"tool":"t","arguments":{"token":"hunter2"}}));
        let mut u = false;
        let keyed = canonical_record(&a, &c, &FingerprintKey::from_bytes(b"k"), &mut u);
        assert!(!jcs(&keyed).contains("hunter2"));
        assert!(!u);
        let unkeyed = canonical_record(&a, &c, &FingerprintKey::none(), &mut u);
        assert!(!jcs(&unkeyed).contains("hunter2"));
        assert!(u);
    }

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        // RFC 4231 §4.3: key "Jefe", data "what do ya want for nothing?".
        let k = FingerprintKey::from_bytes(b"Jefe");
        assert_eq!(
            k.hmac(b"what do ya want for nothing?").unwrap(),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn jcs_follows_rfc_8785() {
        // RFC 8785 §3.2.3 sorting and number forms.
        let v = json!({"b": 1.0, "a": [1e30, 4.50, "\u{20ac}"], "\u{00e9}": null});
        assert_eq!(jcs(&v), "{\"a\":[1e+30,4.5,\"€\"],\"b\":1,\"é\":null}");
    }

    #[test]
    fn journal_fingerprints_are_checked() {
        let c = ToolContract::unconfigured();
        let k = FingerprintKey::from_bytes(b"k");
        let mut u = false;
        let rec = canonical_record(&action(json!({"tool":"t"})), &c, &k, &mut u);
        let good = fingerprint(&rec, &k);
        assert_eq!(
            check_journal_fingerprint(Some(&good), &rec, &k),
            JournalFingerprint::Matches
        );
        assert!(matches!(
            check_journal_fingerprint(Some("hmac-sha256:00"), &rec, &k),
            JournalFingerprint::Mismatch { .. }
        ));
        assert!(matches!(
            check_journal_fingerprint(Some(&good), &rec, &FingerprintKey::none()),
            JournalFingerprint::Unverifiable { .. }
        ));
        let plain = fingerprint(&rec, &FingerprintKey::none());
        assert_eq!(
            check_journal_fingerprint(Some(&plain), &rec, &k),
            JournalFingerprint::Matches
        );
    }

    #[test]
    fn drift_normalizes_numeric_strings_only() {
        assert_eq!(
            drift_form(&json!({"n":"38281","z":"007","s":"v1"})),
            Some(json!({"n":38281,"z":"007","s":"v1"}))
        );
        assert_eq!(drift_form(&json!({"n":38281,"s":"v1"})), None);
    }

    #[test]
    fn key_file_contents() {
        assert!(FingerprintKey::from_file_contents(b"  \n").is_none());
        let hexkey = FingerprintKey::from_file_contents(b"00ff\n").unwrap();
        assert_eq!(hexkey.0.as_deref(), Some(&[0u8, 255][..]));
        let raw = FingerprintKey::from_file_contents(b"not hex!").unwrap();
        assert_eq!(raw.0.as_deref(), Some(&b"not hex!"[..]));
    }
}
