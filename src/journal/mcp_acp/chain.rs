//! The hash chain of mcp-acp's audit logs (`security/integrity/hash_chain.py`):
//! `entry_hash` over Python's sorted, compact, ASCII `json.dumps` of the
//! entry without it, first `prev_hash = "GENESIS"`, `sequence` contiguous.

use super::State;
use crate::journal::chain::{
    ChainRule, ChainTracker, LinkInput, RuleParams, SigResult, SignatureCheck,
};
use crate::journal::rawjson;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// The mcp-acp chain rule's parameters.
fn rule() -> RuleParams {
    RuleParams {
        rule: ChainRule::McpAcp,
        genesis: "GENESIS".into(),
        first_seq: None,
        signatures: SignatureCheck::NotApplicable,
        require_newline: false,
    }
}

/// `entry_hash` as mcp-acp computes it: SHA-256 of Python's
/// `json.dumps(entry_without_entry_hash, sort_keys=True,
/// separators=(",", ":"))`, hex.
pub fn entry_hash(entry: &rawjson::Raw) -> String {
    let mut s = String::new();
    entry.write_python_sorted(&mut s);
    hex::encode(Sha256::digest(s.as_bytes()))
}

impl State {
    /// Feeds one line to the chain: chained lines link, an unchained line
    /// inside the chain is an inserted line (before it starts, a
    /// pre-upgrade line, skipped as mcp-acp's own verifier does).
    pub(super) fn chain_line(
        &mut self,
        m: &Map<String, Value>,
        bytes: &[u8],
        no: u32,
        terminated: bool,
    ) {
        let chained = m.contains_key("entry_hash") && m.contains_key("sequence");
        if !chained {
            if let Some(t) = self.chain.as_mut() {
                t.unchained(no, "no sequence/entry_hash");
            }
            return;
        }
        let t = self.chain.get_or_insert_with(|| ChainTracker::new(rule()));
        let text = match std::str::from_utf8(bytes) {
            Ok(s) => s,
            Err(_) => {
                t.unreadable(no, terminated, "not UTF-8");
                return;
            }
        };
        let mut raw = match rawjson::parse(text) {
            Ok(r) => r,
            Err(e) => {
                t.unreadable(no, terminated, e.to_string());
                return;
            }
        };
        let stored = raw.remove("entry_hash");
        let (Some(stored), Some(prev)) = (
            stored.as_ref().and_then(rawjson::Raw::as_str),
            raw.get("prev_hash").and_then(rawjson::Raw::as_str),
        ) else {
            t.unreadable(no, terminated, "entry_hash and prev_hash must be strings");
            return;
        };
        let seq = raw.get("sequence").and_then(rawjson::Raw::as_u64);
        let computed = entry_hash(&raw);
        t.link(LinkInput {
            line: no,
            seq,
            prev: prev.as_bytes(),
            stored: Some(stored.as_bytes()),
            computed: computed.as_bytes(),
            terminated,
            sig: SigResult::NotChecked,
        });
    }
}
