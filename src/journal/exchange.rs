//! The usual event sequence of a request/response log, in one place.
//!
//! Gateway and proxy logs (gh-aw, mcp-acp, mcpproxy, mcp-audit, Sallyport)
//! record a tool call as a request and what came back, not as a lifecycle.
//! Each call becomes one execution: `accepted` (and `authorized` when the log
//! says so) for the [`Call`], then for its [`Answer`] `dispatched` when the
//! answer implies it, then `rejected`, `dispatch_failed` or `outcome`, then
//! `delivered` or `delivery_failed` when the log says. An event the log does
//! not record itself carries [`ReaderFacts::inferred`] with the reason.
//!
//! A log with one record per call hands both at once ([`exchange`]); a log
//! with a request line and a response line calls [`request`] at the first
//! and [`Pending::answer`] at the second. A call that never gets an answer
//! ends at [`request`]: its outcome is unknown, which the reader notes.

use super::ReadCtx;
use crate::model::{
    Acceptance, ActionRecord, CallRef, Event, EventKind, Layer, Link, ObservedVia, OutcomeKind,
    OutcomeTexts, Pairing, ReaderFacts, SourceRef,
};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value};

/// A tool call as the log records it: what its `accepted` event says, and
/// how the log shows it leaving the gateway.
#[derive(Debug, Clone)]
pub struct Call {
    /// The execution the call creates (readers make one per call).
    pub execution_id: String,
    /// When the gateway took the call.
    pub at: DateTime<Utc>,
    /// Protocol correlation.
    pub call: CallRef,
    /// The canonical action record.
    pub action: ActionRecord,
    /// Idempotency key the gateway assigned, if the log has one; also sent
    /// with the dispatch.
    pub idempotency_key: Option<String>,
    /// Where the request is.
    pub source: SourceRef,
    /// Journal fields shown on the `accepted` event.
    pub extra: Map<String, Value>,
    /// Facts for the `accepted` event: whether the format records the
    /// arguments, display notes.
    pub facts: ReaderFacts,
    /// An authorization the log records with the request (`authorized`
    /// right after `accepted`).
    pub authorization: Option<Authorization>,
    /// How the log shows the call leaving the gateway.
    pub dispatch: Dispatch,
    /// The layer that recorded the call (every event of the exchange gets
    /// it), when the journal is one layer of several.
    pub layer: Option<Layer>,
    /// Identities that tie the call to the same call in other journals
    /// (put on its `accepted` event).
    pub links: Vec<Link>,
}

impl Call {
    /// A call with no extra fields, facts, authorization or key.
    pub fn new(
        execution_id: String,
        at: DateTime<Utc>,
        call: CallRef,
        action: ActionRecord,
        source: SourceRef,
        dispatch: Dispatch,
    ) -> Call {
        Call {
            execution_id,
            at,
            call,
            action,
            idempotency_key: None,
            source,
            extra: Map::new(),
            facts: ReaderFacts::default(),
            authorization: None,
            dispatch,
            layer: None,
            links: Vec::new(),
        }
    }
}

/// An authorization decision recorded with the request.
#[derive(Debug, Clone)]
pub struct Authorization {
    /// `session_grant`, `per_use_approval` or `policy_allow`.
    pub decision: String,
    /// Who approved, for per-use approvals.
    pub approver: Option<String>,
    /// Journal fields shown on the `authorized` event.
    pub extra: Map<String, Value>,
}

/// How the log shows a call leaving the gateway.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Dispatch {
    /// The request record is the call leaving the gateway (a request line
    /// the gateway sent to the server, an intent row written as the call
    /// starts): `dispatched` at the call's time, whatever the answer.
    /// `inferred` says why the reader reads the record so, when the log
    /// does not say it in so many words.
    WithRequest {
        /// Why, when the dispatch is inferred.
        inferred: Option<String>,
    },
    /// The log does not record the dispatch: an answer that shows the call
    /// reached the target implies it (an outcome the log knows, or a
    /// gateway-side timeout; not a refusal, a dispatch failure, or an
    /// outcome the log itself calls unknown). `dispatched` is then placed
    /// at the call's time when `at_request`, else at the answer's, and
    /// marked inferred for the reason `why`.
    Implied {
        /// Why the reader infers the dispatch, in words.
        why: String,
        /// Placed at the call's time (the gateway dispatches right away)
        /// rather than the answer's.
        at_request: bool,
    },
}

