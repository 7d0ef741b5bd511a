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

use super::packed::{self, Store};
use super::{
    ActionRecord, Arguments, CallRef, Event, EventIdx, EventKind, Execution, JsonRpcId,
    ObservedVia, OutcomeKind, ReaderFacts, Recovery, SourceRef, WrittenFingerprint, WrittenRef,
};
use chrono::{DateTime, Utc};
use serde::{Serialize, Serializer};
use serde_json::{Map, Value};
use std::fmt;

/// One execution of a model, borrowed: its id and its events, in time
/// order (then journal order).
#[derive(Clone, Copy)]
pub struct ExecutionRef<'m>(XRepr<'m>);

#[derive(Clone, Copy)]
enum XRepr<'m> {
    /// An [`Execution`] value (tests, following journals).
    Owned(&'m Execution),
    /// An execution as a model holds it ([`super::packed`]), its header
    /// read.
    Packed(packed::Parsed<'m>, &'m Store),
}

impl fmt::Debug for ExecutionRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_execution(), f)
    }
}

impl Serialize for ExecutionRef<'_> {
    /// As the owned [`Execution`] is.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_execution().serialize(s)
    }
}

impl<'m> From<&'m Execution> for ExecutionRef<'m> {
    fn from(x: &'m Execution) -> Self {
        ExecutionRef(XRepr::Owned(x))
    }
}

impl<'m> ExecutionRef<'m> {
    /// An execution as a model holds it.
    pub(super) fn packed(bytes: &'m [u8], store: &'m Store) -> Self {
        ExecutionRef(XRepr::Packed(packed::Parsed::of(bytes), store))
    }

    /// The gateway-created execution id (for journals without one, a
    /// synthetic id naming the journal line of the request).
    pub fn id(self) -> &'m str {
        match self.0 {
            XRepr::Owned(x) => &x.id,
            XRepr::Packed(p, _) => p.id(),
        }
    }

    /// How many events the execution has.
    pub fn len(self) -> usize {
        match self.0 {
            XRepr::Owned(x) => x.events.len(),
            XRepr::Packed(p, _) => p.count() as usize,
        }
    }

    /// Whether the execution has no events (a model never holds one).
    pub fn is_empty(self) -> bool {
        self.len() == 0
    }

    /// The events, in time order, then journal order.
    pub fn events(self) -> Events<'m> {
        Events(match self.0 {
            XRepr::Owned(x) => EvRepr::Owned(x.events.iter()),
            XRepr::Packed(p, store) => EvRepr::Packed(p.cursor(), store),
        })
    }

    /// The journal of each event, in order ([`EventRef::source`]'s): for
    /// most executions, read without reading the events, whose sources all
    /// lie in their first event's journal.
    pub fn journals(self) -> impl Iterator<Item = super::JournalId> + 'm {
        let fast = match self.0 {
            XRepr::Packed(p, _) => p.journals(),
            XRepr::Owned(_) => None,
        };
        let slow = fast
            .is_none()
            .then(|| self.events().map(|e| e.source().journal()));
        fast.into_iter().flatten().chain(slow.into_iter().flatten())
    }

    /// The event at a position of [`ExecutionRef::events`].
    ///
    /// # Panics
    /// When `i` is not a position of this execution's events (indexes come
    /// from the analysis of this very model).
    pub fn event(self, i: EventIdx) -> EventRef<'m> {
        match self.get(i.get()) {
            Some(e) => e,
            None => panic!("execution {} has no event {}", self.id(), i.get()),
        }
    }

    /// The event at position `i`, if there is one.
    pub fn get(self, i: usize) -> Option<EventRef<'m>> {
        self.events().nth(i)
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

    /// Whether the journals record the call's tool arguments: full when
    /// any layer's record of the call holds them (the one
    /// [`ExecutionRef::action`] takes), else what its first accepted record
    /// says it lacks; `None` with no accepted record.
    pub fn arguments_recorded(self) -> Option<&'m Arguments> {
        let mut first = None;
        for e in self.events().filter(|e| e.is_accepted()) {
            let a = &e.facts().arguments;
            if *a == Arguments::Full {
                return Some(a);
            }
            first.get_or_insert(a);
        }
        first
    }

    /// The canonical action record, if known. When several layers
    /// recorded the call (docs/design.md §5.12), the first record that
    /// holds the tool arguments, else the first: what the call asked for is
    /// best known where the arguments are.
    pub fn action(self) -> Option<&'m ActionRecord> {
        let mut first = None;
        for e in self.events().filter(|e| e.is_accepted()) {
            let KindRef::Accepted(a) = e.kind() else {
                continue;
            };
            if e.facts().arguments == Arguments::Full {
                return Some(a.action);
            }
            first.get_or_insert(a.action);
        }
        first
    }

    /// When the execution began: its `accepted` event, else its first
    /// event. Executions are ordered by it and attach windows measured from
    /// it, so that a stray early event of another kind cannot move them.
    pub fn started_at(self) -> Option<DateTime<Utc>> {
        self.events()
            .find(|e| e.is_accepted())
            .or_else(|| self.first())
            .map(EventRef::at)
    }

    /// Time of the first event.
    pub fn first_at(self) -> Option<DateTime<Utc>> {
        self.first().map(EventRef::at)
    }

    /// Time of the last event.
    pub fn last_at(self) -> Option<DateTime<Utc>> {
        self.last().map(EventRef::at)
    }

    /// An owned copy.
    pub fn to_execution(self) -> Execution {
        match self.0 {
            XRepr::Owned(x) => x.clone(),
            XRepr::Packed(..) => Execution {
                id: self.id().to_string(),
                events: self.events().map(EventRef::to_event).collect(),
            },
        }
    }
}

