//! Command-line arguments (docs/design.md §7). Each command takes only the
//! options it uses, so that its `--help` lists nothing it ignores; with no
//! command (the TUI) every option is accepted, and options written before a
//! command name (`retrace --read-only export …`) still apply to it.

use crate::query::{Decision, Format, Severity, TimeWindow, UnknownFormat};
use chrono::{DateTime, Utc};
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
    /// Journals to open in the TUI (files of any supported format, gzip or
    /// zstd compressed or not, and folders of them).
    #[arg(value_name = "JOURNAL")]
    pub journals: Vec<PathBuf>,

    /// How journals are read.
    #[command(flatten)]
    pub read: ReadOpts,

    /// How calls are turned into intents.
    #[command(flatten)]
    pub analysis: AnalysisOpts,

    /// The case file.
    #[command(flatten)]
    pub case: CaseOpts,

    /// Who decides.
    #[command(flatten)]
    pub reviewer: ReviewerOpts,

    /// TUI look and feel.
    #[command(flatten)]
    pub tui: TuiOpts,

    /// The stretch of time looked at.
    #[command(flatten)]
    pub window: WindowOpts,

    /// Options every command takes.
    #[command(flatten)]
    pub global: GlobalOpts,

    /// A headless command instead of the TUI.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Options every command takes.
#[derive(Debug, Clone, Default, Args)]
pub struct GlobalOpts {
    /// Settings file (TOML) instead of $XDG_CONFIG_HOME/retrace/config.toml
    /// (else ~/.config/retrace/config.toml); flags win over it.
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,

    /// Colour in text output: auto (on a terminal, unless NO_COLOR is
    /// set), always, never.
    #[arg(long, value_name = "WHEN", global = true)]
    pub color: Option<ColorWhen>,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set (no-color.org).
    Auto,
    /// Always, even into a pipe.
    Always,
    /// Never.
    Never,
}

/// How journals are read.
#[derive(Debug, Clone, Default, Args)]
pub struct ReadOpts {
    /// A folder given as a journal also stands for the journal files in
    /// its subfolders (without it: only the files directly in it).
    #[arg(short = 'r', long)]
    pub recursive: bool,

    /// Read every journal as this format instead of detecting it
    /// (docs/formats.md).
    #[arg(long, value_name = "FORMAT", value_parser = FormatParser)]
    pub input_format: Option<Format>,

    /// Sallyport audit signer public key (P-256 point in X9.63/SEC1 form;
    /// raw, hex or base64): row signatures are checked.
    #[arg(long, value_name = "FILE")]
    pub signer_key: Option<PathBuf>,

    /// Sallyport exported audit identity (32-byte P-256 private key; raw,
    /// hex or base64): sealed events are decrypted and read.
    #[arg(long, value_name = "FILE")]
    pub audit_identity: Option<PathBuf>,

    /// mcp-audit attestation key: the HMAC-SHA256 secret (as in its
    /// key.hex) or the Ed25519 public key: attestations are checked.
    #[arg(long, value_name = "FILE")]
    pub attestation_key: Option<PathBuf>,
}

/// How calls are turned into intents.
#[derive(Debug, Clone, Default, Args)]
pub struct AnalysisOpts {
    /// Tool contracts (TOML): class, attach window, fingerprint fields,
    /// defaults, secret fields per tool. May be given more than once; a
    /// later file's contract for a tool replaces an earlier one's.
    #[arg(long, value_name = "FILE")]
    pub contracts: Vec<PathBuf>,

    /// Deployment key for HMAC-SHA256 fingerprints (hex or raw bytes).
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
}

/// The case file.
#[derive(Debug, Clone, Default, Args)]
pub struct CaseOpts {
    /// Case file (SQLite) holding reviewer decisions, notes and bookmarks.
    /// Default: retrace-case.sqlite beside the first journal named, or in
    /// it when it is a folder; the bundled sample has none unless this is
    /// given.
    #[arg(long = "case", value_name = "FILE")]
    pub case: Option<PathBuf>,

