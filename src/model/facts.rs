//! What a reader established about an event beyond the journal's own
//! fields: how an answer was paired with its request, whether the format
//! records tool arguments, which events it inferred, and notes for display.
//!
//! These are typed fields set only by readers ([`crate::journal`]), never
//! taken from a journal line: a field a journal writes under one of these
//! names is an unknown field like any other ([`super::Event::extra`]), shown
//! and never read by analysis.

use super::SourceRef;
use serde::Serialize;
use serde::ser::SerializeMap;
use serde_json::Value;

/// How an outcome was paired with the request it answers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Pairing {
    /// Nothing to doubt: by an id both carry (a JSON-RPC id, a request
    /// id), one record holding both, or the only request in flight.
    #[default]
    ById,
    /// By position: the oldest request in flight gets the next answer
    /// (gh-aw logs reuse JSON-RPC ids). `why` says why position was all the
    /// reader had; `uncertain` marks a pairing that cannot be trusted (the
    /// answers the call may have got differ, or one came with no request in
    /// flight): analysis then reads the answer as ambiguous, a success as
    /// much as a failure, since the call's own outcome is not known
    /// (docs/design.md §2.5).
    ByPosition {
        /// Why, in words.
        why: String,
        /// Whether the answer may be another call's.
        uncertain: bool,
    },
    /// By content: the answer names what it answers (an error naming the
    /// call's operation, a result naming the object it asked for;
    /// docs/design.md §2.5). `why` says what matched.
    ByContent {
        /// Why, in words.
        why: String,
    },
}

impl Pairing {
    /// How the pairing is shown beside an outcome: `paired by position`,
    /// `paired by content`; `None` for a pairing by id.
    pub fn words(&self) -> Option<&'static str> {
        match self {
            Pairing::ById => None,
            Pairing::ByPosition { .. } => Some("paired by position"),
            Pairing::ByContent { .. } => Some("paired by content"),
        }
    }

    /// Why the reader paired so, for pairings not by id.
    pub fn why(&self) -> Option<&str> {
        match self {
            Pairing::ById => None,
            Pairing::ByPosition { why, .. } | Pairing::ByContent { why } => Some(why),
        }
    }

    /// Whether the answer may be another call's.
    pub fn is_uncertain(&self) -> bool {
        matches!(
            self,
            Pairing::ByPosition {
                uncertain: true,
                ..
            }
        )
    }
}

/// Whether the journal format records a call's tool arguments. Anything
/// but [`Arguments::Full`] is reported as the `arguments_not_logged`
/// finding: calls are grouped by what the journal records, so distinct
/// intents may look alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Arguments {
    /// The arguments as the caller sent them.
    #[default]
    Full,
    /// Part of them; the words say what (`Sallyport keeps an argument
    /// preview clipped to 256 bytes, …`).
    Partly(String),
    /// None; the words say what the format records instead (`the
    /// operations log keeps file paths only`).
    No(String),
}

impl Arguments {
    /// `no: <words>` or `partly: <words>`; `None` for full arguments.
    pub fn label(&self) -> Option<String> {
        match self {
            Arguments::Full => None,
            Arguments::Partly(w) => Some(format!("partly: {w}")),
            Arguments::No(w) => Some(format!("no: {w}")),
        }
    }
}

/// Which layer of a call's path recorded an event (docs/design.md §5.12):
/// the client that sent the call, a gateway it passed through, the server
/// that ran the tool. Sources of several layers joined into one execution
/// are read layer by layer: whether the result reached the agent is the
/// outermost layer's word, what the target did the innermost's.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Layer {
    /// The MCP client (the agent's side).
    Client,
    /// A gateway or proxy between client and server.
    Gateway,
    /// The MCP server that ran the tool.
    Server,
}

