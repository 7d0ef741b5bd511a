//! Plain data: calls, executions, sessions and the lifecycle events that
//! journals record. No I/O lives here; readers in [`crate::journal`] produce
//! these values and [`crate::analysis`] interprets them.
//!
//! Vocabulary follows docs/design.md §1–§3: a *call* is one protocol-level request,
//! an *execution* is one accepted attempt named by a gateway-created
//! execution id, and an *event* is one lifecycle transition of an execution.

mod action;
mod builder;
mod facts;
mod hint;
mod ids;
mod index;
mod join;
mod packed;
mod pool;
mod source;
mod view;
mod written;

pub use action::{ActionRecord, NON_SEMANTIC_ARGUMENTS, NON_SEMANTIC_FIELDS};
pub use builder::{Growth, Model, ModelBuilder, Record};
pub use facts::{Arguments, Layer, Link, Pairing, ReaderFacts};
pub use hint::{ToolHint, ToolHints};
pub use index::{EventIdx, ExecIdx, GroupIdx, SessionIdx};
pub use join::JOIN_WINDOW;
pub(crate) use pool::Pool;
pub use source::{LineOffset, SourceRef, Table};
pub use view::{AcceptanceRef, CallView, EventRef, Events, ExecutionRef, JsonRpcIdRef, KindRef};
pub use written::{WrittenFingerprint, WrittenRef};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;

/// The hash map of the hot paths (model building, grouping): foldhash
/// instead of SipHash. Its keys come from journals, but foldhash's
/// `RandomState` is seeded per process, so a journal cannot be crafted in
/// advance to make its keys collide; and retrace is a local, offline tool
/// reading journals its user chose, where the worst a hostile journal could
/// do anyway is to be large.
pub type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// Index of a journal in the loaded set (see [`crate::journal::LoadedJournal`]):
/// two bytes, as every event's [`SourceRef`] holds one, so a set is at most
/// 65,536 journals (a load of more is refused).
pub type JournalId = u16;

/// A JSON-RPC request id: a string or an integer (MCP forbids `null`,
/// `schema/2025-11-25` `RequestId`). Used only for protocol correlation, never
/// as a grouping key (docs/design.md §1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(untagged)]
pub enum JsonRpcId {
    /// Integer id.
    Num(i64),
    /// String id.
    Str(String),
}

impl JsonRpcId {
    /// Reads an id from a JSON value; `null`, floats and other types give `None`.
    pub fn from_value(v: &Value) -> Option<JsonRpcId> {
        match v {
            Value::Number(n) => n.as_i64().map(JsonRpcId::Num),
            Value::String(s) => Some(JsonRpcId::Str(s.clone())),
            _ => None,
        }
    }
}

impl fmt::Display for JsonRpcId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JsonRpcId::Num(n) => write!(f, "{n}"),
            JsonRpcId::Str(s) => write!(f, "{s:?}"),
        }
    }
}

/// Protocol correlation of one call (docs/design.md §3 `call`): who sent it and how.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CallRef {
    /// Gateway-assigned id of this call, unique per call.
    pub call_id: Option<String>,
    /// The agent run (session record) the call belongs to. Shared: the
    /// calls of one run hold one copy ([`ModelBuilder`] shares it).
    pub session_id: Option<Arc<str>>,
    /// JSON-RPC request id as the client sent it.
    pub jsonrpc_id: Option<JsonRpcId>,
    /// MCP session id (`Mcp-Session-Id`), if the transport had one; shared.
    pub mcp_session_id: Option<Arc<str>>,
    /// Transport name, e.g. `streamable-http` or `stdio`; shared.
    pub transport: Option<Arc<str>>,
}

/// How a later call was handled when it attached to an existing execution
/// (docs/design.md §3 `attached.recovery`; docs/design.md §5.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Recovery {
    /// The accepted-but-not-dispatched execution was continued.
    Continued,
    /// The gateway queried the target's status instead of dispatching again.
    QueriedStatus,
    /// The stored result of a completed execution was returned.
    ReturnedStoredResult,
    /// The earlier authorization refusal was returned.
    ReturnedRejection,
    /// The call waits for a reviewer because the outcome is unknown.
    AwaitingReview,
}