/// What is known of a call's answer.
#[derive(Debug, Clone)]
pub struct Answer {
    /// When the answer was recorded.
    pub at: DateTime<Utc>,
    /// Where it is (the request's own record, for logs of one record per
    /// call).
    pub source: SourceRef,
    /// How the call ended.
    pub end: End,
    /// How the answer was paired with the request.
    pub pairing: Pairing,
    /// Journal fields shown on the answer's event.
    pub extra: Map<String, Value>,
    /// Whether the result reached the agent, when the log says.
    pub delivery: Delivery,
    /// Identities that tie the answer to the same call in other journals
    /// (a span of the answering side).
    pub links: Vec<Link>,
}

impl Answer {
    /// An answer paired by id, with no extra fields and no delivery recorded.
    pub fn new(at: DateTime<Utc>, source: SourceRef, end: End) -> Answer {
        Answer {
            at,
            source,
            end,
            pairing: Pairing::ById,
            extra: Map::new(),
            delivery: Delivery::NotRecorded,
            links: Vec::new(),
        }
    }
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq)]
pub enum End {
    /// Authorization refused the call; nothing was dispatched.
    Rejected {
        /// e.g. `policy_denied`, `approval_timeout`.
        reason: String,
    },
    /// Nothing left the gateway (a retry is safe).
    DispatchFailed {
        /// Why.
        error: String,
    },
    /// The gateway stopped waiting for the target: dispatched, outcome
    /// unknown.
    TimedOut {
        /// What the gateway said.
        error: Option<String>,
    },
    /// An answer came, a failure whose error text says a caller on the way
    /// timed out (`Request timed out`, `context deadline exceeded`): the
    /// call was sent, and what the target did is unknown. Its outcome event
    /// says why it is read so ([`ReaderFacts::inferred`]).
    TimeoutInAnswer {
        /// The error text.
        error: String,
        /// Where the result is (`line 12`).
        result_reference: Option<String>,
    },
    /// The target's answer as the log classifies it (`unknown` when the log
    /// cannot tell what happened, nor whether the call was sent).
    Outcome {
        /// What happened.
        outcome: OutcomeKind,
        /// Error text.
        error: Option<String>,
        /// HTTP status from the target.
        status: Option<u16>,
        /// Where the result is (`line 12`, `row seq 7`).
        result_reference: Option<String>,
    },
}

impl End {
    /// An outcome as MCP-level logs record it: no HTTP status field, only
    /// the error text of a failed call. A failure's text is read for what
    /// it says of the target (`ErrorText::of`): a timeout is
    /// [`End::TimeoutInAnswer`] (the call was sent, the outcome is unknown), and an
    /// HTTP status that leaves the side effect open (docs/design.md §10.6:
    /// a tool's `504 Gateway Timeout` from the API it called) is kept as
    /// the outcome's status, so neither reads as "the target did not act".
    pub fn response(
        outcome: OutcomeKind,
        error: Option<String>,
        result_reference: Option<String>,
    ) -> End {
        let read = match (&outcome, error.as_deref()) {
            (OutcomeKind::Failure, Some(text)) => ErrorText::of(text),
            _ => ErrorText::Definite,
        };
        match (read, error) {
            (ErrorText::TimedOut, Some(error)) => End::TimeoutInAnswer {
                error,
                result_reference,
            },
            (read, error) => End::Outcome {
                outcome,
                error,
                status: match read {
                    ErrorText::Status(s) => Some(s),
                    _ => None,
                },
                result_reference,
            },
        }
    }

    /// The event this answer is, and why it is read so when its error text
    /// decided it ([`TIMEOUT_READ`]).
    pub(crate) fn into_event(self) -> (EventKind, Option<&'static str>) {
        match self {
            End::Rejected { reason } => (EventKind::Rejected { reason }, None),
            End::DispatchFailed { error } => (EventKind::DispatchFailed { error }, None),
            End::TimedOut { error } => (
                EventKind::response_outcome(OutcomeKind::Unknown, error, None),
                None,
            ),
            End::TimeoutInAnswer {
                error,
                result_reference,
            } => (
                EventKind::response_outcome(OutcomeKind::Unknown, Some(error), result_reference),
                Some(TIMEOUT_READ),
            ),
            End::Outcome {
                outcome,
                error,
                status,
                result_reference,
            } => (
                EventKind::Outcome {
                    outcome,
                    target_status: status,
                    exit_status: None,
                    texts: OutcomeTexts::new(error, result_reference),
                    replayed: false,
                    observed_via: ObservedVia::Response,
                },
                None,
            ),
        }
    }

