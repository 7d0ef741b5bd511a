//! Tamper-evident audit chains (DESIGN.md §6): what a chain rule says about a
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

use serde::Serialize;
use std::fmt;

/// Which chain rule a journal follows. Each rule is implemented by the
/// reader of its format; the formula is in [`ChainRule::formula`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChainRule {
    /// retrace native (DESIGN.md §6).
    Native,
    /// Sallyport audit journal (research/journal-formats.md §1.3).
    Sallyport,
    /// elang2/mcp-audit-gateway `audit.jsonl` (research §2.1).
    McpAudit,
    /// mcp-acp audit logs (research §2.3).
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

/// The outcome of checking one line's signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SigResult {
    /// The rule has no signature on this line, or no key was given.
    NotChecked,
    /// Present and verified.
    Valid,
    /// Absent although a key was given.
    Missing,
    /// Present but does not verify; the message says why.
    Invalid(String),
}

/// The facts of one chained line, as its format's rule computed them.
#[derive(Debug, Clone)]
pub struct LinkInput<'a> {
    /// 1-based line.
    pub line: u32,
    /// The line's sequence number, for rules that have one.
    pub seq: Option<u64>,
    /// The link the line claims (its `prev_hash`).
    pub prev: &'a str,
    /// The hash the line stores for itself, for rules that store one.
    pub stored: Option<&'a str>,
    /// The line's hash as recomputed (for rules without a stored hash: the
    /// hash the next line must link to).
    pub computed: &'a str,
    /// False for a final line with no newline.
    pub terminated: bool,
    /// The signature check of the line.
    pub sig: SigResult,
}

/// The genesis `prev_hash` of the native rule (DESIGN.md §6), which the
/// Sallyport rule shares (`AuditLog.genesisPrev`): 64 ASCII zeros.
pub const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// How a rule starts and what it demands.
#[derive(Debug, Clone)]
pub struct RuleParams {
    /// The rule.
    pub rule: ChainRule,
    /// The first line's `prev` value.
    pub genesis: String,
    /// The first `seq`, when the rule fixes it (`None`: any start).
    pub first_seq: Option<u64>,
    /// Whether the rule has signatures that can be checked; `Some(reason)`
    /// when they exist but will not be checked.
    pub signatures: SignatureCheck,
    /// Whether an unterminated last line is a failure even when it verifies
    /// (Sallyport's reader treats it as an error).
    pub require_newline: bool,
}

impl RuleParams {
    /// The native rule (DESIGN.md §6): genesis [`GENESIS`], `seq`
    /// contiguous from 1, no signatures. Native journals (JSONL and SQLite)
    /// and the case file follow it.
    pub fn native() -> RuleParams {
        RuleParams {
            rule: ChainRule::Native,
            genesis: GENESIS.to_string(),
            first_seq: Some(1),
            signatures: SignatureCheck::NotApplicable,
            require_newline: false,
        }
    }
}

/// Something deferred: a break whose kind depends on lines still to come.
#[derive(Debug, Clone)]
enum Pending {
    /// `seq` jumped from `lo - 1` to `hi + 1`: deleted unless one of
    /// `lo..=hi` shows up later (then reordered).
    Gap { lo: u64, hi: u64 },
    /// The line linked to `want`, which no earlier line hashes to: reordered
    /// if a later line hashes to it, else a broken link.
    Want { want: String },
}

/// The shared chain classification engine. Feed it every chained line in
/// journal order with [`ChainTracker::link`] (or [`ChainTracker::unreadable`]
/// for a line that cannot be read as a chained record), then call
/// [`ChainTracker::finish`].
#[derive(Debug)]
pub struct ChainTracker {
    params: RuleParams,
    /// What the next line must link to.
    expected: String,
    /// What the line before the last one was linked by (for fork detection).
    before_last: Option<String>,
    last_line: Option<u32>,
    last_seq: Option<u64>,
    checked: u64,
    total: u64,
    sigs_valid: u64,
    failure: Option<ChainFailure>,
    pending: Option<Pending>,
    /// Whether lines without `seq` (native session lines) are chained too:
    /// deleting one leaves `seq` contiguous.
    unsequenced: bool,
}

impl ChainTracker {
    /// A tracker at genesis.
    pub fn new(params: RuleParams) -> Self {
        ChainTracker {
            expected: params.genesis.clone(),
            params,
            before_last: None,
            last_line: None,
            last_seq: None,
            checked: 0,
            total: 0,
            sigs_valid: 0,
            failure: None,
            pending: None,
            unsequenced: false,
        }
    }

