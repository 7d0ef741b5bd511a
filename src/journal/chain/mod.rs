//! Tamper-evident audit chains (docs/design.md §6): what a chain rule says about a
//! journal, and the one classification engine every rule shares.
//!
//! A reader that knows its format's chain rule recomputes each line's hash
//! while it streams the journal and hands the facts of the line (its `seq`,
//! the link it claims, its stored and recomputed hashes, its signature) to a
//! [`ChainTracker`]. The tracker keeps O(1) state, stops judging at the first
//! failure (as every producer's own verifier does), and tells the failure
//! apart by kind:
//!
//! | what the line shows | kind |
//! |---|---|
//! | link and `seq` fine, recomputed hash differs from the stored one | [`FailureKind::ChangedLine`] |
//! | link fine, `seq` not the previous + 1 | [`FailureKind::SeqGap`] |
//! | link broken, `seq` jumps ahead, the missing seqs never appear | [`FailureKind::DeletedLine`] |
//! | link broken, `seq` jumps ahead or back, the line belongs elsewhere | [`FailureKind::ReorderedLines`] |
//! | link broken, the line links to the same predecessor as the line before it, or repeats it | [`FailureKind::InsertedLine`] |
//! | link broken, `seq` contiguous | [`FailureKind::BrokenLink`] (the previous line was rewritten with a recomputed hash, or the link was edited) |
//! | the last line has no newline and does not verify | [`FailureKind::TruncatedLastLine`] |
//! | a signature is missing or does not verify with the key given | [`FailureKind::Unsigned`], [`FailureKind::BadSignature`] |
//! | the producer itself wrote a chain-break record | [`FailureKind::DeclaredBreak`] |
//! | a case file's append-only triggers were removed or changed | [`FailureKind::GuardsRemoved`] |
//!
//! Deleting lines at the very end of a journal cannot be seen by any chain
//! without an anchor kept elsewhere; `docs/formats.md` says so per format.

mod tracker;

pub use tracker::{ChainTracker, GENESIS, LinkInput, RuleParams, Run, SigResult};

use serde::Serialize;
use std::fmt;

/// Which chain rule a journal follows. Each rule is implemented by the
/// reader of its format; the formula is in [`ChainRule::formula`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChainRule {
    /// retrace native (docs/design.md §6).
    Native,
    /// Sallyport audit journal (docs/formats.md#sallyport-chain).
    Sallyport,
    /// elang2/mcp-audit-gateway `audit.jsonl` (docs/formats.md#mcp-audit-chain).
    McpAudit,
    /// mcp-acp audit logs (docs/formats.md#mcp-acp-chain).
    McpAcp,
}

impl ChainRule {
    /// Short name.
    pub fn name(self) -> &'static str {
        match self {
            ChainRule::Native => "native",
            ChainRule::Sallyport => "sallyport",
            ChainRule::McpAudit => "mcp-audit",
            ChainRule::McpAcp => "mcp-acp",
        }
    }

    /// The rule as a formula, for reports.
    pub fn formula(self) -> &'static str {
        match self {
            ChainRule::Native => {
                "hash = sha256(prev_hash ‖ JCS(line without prev_hash and hash)), genesis prev_hash = 64 zeros, seq contiguous from 1"
            }
            ChainRule::Sallyport => {
                "this_hash = sha256(prev_hash ‖ CanonicalJSON({sealed, seq})), genesis = 64 zeros, seq contiguous from 1, sig = ECDSA-P256(this_hash)"
            }
            ChainRule::McpAudit => {
                "previousHash = sha256(previous line as written), first = \"genesis\", attestation = HMAC-SHA256 or Ed25519 over the tuple-array form"
            }
            ChainRule::McpAcp => {
                "entry_hash = sha256(json.dumps(line without entry_hash, sort_keys, compact, ASCII)), first prev_hash = \"GENESIS\", sequence contiguous"
            }
        }
    }
}