    /// Whether the answer shows that the call reached the target.
    fn implies_dispatch(&self) -> bool {
        match self {
            End::Rejected { .. } | End::DispatchFailed { .. } => false,
            End::TimedOut { .. } | End::TimeoutInAnswer { .. } => true,
            End::Outcome { outcome, .. } => *outcome != OutcomeKind::Unknown,
        }
    }
}

/// What a failed call's error text says of whether the target acted, for
/// logs that record no HTTP status of their own ([`End::response`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorText {
    /// Nothing that leaves it open: a definite failure.
    Definite,
    /// The caller stopped waiting (`context deadline exceeded`, `Timed out
    /// while waiting for response`): the call went out, its outcome is
    /// unknown.
    TimedOut,
    /// An HTTP status that does not say whether a POST acted
    /// (docs/design.md §10.6), written as the status and its reason phrase
    /// (`504 Gateway Timeout`) or after `status`/`HTTP` (`status code 502`).
    Status(u16),
}

/// Why an answer whose error text says a caller timed out is read as an
/// unknown outcome (shown on its event).
pub(crate) const TIMEOUT_READ: &str = "its error text says the call timed out or its connection dropped: an answer came, but what the target did is unknown";

/// The statuses of docs/design.md §10.6.
const AMBIGUOUS_STATUSES: [u16; 5] = [408, 500, 502, 503, 504];

/// Reason phrases that follow a status in error texts, lowercase, each
/// with the statuses it names (`0`: any of its class, by the first digit
/// given): RFC 9110's, the variants proxies write (nginx's `Gateway
/// Time-out`), and Python requests' `Server Error`/`Client Error`. A phrase
/// after another status (`issue #504 not found`) names none.
const REASONS: [(&str, u16); 24] = [
    ("request timeout", 408),
    ("internal server error", 500),
    ("bad gateway", 502),
    ("service unavailable", 503),
    ("service temporarily unavailable", 503),
    ("gateway timeout", 504),
    ("gateway time-out", 504),
    ("server error", 5),
    ("client error", 4),
    ("bad request", 400),
    ("unauthorized", 401),
    ("payment required", 402),
    ("forbidden", 403),
    ("not found", 404),
    ("method not allowed", 405),
    ("not acceptable", 406),
    ("conflict", 409),
    ("gone", 410),
    ("precondition failed", 412),
    ("payload too large", 413),
    ("unsupported media type", 415),
    ("unprocessable entity", 422),
    ("validation failed", 422),
    ("too many requests", 429),
];

/// Words a status follows, lowercase (`status code 502`, `HTTP/1.1 504`,
/// `statusCode: 503`).
const STATUS_WORDS: [&str; 8] = [
    "status",
    "status code",
    "statuscode",
    "status_code",
    "http",
    "http error",
    "http/1.1",
    "http/2",
];

/// Words that say a caller stopped waiting for an answer, or that the
/// connection dropped while it waited, lowercase.
const TIMEOUT_WORDS: [&str; 18] = [
    "context canceled",
    "socket hang up",
    "econnreset",
    "connection reset",
    "unexpected eof",
    "context deadline exceeded",
    "deadline_exceeded",
    "request timed out",
    "timed out while waiting",
    "timed out waiting",
    "operation timed out",
    "read timed out",
    "read timeout",
    "response timeout",
    "upstream request timeout",
    "request timeout after",
    "aborted due to timeout",
    "etimedout",
];

/// Words that put a timeout before the request was sent (connecting),
/// which leaves the failure definite, lowercase.
const CONNECT_WORDS: [&str; 4] = [
    "dial tcp",
    "connect etimedout",
    "connect timed out",
    "connection timed out",
];

