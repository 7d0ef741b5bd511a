//! The native chain rule's hash (docs/design.md §6), checking a parsed record
//! against it, and writing chained journals.

use crate::journal::chain::{ChainTracker, GENESIS, LinkInput, SigResult};
use crate::journal::fields::{FieldMap, Fields};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::io::{self, Write};

/// The native chain hash of one record (docs/design.md §6):
/// `hex(sha256(prev_hash ‖ JCS(record)))`, where `prev_hash` is hashed as
/// its ASCII hex text and `record` is the line's object without its
/// `prev_hash` and `hash` fields, canonicalized by RFC 8785.
pub fn native_chain_hash(prev_hash: &str, record: &Map<String, Value>) -> String {
    chain_hash_of(
        prev_hash,
        record.iter().map(|(k, v)| (k.as_str(), v)).collect(),
    )
}

/// The native chain hash over an object's members (in any order).
pub(super) fn chain_hash_of(prev_hash: &str, mut members: Vec<(&str, &Value)>) -> String {
    let mut buf = Vec::with_capacity(512);
    buf.extend_from_slice(prev_hash.as_bytes());
    crate::canonical::write_members(&mut members, &mut buf);
    lower_hex(&Sha256::digest(&buf))
}

/// Lowercase hex of a digest (the `hex` crate's encoder goes through a
/// char iterator, which shows in the verification benchmark).
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(HEX[usize::from(b >> 4)]));
        s.push(char::from(HEX[usize::from(b & 15)]));
    }
    s
}

/// A record whose native chain fields can be checked: a parsed line
/// ([`Fields`]) or a SQLite row mapped to an object.
pub(crate) trait ChainFields: FieldMap {
    /// The record's `seq`, if it has one.
    fn seq(&self) -> Option<u64>;
    /// Every member, in any order.
    fn members(&self) -> Vec<(&str, &Value)>;
}

/// A `seq` value: an integer, or a whole number written with a fraction
/// (`4.0` is 4 to RFC 8785 too).
fn seq_of(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= 9_007_199_254_740_992.0)
            .map(|f| f as u64)
    })
}

impl ChainFields for Map<String, Value> {
    fn seq(&self) -> Option<u64> {
        self.get("seq").and_then(seq_of)
    }
    fn members(&self) -> Vec<(&str, &Value)> {
        self.iter().map(|(k, v)| (k.as_str(), v)).collect()
    }
}

impl ChainFields for Fields {
    fn seq(&self) -> Option<u64> {
        self.get("seq").and_then(seq_of)
    }
    fn members(&self) -> Vec<(&str, &Value)> {
        self.iter().collect()
    }
}

/// Feeds one parsed native line to the chain tracker, removing its chain
/// fields from `m`.
pub(crate) fn check_link(
    t: &mut ChainTracker,
    m: &mut impl ChainFields,
    no: u32,
    terminated: bool,
) {
    let prev = m.remove("prev_hash");
    let hash = m.remove("hash");
    let (prev, hash) = match (prev, hash) {
        (Some(Value::String(p)), Some(Value::String(h))) => (p, h),
        (None, None) => {
            t.unchained(no, "no prev_hash and hash");
            return;
        }
        _ => {
            t.unreadable(
                no,
                terminated,
                "prev_hash and hash must both be present and strings",
            );
            return;
        }
    };
    let seq = m.seq();
    let computed = chain_hash_of(&prev, m.members());
    t.link(LinkInput {
        line: no,
        seq,
        prev: prev.as_bytes(),
        stored: Some(hash.as_bytes()),
        computed: computed.as_bytes(),
        terminated,
        sig: SigResult::NotChecked,
    });
}

/// Writes a chained native journal (docs/design.md §6): each appended record gets
/// `prev_hash` (the previous line's `hash`, or [`GENESIS`]) and its own
/// `hash`, then is written as one JSON line. Used by tests and by the
/// benchmark generator; any producer can use it to emit verifiable journals.
pub struct NativeChainWriter<W: Write> {
    out: W,
    prev: String,
}

impl<W: Write> NativeChainWriter<W> {
    /// A writer at genesis.
    pub fn new(out: W) -> Self {
        NativeChainWriter {
            out,
            prev: GENESIS.to_string(),
        }
    }

    /// The hash the next line will link to.
    pub fn head(&self) -> &str {
        &self.prev
    }

    /// Chains and writes one record (any `prev_hash`/`hash` in it are
    /// replaced). Returns the line as written, without its newline.
    ///
    /// # Errors
    /// I/O errors.
    pub fn append(&mut self, mut record: Map<String, Value>) -> io::Result<String> {
        record.remove("prev_hash");
        record.remove("hash");
        let hash = native_chain_hash(&self.prev, &record);
        record.insert("prev_hash".into(), Value::String(self.prev.clone()));
        record.insert("hash".into(), Value::String(hash.clone()));
        let line = serde_json::to_string(&record).map_err(io::Error::other)?;
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.prev = hash;
        Ok(line)
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}