impl fmt::Display for ChainRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a chain broke. See the module table for what each kind means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// `seq` skips or repeats although the links are intact.
    SeqGap,
    /// One or more lines are missing.
    DeletedLine,
    /// Lines are out of order (or one was moved or copied from elsewhere).
    ReorderedLines,
    /// A line was added: two lines link to the same predecessor, a line
    /// repeats its predecessor, or a line inside the chain has no chain fields.
    InsertedLine,
    /// The line's content no longer matches its own hash.
    ChangedLine,
    /// The line does not link to the hash of the line before it.
    BrokenLink,
    /// The last line was cut short (no newline and it does not verify).
    TruncatedLastLine,
    /// A line carries no signature although a signer key was given.
    Unsigned,
    /// A signature does not verify with the key given.
    BadSignature,
    /// The producer wrote a chain-break record: the chain restarts here.
    DeclaredBreak,
    /// The guards that keep the file append-only (a case file's triggers
    /// refusing UPDATE and DELETE) were removed or changed. Every line may
    /// verify, but the latest ones could have been deleted without a trace
    /// (a cut tail leaves a valid chain): the break is placed after the
    /// last line.
    GuardsRemoved,
}

impl FailureKind {
    /// The kind in words.
    pub fn describe(self) -> &'static str {
        match self {
            FailureKind::SeqGap => "seq gap",
            FailureKind::DeletedLine => "deleted line",
            FailureKind::ReorderedLines => "reordered lines",
            FailureKind::InsertedLine => "inserted line",
            FailureKind::ChangedLine => "changed line",
            FailureKind::BrokenLink => "broken link",
            FailureKind::TruncatedLastLine => "truncated last line",
            FailureKind::Unsigned => "unsigned line",
            FailureKind::BadSignature => "badly signed line",
            FailureKind::DeclaredBreak => "chain break declared by the producer",
            FailureKind::GuardsRemoved => "append-only guards removed",
        }
    }

    /// The snake_case name, as in JSON (`changed_line`, `guards_removed`).
    pub fn as_str(self) -> &'static str {
        match self {
            FailureKind::SeqGap => "seq_gap",
            FailureKind::DeletedLine => "deleted_line",
            FailureKind::ReorderedLines => "reordered_lines",
            FailureKind::InsertedLine => "inserted_line",
            FailureKind::ChangedLine => "changed_line",
            FailureKind::BrokenLink => "broken_link",
            FailureKind::TruncatedLastLine => "truncated_last_line",
            FailureKind::Unsigned => "unsigned",
            FailureKind::BadSignature => "bad_signature",
            FailureKind::DeclaredBreak => "declared_break",
            FailureKind::GuardsRemoved => "guards_removed",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}

/// The first failure of a chain.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChainFailure {
    /// What kind of break.
    pub kind: FailureKind,
    /// 1-based line (row id for SQLite journals) where the break shows.
    pub line: u32,
    /// The line's `seq`, when the rule has one.
    pub seq: Option<u64>,
    /// What exactly does not match.
    pub message: String,
    /// First line whose content the break puts in doubt: the failing line,
    /// or for a link that does not match, the line before it (either one
    /// may have been rewritten). Evidence from here on is unverified.
    pub unverified_from: u32,
}

/// Whether signatures (or attestations) were checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "signatures", rename_all = "snake_case")]
pub enum SignatureCheck {
    /// The rule has no signatures.
    NotApplicable,
    /// Every line checked carried a signature that verified.
    Verified {
        /// Signatures verified.
        count: u64,
    },
    /// Signatures were not checked.
    NotChecked {
        /// Why (e.g. no key given).
        reason: String,
    },
}

impl SignatureCheck {
    /// A short phrase for reports; empty when not applicable.
    pub fn phrase(&self) -> String {
        match self {
            SignatureCheck::NotApplicable => String::new(),
            SignatureCheck::Verified { count } => format!("{count} signature(s) verified"),
            SignatureCheck::NotChecked { reason } => format!("signatures not checked: {reason}"),
        }
    }
}

/// What verifying a journal's chain found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum ChainStatus {
    /// The format (or this journal) has no chain.
    NoChain {
        /// Why, e.g. "gh-aw-mcpg logs carry no hash chain".
        reason: String,
    },
    /// Every line verified.
    Intact {
        /// Rule used.
        rule: ChainRule,
        /// Lines verified.
        lines: u64,
        /// Signatures.
        #[serde(flatten)]
        signatures: SignatureCheck,
    },
    /// The chain broke; lines from the failure on are unverified.
    Broken {
        /// Rule used.
        rule: ChainRule,
        /// Lines checked, up to and including the failing line.
        lines_checked: u64,
        /// Chained lines in the journal.
        lines: u64,
        /// The first failure.
        failure: ChainFailure,
        /// Signatures (as far as checked).
        #[serde(flatten)]
        signatures: SignatureCheck,
    },
    /// The journal has a chain that could not be checked.
    NotChecked {
        /// Rule, if known.
        rule: Option<ChainRule>,
        /// Why.
        reason: String,
    },
}

