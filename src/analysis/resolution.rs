//! Reviewer resolutions of unknown outcomes (docs/design.md §5.7: a reviewer sees the original
//! activity record and states what the target shows).
//!
//! A resolution is an input to analysis, like a journal: where an
//! execution's outcome is unknown, `confirmed_completed` makes it performed
//! and `confirmed_not_executed` makes it not performed, so that verdicts
//! update (`possible_duplicate` becomes `duplicate_side_effect` or
//! `safe_retry`). A resolution never overrides an outcome the journal shows;
//! `escalated` changes nothing. Every view says who resolved it and when.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// A reviewer's decision about one execution.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::Display,
    strum::EnumString,
    strum::VariantArray,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Decision {
    /// The target shows the action happened.
    ConfirmedCompleted,
    /// The target shows it did not happen: safe to dispatch once more.
    ConfirmedNotExecuted,
    /// Handed on; the outcome stays unknown.
    Escalated,
}

impl Decision {
    /// Every decision.
    pub const ALL: &'static [Decision] = <Decision as strum::VariantArray>::VARIANTS;
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
    /// Parses the snake_case name.
    pub fn parse(s: &str) -> Option<Decision> {
        s.parse().ok()
    }
}

/// One reviewer decision, as analysis consumes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resolution {
    /// Execution the decision is about.
    pub execution_id: String,
    /// What the reviewer decided.
    pub decision: Decision,
    /// Who decided.
    pub reviewer: String,
    /// When (UTC).
    pub at: DateTime<Utc>,
    /// The reviewer's note (required when deciding).
    pub note: String,
    /// Where the decision is recorded, e.g. `case.sqlite entry 3`.
    pub source: String,
}