impl ErrorText {
    /// Reads an error text (any case). The first HTTP status the text
    /// names decides when there is one: an open one (§10.6) is kept, any
    /// other (`422 Unprocessable Entity`) is a definite failure. Otherwise
    /// words that say a caller stopped waiting for an answer, or that the
    /// connection dropped, make it a timeout, unless they are about
    /// connecting (`dial tcp …: i/o timeout`: nothing was sent); then an
    /// open status's reason phrase alone (`Gateway Timeout`) is that
    /// status.
    pub(crate) fn of(text: &str) -> ErrorText {
        let lower = text.to_lowercase();
        match first_status(&lower) {
            Some(s) if AMBIGUOUS_STATUSES.contains(&s) => return ErrorText::Status(s),
            Some(_) => return ErrorText::Definite,
            None => {}
        }
        let connecting = CONNECT_WORDS.iter().any(|w| lower.contains(w));
        let waited = TIMEOUT_WORDS.iter().any(|w| lower.contains(w))
            || (lower.contains("i/o timeout") && !connecting);
        if waited && !connecting {
            return ErrorText::TimedOut;
        }
        // A reason phrase of an open status alone (`Gateway Timeout`).
        match REASONS
            .iter()
            .find(|(r, c)| AMBIGUOUS_STATUSES.contains(c) && lower.contains(r))
        {
            Some(&(_, code)) => ErrorText::Status(code),
            None => ErrorText::Definite,
        }
    }
}

/// The first HTTP status (100–599) that `lower` names: three digits of
/// their own followed by a reason phrase ([`REASONS`]) or after a status
/// word ([`STATUS_WORDS`]).
fn first_status(lower: &str) -> Option<u16> {
    let b = lower.as_bytes();
    let mut i = 0;
    while i + 3 <= b.len() {
        let digits = &b[i..i + 3];
        let alone = digits.iter().all(u8::is_ascii_digit)
            && (i == 0 || !b[i - 1].is_ascii_digit())
            && b.get(i + 3).is_none_or(|c| !c.is_ascii_digit());
        if alone
            && let Ok(code) = lower[i..i + 3].parse::<u16>()
            && (100..600).contains(&code)
        {
            let after = lower[i + 3..].trim_start_matches([' ', ':', '(', '-']);
            let before = lower[..i].trim_end_matches([' ', ':', '=', '"', '(']);
            let names = |&(r, c): &(&str, u16)| {
                after.starts_with(r) && (c == code || (c < 10 && code / 100 == c))
            };
            if REASONS.iter().any(names) || STATUS_WORDS.iter().any(|w| before.ends_with(w)) {
                return Some(code);
            }
        }
        i += 1;
    }
    None
}

/// Whether the result reached the agent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Delivery {
    /// The log does not say.
    #[default]
    NotRecorded,
    /// The agent received it.
    Delivered,
    /// It could not be delivered; why.
    Failed(String),
}

/// A call whose request has been emitted, waiting for its answer.
#[derive(Debug, Clone)]
pub struct Pending {
    execution_id: String,
    at: DateTime<Utc>,
    source: SourceRef,
    /// For a dispatch the answer implies: why, and whether at the call's time.
    implied: Option<(String, bool)>,
    /// The layer that recorded the call.
    layer: Option<Layer>,
}

/// Emits the events of a call's request: `accepted`, then `authorized`
/// and `dispatched` when the log records them with the request.
pub fn request(ctx: &mut ReadCtx<'_>, c: Call) -> Pending {
    let id = c.execution_id;
    let layer = c.layer;
    let mut accepted_facts = c.facts;
    accepted_facts.layer = layer;
    accepted_facts.links = c.links;
    // Without an answer, such a log cannot say whether the call left.
    accepted_facts.dispatch_unrecorded = matches!(c.dispatch, Dispatch::Implied { .. });
    let layered = |f: ReaderFacts| ReaderFacts { layer, ..f };
    ctx.event(
        &id,
        Event::new(
            c.at,
            EventKind::Accepted(Box::new(Acceptance {
                call: c.call,
                action: c.action,
                fingerprint: None,
                action_class: None,
                idempotency_key: c.idempotency_key.clone(),
            })),
            c.source,
        )
        .with_extra(c.extra)
        .with_facts(accepted_facts),
    );
    if let Some(a) = c.authorization {
        ctx.event(
            &id,
            Event::new(
                c.at,
                EventKind::Authorized {
                    decision: a.decision.into(),
                    approver: a.approver.map(Box::new),
                },
                c.source,
            )
            .with_extra(a.extra)
            .with_facts(layered(ReaderFacts::default())),
        );
    }
    let implied = match c.dispatch {
        Dispatch::WithRequest { inferred } => {
            ctx.event(
                &id,
                Event::new(
                    c.at,
                    EventKind::Dispatched {
                        idempotency_key: c.idempotency_key,
                    },
                    c.source,
                )
                .with_facts(layered(
                    inferred.map(ReaderFacts::inferred).unwrap_or_default(),
                )),
            );
            None
        }
        Dispatch::Implied { why, at_request } => Some((why, at_request)),
    };
    Pending {
        execution_id: id,
        at: c.at,
        source: c.source,
        implied,
        layer,
    }
}

