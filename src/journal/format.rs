//! The input formats retrace reads, what each can show, and which reader
//! reads it.

use super::chain::ChainStatus;
use super::{JournalReader, gh_aw, mcp_acp, mcp_audit, mcpproxy, native, sallyport, sqlite};
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// Input formats retrace reads. The `name` spelling is what
/// `--input-format` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Format {
    /// retrace's own JSONL (DESIGN.md §3).
    Native,
    /// retrace's native journal stored in SQLite (`events` and `sessions`
    /// tables with the native fields as columns).
    NativeSqlite,
    /// github/gh-aw-mcpg `rpc-messages.jsonl`, v1 and v2 envelopes
    /// (research/journal-formats.md §2.4).
    GhAwMcpg,
    /// mcp-acp audit logs (operations, decisions) and its client wire log
    /// (research/journal-formats.md §2.3).
    McpAcp,
    /// smart-mcp-proxy/mcpproxy-go activity exports (JSONL;
    /// research/journal-formats.md §2.5).
    McpProxy,
    /// elang2/mcp-audit-gateway `audit.jsonl` (hash-chained, attested;
    /// research/journal-formats.md §2.1).
    McpAudit,
    /// Sallyport audit journal: sealed, hash-chained, signed rows
    /// (research/journal-formats.md §1).
    Sallyport,
}

impl Format {
    /// Every format, in detection order.
    pub const ALL: &'static [Format] = &[
        Format::Native,
        Format::NativeSqlite,
        Format::GhAwMcpg,
        Format::McpAcp,
        Format::McpProxy,
        Format::McpAudit,
        Format::Sallyport,
    ];

    /// The `--input-format` spelling.
    pub fn name(self) -> &'static str {
        match self {
            Format::Native => "native",
            Format::NativeSqlite => "native-sqlite",
            Format::GhAwMcpg => "gh-aw-mcpg",
            Format::McpAcp => "mcp-acp",
            Format::McpProxy => "mcpproxy",
            Format::McpAudit => "mcp-audit",
            Format::Sallyport => "sallyport",
        }
    }

    /// A one-line description for listings and errors.
    pub fn describe(self) -> &'static str {
        match self {
            Format::Native => "retrace native JSONL (sessions, events, execution snapshots)",
            Format::NativeSqlite => "retrace native journal in SQLite (events and sessions tables)",
            Format::GhAwMcpg => "gh-aw MCP gateway rpc-messages.jsonl (v1 and v2)",
            Format::McpAcp => {
                "mcp-acp operations.jsonl, decisions.jsonl (hash-chained) and client_wire.jsonl"
            }
            Format::McpProxy => "mcpproxy activity export (mcpproxy activity export, JSONL)",
            Format::McpAudit => {
                "mcp-audit gateway audit.jsonl (hash chain, HMAC or Ed25519 attestations)"
            }
            Format::Sallyport => {
                "Sallyport audit journal (sealed events, hash chain, ECDSA signatures)"
            }
        }
    }

    /// What a journal of this format can show. Question answers use it to
    /// say what the journal lacks instead of guessing.
    pub fn capabilities(self) -> Capabilities {
        match self {
            Format::Native | Format::NativeSqlite => Capabilities {
                execution_identity: true,
                authorization: true,
                delivery: true,
                sessions: true,
                authenticated_actor: true,
            },
            Format::GhAwMcpg => Capabilities {
                execution_identity: false,
                authorization: false,
                delivery: false,
                sessions: false,
                authenticated_actor: false,
            },
            // Per file kind; the reader narrows it (operations shown here).
            Format::McpAcp => Capabilities {
                execution_identity: false,
                authorization: false,
                delivery: false,
                sessions: false,
                authenticated_actor: true,
            },
            Format::McpProxy => Capabilities {
                execution_identity: false,
                authorization: false,
                delivery: false,
                sessions: false,
                authenticated_actor: false,
            },
            Format::McpAudit => Capabilities {
                execution_identity: false,
                authorization: false,
                delivery: false,
                sessions: false,
                authenticated_actor: true,
            },
            Format::Sallyport => Capabilities {
                execution_identity: false,
                authorization: true,
                delivery: false,
                sessions: true,
                authenticated_actor: false,
            },
        }
    }

    /// The chain status a journal of this format has before its reader
    /// says otherwise: formats without a chain say why.
    pub fn default_chain(self) -> ChainStatus {
        match self {
            Format::Native => ChainStatus::no_chain("the journal carries no prev_hash/hash fields"),
            Format::NativeSqlite => {
                ChainStatus::no_chain("the events table has no prev_hash/hash columns")
            }
            Format::GhAwMcpg => ChainStatus::no_chain("gh-aw-mcpg logs carry no hash chain"),
            Format::McpAcp => ChainStatus::no_chain(
                "no line carries sequence/entry_hash (mcp-acp debug wire logs are not chained)",
            ),
            Format::McpProxy => {
                ChainStatus::no_chain("mcpproxy activity exports carry no hash chain")
            }
            Format::McpAudit => ChainStatus::no_chain("no chained line was read"),
            Format::Sallyport => ChainStatus::no_chain("no sealed row was read"),
        }
    }

    pub(super) fn reader(self) -> &'static dyn JournalReader {
        match self {
            Format::Native => &native::NativeReader,
            Format::NativeSqlite => &sqlite::SqliteReader,
            Format::GhAwMcpg => &gh_aw::GhAwReader,
            Format::McpAcp => &mcp_acp::McpAcpReader,
            Format::McpProxy => &mcpproxy::McpProxyReader,
            Format::McpAudit => &mcp_audit::McpAuditReader,
            Format::Sallyport => &sallyport::SallyportReader,
        }
    }

    /// How answers name a journal of this format ("the gh-aw gateway log").
    pub fn noun(self) -> &'static str {
        match self {
            Format::Native | Format::NativeSqlite => "the journal",
            Format::GhAwMcpg => "the gh-aw gateway log",
            Format::McpAcp => "the mcp-acp log",
            Format::McpProxy => "the mcpproxy activity export",
            Format::McpAudit => "the mcp-audit log",
            Format::Sallyport => "the Sallyport audit journal",
        }
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

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Format::ALL
            .iter()
            .copied()
            .find(|f| f.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown input format {s:?}; retrace reads: {}",
                    Format::names()
                )
            })
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
