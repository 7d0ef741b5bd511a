//! Reviewer resolutions of unknown outcomes (docs/design.md §5.7: a reviewer sees the original
//! activity record and states what the target shows).
//!
//! A resolution is an input to analysis, like a journal: where an
//! execution's outcome is unknown (or rests on a pairing by position that
//! may be another call's), `confirmed_completed` makes it performed and
//! `confirmed_not_executed` makes it not performed; where a completed
//! execution's delivery is not recorded, `confirmed_delivered` and
//! `confirmed_not_delivered` say whether the result reached the agent. So
//! verdicts update (`possible_duplicate` becomes `duplicate_side_effect`,
//! `safe_retry` or `distinct_intent`). A resolution never overrides what the
//! journal shows; `escalated` changes nothing. Every view says who resolved
//! it and when (docs/design.md §5.8).

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
    /// The agent received the completed execution's result.
    ConfirmedDelivered,
    /// The completed execution's result never reached the agent.
    ConfirmedNotDelivered,
    /// Handed on; the outcome stays unknown.
    Escalated,
}

/// What a decision settles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Settles {
    /// What the target did.
    Outcome,
    /// Whether the result reached the agent.
    Delivery,
    /// Nothing (an escalation).
    Nothing,
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
    /// What the decision settles.
    pub fn settles(self) -> Settles {
        match self {
            Decision::ConfirmedCompleted | Decision::ConfirmedNotExecuted => Settles::Outcome,
            Decision::ConfirmedDelivered | Decision::ConfirmedNotDelivered => Settles::Delivery,
            Decision::Escalated => Settles::Nothing,
        }
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
