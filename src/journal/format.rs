//! The input formats retrace reads. Each reader states its format's facts
//! once, in a [`FormatFacts`] beside its code; [`Format`] registers them,
//! one line per format, in detection order.

use super::JournalReader;
use super::chain::ChainStatus;
use super::{contextforge, gh_aw, mcp_acp, mcp_audit, mcpproxy, native, otlp, sallyport, sqlite};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// What a journal format is and what it can show, as its reader states it
/// (one `static FACTS` per reader module).
pub struct FormatFacts {
    /// The `--input-format` spelling, also used in JSON: a CLI contract.
    pub name: &'static str,
    /// A one-line description for listings and errors.
    pub description: &'static str,
    /// How answers name a journal of the format ("the gh-aw gateway log").
    pub noun: &'static str,
    /// What a journal of the format can show.
    pub capabilities: Capabilities,
    /// Why a journal of the format has no chain: its chain status until
    /// its reader verifies one.
    pub no_chain: &'static str,
    /// For a format that records several layers of a call (docs/design.md
    /// §5.12), the one whose records show whether the result reached the
    /// agent (OTLP traces: the client's spans; a server's or a gateway's
    /// span does not know). `None`: every record of the format that can
    /// show delivery does.
    pub delivery_layer: Option<crate::model::Layer>,
    /// The reader.
    pub(super) reader: &'static dyn JournalReader,
}

impl fmt::Debug for FormatFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FormatFacts")
            .field("name", &self.name)
            .field("capabilities", &self.capabilities)
            .finish_non_exhaustive()
    }
}

/// Declares [`Format`] from one line per format: its variant and the
/// reader's facts. The order is the detection order.
macro_rules! formats {
    ($( $(#[$doc:meta])* $variant:ident => $facts:path, )*) => {
        /// Input formats retrace reads. The [`Format::name`] spelling is
        /// what `--input-format` takes.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum Format {
            $( $(#[$doc])* $variant, )*
        }

        impl Format {
            /// Every format, in detection order.
            pub const ALL: &'static [Format] = &[$(Format::$variant),*];

            /// The facts its reader states.
            pub fn facts(self) -> &'static FormatFacts {
                match self {
                    $( Format::$variant => &$facts, )*
                }
            }
        }
    };
}

formats! {
    /// retrace's own JSONL (docs/design.md §3).
    Native => native::FACTS,
    /// retrace's native journal stored in SQLite (`events` and `sessions`
    /// tables with the native fields as columns).
    NativeSqlite => sqlite::FACTS,
    /// github/gh-aw-mcpg `rpc-messages.jsonl`, v1 and v2 envelopes
    /// (docs/formats.md#gh-aw-mcpg).
    GhAwMcpg => gh_aw::FACTS,
    /// mcp-acp audit logs (operations, decisions) and its client wire log
    /// (docs/formats.md#mcp-acp).
    McpAcp => mcp_acp::FACTS,
    /// smart-mcp-proxy/mcpproxy-go activity exports (JSONL;
    /// docs/formats.md#mcpproxy).
    McpProxy => mcpproxy::FACTS,
    /// elang2/mcp-audit-gateway `audit.jsonl` (hash-chained, attested;
    /// docs/formats.md#mcp-audit).
    McpAudit => mcp_audit::FACTS,
    /// mcp-audit-gateway (PyPI, module `mcp_gateway`) `audit-log.jsonl`,
    /// not elang2's `mcp-audit`; after it, so a hash-chained line is
    /// always elang2's (docs/formats.md#mcp-audit-gateway).
    McpAuditGateway => super::mcp_audit_gateway::FACTS,
    /// Sallyport audit journal: sealed, hash-chained, signed rows
    /// (docs/formats.md#sallyport).
    Sallyport => sallyport::FACTS,
    /// OpenTelemetry traces as OTLP JSON: the Collector's file exporter or
    /// an OTLP/HTTP JSON body (docs/formats.md#otlp-json).
    OtlpJson => otlp::FACTS,
    /// IBM ContextForge: its database (SQLite file or postgres:// URL,
    /// told by its tables) or its JSON log (docs/formats.md#contextforge).
    ContextForge => contextforge::FACTS,
}

impl Format {
    /// The `--input-format` spelling.
    pub fn name(self) -> &'static str {
        self.facts().name
    }

    /// A one-line description for listings and errors.
    pub fn describe(self) -> &'static str {
        self.facts().description
    }

    /// What a journal of this format can show. Question answers use it to
    /// say what the journal lacks instead of guessing.
    pub fn capabilities(self) -> Capabilities {
        self.facts().capabilities
    }

    /// The chain status a journal of this format has before its reader
    /// says otherwise: formats without a chain say why.
    pub fn default_chain(self) -> ChainStatus {
        ChainStatus::no_chain(self.facts().no_chain)
    }

    pub(super) fn reader(self) -> &'static dyn JournalReader {
        self.facts().reader
    }

    /// How answers name a journal of this format ("the gh-aw gateway log").
    pub fn noun(self) -> &'static str {
        self.facts().noun
    }

    /// The list of format names, for error messages and help.
    pub fn names() -> String {
        Format::ALL
            .iter()
            .map(|f| f.name())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// As its name: JSON spells a format as `--input-format` takes it.
impl Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A format name retrace does not read (`--input-format csv`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown input format {0:?}; retrace reads: {names}", names = Format::names())]
pub struct UnknownFormat(pub String);

impl FromStr for Format {
    type Err = UnknownFormat;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| UnknownFormat(s.to_string()))
    }
}

/// What a journal format records. A `false` here turns the matching
/// investigation question into `unknown: <what the journal lacks>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// Gateway-created execution ids, so later calls can be seen attaching.
    pub execution_identity: bool,
    /// Authorization decisions.
    pub authorization: bool,
    /// Whether the result reached the agent.
    pub delivery: bool,
    /// Agent runs with process identity.
    pub sessions: bool,
    /// An authenticated actor per call.
    pub authenticated_actor: bool,
}

impl Capabilities {
    /// What two journals show together: a call recorded in both
    /// (docs/design.md §5.12) shows what either shows.
    pub fn or(self, o: Capabilities) -> Capabilities {
        Capabilities {
            execution_identity: self.execution_identity || o.execution_identity,
            authorization: self.authorization || o.authorization,
            delivery: self.delivery || o.delivery,
            sessions: self.sessions || o.sessions,
            authenticated_actor: self.authenticated_actor || o.authenticated_actor,
        }
    }
}