impl Recovery {
    /// Parses the journal spelling.
    pub fn parse(s: &str) -> Option<Recovery> {
        Some(match s {
            "continued" => Recovery::Continued,
            "queried_status" => Recovery::QueriedStatus,
            "returned_stored_result" => Recovery::ReturnedStoredResult,
            "returned_rejection" => Recovery::ReturnedRejection,
            "awaiting_review" => Recovery::AwaitingReview,
            _ => return None,
        })
    }
    /// The journal spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Recovery::Continued => "continued",
            Recovery::QueriedStatus => "queried_status",
            Recovery::ReturnedStoredResult => "returned_stored_result",
            Recovery::ReturnedRejection => "returned_rejection",
            Recovery::AwaitingReview => "awaiting_review",
        }
    }
}

/// What the target said happened (docs/design.md §3 `outcome.outcome`). `Unknown`
/// never means "did nothing" (docs/design.md §2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    /// The target performed the action.
    Success,
    /// The target answered with an error.
    Failure,
    /// The target has no record of the action (from a status query).
    NotExecuted,
    /// The gateway could not tell.
    Unknown,
}

impl OutcomeKind {
    /// Parses the journal spelling.
    pub fn parse(s: &str) -> Option<OutcomeKind> {
        Some(match s {
            "success" => OutcomeKind::Success,
            "failure" => OutcomeKind::Failure,
            "not_executed" => OutcomeKind::NotExecuted,
            "unknown" => OutcomeKind::Unknown,
            _ => return None,
        })
    }
    /// The journal spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Success => "success",
            OutcomeKind::Failure => "failure",
            OutcomeKind::NotExecuted => "not_executed",
            OutcomeKind::Unknown => "unknown",
        }
    }
}

/// How the gateway learned the outcome (docs/design.md §3 `observed_via`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ObservedVia {
    /// The target's direct response to the dispatch.
    Response,
    /// A later status query against the target.
    StatusQuery,
    /// A durable marker written by the remote command (docs/design.md §2.3).
    DurableMarker,
    /// A response that arrived after the gateway had stopped waiting.
    LateResponse,
}

impl ObservedVia {
    /// Parses the journal spelling.
    pub fn parse(s: &str) -> Option<ObservedVia> {
        Some(match s {
            "response" => ObservedVia::Response,
            "status_query" => ObservedVia::StatusQuery,
            "durable_marker" => ObservedVia::DurableMarker,
            "late_response" => ObservedVia::LateResponse,
            _ => return None,
        })
    }
    /// The journal spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ObservedVia::Response => "response",
            ObservedVia::StatusQuery => "status_query",
            ObservedVia::DurableMarker => "durable_marker",
            ObservedVia::LateResponse => "late_response",
        }
    }
}

/// What an `accepted` event records (docs/design.md §3 table): the call
/// that created the execution, the action it asked for, and what the
/// gateway stamped on it. Kept out of line by [`EventKind::Accepted`]:
/// an execution has one accepted event among several others, and every
/// event is as large as its largest kind.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Acceptance {
    /// The call that created the execution.
    pub call: CallRef,
    /// Canonical action record.
    pub action: ActionRecord,
    /// Fingerprint as the gateway wrote it (`hmac-sha256:<hex>` or
    /// `sha256:<hex>`), held as its digest when it has that form.
    pub fingerprint: Option<WrittenFingerprint>,
    /// Action class the gateway applied (`irreversible`, ...); shared, as
    /// the call's session and transport are.
    pub action_class: Option<Arc<str>>,
    /// Idempotency key the gateway assigned, if any.
    pub idempotency_key: Option<String>,
}

/// The error text and the result reference of an `outcome`
/// ([`EventKind::Outcome`]), in one box, and nothing at all when the
/// outcome has neither: two boxed strings inline would make every event of
/// every kind 16 bytes larger (docs/design.md §9.8).
///
/// Serialized as two fields, `error` and `result_reference`, `null` when
/// absent, in the place of the outcome's fields where it stands.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OutcomeTexts(Option<Box<OutcomeText>>);

