//! The chain status of a postmortem's evidence (docs/design.md §6.3:
//! evidence from an unverified or broken span is marked as such).

use super::ChainState;
use crate::model::{JournalId, SourceRef};
use crate::query::{ChainMark, ChainStatus, EvidenceView, Format as JournalFormat, Investigation};
use serde_json::Value;

/// Checks a journal's chain for the evidence lines of a group: given the
/// journal and the cited lines, a status and its words. `retrace verify`
/// can plug in here; [`evidence_chain_verified`] is the default.
pub type ChainCheck<'a> =
    dyn Fn(&Investigation, JournalId, &[SourceRef]) -> (ChainState, String) + 'a;

/// The default chain check: the journal's chain as verified while it was
/// loaded (the same result as `retrace verify`, docs/design.md §6). The cited
/// lines are `intact` when all lie in the verified part of the chain,
/// `broken` when one lies at or after the first failure, `unchained` when
/// the format (or the record, such as a SQLite sessions row) has no chain,
/// `not_verified` when the chain could not be checked.
pub fn evidence_chain_verified(
    inv: &Investigation,
    journal: JournalId,
    lines: &[SourceRef],
) -> (ChainState, String) {
    let Some(j) = inv.journals().get(journal as usize) else {
        return (ChainState::Unchained, "unknown journal".into());
    };
    match &j.chain {
        ChainStatus::NoChain { reason } => (ChainState::Unchained, reason.clone()),
        ChainStatus::NotChecked { reason, .. } => (ChainState::NotVerified, reason.clone()),
        ChainStatus::Intact { .. } => {
            if lines
                .iter()
                .all(|&l| j.chain_mark(l) == ChainMark::Verified)
            {
                (ChainState::Intact, j.chain.summary())
            } else {
                (
                    ChainState::Unchained,
                    "some cited records lie outside the journal's chain".into(),
                )
            }
        }
        ChainStatus::Broken { failure, .. } => {
            let mut after: Vec<u32> = lines
                .iter()
                .filter(|&&l| j.chain_mark(l) == ChainMark::Unverified)
                .map(|l| l.position())
                .collect();
            after.sort_unstable();
            after.dedup();
            if after.is_empty() {
                (
                    ChainState::Intact,
                    format!(
                        "the cited lines lie before the chain break at line {} ({}); they verified",
                        failure.line, failure.kind
                    ),
                )
            } else {
                (
                    ChainState::Broken,
                    format!(
                        "cited line(s) {} lie at or after the chain break at line {} ({}): unverified",
                        after
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", "),
                        failure.line,
                        failure.kind
                    ),
                )
            }
        }
    }
}

/// A chain check that only looks at whether the cited lines carry the
/// native chain fields (`prev_hash`, `hash`, docs/design.md §6), without
/// verifying them; formats without a chain are `unchained`.
pub fn evidence_chain_fields(
    inv: &Investigation,
    journal: JournalId,
    lines: &[SourceRef],
) -> (ChainState, String) {
    let Some(j) = inv.journals().get(journal as usize) else {
        return (ChainState::Unchained, "unknown journal".into());
    };
    if j.format != JournalFormat::Native {
        return (
            ChainState::Unchained,
            format!("{} has no hash chain", j.format.describe()),
        );
    }
    // Session records carry no seq and sit outside the event chain.
    let (mut events, mut chained) = (0usize, 0usize);
    for &s in lines {
        let v = inv
            .raw_line(s)
            .ok()
            .and_then(|l| serde_json::from_str::<Value>(&l).ok());
        let Some(v) = v else { continue };
        if v.get("seq").is_none() {
            continue;
        }
        events += 1;
        chained += usize::from(v.get("hash").is_some() && v.get("prev_hash").is_some());
    }
    match chained {
        0 => (
            ChainState::Unchained,
            "the lines carry no hash chain: they cannot be shown unaltered".into(),
        ),
        n if n == events => (
            ChainState::NotVerified,
            format!(
                "{n} cited event lines carry chain fields; this export does not check them: run `retrace verify`"
            ),
        ),
        n => (
            ChainState::NotVerified,
            format!(
                "only {n} of {events} cited event lines carry chain fields; run `retrace verify`"
            ),
        ),
    }
}

/// The mark after a citation of evidence that no verified chain covers
/// (docs/design.md §6: evidence from an unverified or broken span is marked as
/// such everywhere it shows), as `retrace investigate` writes it:
/// ` [UNVERIFIED: at or after the chain break at line 7]`, or, for a
/// chain that could not be checked, ` [UNVERIFIED: chain not checked]`.
/// Empty for verified or unchained evidence.
pub fn unverified_mark(inv: &Investigation, v: &EvidenceView) -> String {
    if v.chain != ChainMark::Unverified {
        return String::new();
    }
    match inv.chain_of(v.source) {
        Some(ChainStatus::Broken { failure, .. }) => format!(
            " [UNVERIFIED: at or after the chain break at line {}]",
            failure.line
        ),
        Some(ChainStatus::NotChecked { .. }) => " [UNVERIFIED: chain not checked]".into(),
        _ => " [UNVERIFIED]".into(),
    }
}