/// An identity that ties a record to the same call recorded elsewhere, so
/// that sources of several layers are joined into one execution
/// (docs/design.md §5.12). Two executions that share a link are one call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Link {
    /// The record is (part of) span `span` of trace `trace` (W3C trace
    /// context, lowercase hex).
    Span {
        /// Trace id, 32 hex digits.
        trace: String,
        /// Span id, 16 hex digits.
        span: String,
    },
    /// The record's call was sent from span `span` of trace `trace`: a
    /// server span's parent, a `traceparent` a gateway logged with the
    /// request. It names the same call as that span's [`Link::Span`].
    CalledFrom {
        /// Trace id.
        trace: String,
        /// Span id.
        span: String,
    },
    /// A gateway's id for one request, shared by its log lines, database
    /// rows and spans (ContextForge's correlation id).
    Correlation(String),
}

/// As `{"by": "span" | "called_from", "trace": …, "span": …}` or
/// `{"by": "correlation", "id": …}`.
impl Serialize for Link {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(3))?;
        match self {
            Link::Span { trace, span } | Link::CalledFrom { trace, span } => {
                let by = if matches!(self, Link::Span { .. }) {
                    "span"
                } else {
                    "called_from"
                };
                m.serialize_entry("by", by)?;
                m.serialize_entry("trace", trace)?;
                m.serialize_entry("span", span)?;
            }
            Link::Correlation(id) => {
                m.serialize_entry("by", "correlation")?;
                m.serialize_entry("id", id)?;
            }
        }
        m.end()
    }
}

impl Link {
    /// The key two linked records share: a span is named the same whether
    /// a record is that span or was called from it.
    pub fn key(&self) -> String {
        match self {
            Link::Span { trace, span } | Link::CalledFrom { trace, span } => {
                format!("span:{trace}:{span}")
            }
            Link::Correlation(c) => format!("correlation:{c}"),
        }
    }
}

/// What a reader established about one event. The default says nothing:
/// paired by id (or no pairing at all), full arguments, read as written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReaderFacts {
    /// How an outcome (or another answer) was paired with its request.
    pub pairing: Pairing,
    /// For an `accepted` event: whether the format records the arguments.
    pub arguments: Arguments,
    /// The journal does not record this event: the reader inferred it
    /// from what the journal does record, for the reason given.
    pub inferred: Option<String>,
    /// For an answer on another record than its request: where the request is.
    pub request: Option<SourceRef>,
    /// Other display-only notes, by name (a journal field the reader used
    /// for its own purposes and shows as written, such as Sallyport's
    /// `origin`).
    pub notes: Vec<(&'static str, Value)>,
    /// Which layer of the call's path recorded the event; `None` for a
    /// journal that is the gateway's own record of every layer it sees
    /// (native journals, most gateway logs).
    pub layer: Option<Layer>,
    /// Identities that tie the event's call to the same call recorded by
    /// another layer or another journal.
    pub links: Vec<Link>,
    /// For an `accepted` event: the journal does not record dispatches (a
    /// log of requests and answers, where an answer implies the dispatch),
    /// so a call with no answer may or may not have reached the target:
    /// its dispatch is unknown, not absent (docs/design.md §2.1).
    pub dispatch_unrecorded: bool,
}

/// The facts of an event without any ([`super::Event::facts`]).
pub(super) static NO_FACTS: ReaderFacts = ReaderFacts {
    pairing: Pairing::ById,
    arguments: Arguments::Full,
    inferred: None,
    request: None,
    notes: Vec::new(),
    layer: None,
    links: Vec::new(),
    dispatch_unrecorded: false,
};

impl ReaderFacts {
    /// Facts saying only that the event was inferred, and why.
    pub fn inferred(why: impl Into<String>) -> Self {
        ReaderFacts {
            inferred: Some(why.into()),
            ..ReaderFacts::default()
        }
    }

    /// Whether these are the default facts (nothing established).
    pub fn is_empty(&self) -> bool {
        *self == NO_FACTS
    }