#[derive(Debug, Clone, PartialEq, Eq)]
struct OutcomeText {
    error: Option<Box<str>>,
    result_reference: Option<Box<str>>,
}

impl OutcomeTexts {
    /// The texts of an outcome with this error text and result reference.
    pub fn new(error: Option<String>, result_reference: Option<String>) -> OutcomeTexts {
        if error.is_none() && result_reference.is_none() {
            return OutcomeTexts(None);
        }
        OutcomeTexts(Some(Box::new(OutcomeText {
            error: error.map(String::into_boxed_str),
            result_reference: result_reference.map(String::into_boxed_str),
        })))
    }

    /// The error text, if the outcome has one.
    pub fn error(&self) -> Option<&str> {
        self.0.as_ref().and_then(|t| t.error.as_deref())
    }

    /// The reference to the stored result, if the outcome has one.
    pub fn result_reference(&self) -> Option<&str> {
        self.0.as_ref().and_then(|t| t.result_reference.as_deref())
    }
}

impl Serialize for OutcomeTexts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("error", &self.error())?;
        m.serialize_entry("result_reference", &self.result_reference())?;
        m.end()
    }
}

/// One lifecycle transition with its kind-specific fields (docs/design.md §3 table).
///
/// At most 32 bytes (a test holds it to that): what a kind records beyond
/// a few words is boxed or shared, so that the events of every other kind
/// stay small.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    /// The gateway validated the request and created the execution: the
    /// call, its action and the gateway's stamps, boxed ([`Acceptance`]).
    Accepted(Box<Acceptance>),
    /// A later call attached to this execution instead of creating a new one.
    Attached {
        /// The later call (boxed: most events are of other kinds, and
        /// every event is as large as the largest kind).
        call: Box<CallRef>,
        /// How the gateway recovered.
        recovery: Recovery,
    },
    /// Authorization allowed the action.
    Authorized {
        /// `session_grant`, `per_use_approval` or `policy_allow`; shared
        /// by the events that name the same decision (the builder pools it).
        decision: Arc<str>,
        /// Who approved, for per-use approvals. A thin box, one word: a
        /// boxed `str` is two and would make every event 8 bytes larger.
        approver: Option<Box<String>>,
    },
    /// Authorization refused the action.
    Rejected {
        /// e.g. `vault_locked`, `denied`, `approval_timeout`.
        reason: String,
    },
    /// The gateway handed the action to the HTTP client or SSH helper.
    Dispatched {
        /// The idempotency key sent to the target, if any.
        idempotency_key: Option<String>,
    },
    /// Nothing left the gateway; a retry is safe.
    DispatchFailed {
        /// Why dispatch failed.
        error: String,
    },
    /// The target's answer, or what a status query, marker or late response showed.
    Outcome {
        /// What happened.
        outcome: OutcomeKind,
        /// HTTP status from the target.
        target_status: Option<u16>,
        /// SSH exit status.
        exit_status: Option<i64>,
        /// Error text and reference to the stored result, in one box
        /// ([`OutcomeTexts`]); serialized in place as `error` and
        /// `result_reference`.
        #[serde(flatten)]
        texts: OutcomeTexts,
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
        error: String,
    },
    /// The call was cancelled.
    Cancelled {
        /// `client` or `gateway`.
        by: String,
    },
}

impl EventKind {
    /// An `outcome` seen in the target's response, with no HTTP or exit
    /// status and no replay: what readers of MCP-level logs record (a
    /// `tools/call` result or error). `result_reference` says where the
    /// response is (`line 12`).
    pub fn response_outcome(
        outcome: OutcomeKind,
        error: Option<String>,
        result_reference: Option<String>,
    ) -> EventKind {
        EventKind::Outcome {
            outcome,
            target_status: None,
            exit_status: None,
            texts: OutcomeTexts::new(error, result_reference),
            replayed: false,
            observed_via: ObservedVia::Response,
        }
    }

    /// The call of an `accepted` or `attached` event.
    pub fn call(&self) -> Option<&CallRef> {
        match self {
            EventKind::Accepted(a) => Some(&a.call),
            EventKind::Attached { call, .. } => Some(call),
            _ => None,
        }
    }

