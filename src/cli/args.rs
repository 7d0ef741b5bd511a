//! Command-line arguments (DESIGN.md §7).

use crate::journal::Format;
use clap::{Args, Parser, Subcommand};
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
}

fn parse_format(s: &str) -> Result<Format, String> {
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