    /// The rule.
    pub fn rule(&self) -> ChainRule {
        self.params.rule
    }

    /// True once the chain broke; later lines are only counted.
    pub fn broken(&self) -> bool {
        self.failure.is_some()
    }

    /// Chained lines seen so far.
    pub fn lines(&self) -> u64 {
        self.total
    }

    /// What the next line must link to: the hash of the last line (the
    /// genesis value before any), the head of the chain while it holds.
    pub fn head(&self) -> &str {
        &self.expected
    }

    fn fail(&mut self, kind: FailureKind, line: u32, seq: Option<u64>, message: String) {
        // A line whose link does not match the one before it does not say
        // which of the two was rewritten (a rewritten line can carry a
        // recomputed hash of its own): both are in doubt.
        let unverified_from = match kind {
            FailureKind::BrokenLink | FailureKind::ReorderedLines => {
                self.last_line.filter(|&p| p < line).unwrap_or(line)
            }
            _ => line,
        };
        self.failure = Some(ChainFailure {
            kind,
            line,
            seq,
            message,
            unverified_from,
        });
    }

    /// A line that belongs to the chain but cannot be read as a chained
    /// record (bad JSON, chain fields missing or of the wrong type).
    pub fn unreadable(&mut self, line: u32, terminated: bool, message: impl Into<String>) {
        self.total += 1;
        if self.failure.is_some() {
            return;
        }
        self.checked += 1;
        let message = message.into();
        if terminated {
            self.fail(FailureKind::ChangedLine, line, None, message);
        } else {
            self.fail(
                FailureKind::TruncatedLastLine,
                line,
                None,
                format!("the last line has no newline and cannot be read ({message})"),
            );
        }
    }

    /// A line that carries no chain fields inside a chained journal.
    pub fn unchained(&mut self, line: u32, what: &str) {
        self.total += 1;
        if self.failure.is_some() {
            return;
        }
        self.checked += 1;
        self.fail(
            FailureKind::InsertedLine,
            line,
            None,
            format!("a line without chain fields ({what}) inside the chain"),
        );
    }

    /// A chain-break record written by the producer itself.
    pub fn declared_break(&mut self, line: u32, reason: &str) {
        self.total += 1;
        if self.failure.is_some() {
            return;
        }
        self.checked += 1;
        self.fail(
            FailureKind::DeclaredBreak,
            line,
            None,
            format!("the producer recorded a chain break ({reason}); lines after it are not linked to those before"),
        );
    }