    /// Read-only mode: never write a decision, a case file or an export
    /// file (printing to stdout still works).
    #[arg(long)]
    pub read_only: bool,
}

/// Who decides.
#[derive(Debug, Clone, Default, Args)]
pub struct ReviewerOpts {
    /// Reviewer name recorded with a decision (default: the login name).
    #[arg(long, value_name = "NAME")]
    pub reviewer: Option<String>,
}

/// TUI look and feel.
#[derive(Debug, Clone, Default, Args)]
pub struct TuiOpts {
    /// TUI theme: a name from themes/ or a path to a theme file.
    #[arg(long, value_name = "NAME")]
    pub theme: Option<String>,

    /// Leave the mouse to the terminal (its own selection and scrolling)
    /// instead of clicking rows and scrolling panes in the TUI; the same
    /// as `mouse = false` in the settings file.
    #[arg(long)]
    pub no_mouse: bool,
}

/// The stretch of time looked at.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct WindowOpts {
    /// Only executions that began at or after this time: RFC 3339
    /// (2026-07-22T14:00:00Z) or an age before now (2h, 90m, 1h30m, 3d).
    /// An execution kept is kept whole, with its later events.
    #[arg(long, value_name = "TIME", value_parser = parse_when)]
    pub since: Option<DateTime<Utc>>,

    /// Only executions that began at or before this time (RFC 3339 or an
    /// age such as 30m).
    #[arg(long, value_name = "TIME", value_parser = parse_when)]
    pub until: Option<DateTime<Utc>>,
}

impl WindowOpts {
    /// These options, with `outer`'s where these leave one out.
    pub fn or(self, outer: &WindowOpts) -> WindowOpts {
        WindowOpts {
            since: self.since.or(outer.since),
            until: self.until.or(outer.until),
        }
    }

    /// As the query layer takes it.
    pub fn window(self) -> TimeWindow {
        TimeWindow {
            since: self.since,
            until: self.until,
        }
    }
}

/// `--exit-on`: a severity name.
fn parse_severity(s: &str) -> Result<Severity, String> {
    s.parse().map_err(|_| {
        format!(
            "expected one of {}",
            Severity::ALL
                .iter()
                .map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

/// `--settle`, `--interval`: a duration (`10s`, `500ms`, `1m`).
fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    humantime::parse_duration(s).map_err(|e| e.to_string())
}

/// `--since`/`--until`: a time, or an age before now
/// ([`TimeWindow::parse_bound`]).
fn parse_when(s: &str) -> Result<DateTime<Utc>, String> {
    TimeWindow::parse_bound(s, Utc::now()).map_err(|e| e.to_string())
}

/// Parses `--input-format`, offering every format retrace reads (help and
/// completions list them, with their descriptions).
#[derive(Debug, Clone, Copy)]
struct FormatParser;

impl clap::builder::TypedValueParser for FormatParser {
    type Value = Format;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<Format, clap::Error> {
        let s = value
            .to_str()
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidUtf8).with_cmd(cmd))?;
        s.parse::<Format>().map_err(|e: UnknownFormat| {
            let mut err = clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd);
            if let Some(a) = arg {
                err.insert(
                    clap::error::ContextKind::InvalidArg,
                    clap::error::ContextValue::String(a.to_string()),
                );
            }
            err.insert(
                clap::error::ContextKind::InvalidValue,
                clap::error::ContextValue::String(e.0),
            );
            err.insert(
                clap::error::ContextKind::ValidValue,
                clap::error::ContextValue::Strings(
                    Format::ALL.iter().map(|f| f.name().to_string()).collect(),
                ),
            );
            err
        })
    }

    fn possible_values(
        &self,
    ) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Format::ALL.iter().map(|f| {
            clap::builder::PossibleValue::new(f.name()).help(f.describe())
        })))
    }
}

