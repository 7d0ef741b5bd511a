//! The classification engine every chain rule shares: [`ChainTracker`]
//! judges each line from the facts its rule computed ([`LinkInput`]) and
//! tells the first failure apart by kind (see the table in [`super`]).

use super::{ChainFailure, ChainRule, ChainStatus, FailureKind, SignatureCheck};

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
///
/// Hashes are compared as bytes (most are hex text; a rule's reader need
/// not check a hash is text before the tracker compares it). Messages
/// quote them as text, any bytes that are not UTF-8 replaced.
#[derive(Debug, Clone)]
pub struct LinkInput<'a> {
    /// 1-based line.
    pub line: u32,
    /// The line's sequence number, for rules that have one.
    pub seq: Option<u64>,
    /// The link the line claims (its `prev_hash`).
    pub prev: &'a [u8],
    /// The hash the line stores for itself, for rules that store one.
    pub stored: Option<&'a [u8]>,
    /// The line's hash as recomputed (for rules without a stored hash: the
    /// hash the next line must link to).
    pub computed: &'a [u8],
    /// False for a final line with no newline.
    pub terminated: bool,
    /// The signature check of the line.
    pub sig: SigResult,
}

/// A run of lines for [`ChainTracker::link_run`], which the caller has
/// checked against each other.
#[derive(Debug, Clone, Copy)]
pub struct Run<'a> {
    /// How many lines the run has (at least one).
    pub lines: u64,
    /// The run's last line (1-based).
    pub last_line: u32,
    /// The last line's `seq`.
    pub last_seq: Option<u64>,
    /// The last line's stored hash: what the line after the run must link
    /// to.
    pub last: &'a [u8],
    /// The stored hash of the line before the last (the line linked last,
    /// for a run of one): what the last line linked to.
    pub before_last: &'a [u8],
}

/// The genesis `prev_hash` of the native rule (docs/design.md §6), which the
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
    /// The native rule (docs/design.md §6): genesis [`GENESIS`], `seq`
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
    Want { want: Vec<u8> },
}

/// The shared chain classification engine. Feed it every chained line in
/// journal order with [`ChainTracker::link`] (or [`ChainTracker::unreadable`]
/// for a line that cannot be read as a chained record), then call
/// [`ChainTracker::finish`].
#[derive(Debug)]
pub struct ChainTracker {
    params: RuleParams,
    /// What the next line must link to.
    expected: Vec<u8>,
    /// What the line before the last one was linked by (for fork detection).
    before_last: Option<Vec<u8>>,
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
            expected: params.genesis.as_bytes().to_vec(),
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

    /// What the next line must link to, while the chain is intact, has
    /// begun and leaves nothing pending; `None` otherwise.
    pub fn expects(&self) -> Option<&[u8]> {
        (self.failure.is_none() && self.pending.is_none() && self.last_line.is_some())
            .then_some(self.expected.as_slice())
    }

    /// The `seq` of the last line linked that had one.
    pub fn last_seq(&self) -> Option<u64> {
        self.last_seq
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

        let short = |h: &[u8]| -> String { String::from_utf8_lossy(h).chars().take(12).collect() };
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
                            short(self.params.genesis.as_bytes())
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
                            want: l.prev.to_vec(),
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
                    short(l.stored.unwrap_or_default()),
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
        // The two hashes' buffers are swapped and refilled, not
        // allocated anew for every line.
        let mut last = self.before_last.take().unwrap_or_default();
        std::mem::swap(&mut last, &mut self.expected);
        self.expected.clear();
        self.expected.extend_from_slice(target);
        self.before_last = Some(last);
        self.last_line = Some(l.line);
        if l.seq.is_some() {
            self.last_seq = l.seq;
        } else {
            self.unsequenced = true;
        }
    }

    /// Takes at once a run of `run.lines` chained lines that come right
    /// after the line linked last and that the caller has checked against
    /// each other (the native verify checks them on every core, where the
    /// lines' bytes were just hashed; docs/design.md §6.8): each ends with a
    /// newline, stores the hash recomputed from it, has no signature to
    /// check, and links to the stored hash of the line before it (the
    /// first, to the line linked last, whose stored hash the tracker
    /// expects), with `seq` one more than that line's, or with no `seq`
    /// where that line had none either.
    ///
    /// [`ChainTracker::link`] would find nothing wrong with such lines, and
    /// keep of them only their count and the last two: so does this.
    /// Returns false and takes nothing once the chain has broken (each line
    /// after a break may settle what the break left pending, so the caller
    /// links them one by one).
    pub fn link_run(&mut self, run: Run<'_>) -> bool {
        if self.failure.is_some() || self.last_line.is_none() || run.lines == 0 {
            return false;
        }
        self.total += run.lines;
        self.checked += run.lines;
        let mut before = self.before_last.take().unwrap_or_default();
        before.clear();
        before.extend_from_slice(run.before_last);
        self.before_last = Some(before);
        self.expected.clear();
        self.expected.extend_from_slice(run.last);
        self.last_line = Some(run.last_line);
        if run.last_seq.is_some() {
            self.last_seq = run.last_seq;
        } else {
            self.unsequenced = true;
        }
        true
    }

    fn resolve_pending(&mut self, l: &LinkInput<'_>, target: &[u8]) {
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
