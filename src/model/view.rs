//! Borrowed views of a model's executions and events: what every layer
//! above the model reads them through (docs/design.md §9.8).
//!
//! A view is `Copy` and a few words: [`ExecutionRef`] names one execution,
//! [`EventRef`] one of its events, and [`EventRef::kind`] gives what the
//! event records as a [`KindRef`], whose texts are borrowed from where the
//! model holds them. Nothing outside the model sees how it stores them, so
//! that a journal of millions of events can be held in far less room than
//! its events as [`Event`] values would take. [`EventRef::to_event`] and
//! [`ExecutionRef::to_execution`] make owned copies, which are serialized
//! the same way the views are.

use super::{
    ActionRecord, CallRef, Event, EventIdx, EventKind, Execution, JsonRpcId, ObservedVia,
    OutcomeKind, ReaderFacts, Recovery, SourceRef, WrittenFingerprint,
};
use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// One execution of a model, borrowed: its id and its events, in time
/// order (then journal order).
#[derive(Clone, Copy)]
pub struct ExecutionRef<'m> {
    x: &'m Execution,
}

impl fmt::Debug for ExecutionRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.x, f)
    }
}

impl Serialize for ExecutionRef<'_> {
    /// As the owned [`Execution`] is.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.x.serialize(s)
    }
}

impl<'m> From<&'m Execution> for ExecutionRef<'m> {
    fn from(x: &'m Execution) -> Self {
        ExecutionRef { x }
    }
}

impl<'m> ExecutionRef<'m> {
    /// The gateway-created execution id (for journals without one, a
    /// synthetic id naming the journal line of the request).
    pub fn id(self) -> &'m str {
        &self.x.id
    }

    /// How many events the execution has.
    pub fn len(self) -> usize {
        self.x.events.len()
    }

    /// Whether the execution has no events (a model never holds one).
    pub fn is_empty(self) -> bool {
        self.x.events.is_empty()
    }

    /// The events, in time order, then journal order.
    pub fn events(self) -> Events<'m> {
        Events {
            inner: self.x.events.iter(),
        }
    }

    /// The event at a position of [`ExecutionRef::events`].
    ///
    /// # Panics
    /// When `i` is not a position of this execution's events (indexes come
    /// from the analysis of this very model).
    pub fn event(self, i: EventIdx) -> EventRef<'m> {
        EventRef {
            e: &self.x.events[i.get()],
        }
    }

    /// The event at position `i`, if there is one.
    pub fn get(self, i: usize) -> Option<EventRef<'m>> {
        self.x.events.get(i).map(|e| EventRef { e })
    }

    /// The first event.
    pub fn first(self) -> Option<EventRef<'m>> {
        self.get(0)
    }

    /// The last event.
    pub fn last(self) -> Option<EventRef<'m>> {
        self.len().checked_sub(1).and_then(|i| self.get(i))
    }

    /// The `accepted` event, if the journal recorded one: the call that
    /// created the execution (when several layers recorded it, the
    /// outermost's, which comes first), with what it recorded.
    pub fn accepted(self) -> Option<(EventRef<'m>, AcceptanceRef<'m>)> {
        self.events().find_map(|e| match e.kind() {
            KindRef::Accepted(a) => Some((e, a)),
            _ => None,
        })
    }

    /// The canonical action record, if known. When several layers
    /// recorded the call (docs/design.md §5.12), the first record that
    /// holds the tool arguments, else the first: what the call asked for is
    /// best known where the arguments are.
    pub fn action(self) -> Option<&'m ActionRecord> {
        self.x.action()
    }

    /// When the execution began: its `accepted` event, else its first
    /// event. Executions are ordered by it and attach windows measured from
    /// it, so that a stray early event of another kind cannot move them.
    pub fn started_at(self) -> Option<DateTime<Utc>> {
        self.x.started_at()
    }

    /// Time of the first event.
    pub fn first_at(self) -> Option<DateTime<Utc>> {
        self.x.first_at()
    }

    /// Time of the last event.
    pub fn last_at(self) -> Option<DateTime<Utc>> {
        self.x.last_at()
    }

    /// An owned copy.
    pub fn to_execution(self) -> Execution {
        self.x.clone()
    }
}

/// The events of an execution ([`ExecutionRef::events`]), in order.
#[derive(Clone)]
pub struct Events<'m> {
    inner: std::slice::Iter<'m, Event>,
}

impl<'m> Iterator for Events<'m> {
    type Item = EventRef<'m>;

    fn next(&mut self) -> Option<EventRef<'m>> {
        self.inner.next().map(|e| EventRef { e })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.inner.size_hint()
    }
}

impl DoubleEndedIterator for Events<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.inner.next_back().map(|e| EventRef { e })
    }
}

impl ExactSizeIterator for Events<'_> {}

/// One event of an execution, borrowed.
#[derive(Clone, Copy)]
pub struct EventRef<'m> {
    e: &'m Event,
}