    /// The idempotency key of an `accepted` or `dispatched` event, if it
    /// names one.
    pub fn idempotency_key(&self) -> Option<&str> {
        match self {
            EventKind::Accepted(a) => a.idempotency_key.as_deref(),
            EventKind::Dispatched { idempotency_key } => idempotency_key.as_deref(),
            _ => None,
        }
    }

    /// The journal spelling of the event name.
    pub fn name(&self) -> &'static str {
        match self {
            EventKind::Accepted(_) => "accepted",
            EventKind::Attached { .. } => "attached",
            EventKind::Authorized { .. } => "authorized",
            EventKind::Rejected { .. } => "rejected",
            EventKind::Dispatched { .. } => "dispatched",
            EventKind::DispatchFailed { .. } => "dispatch_failed",
            EventKind::Outcome { .. } => "outcome",
            EventKind::Delivered => "delivered",
            EventKind::DeliveryFailed { .. } => "delivery_failed",
            EventKind::Cancelled { .. } => "cancelled",
        }
    }
}

/// A journal sequence number that may be absent: an `Option<u64>` in 12
/// bytes of 4-byte alignment instead of 16 of 8, so that it packs with
/// [`Event::at`] (docs/design.md §9.8). Serialized and debug-printed as
/// the option.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Seq {
    known: bool,
    low: u32,
    high: u32,
}

impl Seq {
    fn new(seq: Option<u64>) -> Seq {
        match seq {
            // Halves of the number: the casts keep 32 bits each, on purpose.
            Some(n) => Seq {
                known: true,
                low: n as u32,
                high: (n >> 32) as u32,
            },
            None => Seq::default(),
        }
    }

    fn get(self) -> Option<u64> {
        self.known
            .then(|| u64::from(self.high) << 32 | u64::from(self.low))
    }
}

impl fmt::Debug for Seq {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.get().fmt(f)
    }
}

impl Serialize for Seq {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.get().serialize(s)
    }
}

/// What few events carry beyond their kind: the journal record's unknown
/// fields and the reader's facts, in one box, and nothing at all when an
/// event has neither. Serialized in place as `extra` and `facts`, each only
/// when there is something in it.
#[derive(Debug, Clone, Default, PartialEq)]
struct Aux(Option<Box<AuxData>>);

#[derive(Debug, Clone, Default, PartialEq)]
struct AuxData {
    extra: Map<String, Value>,
    facts: ReaderFacts,
}

impl Aux {
    /// The box, made when missing, to be written into; [`Aux::settle`]
    /// drops it again if it was left empty.
    fn data(&mut self) -> &mut AuxData {
        self.0.get_or_insert_with(Box::default)
    }

    fn settle(&mut self) {
        if self
            .0
            .as_ref()
            .is_some_and(|d| d.extra.is_empty() && d.facts.is_empty())
        {
            self.0 = None;
        }
    }
}

impl Serialize for Aux {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        if let Some(d) = &self.0 {
            if !d.extra.is_empty() {
                m.serialize_entry("extra", &d.extra)?;
            }
            if !d.facts.is_empty() {
                m.serialize_entry("facts", &d.facts)?;
            }
        }
        m.end()
    }
}

/// One lifecycle event of one execution, with where it came from.
///
/// What a reader makes of a record, and what a model gives back
/// ([`EventRef::to_event`]); a model holds its events encoded
/// (docs/design.md §9.8). 80 bytes (a test holds it to that): readers make
/// them a batch of lines at a time, and following journals holds those of
/// the executions in its window, so what only some events carry is kept
/// out of line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Event {
    /// Journal sequence number (`seq`), contiguous from 1 in native
    /// journals; read it with [`Event::seq`].
    seq: Seq,
    /// When the transition happened (UTC).
    pub at: DateTime<Utc>,
    /// What happened.
    #[serde(flatten)]
    pub kind: EventKind,
    /// The fields of the journal record that retrace does not interpret
    /// ([`Event::extra`]) and what the reader established about the event
    /// ([`Event::facts`]).
    #[serde(flatten)]
    aux: Aux,
    /// Where the event was read: a line of a file, or a row of a table.
    pub source: SourceRef,
}

