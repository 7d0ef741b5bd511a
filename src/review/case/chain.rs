//! The case file's chain: its rows verified in seq order by the native
//! rule's [`ChainTracker`], reported in the journal chain vocabulary.

use super::records::{Entry, EntryKind};
use crate::journal::GENESIS;
use crate::journal::chain::{
    ChainFailure, ChainRule, ChainStatus, ChainTracker, FailureKind, LinkInput, RuleParams,
    SigResult, SignatureCheck,
};
use chrono::{DateTime, Utc};
use rusqlite::Connection;
use serde::Serialize;
use serde_json::Value;

/// A case file's chain: its status by the native rule, in the vocabulary
/// of journal chains (lines are entries, counted in seq order), and its
/// head. Serialized as the status with `head` beside it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaseChain {
    /// What verifying the entries found.
    #[serde(flatten)]
    pub status: ChainStatus,
    /// Hash of the last entry that verified ([`GENESIS`] when none did):
    /// what the next entry links to, and what a copy kept elsewhere
    /// anchors.
    pub head: String,
}

impl CaseChain {
    /// Whether every entry verified (and the append-only guards are in
    /// place, for a chain read with [`super::CaseFile::load_guarded`]).
    pub fn is_intact(&self) -> bool {
        self.status.is_intact()
    }

    /// How many entries verified: all of them, or those before the first
    /// one a break puts in doubt.
    pub fn entries(&self) -> u64 {
        match &self.status {
            ChainStatus::Intact { lines, .. } => *lines,
            ChainStatus::Broken { failure, .. } => {
                u64::from(failure.unverified_from).saturating_sub(1)
            }
            ChainStatus::NoChain { .. } | ChainStatus::NotChecked { .. } => 0,
        }
    }

    /// One line for people: `intact: 3 entries, head 1f2e…` or
    /// `broken at entry 2 (changed_line): …; 1 entries before it verify`.
    pub fn describe(&self) -> String {
        match &self.status {
            ChainStatus::Intact { lines, .. } => format!(
                "intact: {lines} {}, head {}",
                if *lines == 1 { "entry" } else { "entries" },
                &self.head[..12.min(self.head.len())]
            ),
            ChainStatus::Broken { failure, .. } => format!(
                "broken at entry {} ({}): {}; {} entries before it verify",
                failure.line,
                failure.kind.as_str(),
                failure.message,
                self.entries()
            ),
            other => other.summary(),
        }
    }

    /// The chain of a file whose append-only triggers were removed or
    /// changed, when its entries all verified: broken after the last one
    /// ([`FailureKind::GuardsRemoved`]). Any other chain is returned as it is.
    pub(super) fn without_guards(self) -> CaseChain {
        let ChainStatus::Intact { lines, .. } = self.status else {
            return self;
        };
        let after = u32::try_from(lines + 1).unwrap_or(u32::MAX);
        CaseChain {
            status: ChainStatus::Broken {
                rule: ChainRule::Native,
                lines_checked: lines,
                lines,
                failure: ChainFailure {
                    kind: FailureKind::GuardsRemoved,
                    line: after,
                    seq: None,
                    message: "the triggers that refuse UPDATE and DELETE were removed or changed: the latest entries may have been deleted without a trace".into(),
                    unverified_from: after,
                },
                signatures: SignatureCheck::NotApplicable,
            },
            head: self.head,
        }
    }
}

/// A full verification: the chain, and whether the append-only triggers
/// are still in place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verification {
    /// Chain status.
    pub chain: CaseChain,
    /// Whether the triggers refusing UPDATE and DELETE are present. Missing
    /// triggers do not break the chain, but someone removed them.
    pub append_only_guards: bool,
}

impl Verification {
    /// Intact: the chain verifies and the append-only triggers are in place.
    /// A case file whose triggers were removed counts as broken: with them
    /// gone, the latest entries could have been deleted, which a hash chain
    /// alone cannot show (a cut tail leaves a valid chain).
    pub fn is_intact(&self) -> bool {
        self.chain.is_intact() && self.append_only_guards
    }
}