    /// One chained line.
    pub fn link(&mut self, l: LinkInput<'_>) {
        self.total += 1;
        let target = l.stored.unwrap_or(l.computed);
        if self.failure.is_some() {
            self.resolve_pending(&l, target);
            return;
        }
        self.checked += 1;
        let own_ok = l.stored.is_none_or(|s| s == l.computed);
        let link_ok = l.prev == self.expected;
        let first = self.last_line.is_none();
        let expected_seq = match self.last_seq {
            Some(p) => Some(p + 1),
            None => self.params.first_seq,
        };
        let seq_ok = match (l.seq, expected_seq) {
            (Some(s), Some(e)) => s == e,
            _ => true,
        };

        let short = |h: &str| -> String { h.chars().take(12).collect() };
        if !link_ok {
            if first {
                match (l.seq, self.params.first_seq) {
                    (Some(s), Some(f)) if s > f => {
                        self.pending = Some(Pending::Gap { lo: f, hi: s - 1 });
                        self.fail(
                            FailureKind::DeletedLine,
                            l.line,
                            l.seq,
                            format!(
                                "the journal starts at seq {s} and does not link to genesis: {} line(s) before it are missing",
                                s - f
                            ),
                        );
                    }
                    _ => self.fail(
                        FailureKind::BrokenLink,
                        l.line,
                        l.seq,
                        format!(
                            "the first line links to {:?}, not to genesis {:?}: lines before it were deleted, or this link was edited",
                            short(l.prev),
                            short(&self.params.genesis)
                        ),
                    ),
                }
            } else if target == self.expected {
                let prev_line = self.last_line.unwrap_or(0);
                self.fail(
                    FailureKind::InsertedLine,
                    l.line,
                    l.seq,
                    format!("the line repeats line {prev_line}"),
                );
            } else if self.before_last.as_deref() == Some(l.prev) {
                let prev_line = self.last_line.unwrap_or(0);
                let prev_seq = self.last_seq;
                self.fail(
                    FailureKind::InsertedLine,
                    prev_line,
                    prev_seq,
                    format!(
                        "lines {prev_line} and {} both link to the line before {prev_line}: line {prev_line} was inserted",
                        l.line
                    ),
                );
            } else {
                let p = self.last_seq;
                match (l.seq, p) {
                    (Some(s), Some(p)) if s > p + 1 => {
                        self.pending = Some(Pending::Gap {
                            lo: p + 1,
                            hi: s - 1,
                        });
                        let n = s - p - 1;
                        self.fail(
                            FailureKind::DeletedLine,
                            l.line,
                            l.seq,
                            if n == 1 {
                                format!("seq {} is missing: a line was deleted before this one", p + 1)
                            } else {
                                format!(
                                    "seq {}..{} are missing: {n} lines were deleted before this one",
                                    p + 1,
                                    s - 1
                                )
                            },
                        );
                    }
                    (Some(s), Some(p)) if s <= p => self.fail(
                        FailureKind::ReorderedLines,
                        l.line,
                        l.seq,
                        format!(
                            "seq {s} comes after seq {p}: the line was moved here from earlier"
                        ),
                    ),
                    (None, _) | (_, None) => {
                        let previous_line = self.last_line.unwrap_or(0);
                        self.pending = Some(Pending::Want {
                            want: l.prev.to_string(),
                        });
                        self.fail(
                            FailureKind::BrokenLink,
                            l.line,
                            l.seq,
                            format!(
                                "the line links to {}…, which is not the hash of line {previous_line} ({}…): line {previous_line} was changed, line(s) between were deleted, or this link was edited",
                                short(l.prev),
                                short(&self.expected)
                            ),
                        );
                    }
                    _ => {
                        let previous_line = self.last_line.unwrap_or(0);
                        let unsequenced = if self.unsequenced {
                            ", a line without seq was deleted after it,"
                        } else {
                            ""
                        };
                        self.fail(
                            FailureKind::BrokenLink,
                            l.line,
                            l.seq,
                            format!(
                                "prev_hash {}… is not the hash of line {previous_line} ({}…): line {previous_line} was rewritten with a recomputed hash{unsequenced} or this link was edited",
                                short(l.prev),
                                short(&self.expected)
                            ),
                        );
                    }
                }
            }
        } else if !own_ok {
            self.fail(
                FailureKind::ChangedLine,
                l.line,
                l.seq,
                format!(
                    "the stored hash {}… does not match the line's content (recomputed {}…)",
                    short(l.stored.unwrap_or("")),
                    short(l.computed)
                ),
            );
        } else if !seq_ok {
            let e = expected_seq.unwrap_or(0);
            self.fail(
                FailureKind::SeqGap,
                l.line,
                l.seq,
                format!(
                    "seq {} where {e} was expected, although the hash links are intact",
                    l.seq.unwrap_or(0)
                ),
            );
        } else {
            match &l.sig {
                SigResult::Missing => self.fail(
                    FailureKind::Unsigned,
                    l.line,
                    l.seq,
                    "the line carries no signature".into(),
                ),
                SigResult::Invalid(why) => {
                    self.fail(FailureKind::BadSignature, l.line, l.seq, why.clone())
                }
                SigResult::Valid => self.sigs_valid += 1,
                SigResult::NotChecked => {}
            }
        }
        if self.failure.is_none() && !l.terminated && self.params.require_newline {
            self.fail(
                FailureKind::TruncatedLastLine,
                l.line,
                l.seq,
                "the last line has no newline: the write did not complete".into(),
            );
        }
        if let Some(f) = &mut self.failure
            && !l.terminated
            && f.line == l.line
            && f.kind != FailureKind::TruncatedLastLine
        {
            f.message = format!(
                "the last line has no newline and does not verify: {}",
                f.message
            );
            f.kind = FailureKind::TruncatedLastLine;
        }
        self.before_last = Some(std::mem::replace(&mut self.expected, target.to_string()));
        self.last_line = Some(l.line);
        if l.seq.is_some() {
            self.last_seq = l.seq;
        } else {
            self.unsequenced = true;
        }
    }