impl Event {
    /// An event with no journal `seq`, no unknown fields and no reader facts.
    pub fn new(at: DateTime<Utc>, kind: EventKind, source: SourceRef) -> Event {
        Event {
            seq: Seq::default(),
            at,
            kind,
            aux: Aux::default(),
            source,
        }
    }

    /// The journal sequence number (`seq`), if the record had one.
    pub fn seq(&self) -> Option<u64> {
        self.seq.get()
    }

    /// The event with this journal sequence number.
    pub fn with_seq(mut self, seq: Option<u64>) -> Event {
        self.seq = Seq::new(seq);
        self
    }

    /// The event with these fields kept for display ([`Event::extra`]).
    pub fn with_extra(mut self, extra: Map<String, Value>) -> Event {
        self.set_extra(extra);
        self
    }

    /// Keeps these fields for display ([`Event::extra`]), in place of
    /// those kept before.
    pub fn set_extra(&mut self, extra: Map<String, Value>) {
        self.aux.data().extra = extra;
        self.aux.settle();
    }

    /// Fields of the journal record that retrace does not interpret, kept
    /// and shown as written (docs/design.md §3): every unknown field of a
    /// native journal, and what other readers pass through for display.
    /// Never read by analysis, so a journal line cannot choose a verdict
    /// through it. Empty when there were none.
    pub fn extra(&self) -> &Map<String, Value> {
        static NONE: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
        self.aux.0.as_ref().map_or(&NONE, |d| &d.extra)
    }

    /// The event with these reader facts.
    pub fn with_facts(mut self, facts: ReaderFacts) -> Event {
        self.set_facts(facts);
        self
    }

    /// Keeps these reader facts ([`Event::facts`]), in place of those
    /// kept before.
    pub fn set_facts(&mut self, facts: ReaderFacts) {
        self.aux.data().facts = facts;
        self.aux.settle();
    }

    /// What the reader established about the event ([`ReaderFacts`]); the
    /// default facts when it established nothing.
    pub fn facts(&self) -> &ReaderFacts {
        self.aux.0.as_ref().map_or(&facts::NO_FACTS, |d| &d.facts)
    }

    /// The reader facts to be amended in place, when the event has any
    /// (an event with none has nothing to amend).
    pub fn facts_mut(&mut self) -> Option<&mut ReaderFacts> {
        self.aux
            .0
            .as_mut()
            .map(|d| &mut d.facts)
            .filter(|f| !f.is_empty())
    }
}

/// Process identity of an agent run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProcessInfo {
    /// OS process id.
    pub pid: Option<i64>,
    /// Executable or display name.
    pub name: Option<String>,
    /// Process start time; with `pid` it names one process instance.
    pub started_at: Option<DateTime<Utc>>,
    /// An id naming one process instance by itself (OpenTelemetry's
    /// `service.instance.id`, a UUID per process start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

/// One agent run: a process instance with its authorization (docs/design.md §3
/// session record; docs/design.md §3.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Session {
    /// Session id that calls refer to.
    pub session_id: String,
    /// Authenticated caller identity.
    pub actor: Option<String>,
    /// Process identity, if the journal recorded it.
    pub process: Option<ProcessInfo>,
    /// MCP session id used by this run.
    pub mcp_session_id: Option<String>,
    /// Client name and version, e.g. `example-agent/1.4`.
    pub client: Option<String>,
    /// How the run was authorized, e.g. `per_session`.
    pub authorization: Option<String>,
    /// Run start.
    pub started_at: Option<DateTime<Utc>>,
    /// Run end.
    pub ended_at: Option<DateTime<Utc>>,
    /// Why the run ended, e.g. `disconnected`.
    pub end_reason: Option<String>,
    /// Unrecognised fields, kept.
    #[serde(skip_serializing_if = "Map::is_empty")]
    pub extra: Map<String, Value>,
    /// Where the record came from.
    pub source: SourceRef,
}

