//! Action items: what to change so that a group's problem does not happen
//! again, derived from its verdict and findings (docs/design.md §5.9). A
//! postmortem lists them; each names the tool, target or execution it is
//! about, in plain words, so that it can be pasted into a ticket as it is.

use super::verdict::{Delivery, LaterCall, Verdict};
use super::{Cause, FindingKind, Group, Lifecycle};
use crate::model::Model;
use serde::Serialize;

/// What kind of change an action item asks for. The snake_case names are
/// stable, for tools that track items across postmortems.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ActionKind {
    /// Find out what the target did with an unknown outcome, and record it.
    SettleOutcome,
    /// Make the gateway attach retries to the open execution.
    AttachRetries,
    /// Send an idempotency key to the target, one per execution.
    SendIdempotencyKey,
    /// One key per execution, not one per attempt.
    StableKey,
    /// Never carry two intents under one key.
    KeyPerIntent,
    /// Return the stored result instead of running the tool again.
    ReturnStoredResult,
    /// Record whether results reach the agent.
    RecordDelivery,
    /// Write the tool's replay contract.
    WriteContract,
    /// Normalize arguments before fingerprinting.
    NormalizeArguments,
    /// Log tool arguments.
    LogArguments,
    /// Bind JSON-RPC ids to one session and one intent.
    FixJsonRpcIds,
    /// A late answer or a cancel after completion is the original's outcome.
    KeepLateOutcomes,
    /// Find out why the target's answers disagree.
    ExplainContradiction,
}

/// One action item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionItem {
    /// What kind of change.
    pub kind: ActionKind,
    /// The item in one sentence, naming what it is about.
    pub text: String,
}

/// The action items of one group, most pressing first, each once.
///
/// `delivery_recorded` says whether the journals of the group record
/// whether results reached the agent.
pub fn action_items(
    model: &Model,
    lifecycles: &[Lifecycle],
    g: &Group,
    delivery_recorded: bool,
) -> Vec<ActionItem> {
    let mut out: Vec<ActionItem> = Vec::new();
    let mut add = |kind, text: String| {
        if !out.iter().any(|i: &ActionItem| i.kind == kind) {
            out.push(ActionItem { kind, text });
        }
    };
    let tool: &str = &g.tool;
    let target = g.target.as_deref().unwrap_or("the target");
    let id = |x: crate::model::ExecIdx| model.execution(x).id();

    // Unknown outcomes first: they may hide a second effect right now.
    for (&x, status) in g.executions.iter().zip(&g.statuses) {
        if *status == Some(Verdict::PendingVerification) {
            add(
                ActionKind::SettleOutcome,
                format!(
                    "Settle the unknown outcome of {}: check {target} for it, then record what it shows with retrace review decide {}.",
                    id(x),
                    id(x)
                ),
            );
        }
        if *status == Some(Verdict::UndeliveredResult) {
            add(
                ActionKind::ReturnStoredResult,
                format!(
                    "Return the stored result of {} to the agent instead of running {tool} again.",
                    id(x)
                ),
            );
        }
    }
    let pair = match &g.cause {
        Cause::Lifecycle(b) => b.pair,
        Cause::KeyConflict { .. } => None,
    };
    let repeated = matches!(
        g.verdict,
        Verdict::DuplicateSideEffect | Verdict::PossibleDuplicate
    );
    if repeated && let Some(p) = pair {
        if matches!(
            p.later,
            LaterCall::NoKey | LaterCall::NewKey | LaterCall::Unknown
        ) {
            add(
                ActionKind::AttachRetries,
                format!(
                    "Make the gateway attach retries of {tool} to the open execution (same fingerprint, actor and intent scope, within the attach window) instead of dispatching a fresh one."
                ),
            );
        }
        let keyed = g.executions.iter().any(|&x| lifecycles[x.get()].has_key());
        if !keyed {
            add(
                ActionKind::SendIdempotencyKey,
                format!(
                    "Send an idempotency key to {target} with every dispatch of {tool}, one per execution, reused only when recovering that execution."
                ),
            );
        }
        if p.delivery == Delivery::NotRecorded || !delivery_recorded {
            add(
                ActionKind::RecordDelivery,
                "Record in the gateway whether each result reached the agent: without it, a deliberate repeat and a retry after a lost result look alike."
                    .to_string(),
            );
        }
    }
    for f in &g.findings {
        match f.kind {
            FindingKind::KeyPerAttempt => add(
                ActionKind::StableKey,
                format!(
                    "Send one idempotency key per execution of {tool}, not one per attempt: a new key on each retry lets {target} act again."
                ),
            ),
            FindingKind::KeyReusedAcrossIntents => add(
                ActionKind::KeyPerIntent,
                format!(
                    "Derive the idempotency keys of {tool} from the execution, not from its arguments: one key carried two different intents."
                ),
            ),
            FindingKind::NoReplayContract => add(
                ActionKind::WriteContract,
                format!(
                    "Write a replay contract for {tool} (action class, attach window, fingerprint fields, defaults); retrace contracts draft proposes one from these journals."
                ),
            ),
            FindingKind::FingerprintDrift => add(
                ActionKind::NormalizeArguments,
                format!(
                    "Normalize the arguments of {tool} before the gateway fingerprints them (one way to write a number: the agent sent one value as a string and as a number), and give an argument that retries leave out a default in its replay contract, so that retries of one intent land in one group."
                ),
            ),
            FindingKind::ArgumentsNotLogged => add(
                ActionKind::LogArguments,
                format!(
                    "Log the arguments of {tool} calls (in the gateway's journal or as span attributes), so that repeats of one intent can be told from distinct intents."
                ),
            ),
            FindingKind::JsonrpcIdReuse => add(
                ActionKind::FixJsonRpcIds,
                "Never reuse a JSON-RPC id within one MCP session for another request: ids identify messages, and a reused one cross-wires answers."
                    .to_string(),
            ),
            FindingKind::LateResponse | FindingKind::CancelAfterCompletion => add(
                ActionKind::KeepLateOutcomes,
                format!(
                    "Treat a late answer or a cancel after completion of {tool} as the outcome of the original execution, not as a failure to retry: the effect stands."
                ),
            ),
            FindingKind::OutcomeContradiction => add(
                ActionKind::ExplainContradiction,
                format!(
                    "Find out why {target} answered one execution of {tool} in two contradicting ways before trusting either answer."
                ),
            ),
            // A link to look at, not something to change; a journal's gap,
            // which the bad lines it reports name.
            FindingKind::FingerprintMismatch
            | FindingKind::NearDuplicate
            | FindingKind::NoAcceptedRecord => {}
        }
    }
    out
}