/// Headless commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List groups of calls that share an intent, worst first.
    Groups {
        /// Journals to read: files, compressed or not, and folders of them
        /// (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// List every group, not only those with two or more calls, a
        /// verdict other than clean, or a fingerprint_drift or
        /// no_accepted_record finding.
        #[arg(long)]
        all: bool,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
        /// The stretch of time looked at.
        #[command(flatten)]
        window: WindowOpts,
    },
    /// Walk one group through the five questions to its verdict.
    Investigate {
        /// Journals to read: files, compressed or not, and folders of them
        /// (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Group id (or a unique prefix), as `retrace groups` prints it.
        #[arg(long, value_name = "ID")]
        group: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
        /// The stretch of time looked at.
        #[command(flatten)]
        window: WindowOpts,
    },
    /// Verify the audit chains of journals and of their case file
    /// (docs/design.md §6): for each, the rule used, the lines checked and
    /// the first failure. Exit 0 when every chain is intact (or the format
    /// has none), 1 when one is broken or could not be checked, 2 when a
    /// journal is unreadable.
    Verify {
        /// Journals to verify: files, compressed or not, and folders of
        /// them (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Print a JSON array, one object per journal.
        #[arg(long)]
        json: bool,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// Case file to verify as well (default: retrace-case.sqlite beside
        /// the first journal, when it exists).
        #[arg(long = "case", value_name = "FILE")]
        case: Option<PathBuf>,
        /// Anchor file: compare each journal with the length, digest, last
        /// seq and head hash recorded there (a cut tail or rewritten
        /// history shows), and record journals it does not hold yet.
        #[arg(long = "anchor", value_name = "FILE")]
        anchor: Option<PathBuf>,
    },
    /// Follow journals as they grow: print a line whenever a group becomes
    /// worth a look or its verdict changes (appended lines, a last line
    /// finished later, rotation and truncation followed). Exit 0 on Ctrl-C,
    /// 3 with --exit-on at the first group at or above that severity.
    Watch {
        /// Journal files to follow (folders: the journal files in them).
        #[arg(value_name = "JOURNAL", required = true)]
        journals: Vec<PathBuf>,
        /// Print one JSON object per line (for alerting pipelines).
        #[arg(long)]
        json: bool,
        /// Exit with status 3 at the first group at or above this severity.
        #[arg(long, value_name = "SEVERITY", value_parser = parse_severity)]
        exit_on: Option<Severity>,
        /// How long a group must be quiet before a verdict below high is
        /// printed (a call still in flight is not yet an unknown outcome).
        #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
        settle: std::time::Duration,
        /// How often the journals are looked at.
        #[arg(long, value_name = "DURATION", default_value = "200ms", value_parser = parse_duration)]
        interval: std::time::Duration,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
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
    #[command(group = clap::ArgGroup::new("which").required(true).args(["group", "all"]))]
    Export {
        /// Journals to read: files, compressed or not, and folders of them
        /// (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Group id (or a unique prefix).
        #[arg(long, value_name = "ID")]
        group: Option<String>,
        /// Every group that `retrace groups` lists (two or more calls, a
        /// verdict other than clean, or a fingerprint_drift or
        /// no_accepted_record finding).
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
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
        /// The stretch of time looked at.
        #[command(flatten)]
        window: WindowOpts,
    },
    /// Draft tool contracts from the journals, or check contracts against
    /// them (docs/design.md §4.6).
    Contracts {
        /// What to do.
        #[command(subcommand)]
        command: ContractsCommand,
    },
    /// Print a shell completion script: put it where your shell loads
    /// completions (README: "Settings, colour, completions").
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout: `retrace man > retrace.1`.
    Man,
    /// Print the effective settings and where each comes from (a flag, the
    /// settings file, the environment, or the default).
    Config {
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
        /// Who decides.
        #[command(flatten)]
        reviewer: ReviewerOpts,
        /// TUI look and feel.
        #[command(flatten)]
        tui: TuiOpts,
    },
}