impl Session {
    /// A key naming the OS process instance behind this run, when known:
    /// `instance:<id>` for a recorded instance id, else `pid@started_at`,
    /// or the pid alone as a weaker identity.
    pub fn process_key(&self) -> Option<String> {
        let p = self.process.as_ref()?;
        if let Some(i) = &p.instance {
            return Some(format!("instance:{i}"));
        }
        match (p.pid, p.started_at) {
            (Some(pid), Some(at)) => Some(format!("{pid}@{}", at.to_rfc3339())),
            (Some(pid), None) => Some(format!("pid:{pid}")),
            _ => None,
        }
    }
}

/// Whether a call created its execution or attached to an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallRole {
    /// The call created the execution (its `accepted` event).
    Created,
    /// The call attached to an existing execution.
    Attached(Recovery),
}

/// One protocol-level call as seen by the gateway: where its `accepted` or
/// `attached` event is ([`Model::call_ref`] gives its protocol
/// correlation, kept once, in the event). 24 bytes: a model holds one for
/// every call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Call {
    /// When the gateway received it.
    pub at: DateTime<Utc>,
    /// Created or attached.
    pub role: CallRole,
    /// The execution, a position in [`Model::executions`].
    pub execution: ExecIdx,
    /// The event, a position in that execution's events.
    pub event: EventIdx,
}

/// One accepted attempt to perform a tool action, with its events in time order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Execution {
    /// Gateway-created execution id (for journals without one, a synthetic id
    /// naming the journal line of the request).
    pub id: String,
    /// Events sorted by time, then by journal order.
    pub events: Vec<Event>,
}