/// Whether one piece of evidence is covered by a verified chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChainMark {
    /// The line lies before any break of a chain that was checked.
    Verified,
    /// The line lies at or after a break, or its chain was not checked.
    Unverified,
    /// The journal (or this record) is not chained.
    NoChain,
}

impl ChainMark {
    /// The spelling used in JSON and text.
    pub fn as_str(self) -> &'static str {
        match self {
            ChainMark::Verified => "verified",
            ChainMark::Unverified => "unverified",
            ChainMark::NoChain => "no_chain",
        }
    }
}

impl ChainStatus {
    /// A journal with no chain.
    pub fn no_chain(reason: impl Into<String>) -> Self {
        ChainStatus::NoChain {
            reason: reason.into(),
        }
    }

    /// True when a chain was checked and every line verified.
    pub fn is_intact(&self) -> bool {
        matches!(self, ChainStatus::Intact { .. })
    }

    /// True when a chain was checked and broke.
    pub fn is_broken(&self) -> bool {
        matches!(self, ChainStatus::Broken { .. })
    }

    /// The first failure, if the chain broke.
    pub fn failure(&self) -> Option<&ChainFailure> {
        match self {
            ChainStatus::Broken { failure, .. } => Some(failure),
            _ => None,
        }
    }

    /// Whether evidence on `line` (1-based; row id for SQLite) is covered by
    /// the verified part of the chain.
    pub fn mark(&self, line: u32) -> ChainMark {
        match self {
            ChainStatus::NoChain { .. } => ChainMark::NoChain,
            ChainStatus::Intact { .. } => ChainMark::Verified,
            ChainStatus::Broken { failure, .. } if line < failure.unverified_from => {
                ChainMark::Verified
            }
            ChainStatus::Broken { .. } | ChainStatus::NotChecked { .. } => ChainMark::Unverified,
        }
    }

    /// A few words for tight places (the TUI's journal list): `intact`,
    /// `intact, signed`, `BROKEN at line 7`, `none`, `not checked`.
    pub fn short(&self) -> String {
        match self {
            ChainStatus::NoChain { .. } => "none".into(),
            ChainStatus::Intact {
                signatures: SignatureCheck::Verified { .. },
                ..
            } => "intact, signed".into(),
            ChainStatus::Intact { .. } => "intact".into(),
            ChainStatus::Broken { failure, .. } => format!("BROKEN at line {}", failure.line),
            ChainStatus::NotChecked { .. } => "not checked".into(),
        }
    }

    /// One line for headers: `chain intact (native, 20 lines)`,
    /// `chain BROKEN at line 7 seq 7: changed line — …`, `no chain (…)`.
    /// Contains journal text (in messages); escape before display.
    pub fn summary(&self) -> String {
        match self {
            ChainStatus::NoChain { reason } => format!("no chain ({reason})"),
            ChainStatus::Intact {
                rule,
                lines,
                signatures,
            } => {
                let s = signatures.phrase();
                format!(
                    "chain intact ({rule}, {lines} line(s){})",
                    if s.is_empty() {
                        String::new()
                    } else {
                        format!("; {s}")
                    }
                )
            }
            ChainStatus::Broken {
                rule,
                lines_checked,
                lines,
                failure,
                ..
            } => format!(
                "chain BROKEN ({rule}) at line {}{}: {} — {} [{lines_checked} of {lines} line(s) checked; evidence from line {} on is unverified]",
                failure.line,
                failure.seq.map(|s| format!(" seq {s}")).unwrap_or_default(),
                failure.kind,
                failure.message,
                failure.unverified_from
            ),
            ChainStatus::NotChecked { rule, reason } => format!(
                "chain not checked{}: {reason}",
                rule.map(|r| format!(" ({r})")).unwrap_or_default()
            ),
        }
    }
}

#[cfg(test)]
mod tests;