    fn resolve_pending(&mut self, l: &LinkInput<'_>, target: &str) {
        let hit = match &self.pending {
            Some(Pending::Gap { lo, hi }) => l.seq.is_some_and(|s| (*lo..=*hi).contains(&s)),
            Some(Pending::Want { want }) => target == want,
            None => false,
        };
        if !hit {
            return;
        }
        self.pending = None;
        if let Some(f) = &mut self.failure {
            f.kind = FailureKind::ReorderedLines;
            f.message = match l.seq {
                Some(s) => format!(
                    "the line is out of order: seq {s}, which belongs before it, appears later at line {}",
                    l.line
                ),
                None => format!(
                    "the line is out of order: the line it links to appears later, at line {}",
                    l.line
                ),
            };
        }
    }

    /// The verdict.
    pub fn finish(self) -> ChainStatus {
        let signatures = match (&self.params.signatures, self.sigs_valid) {
            (SignatureCheck::NotApplicable, _) => SignatureCheck::NotApplicable,
            (SignatureCheck::NotChecked { reason }, _) => SignatureCheck::NotChecked {
                reason: reason.clone(),
            },
            (SignatureCheck::Verified { .. }, n) => SignatureCheck::Verified { count: n },
        };
        match self.failure {
            None => ChainStatus::Intact {
                rule: self.params.rule,
                lines: self.total,
                signatures,
            },
            Some(failure) => ChainStatus::Broken {
                rule: self.params.rule,
                lines_checked: self.checked,
                lines: self.total,
                failure,
                signatures,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(first_seq: Option<u64>) -> RuleParams {
        RuleParams {
            rule: ChainRule::Native,
            genesis: "G".into(),
            first_seq,
            signatures: SignatureCheck::NotApplicable,
            require_newline: false,
        }
    }

    /// Line i (1-based) of an abstract chain: seq i, hash "h{i}", links h{i-1}.
    fn feed(t: &mut ChainTracker, lines: &[(u32, u64)]) {
        for &(line, seq) in lines {
            let prev = if seq == 1 {
                "G".to_string()
            } else {
                format!("h{}", seq - 1)
            };
            let h = format!("h{seq}");
            t.link(LinkInput {
                line,
                seq: Some(seq),
                prev: &prev,
                stored: Some(&h),
                computed: &h,
                terminated: true,
                sig: SigResult::NotChecked,
            });
        }
    }

    fn kind_at(order: &[u64]) -> (FailureKind, u32) {
        let mut t = ChainTracker::new(params(Some(1)));
        let lines: Vec<(u32, u64)> = order
            .iter()
            .enumerate()
            .map(|(i, &s)| (i as u32 + 1, s))
            .collect();
        feed(&mut t, &lines);
        let st = t.finish();
        let f = st.failure().expect("broken").clone();
        (f.kind, f.line)
    }

    #[test]
    fn classifies_by_sequence_shape() {
        assert_eq!(kind_at(&[1, 2, 4, 5]), (FailureKind::DeletedLine, 3));
        assert_eq!(kind_at(&[1, 2, 4, 3, 5]), (FailureKind::ReorderedLines, 3));
        assert_eq!(kind_at(&[1, 3, 4, 2]), (FailureKind::ReorderedLines, 2));
        assert_eq!(kind_at(&[2, 3]), (FailureKind::DeletedLine, 1));
        assert_eq!(kind_at(&[2, 1, 3]), (FailureKind::ReorderedLines, 1));
        assert_eq!(kind_at(&[1, 2, 2, 3]), (FailureKind::InsertedLine, 3));
        let mut t = ChainTracker::new(params(Some(1)));
        feed(&mut t, &[(1, 1), (2, 2), (3, 3)]);
        assert!(t.finish().is_intact());
    }

    #[test]
    fn marks_evidence_after_the_break() {
        let st = ChainStatus::Broken {
            rule: ChainRule::Native,
            lines_checked: 3,
            lines: 9,
            failure: ChainFailure {
                kind: FailureKind::ChangedLine,
                line: 3,
                seq: Some(3),
                message: String::new(),
                unverified_from: 3,
            },
            signatures: SignatureCheck::NotApplicable,
        };
        assert_eq!(st.mark(2), ChainMark::Verified);
        assert_eq!(st.mark(3), ChainMark::Unverified);
        assert_eq!(st.mark(9), ChainMark::Unverified);
        assert_eq!(ChainStatus::no_chain("x").mark(1), ChainMark::NoChain);
    }
}