impl Execution {
    /// This execution seen as a model's executions are ([`ExecutionRef`]).
    pub fn view(&self) -> ExecutionRef<'_> {
        ExecutionRef::from(self)
    }

    /// The event at a position of [`Execution::events`].
    ///
    /// # Panics
    /// When `i` is not a position of this execution's events (indexes come
    /// from the analysis of this very model).
    pub fn event(&self, i: EventIdx) -> &Event {
        &self.events[i.get()]
    }

    /// The `accepted` event, if the journal recorded one: the call that
    /// created the execution (when several layers recorded it, the
    /// outermost's, which comes first).
    pub fn accepted(&self) -> Option<(&Event, &CallRef, &ActionRecord)> {
        self.events.iter().find_map(|e| match &e.kind {
            EventKind::Accepted(a) => Some((e, &a.call, &a.action)),
            _ => None,
        })
    }
    /// The canonical action record, if known. When several layers
    /// recorded the call (docs/design.md §5.12), the first record that
    /// holds the tool arguments, else the first: what the call asked for is
    /// best known where the arguments are.
    pub fn action(&self) -> Option<&ActionRecord> {
        let all = || {
            self.events.iter().filter_map(|e| match &e.kind {
                EventKind::Accepted(a) => Some((e, &a.action)),
                _ => None,
            })
        };
        all()
            .find(|(e, _)| e.facts().arguments == Arguments::Full)
            .or_else(|| all().next())
            .map(|(_, a)| a)
    }
    /// When the execution began: its `accepted` event, else its first
    /// event. Executions are ordered by it and attach windows measured from
    /// it, so that a stray early event of another kind cannot move them.
    pub fn started_at(&self) -> Option<DateTime<Utc>> {
        self.accepted()
            .map(|(e, _, _)| e.at)
            .or_else(|| self.first_at())
    }

    /// Time of the first event.
    pub fn first_at(&self) -> Option<DateTime<Utc>> {
        self.events.first().map(|e| e.at)
    }
    /// Time of the last event.
    pub fn last_at(&self) -> Option<DateTime<Utc>> {
        self.events.last().map(|e| e.at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::size_of;

    #[test]
    fn events_stay_small() {
        // Readers make a batch of events at a time, and following journals
        // holds its window's: what only some events carry is out of line.
        assert_eq!(size_of::<SourceRef>(), 16);
        assert!(size_of::<EventKind>() <= 32, "{}", size_of::<EventKind>());
        assert!(size_of::<Event>() <= 80, "{}", size_of::<Event>());
        // A model holds one call for every call.
        assert!(size_of::<Call>() <= 24, "{}", size_of::<Call>());
        // One per execution; its written fingerprint is one pointer.
        assert!(
            size_of::<Acceptance>() <= 160,
            "{}",
            size_of::<Acceptance>()
        );
    }

    /// A journal `seq` survives its packing in halves at every edge, and
    /// is serialized as the number (or `null`) it was.
    #[test]
    fn a_seq_keeps_its_value_at_every_edge() {
        let at = DateTime::from_timestamp(1_780_000_000, 0).unwrap_or_default();
        for seq in [
            None,
            Some(0),
            Some(1),
            Some(u64::from(u32::MAX)),
            Some(u64::from(u32::MAX) + 1),
            Some(u64::MAX - 1),
            Some(u64::MAX),
        ] {
            let e = Event::new(at, EventKind::Delivered, SourceRef::default()).with_seq(seq);
            assert_eq!(e.seq(), seq);
            assert!(format!("{e:?}").contains(&format!("seq: {seq:?}")));
            let v = serde_json::to_value(&e).unwrap();
            assert_eq!(v["seq"], serde_json::json!(seq));
        }
        let none = Event::new(at, EventKind::Delivered, SourceRef::default());
        assert_eq!(none, none.clone().with_seq(None));
        assert_ne!(none, none.clone().with_seq(Some(0)));
    }

    /// Unknown fields and reader facts share one box: each is serialized
    /// only when it holds something, and the box goes when both are empty.
    #[test]
    fn extra_fields_and_facts_are_kept_apart_in_one_box() {
        let at = DateTime::from_timestamp(1_780_000_000, 0).unwrap_or_default();
        let extra: Map<String, Value> =
            serde_json::from_str(r#"{"note": "kept"}"#).unwrap_or_default();
        let facts = ReaderFacts {
            inferred: Some("from the response".into()),
            ..ReaderFacts::default()
        };
        let e = Event::new(at, EventKind::Delivered, SourceRef::default());
        let only_extra = e.clone().with_extra(extra.clone());
        let v = serde_json::to_value(&only_extra).unwrap();
        assert_eq!(v["extra"]["note"], "kept");
        assert!(v.get("facts").is_none());
        assert!(only_extra.facts().is_empty());
        let both = only_extra.clone().with_facts(facts.clone());
        let v = serde_json::to_value(&both).unwrap();
        assert_eq!(v["extra"]["note"], "kept");
        assert!(v.get("facts").is_some());
        assert_eq!(both.facts(), &facts);
        let only_facts = both.clone().with_extra(Map::new());
        assert!(only_facts.extra().is_empty());
        assert_eq!(only_facts.facts(), &facts);
        assert!(
            serde_json::to_value(&only_facts)
                .unwrap()
                .get("extra")
                .is_none()
        );
        let neither = only_facts.with_facts(ReaderFacts::default());
        assert_eq!(neither, e);
        let mut m = e.clone().with_facts(facts);
        m.facts_mut().unwrap().inferred = None;
        assert!(m.facts().is_empty());
    }

    /// An outcome's error text and result reference are serialized in
    /// place, `null` when absent, in the order they always had.
    #[test]
    fn an_outcome_serializes_its_texts_in_place() {
        let at = DateTime::from_timestamp(1_780_000_000, 0).unwrap_or_default();
        let outcome = |error: Option<&str>, reference: Option<&str>| {
            let kind = EventKind::Outcome {
                outcome: OutcomeKind::Failure,
                target_status: Some(500),
                exit_status: None,
                texts: OutcomeTexts::new(error.map(Into::into), reference.map(Into::into)),
                replayed: false,
                observed_via: ObservedVia::Response,
            };
            serde_json::to_string(&Event::new(at, kind, SourceRef::default())).unwrap()
        };
        let text = outcome(Some("boom"), Some("r-1"));
        assert!(
            text.contains(
                r#""exit_status":null,"error":"boom","result_reference":"r-1","replayed":false"#
            ),
            "{text}"
        );
        let text = outcome(None, None);
        assert!(
            text.contains(r#""error":null,"result_reference":null,"replayed""#),
            "{text}"
        );
        let texts = OutcomeTexts::new(None, Some("r".into()));
        assert_eq!((texts.error(), texts.result_reference()), (None, Some("r")));
        assert_eq!(OutcomeTexts::new(None, None), OutcomeTexts::default());
    }

    #[test]
    fn an_accepted_event_serializes_its_fields_in_place() {
        let e = Event::new(
            DateTime::from_timestamp(1_780_000_000, 0).unwrap_or_default(),
            EventKind::Accepted(Box::new(Acceptance {
                call: CallRef {
                    call_id: Some("c-1".into()),
                    ..CallRef::default()
                },
                fingerprint: Some("sha256:ab".into()),
                ..Acceptance::default()
            })),
            SourceRef::default(),
        );
        let text = serde_json::to_string(&e).unwrap();
        assert!(
            text.contains(r#","event":"accepted","call":{"call_id":"c-1","#),
            "{text}"
        );
        assert!(
            text.contains(
                r#","fingerprint":"sha256:ab","action_class":null,"idempotency_key":null,"source":{"#
            ),
            "{text}"
        );
        let v = serde_json::to_value(&e).unwrap();
        assert_eq!(v["event"], "accepted");
        assert_eq!(v["call"]["call_id"], "c-1");
        assert_eq!(v["fingerprint"], "sha256:ab");
        assert!(v["idempotency_key"].is_null());
        assert!(v.get("extra").is_none());
        let e = e.with_extra(Map::new());
        assert!(serde_json::to_value(&e).unwrap().get("extra").is_none());
    }

    /// A model holds one copy of the session, transport and action class
    /// that executions repeat, and of an action they all asked for; what
    /// differs stays apart.
    #[test]
    fn the_builder_shares_repeated_texts() {
        let accepted = |n: u32, session: &str| {
            let action: Map<String, Value> =
                serde_json::from_str(r#"{"tool": "deploy", "actor": "a"}"#).unwrap_or_default();
            Event::new(
                DateTime::from_timestamp(1_780_000_000 + i64::from(n), 0).unwrap_or_default(),
                EventKind::Accepted(Box::new(Acceptance {
                    call: CallRef {
                        call_id: Some(format!("c-{n}")),
                        session_id: Some(session.into()),
                        transport: Some("streamable-http".into()),
                        ..CallRef::default()
                    },
                    action: ActionRecord::from_map(action),
                    action_class: Some("irreversible".into()),
                    ..Acceptance::default()
                })),
                SourceRef::default(),
            )
        };
        let mut b = ModelBuilder::new();
        for (n, s) in [(1, "ses_1"), (2, "ses_1"), (3, "ses_2")] {
            b.push_event(format!("act_{n}"), accepted(n, s));
        }
        let m = b.finish();
        // One copy of each: the two sessions, the transport, the action
        // class; and of the action all three asked for.
        let mut texts: Vec<&str> = m.store.texts.iter().map(|t| &**t).collect();
        texts.sort_unstable();
        assert_eq!(texts, ["irreversible", "ses_1", "ses_2", "streamable-http"]);
        assert_eq!(m.store.actions.len(), 1);
        // Each execution reads back what it was given.
        let xs = m.to_executions();
        let acc = |i: usize| match &xs[i].events[0].kind {
            EventKind::Accepted(a) => a,
            _ => unreachable!("every execution starts with its accepted event"),
        };
        let (a, b, c) = (acc(0), acc(1), acc(2));
        assert_eq!(a.call.session_id.as_deref(), Some("ses_1"));
        assert_eq!(b.call.session_id.as_deref(), Some("ses_1"));
        assert_eq!(c.call.session_id.as_deref(), Some("ses_2"));
        assert_eq!(c.call.transport.as_deref(), Some("streamable-http"));
        assert_eq!(c.action_class.as_deref(), Some("irreversible"));
        assert_eq!(a.call.call_id.as_deref(), Some("c-1"));
        assert_eq!(b.call.call_id.as_deref(), Some("c-2"));
        assert_eq!(a.action, c.action);
    }
}