/// The events of an execution ([`ExecutionRef::events`]), in order.
#[derive(Clone)]
pub struct Events<'m>(EvRepr<'m>);

#[derive(Clone)]
enum EvRepr<'m> {
    Owned(std::slice::Iter<'m, Event>),
    Packed(packed::Cursor<'m>, &'m Store),
}

impl<'m> Iterator for Events<'m> {
    type Item = EventRef<'m>;

    fn next(&mut self) -> Option<EventRef<'m>> {
        match &mut self.0 {
            EvRepr::Owned(i) => i.next().map(|e| EventRef(ERepr::Owned(e))),
            EvRepr::Packed(c, store) => c.next().map(|h| EventRef(ERepr::Packed(h, store))),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            EvRepr::Owned(i) => i.size_hint(),
            EvRepr::Packed(c, _) => c.size_hint(),
        }
    }

    /// Passes over the events before the one wanted without reading them.
    fn nth(&mut self, n: usize) -> Option<EventRef<'m>> {
        match &mut self.0 {
            EvRepr::Owned(i) => i.nth(n).map(|e| EventRef(ERepr::Owned(e))),
            EvRepr::Packed(c, store) => c.nth(n).map(|h| EventRef(ERepr::Packed(h, store))),
        }
    }
}

impl ExactSizeIterator for Events<'_> {}

/// One event of an execution, borrowed.
#[derive(Clone, Copy)]
pub struct EventRef<'m>(ERepr<'m>);

#[derive(Clone, Copy)]
enum ERepr<'m> {
    Owned(&'m Event),
    Packed(packed::Head<'m>, &'m Store),
}

impl fmt::Debug for EventRef<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_event(), f)
    }
}

impl Serialize for EventRef<'_> {
    /// As the owned [`Event`] is.
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            ERepr::Owned(e) => e.serialize(s),
            ERepr::Packed(..) => self.to_event().serialize(s),
        }
    }
}

impl<'m> From<&'m Event> for EventRef<'m> {
    fn from(e: &'m Event) -> Self {
        EventRef(ERepr::Owned(e))
    }
}

impl<'m> EventRef<'m> {
    /// When the transition happened (UTC).
    pub fn at(self) -> DateTime<Utc> {
        match self.0 {
            ERepr::Owned(e) => e.at,
            ERepr::Packed(h, _) => h.at,
        }
    }

    /// The journal sequence number (`seq`), if the record had one.
    pub fn seq(self) -> Option<u64> {
        match self.0 {
            ERepr::Owned(e) => e.seq(),
            ERepr::Packed(h, _) => h.seq,
        }
    }

    /// Where the event was read: a line of a file, or a row of a table.
    pub fn source(self) -> SourceRef {
        match self.0 {
            ERepr::Owned(e) => e.source,
            ERepr::Packed(h, _) => h.source,
        }
    }

    /// What happened, with what the event records.
    pub fn kind(self) -> KindRef<'m> {
        match self.0 {
            ERepr::Owned(e) => KindRef::of(&e.kind),
            ERepr::Packed(h, store) => packed::kind(&h, store),
        }
    }

    /// Whether it is an `accepted` event (without reading what it records).
    pub fn is_accepted(self) -> bool {
        match self.0 {
            ERepr::Owned(e) => matches!(e.kind, EventKind::Accepted(_)),
            ERepr::Packed(h, _) => packed::is_accepted(h.kind),
        }
    }

    /// The journal spelling of the event name (`accepted`, `outcome`, …).
    pub fn name(self) -> &'static str {
        match self.0 {
            ERepr::Owned(e) => e.kind.name(),
            ERepr::Packed(h, _) => packed::kind_name(h.kind),
        }
    }

    /// The fields of the journal record that retrace does not interpret
    /// ([`Event::extra`]); empty when there were none.
    pub fn extra(self) -> &'m Map<String, Value> {
        static NONE: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        match self.0 {
            ERepr::Owned(e) => e.extra(),
            ERepr::Packed(h, store) => packed::aux_of(&h, store).map_or(&NONE, |a| &a.extra),
        }
    }

    /// What the reader established about the event ([`Event::facts`]).
    pub fn facts(self) -> &'m ReaderFacts {
        match self.0 {
            ERepr::Owned(e) => e.facts(),
            ERepr::Packed(h, store) => {
                packed::aux_of(&h, store).map_or(&super::facts::NO_FACTS, |a| &a.facts)
            }
        }
    }

    /// An owned copy.
    pub fn to_event(self) -> Event {
        match self.0 {
            ERepr::Owned(e) => e.clone(),
            ERepr::Packed(h, store) => packed::to_event(&h, store),
        }
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
    pub fingerprint: Option<WrittenRef<'m>>,
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
                fingerprint: a.fingerprint.as_ref().map(WrittenFingerprint::view),
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