impl fmt::Debug for EventRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.e, f)
    }
}

impl Serialize for EventRef<'_> {
    /// As the owned [`Event`] is.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.e.serialize(s)
    }
}

impl<'m> From<&'m Event> for EventRef<'m> {
    fn from(e: &'m Event) -> Self {
        EventRef { e }
    }
}

impl<'m> EventRef<'m> {
    /// When the transition happened (UTC).
    pub fn at(self) -> DateTime<Utc> {
        self.e.at
    }

    /// The journal sequence number (`seq`), if the record had one.
    pub fn seq(self) -> Option<u64> {
        self.e.seq()
    }

    /// Where the event was read: a line of a file, or a row of a table.
    pub fn source(self) -> SourceRef {
        self.e.source
    }

    /// What happened, with what the event records.
    pub fn kind(self) -> KindRef<'m> {
        KindRef::of(&self.e.kind)
    }

    /// The journal spelling of the event name (`accepted`, `outcome`, …).
    pub fn name(self) -> &'static str {
        self.e.kind.name()
    }

    /// The fields of the journal record that retrace does not interpret
    /// ([`Event::extra`]); empty when there were none.
    pub fn extra(self) -> &'m Map<String, Value> {
        self.e.extra()
    }

    /// What the reader established about the event ([`Event::facts`]).
    pub fn facts(self) -> &'m ReaderFacts {
        self.e.facts()
    }

    /// An owned copy.
    pub fn to_event(self) -> Event {
        self.e.clone()
    }
}

/// A JSON-RPC request id, borrowed ([`JsonRpcId`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum JsonRpcIdRef<'m> {
    /// Integer id.
    Num(i64),
    /// String id.
    Str(&'m str),
}

impl JsonRpcIdRef<'_> {
    /// An owned copy.
    pub fn to_owned(self) -> JsonRpcId {
        match self {
            JsonRpcIdRef::Num(n) => JsonRpcId::Num(n),
            JsonRpcIdRef::Str(s) => JsonRpcId::Str(s.to_string()),
        }
    }
}

impl<'m> From<&'m JsonRpcId> for JsonRpcIdRef<'m> {
    fn from(id: &'m JsonRpcId) -> Self {
        match id {
            JsonRpcId::Num(n) => JsonRpcIdRef::Num(*n),
            JsonRpcId::Str(s) => JsonRpcIdRef::Str(s),
        }
    }
}

impl fmt::Display for JsonRpcIdRef<'_> {
    /// As [`JsonRpcId`] is shown: a number bare, a string quoted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonRpcIdRef::Num(n) => write!(f, "{n}"),
            JsonRpcIdRef::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// The protocol correlation of one call ([`CallRef`]), borrowed; serialized
/// as [`CallRef`] is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CallView<'m> {
    /// Gateway-assigned id of this call, unique per call.
    pub call_id: Option<&'m str>,
    /// The agent run (session record) the call belongs to.
    pub session_id: Option<&'m str>,
    /// JSON-RPC request id as the client sent it.
    pub jsonrpc_id: Option<JsonRpcIdRef<'m>>,
    /// MCP session id (`Mcp-Session-Id`), if the transport had one.
    pub mcp_session_id: Option<&'m str>,
    /// Transport name, e.g. `streamable-http` or `stdio`.
    pub transport: Option<&'m str>,
}

impl<'m> From<&'m CallRef> for CallView<'m> {
    fn from(c: &'m CallRef) -> Self {
        CallView {
            call_id: c.call_id.as_deref(),
            session_id: c.session_id.as_deref(),
            jsonrpc_id: c.jsonrpc_id.as_ref().map(JsonRpcIdRef::from),
            mcp_session_id: c.mcp_session_id.as_deref(),
            transport: c.transport.as_deref(),
        }
    }
}

impl CallView<'_> {
    /// An owned copy.
    pub fn to_call_ref(self) -> CallRef {
        CallRef {
            call_id: self.call_id.map(str::to_string),
            session_id: self.session_id.map(Into::into),
            jsonrpc_id: self.jsonrpc_id.map(JsonRpcIdRef::to_owned),
            mcp_session_id: self.mcp_session_id.map(Into::into),
            transport: self.transport.map(Into::into),
        }
    }
}

/// What an `accepted` event records ([`super::Acceptance`]), borrowed.
#[derive(Debug, Clone, Copy)]
pub struct AcceptanceRef<'m> {
    /// The call that created the execution.
    pub call: CallView<'m>,
    /// Canonical action record.
    pub action: &'m ActionRecord,
    /// Fingerprint as the gateway wrote it.
    pub fingerprint: Option<&'m WrittenFingerprint>,
    /// Action class the gateway applied (`irreversible`, ...).
    pub action_class: Option<&'m str>,
    /// Idempotency key the gateway assigned, if any.
    pub idempotency_key: Option<&'m str>,
}