/// `retrace contracts` commands.
#[derive(Debug, Subcommand)]
pub enum ContractsCommand {
    /// Print a contracts file (TOML) for every tool the journals show:
    /// class from the servers' annotations and the calls (idempotency
    /// keys), attach window from the repeats seen, fingerprint fields from
    /// the arguments seen, each guess commented with its evidence.
    /// `--contracts` accepts the output as it is.
    Draft {
        /// Journals to read (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Write to FILE (atomically) instead of stdout.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        /// Print the drafts as JSON instead of TOML.
        #[arg(long)]
        json: bool,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
    },
    /// Check the contracts (`--contracts`) against the journals: tools
    /// with side effects called without a contract, contracts of tools
    /// never seen, fingerprint fields no call carries, defaults, classes
    /// and windows the calls contradict. Exit 1 when it finds any.
    Lint {
        /// Journals to read (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Print a JSON array of findings.
        #[arg(long)]
        json: bool,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
    },
}

/// `retrace review` commands.
#[derive(Debug, Subcommand)]
pub enum ReviewCommand {
    /// The review queue, oldest first: each execution with its original
    /// activity record (target, first dispatch, known outcome, calls, why
    /// the gateway did not send it again).
    List {
        /// Journals to read: files, compressed or not, and folders of them
        /// (default: the bundled sample incident).
        #[arg(value_name = "JOURNAL")]
        journals: Vec<PathBuf>,
        /// Print a JSON array.
        #[arg(long)]
        json: bool,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
        /// The stretch of time looked at.
        #[command(flatten)]
        window: WindowOpts,
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
        /// What the reviewer found (docs/design.md §5.8); `review list` says
        /// which an execution allows: confirmed_completed (the target shows
        /// it happened), confirmed_not_executed (safe to dispatch once
        /// more), confirmed_delivered / confirmed_not_delivered (whether the
        /// result reached the agent), escalated.
        #[arg(long, value_name = "DECISION", value_parser = parse_decision)]
        decision: Decision,
        /// Why: what the target shows (required).
        #[arg(long, value_name = "TEXT")]
        note: String,
        /// How journals are read.
        #[command(flatten)]
        read: ReadOpts,
        /// How calls are turned into intents.
        #[command(flatten)]
        analysis: AnalysisOpts,
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
        /// Who decides.
        #[command(flatten)]
        reviewer: ReviewerOpts,
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
        /// The case file.
        #[command(flatten)]
        case: CaseOpts,
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

/// A command-line value that is not one of the names it may take.
#[derive(Debug, thiserror::Error)]
#[error("expected one of {0}")]
pub struct ExpectedOneOf(String);

fn parse_decision(s: &str) -> Result<Decision, ExpectedOneOf> {
    Decision::parse(s).ok_or_else(|| {
        ExpectedOneOf(
            Decision::ALL
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        )
    })
}

impl ReadOpts {
    /// These options, with `outer`'s (written before the command name)
    /// where these leave one out.
    pub fn or(self, outer: &ReadOpts) -> ReadOpts {
        ReadOpts {
            recursive: self.recursive || outer.recursive,
            input_format: self.input_format.or(outer.input_format),
            signer_key: self.signer_key.or_else(|| outer.signer_key.clone()),
            audit_identity: self.audit_identity.or_else(|| outer.audit_identity.clone()),
            attestation_key: self
                .attestation_key
                .or_else(|| outer.attestation_key.clone()),
        }
    }
}

impl AnalysisOpts {
    /// These options, with `outer`'s where these leave one out.
    pub fn or(self, outer: &AnalysisOpts) -> AnalysisOpts {
        AnalysisOpts {
            contracts: if self.contracts.is_empty() {
                outer.contracts.clone()
            } else {
                self.contracts
            },
            key_file: self.key_file.or_else(|| outer.key_file.clone()),
        }
    }
}

impl CaseOpts {
    /// These options, with `outer`'s where these leave one out.
    pub fn or(self, outer: &CaseOpts) -> CaseOpts {
        CaseOpts {
            case: self.case.or_else(|| outer.case.clone()),
            read_only: self.read_only || outer.read_only,
        }
    }
}

impl ReviewerOpts {
    /// These options, with `outer`'s where these leave one out.
    pub fn or(self, outer: &ReviewerOpts) -> ReviewerOpts {
        ReviewerOpts {
            reviewer: self.reviewer.or_else(|| outer.reviewer.clone()),
        }
    }
}

#[cfg(test)]
mod tests;
