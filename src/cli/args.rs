//! Command-line arguments (DESIGN.md §7).

use crate::analysis::Decision;
use crate::journal::Format;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Terminal incident investigator for duplicate MCP tool calls.
///
/// With no command, opens the TUI; with no journal, uses the bundled sample
/// incident (a deploy_release whose HTTP 201 was lost with the stream, then
/// sent again).
#[derive(Debug, Parser)]
#[command(name = "retrace", version, about, long_about)]
pub struct Cli {
    /// Journals to open in the TUI (JSONL files of any supported format).
    #[arg(value_name = "JOURNAL")]
    pub journals: Vec<PathBuf>,

    /// Options every command takes.
    #[command(flatten)]
    pub common: Common,

    /// A headless command instead of the TUI.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options every command takes.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// Tool contracts (TOML): class, attach window, fingerprint fields,
    /// defaults, secret fields per tool.
    #[arg(long, value_name = "FILE", global = true)]
    pub contracts: Option<PathBuf>,

    /// Deployment key for HMAC-SHA256 fingerprints (hex or raw bytes).
    #[arg(long, value_name = "FILE", global = true)]
    pub key_file: Option<PathBuf>,

    /// Read every journal as this format instead of detecting it: native,
    /// native-sqlite, gh-aw-mcpg, mcp-acp, mcpproxy, mcp-audit, sallyport
    /// (docs/formats.md).
    #[arg(long, value_name = "FORMAT", global = true, value_parser = parse_format)]
    pub input_format: Option<Format>,

    /// TUI theme: a name from themes/ or a path to a theme file.
    #[arg(long, value_name = "NAME", global = true)]
    pub theme: Option<String>,

    /// Sallyport audit signer public key (P-256 point in X9.63/SEC1 form;
    /// raw, hex or base64): row signatures are checked.
    #[arg(long, value_name = "FILE", global = true)]
    pub signer_key: Option<PathBuf>,

    /// Sallyport exported audit identity (32-byte P-256 private key; raw,
    /// hex or base64): sealed events are decrypted and read.
    #[arg(long, value_name = "FILE", global = true)]
    pub audit_identity: Option<PathBuf>,

    /// mcp-audit attestation key: the HMAC-SHA256 secret (as in its
    /// key.hex) or the Ed25519 public key: attestations are checked.
    #[arg(long, value_name = "FILE", global = true)]
    pub attestation_key: Option<PathBuf>,

    /// Case file (SQLite) holding reviewer decisions, notes and bookmarks.
    /// Default: retrace-case.sqlite in the folder of the first journal;
    /// the bundled sample has none unless this is given.
    #[arg(long = "case", value_name = "FILE", global = true)]
    pub case: Option<PathBuf>,

    /// Reviewer name recorded with a decision (default: the login name).
    #[arg(long, value_name = "NAME", global = true)]
    pub reviewer: Option<String>,

    /// Read-only mode: never write a decision, a case file or an export
    /// file (printing to stdout still works).
    #[arg(long, global = true)]
    pub read_only: bool,
}

fn parse_format(s: &str) -> Result<Format, crate::journal::UnknownFormat> {
    s.parse()
}

/// Headless commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List groups of calls that share an intent, worst first.
    Groups {
        /// Journals to read (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// List every group, not only those with two or more calls or a
        /// verdict other than clean.
        #[arg(long)]
        all: bool,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Walk one group through the five questions to its verdict.
    Investigate {
        /// Journals to read (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Group id (or a unique prefix), as `retrace groups` prints it.
        #[arg(long, value_name = "ID")]
        group: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Verify the audit chains of journals (DESIGN.md §6): for each, the rule
    /// used, the lines checked and the first failure. Exit 0 when every chain
    /// is intact (or the format has none), 1 when one is broken or could not
    /// be checked, 2 when a journal is unreadable.
    Verify {
        /// Journals to verify (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Print a JSON array, one object per journal.
        #[arg(long)]
        json: bool,
    },
    /// Review executions whose outcome is unknown or whose result was not
    /// delivered, and record decisions in the case file.
    Review {
        /// What to do.
        #[command(subcommand)]
        command: ReviewCommand,
    },
    /// Write a postmortem: per group the verdict, a timeline, the five
    /// questions with evidence, reviewer decisions, chain status and a
    /// Mermaid sequence diagram.
    Export {
        /// Journals to read (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Group id (or a unique prefix).
        #[arg(
            long,
            value_name = "ID",
            required_unless_present = "all",
            conflicts_with = "all"
        )]
        group: Option<String>,
        /// Every group that `retrace groups` lists (two or more calls, or a
        /// verdict other than clean).
        #[arg(long)]
        all: bool,
        /// Output format.
        #[arg(long, value_enum)]
        format: ExportFormat,
        /// Write to FILE (atomically) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Replace actors, targets, arguments, ids, names and journal free
        /// text with consistent pseudonyms.
        #[arg(long)]
        anonymize: bool,
    },
}

/// `retrace review` commands.
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// The review queue, oldest first: each execution with its original
    /// activity record (target, first dispatch, known outcome, calls, why
    /// the gateway did not send it again).
    List {
        /// Journals to read (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
    },
    /// Record a decision about one execution in the case file.
    Decide {
        /// The execution, as `retrace review list` prints it.
        #[arg(value_name = "EXECUTION_ID")]
        execution_id: String,
        /// Journals to read (default: the bundled sample incident, which
        /// needs --case).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// confirmed_completed (the target shows it happened),
        /// confirmed_not_executed (safe to dispatch once more), escalated.
        #[arg(long, value_name = "DECISION", value_parser = parse_decision)]
        decision: Decision,
        /// Why: what the target shows (required).
        #[arg(long, value_name = "TEXT")]
        note: String,
    },
    /// Write the decisions as JSONL that a gateway can consume.
    Export {
        /// Journals whose case file to read (default: the bundled sample,
        /// which needs --case).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Write to FILE (atomically) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
    },
}

/// `retrace export --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormat {
    /// Markdown with tables and a Mermaid sequence diagram.
    Markdown,
    /// JSON with the same content.
    Json,
    /// The timeline as CSV.
    Csv,
}

fn parse_decision(s: &str) -> Result<Decision, String> {
    Decision::parse(s).ok_or_else(|| {
        format!(
            "expected one of {}",
            Decision::ALL.map(Decision::as_str).join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn input_format_help_names_every_format() {
        let help = Cli::command().render_long_help().to_string();
        for f in Format::ALL {
            assert!(help.contains(f.name()), "{f} missing from --help");
        }
    }
}