/// Emits a call with its answer, when one record holds both ([`request`],
/// then [`Pending::answer`]); `None`: the log has no answer, the outcome is
/// unknown.
pub fn exchange(ctx: &mut ReadCtx<'_>, c: Call, answer: Option<Answer>) {
    let p = request(ctx, c);
    if let Some(a) = answer {
        p.answer(ctx, a);
    }
}

impl Pending {
    /// The execution the call created.
    pub fn execution_id(&self) -> &str {
        &self.execution_id
    }

    /// Where the request is.
    pub fn source(&self) -> SourceRef {
        self.source
    }

    /// Emits the events of the answer: `dispatched` when the answer implies
    /// it, the answer's own event (with its pairing, and where the request
    /// is when that is another record), then the delivery when the log
    /// records it.
    pub fn answer(self, ctx: &mut ReadCtx<'_>, a: Answer) {
        let id = self.execution_id;
        if let Some((why, at_request)) = self.implied
            && a.end.implies_dispatch()
        {
            let (at, source) = if at_request {
                (self.at, self.source)
            } else {
                (a.at, a.source)
            };
            ctx.event(
                &id,
                Event::new(
                    at,
                    EventKind::Dispatched {
                        idempotency_key: None,
                    },
                    source,
                )
                .with_facts(ReaderFacts {
                    layer: self.layer,
                    ..ReaderFacts::inferred(why)
                }),
            );
        }
        let (kind, inferred) = a.end.into_event();
        let facts = ReaderFacts {
            pairing: a.pairing,
            request: (a.source != self.source).then_some(self.source),
            layer: self.layer,
            links: a.links,
            inferred: inferred.map(str::to_string),
            ..ReaderFacts::default()
        };
        ctx.event(
            &id,
            Event::new(a.at, kind, a.source)
                .with_extra(a.extra)
                .with_facts(facts),
        );
        let delivery = match a.delivery {
            Delivery::NotRecorded => return,
            Delivery::Delivered => EventKind::Delivered,
            Delivery::Failed(error) => EventKind::DeliveryFailed { error },
        };
        ctx.event(
            &id,
            Event::new(a.at, delivery, a.source).with_facts(ReaderFacts {
                layer: self.layer,
                ..ReaderFacts::default()
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::journal::with_test_ctx;
    use crate::model::Record;

    /// Error texts seen in real logs: github-mcp-server passing on the
    /// API's answer, gh-aw's gateway and mcp-acp's proxy giving up, and
    /// tool errors that say nothing of a timeout or an open status.
    #[test]
    fn error_texts_are_read_for_what_they_say_of_the_target() {
        let cases = [
            (
                "failed to create issue: POST https://api.github.com/repos/o/r/issues: 504 Gateway Timeout []",
                ErrorText::Status(504),
            ),
            (
                "POST https://x/y: 502 Bad Gateway []",
                ErrorText::Status(502),
            ),
            (
                "upstream answered with status code 503",
                ErrorText::Status(503),
            ),
            ("HTTP 500: oops", ErrorText::Status(500)),
            ("Request failed (status=408)", ErrorText::Status(408)),
            (
                "calling \"tools/call\": context deadline exceeded",
                ErrorText::TimedOut,
            ),
            (
                "Timed out while waiting for response to ClientRequest. Waited 30.0 seconds.",
                ErrorText::TimedOut,
            ),
            ("read tcp 10.0.0.1:443: i/o timeout", ErrorText::TimedOut),
            ("MCP error -32001: Request timed out", ErrorText::TimedOut),
            ("Error: ETIMEDOUT", ErrorText::TimedOut),
            (
                "The operation was aborted due to timeout",
                ErrorText::TimedOut,
            ),
            ("upstream request timeout", ErrorText::TimedOut),
            ("request timeout after 30000ms", ErrorText::TimedOut),
            // Statuses as Python requests, nginx and JSON bodies write them.
            (
                "504 Server Error: Gateway Timeout for url: https://x/y",
                ErrorText::Status(504),
            ),
            ("<h1>504 Gateway Time-out</h1>", ErrorText::Status(504)),
            (
                "503 Service Temporarily Unavailable",
                ErrorText::Status(503),
            ),
            ("{\"statusCode\": 503}", ErrorText::Status(503)),
            ("status_code=504", ErrorText::Status(504)),
            ("HTTP error 502 from upstream", ErrorText::Status(502)),
            ("error: HTTP/1.1 504", ErrorText::Status(504)),
            // A definite failure, whatever numbers or words it holds: the
            // first status named decides, and a timeout while connecting
            // means nothing was sent.
            (
                "failed to create issue: 422 Validation Failed",
                ErrorText::Definite,
            ),
            (
                "422 Unprocessable Entity: check failed, got status 500",
                ErrorText::Definite,
            ),
            ("issue 5040 not found", ErrorText::Definite),
            ("port 15040 closed; retried 504x", ErrorText::Definite),
            ("404 Not Found", ErrorText::Definite),
            ("permission denied", ErrorText::Definite),
            (
                "invalid argument: timeout exceeded maximum of 300 seconds",
                ErrorText::Definite,
            ),
            (
                "session timed out, please sign in again",
                ErrorText::Definite,
            ),
            (
                "submission deadline exceeded for this period; the form is closed",
                ErrorText::Definite,
            ),
            ("dial tcp 10.0.0.1:443: i/o timeout", ErrorText::Definite),
            ("connect ETIMEDOUT 10.0.0.1:443", ErrorText::Definite),
            ("issue #504 not found", ErrorText::Definite),
            ("Gateway Timeout", ErrorText::Status(504)),
            ("socket hang up", ErrorText::TimedOut),
            ("read ECONNRESET", ErrorText::TimedOut),
            ("context canceled", ErrorText::TimedOut),
        ];
        for (text, want) in cases {
            assert_eq!(ErrorText::of(text), want, "{text}");
        }
        // Only a failure's text is read: a success that mentions a timeout
        // stays a success.
        assert!(matches!(
            End::response(
                OutcomeKind::Success,
                Some("timed out once, then ok".into()),
                None
            ),
            End::Outcome {
                outcome: OutcomeKind::Success,
                status: None,
                ..
            }
        ));
        assert!(matches!(
            End::response(
                OutcomeKind::Failure,
                Some("context deadline exceeded".into()),
                None
            ),
            End::TimeoutInAnswer { .. }
        ));
        assert!(matches!(
            End::response(OutcomeKind::Failure, Some("502 Bad Gateway".into()), None),
            End::Outcome {
                outcome: OutcomeKind::Failure,
                status: Some(502),
                ..
            }
        ));
    }

    fn at(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(&format!("2026-09-01T{s}Z"))
            .unwrap()
            .with_timezone(&Utc)
    }

    fn line(n: u32) -> SourceRef {
        SourceRef::Line {
            journal: 0,
            line: n,
            offset: crate::model::LineOffset::new(0),
            len: 0,
        }
    }

    fn call(dispatch: Dispatch) -> Call {
        Call::new(
            "x1".into(),
            at("10:00:00"),
            CallRef::default(),
            ActionRecord::default(),
            line(1),
            dispatch,
        )
    }

    fn implied(at_request: bool) -> Dispatch {
        Dispatch::Implied {
            why: "the log records the answer".into(),
            at_request,
        }
    }

    /// The events emitted, as (name, time, line, inferred?, request line).
    fn events(
        f: impl FnOnce(&mut ReadCtx<'_>),
    ) -> Vec<(&'static str, String, u32, bool, Option<u32>)> {
        with_test_ctx(f)
            .into_iter()
            .map(|r| match r {
                Record::Event {
                    execution_id,
                    event,
                } => {
                    assert_eq!(execution_id, "x1");
                    (
                        event.kind.name(),
                        event.at.format("%H:%M:%S").to_string(),
                        event.source.position(),
                        event.facts().inferred.is_some(),
                        event.facts().request.map(SourceRef::position),
                    )
                }
                Record::Session(_) | Record::ToolHint(_) => panic!("not an event"),
            })
            .collect()
    }

    fn ok_at(s: &str, n: u32) -> Answer {
        Answer::new(
            at(s),
            line(n),
            End::response(OutcomeKind::Success, None, None),
        )
    }

    #[test]
    fn a_request_line_and_its_response_line() {
        let ev = events(|ctx| {
            let p = request(
                ctx,
                call(Dispatch::WithRequest {
                    inferred: Some("the request line is the call sent".into()),
                }),
            );
            let mut a = ok_at("10:00:02", 5);
            a.delivery = Delivery::Delivered;
            p.answer(ctx, a);
        });
        assert_eq!(
            ev,
            [
                ("accepted", "10:00:00".into(), 1, false, None),
                ("dispatched", "10:00:00".into(), 1, true, None),
                ("outcome", "10:00:02".into(), 5, false, Some(1)),
                ("delivered", "10:00:02".into(), 5, false, None),
            ]
        );
    }

    #[test]
    fn a_dispatch_the_answer_implies_is_inferred_where_the_reader_places_it() {
        let ev = events(|ctx| exchange(ctx, call(implied(false)), Some(ok_at("10:00:03", 1))));
        assert_eq!(
            ev,
            [
                ("accepted", "10:00:00".into(), 1, false, None),
                ("dispatched", "10:00:03".into(), 1, true, None),
                ("outcome", "10:00:03".into(), 1, false, None),
            ]
        );
        let ev = events(|ctx| exchange(ctx, call(implied(true)), Some(ok_at("10:00:03", 1))));
        assert_eq!(ev[1], ("dispatched", "10:00:00".into(), 1, true, None));
    }

    #[test]
    fn refusals_dispatch_failures_and_unknown_outcomes_imply_no_dispatch() {
        for end in [
            End::Rejected {
                reason: "policy_denied".into(),
            },
            End::DispatchFailed {
                error: "connection refused".into(),
            },
            End::response(OutcomeKind::Unknown, Some("cannot tell".into()), None),
        ] {
            let name = match &end {
                End::Rejected { .. } => "rejected",
                End::DispatchFailed { .. } => "dispatch_failed",
                _ => "outcome",
            };
            let ev = events(|ctx| {
                exchange(
                    ctx,
                    call(implied(false)),
                    Some(Answer::new(at("10:00:01"), line(1), end)),
                )
            });
            let names: Vec<_> = ev.iter().map(|e| e.0).collect();
            assert_eq!(names, ["accepted", name]);
        }
    }

    #[test]
    fn a_gateway_timeout_was_dispatched_with_an_unknown_outcome() {
        let records = with_test_ctx(|ctx| {
            let mut a = Answer::new(
                at("10:00:30"),
                line(2),
                End::TimedOut {
                    error: Some("upstream timed out after 30 s".into()),
                },
            );
            a.delivery = Delivery::Failed("the client had gone".into());
            exchange(ctx, call(implied(false)), Some(a));
        });
        let kinds: Vec<EventKind> = records
            .into_iter()
            .filter_map(|r| match r {
                Record::Event { event, .. } => Some(event.kind),
                Record::Session(_) | Record::ToolHint(_) => None,
            })
            .collect();
        assert_eq!(kinds[1].name(), "dispatched");
        assert!(matches!(
            &kinds[2],
            EventKind::Outcome {
                outcome: OutcomeKind::Unknown,
                texts,
                ..
            } if texts.error().is_some()
        ));
        assert_eq!(
            kinds[3],
            EventKind::DeliveryFailed {
                error: "the client had gone".into()
            }
        );
    }

    #[test]
    fn authorization_comes_between_accepted_and_dispatched() {
        let ev = events(|ctx| {
            let mut c = call(Dispatch::WithRequest { inferred: None });
            c.authorization = Some(Authorization {
                decision: "session_grant".into(),
                approver: None,
                extra: Map::new(),
            });
            request(ctx, c);
        });
        let names: Vec<_> = ev.iter().map(|e| (e.0, e.3)).collect();
        assert_eq!(
            names,
            [
                ("accepted", false),
                ("authorized", false),
                ("dispatched", false)
            ]
        );
    }

    #[test]
    fn a_positional_pairing_stays_on_the_answer() {
        let records = with_test_ctx(|ctx| {
            let p = request(ctx, call(Dispatch::WithRequest { inferred: None }));
            let mut a = ok_at("10:00:01", 3);
            a.pairing = Pairing::ByPosition {
                why: "2 requests were in flight".into(),
                uncertain: true,
            };
            p.answer(ctx, a);
        });
        let Some(Record::Event { event, .. }) = records.last() else {
            panic!("no event")
        };
        assert!(event.facts().pairing.is_uncertain());
        assert_eq!(event.facts().request, Some(line(1)));
    }
}