    /// The facts as [`super::Event::facts`] holds them: out of line, and
    /// nothing at all when empty (most events have none).
    pub fn boxed(self) -> Option<Box<ReaderFacts>> {
        (!self.is_empty()).then(|| Box::new(self))
    }
}

/// As a JSON object for event views, only what was established:
/// `pairing` (`{"by": "position" | "content", "why": …, "uncertain": true}`),
/// `arguments_logged` (`"no: …"`, `"partly: …"`), `inferred` (why),
/// `request_line` (the request's line or row), the notes by name, `layer`,
/// `links`, and `dispatch_recorded: false` on an `accepted` event of a
/// journal that does not record dispatches.
impl Serialize for ReaderFacts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        if let Some(why) = self.pairing.why() {
            let by = match self.pairing {
                Pairing::ByContent { .. } => "content",
                _ => "position",
            };
            let mut p = serde_json::Map::new();
            p.insert("by".into(), by.into());
            p.insert("why".into(), why.into());
            if self.pairing.is_uncertain() {
                p.insert("uncertain".into(), true.into());
            }
            m.serialize_entry("pairing", &p)?;
        }
        if let Some(a) = self.arguments.label() {
            m.serialize_entry("arguments_logged", &a)?;
        }
        if let Some(why) = &self.inferred {
            m.serialize_entry("inferred", why)?;
        }
        if let Some(r) = self.request {
            m.serialize_entry("request_line", &r.position())?;
        }
        for (k, v) in &self.notes {
            m.serialize_entry(k, v)?;
        }
        if let Some(l) = self.layer {
            m.serialize_entry("layer", &l)?;
        }
        if !self.links.is_empty() {
            m.serialize_entry("links", &self.links)?;
        }
        if self.dispatch_unrecorded {
            m.serialize_entry("dispatch_recorded", &false)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_facts_take_no_room() {
        assert!(ReaderFacts::default().is_empty());
        assert!(ReaderFacts::default().boxed().is_none());
        let f = ReaderFacts::inferred("placed at the answer's time");
        assert_eq!(f.clone().boxed().as_deref(), Some(&f));
    }

    #[test]
    fn every_link_serializes() {
        let links = vec![
            Link::Span {
                trace: "t".into(),
                span: "s".into(),
            },
            Link::CalledFrom {
                trace: "t".into(),
                span: "p".into(),
            },
            Link::Correlation("c0ffee".into()),
        ];
        assert_eq!(
            serde_json::to_value(&links).unwrap(),
            serde_json::json!([
                {"by": "span", "trace": "t", "span": "s"},
                {"by": "called_from", "trace": "t", "span": "p"},
                {"by": "correlation", "id": "c0ffee"}
            ])
        );
    }

    #[test]
    fn pairings_name_themselves() {
        let p = Pairing::ByPosition {
            why: "3 requests were in flight".into(),
            uncertain: true,
        };
        assert_eq!(p.words(), Some("paired by position"));
        assert!(p.is_uncertain());
        let c = Pairing::ByContent {
            why: "the answer names its request".into(),
        };
        assert_eq!(c.words(), Some("paired by content"));
        assert!(!c.is_uncertain());
        assert_eq!(Pairing::ById.words(), None);
    }

    #[test]
    fn shows_only_what_was_established() {
        let f = ReaderFacts {
            pairing: Pairing::ByPosition {
                why: "w".into(),
                uncertain: false,
            },
            arguments: Arguments::No("paths only".into()),
            request: Some(SourceRef::Line {
                journal: 0,
                line: 7,
                offset: crate::model::LineOffset::new(0),
                len: 0,
            }),
            ..ReaderFacts::default()
        };
        assert_eq!(
            serde_json::to_value(&f).unwrap(),
            serde_json::json!({
                "pairing": {"by": "position", "why": "w"},
                "arguments_logged": "no: paths only",
                "request_line": 7
            })
        );
        assert_eq!(
            serde_json::to_value(ReaderFacts::default()).unwrap(),
            serde_json::json!({})
        );
    }
}