/// What an event records ([`EventKind`]), borrowed: the same kinds with
/// the same fields, texts as `&str`, an outcome's error text and result
/// reference side by side.
#[derive(Debug, Clone, Copy)]
pub enum KindRef<'m> {
    /// The gateway validated the request and created the execution.
    Accepted(AcceptanceRef<'m>),
    /// A later call attached to this execution instead of creating a new one.
    Attached {
        /// The later call.
        call: CallView<'m>,
        /// How the gateway recovered.
        recovery: Recovery,
    },
    /// Authorization allowed the action.
    Authorized {
        /// `session_grant`, `per_use_approval` or `policy_allow`.
        decision: &'m str,
        /// Who approved, for per-use approvals.
        approver: Option<&'m str>,
    },
    /// Authorization refused the action.
    Rejected {
        /// e.g. `vault_locked`, `denied`, `approval_timeout`.
        reason: &'m str,
    },
    /// The gateway handed the action to the HTTP client or SSH helper.
    Dispatched {
        /// The idempotency key sent to the target, if any.
        idempotency_key: Option<&'m str>,
    },
    /// Nothing left the gateway; a retry is safe.
    DispatchFailed {
        /// Why dispatch failed.
        error: &'m str,
    },
    /// The target's answer, or what a status query, marker or late response showed.
    Outcome {
        /// What happened.
        outcome: OutcomeKind,
        /// HTTP status from the target.
        target_status: Option<u16>,
        /// SSH exit status.
        exit_status: Option<i64>,
        /// Error text.
        error: Option<&'m str>,
        /// Reference to the stored result.
        result_reference: Option<&'m str>,
        /// The target said it replayed a stored result for a repeated key.
        replayed: bool,
        /// How the outcome was learned.
        observed_via: ObservedVia,
    },
    /// The agent received the tool result.
    Delivered,
    /// The tool result could not be delivered to the agent.
    DeliveryFailed {
        /// Why delivery failed.
        error: &'m str,
    },
    /// The call was cancelled.
    Cancelled {
        /// `client` or `gateway`.
        by: &'m str,
    },
}

impl<'m> KindRef<'m> {
    /// The view of an owned kind.
    pub fn of(kind: &'m EventKind) -> KindRef<'m> {
        match kind {
            EventKind::Accepted(a) => KindRef::Accepted(AcceptanceRef {
                call: CallView::from(&a.call),
                action: &a.action,
                fingerprint: a.fingerprint.as_ref(),
                action_class: a.action_class.as_deref(),
                idempotency_key: a.idempotency_key.as_deref(),
            }),
            EventKind::Attached { call, recovery } => KindRef::Attached {
                call: CallView::from(&**call),
                recovery: *recovery,
            },
            EventKind::Authorized { decision, approver } => KindRef::Authorized {
                decision,
                approver: approver.as_deref().map(String::as_str),
            },
            EventKind::Rejected { reason } => KindRef::Rejected { reason },
            EventKind::Dispatched { idempotency_key } => KindRef::Dispatched {
                idempotency_key: idempotency_key.as_deref(),
            },
            EventKind::DispatchFailed { error } => KindRef::DispatchFailed { error },
            EventKind::Outcome {
                outcome,
                target_status,
                exit_status,
                texts,
                replayed,
                observed_via,
            } => KindRef::Outcome {
                outcome: *outcome,
                target_status: *target_status,
                exit_status: *exit_status,
                error: texts.error(),
                result_reference: texts.result_reference(),
                replayed: *replayed,
                observed_via: *observed_via,
            },
            EventKind::Delivered => KindRef::Delivered,
            EventKind::DeliveryFailed { error } => KindRef::DeliveryFailed { error },
            EventKind::Cancelled { by } => KindRef::Cancelled { by },
        }
    }

    /// The journal spelling of the event name (`accepted`, `outcome`, …).
    pub fn name(self) -> &'static str {
        match self {
            KindRef::Accepted(_) => "accepted",
            KindRef::Attached { .. } => "attached",
            KindRef::Authorized { .. } => "authorized",
            KindRef::Rejected { .. } => "rejected",
            KindRef::Dispatched { .. } => "dispatched",
            KindRef::DispatchFailed { .. } => "dispatch_failed",
            KindRef::Outcome { .. } => "outcome",
            KindRef::Delivered => "delivered",
            KindRef::DeliveryFailed { .. } => "delivery_failed",
            KindRef::Cancelled { .. } => "cancelled",
        }
    }

    /// The call of an `accepted` or `attached` event.
    pub fn call(self) -> Option<CallView<'m>> {
        match self {
            KindRef::Accepted(a) => Some(a.call),
            KindRef::Attached { call, .. } => Some(call),
            _ => None,
        }
    }

    /// The idempotency key of an `accepted` or `dispatched` event, if it
    /// names one.
    pub fn idempotency_key(self) -> Option<&'m str> {
        match self {
            KindRef::Accepted(a) => a.idempotency_key,
            KindRef::Dispatched { idempotency_key } => idempotency_key,
            _ => None,
        }
    }
}