/// The hash of an entry: `hex(SHA-256(ascii(prev_hash) ‖ JCS(body)))` with
/// `body = {"seq","at","kind","payload"}`, the native chain hash of the
/// entry as a record (docs/design.md §6 rule).
pub fn entry_hash(prev_hash: &str, seq: u64, at: &str, kind: &str, payload: &Value) -> String {
    crate::journal::native_chain_hash(prev_hash, &entry_record(seq, at, kind, payload))
}

/// An entry as the record its hash covers.
fn entry_record(seq: u64, at: &str, kind: &str, payload: &Value) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("seq".into(), seq.into());
    m.insert("at".into(), at.into());
    m.insert("kind".into(), kind.into());
    m.insert("payload".into(), payload.clone());
    m
}

/// A row of the `entries` table as stored.
pub(super) struct RawRow {
    seq: i64,
    at: String,
    kind: String,
    payload: String,
    prev_hash: String,
    hash: String,
}

impl RawRow {
    /// The entry the row stands for, or why it cannot be read as one.
    fn entry(self) -> Result<Entry, String> {
        let seq = u64::try_from(self.seq)
            .ok()
            .filter(|&s| s >= 1)
            .ok_or_else(|| format!("entry with seq {} (seqs start at 1)", self.seq))?;
        let at = DateTime::parse_from_rfc3339(&self.at)
            .map_err(|e| format!("time {:?} is not RFC 3339 ({e})", self.at))?
            .with_timezone(&Utc);
        let kind =
            EntryKind::parse(&self.kind).ok_or_else(|| format!("unknown kind {:?}", self.kind))?;
        let payload = match serde_json::from_str(&self.payload) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => return Err("payload is not a JSON object".into()),
            Err(e) => return Err(format!("payload is not JSON ({e})")),
        };
        Ok(Entry {
            seq,
            at,
            kind,
            payload,
            prev_hash: self.prev_hash,
            hash: self.hash,
        })
    }
}

/// Verifies rows in seq order with the native rule's [`ChainTracker`]
/// and returns the entries that verified (those before the first entry a
/// break puts in doubt) with the chain.
pub(super) fn check_rows(rows: Vec<RawRow>) -> (Vec<Entry>, CaseChain) {
    let mut t = ChainTracker::new(RuleParams::native());
    let mut read = Vec::with_capacity(rows.len());
    for (i, r) in rows.into_iter().enumerate() {
        let line = u32::try_from(i + 1).unwrap_or(u32::MAX);
        // The stored text is hashed, as written.
        let at = r.at.clone();
        match r.entry() {
            Err(why) => t.unreadable(line, true, why),
            Ok(e) => {
                let computed = entry_hash(&e.prev_hash, e.seq, &at, e.kind.as_str(), &e.payload);
                t.link(LinkInput {
                    line,
                    seq: Some(e.seq),
                    prev: e.prev_hash.as_bytes(),
                    stored: Some(e.hash.as_bytes()),
                    computed: computed.as_bytes(),
                    terminated: true,
                    sig: SigResult::NotChecked,
                });
                read.push((line, e));
            }
        }
    }
    let status = t.finish();
    let verified_before = status.failure().map_or(u32::MAX, |f| f.unverified_from);
    let entries: Vec<Entry> = read
        .into_iter()
        .take_while(|(line, _)| *line < verified_before)
        .map(|(_, e)| e)
        .collect();
    let head = entries
        .last()
        .map_or_else(|| GENESIS.to_string(), |e| e.hash.clone());
    (entries, CaseChain { status, head })
}

pub(super) fn read_rows(conn: &Connection) -> rusqlite::Result<Vec<RawRow>> {
    let mut st =
        conn.prepare("SELECT seq, at, kind, payload, prev_hash, hash FROM entries ORDER BY seq")?;
    let rows = st.query_map([], |r| {
        Ok(RawRow {
            seq: r.get(0)?,
            at: r.get(1)?,
            kind: r.get(2)?,
            payload: r.get(3)?,
            prev_hash: r.get(4)?,
            hash: r.get(5)?,
        })
    })?;
    rows.collect()
}
