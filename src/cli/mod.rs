//! Headless commands (DESIGN.md §7): text and JSON over the query layer.
//! Every TUI view has a twin here.

mod args;
mod export;
mod review;
mod text;

pub use args::{Cli, Command, Common, ExportFormat, ReviewCommand};
pub use export::export;
pub use review::{review_decide, review_export, review_list};

use crate::analysis::{Config, Contracts, FingerprintKey};
use crate::journal::chain::ChainStatus;
use crate::journal::{ChainKeys, Format, JournalSource, KeyFile, LoadOptions, Progress};
use crate::query::{GroupFilter, Investigation};
use crate::sanitize::escape;
use std::io::{self, Write};

/// What went wrong, and the process exit code it maps to.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Unreadable input (a journal, contracts, key): exit 2.
    #[error("{0}")]
    Input(String),
    /// Writing output failed (a closed pipe is not an error).
    #[error("cannot write output: {0}")]
    Output(#[from] io::Error),
    /// A write was refused (read-only mode, a broken case file) or failed
    /// (the case file or an export file could not be written): exit 1.
    /// Nothing was half-written.
    #[error("{0}")]
    Write(String),
}

impl CliError {
    /// The process exit code (DESIGN.md §7: 2 on unreadable input).
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Input(_) => 2,
            CliError::Output(_) | CliError::Write(_) => 1,
        }
    }
}

/// Journals and configuration resolved from the command line. With no
/// journal, the bundled sample incident with its own contracts and key.
pub struct Inputs {
    /// Journals to load.
    pub sources: Vec<JournalSource>,
    /// Contracts and key.
    pub config: Config,
    /// True when the bundled sample is used.
    pub sample: bool,
    /// The case file and the decisions read from it.
    pub case: crate::review::CaseContext,
}

/// Resolves journals, contracts and key from the common options, and reads
/// the case file (`--case`, else `retrace-case.sqlite` beside the first
/// journal, else none for the bundled sample): its decisions become
/// [`Config::resolutions`]. A broken case chain is reported on stderr and
/// only the entries before the break are used.
///
/// # Errors
/// [`CliError::Input`] naming the file that cannot be read.
pub fn inputs(journals: &[std::path::PathBuf], common: &Common) -> Result<Inputs, CliError> {
    check_journal_paths(journals)?;
    // The same file twice would count every event twice.
    let mut seen = std::collections::HashSet::new();
    let mut unique = Vec::with_capacity(journals.len());
    for p in journals {
        let id = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        if seen.insert(id) {
            unique.push(p.clone());
        } else {
            let _ = writeln!(
                io::stderr(),
                "warning: {} is given more than once; it is read once",
                escape(&p.display().to_string())
            );
        }
    }
    let journals = unique.as_slice();
    let sample = journals.is_empty();
    let sources = if sample {
        crate::sample::sources()
    } else {
        journals.iter().map(JournalSource::file).collect()
    };
    let contracts = match &common.contracts {
        Some(p) => Contracts::load(p).map_err(|e| CliError::Input(e.to_string()))?,
        None if sample => crate::sample::contracts(),
        None => Contracts::none(),
    };
    let key = match &common.key_file {
        Some(p) => FingerprintKey::load(p).map_err(|e| CliError::Input(e.to_string()))?,
        None if sample => crate::sample::key(),
        None => FingerprintKey::none(),
    };
    let case = crate::review::CaseContext::load(common.case.as_deref(), journals, common.read_only)
        .map_err(|e| CliError::Input(e.to_string()))?;
    if let (Some(status), Some(name)) = (&case.chain, case.name())
        && !status.is_intact()
    {
        let _ = writeln!(
            io::stderr(),
            "warning: case file {}: chain {}; later entries are ignored (run `retrace verify`)",
            escape(&name),
            escape(&status.describe())
        );
    }
    let resolutions = case.resolutions();
    Ok(Inputs {
        sources,
        config: Config {
            contracts,
            key,
            resolutions,
        },
        sample,
        case,
    })
}

/// Load options from the common options: the forced format and the key
/// files for chain checks and decryption.
///
/// # Errors
/// [`CliError::Input`] naming a key file that cannot be read.
pub fn load_options(common: &Common) -> Result<LoadOptions, CliError> {
    let key = |p: &Option<std::path::PathBuf>| -> Result<Option<KeyFile>, CliError> {
        p.as_deref()
            .map(KeyFile::load)
            .transpose()
            .map_err(|e| CliError::Input(e.to_string()))
    };
    Ok(LoadOptions {
        forced: common.input_format,
        keys: ChainKeys {
            signer_key: key(&common.signer_key)?,
            audit_identity: key(&common.audit_identity)?,
            attestation_key: key(&common.attestation_key)?,
        },
    })
}

/// The subcommands, for "did you mean" when a journal path is a typo of one.
const COMMANDS: [&str; 5] = ["groups", "investigate", "verify", "review", "export"];

/// Says clearly what is wrong with a journal path before anything is read:
/// a missing file that looks like a mistyped command, or a directory.
fn check_journal_paths(journals: &[std::path::PathBuf]) -> Result<(), CliError> {
    for p in journals {
        let shown = escape(&p.display().to_string()).into_owned();
        if p.is_dir() {
            return Err(CliError::Input(format!(
                "{shown}: is a directory; pass the journal files in it (for example {shown}/*.jsonl)"
            )));
        }
        if !p.exists() {
            let name = p.to_string_lossy();
            let hint = COMMANDS
                .iter()
                .find(|c| !name.contains(['/', '.']) && edit_distance(c, &name) <= 2)
                .map(|c| format!(" (did you mean the command `retrace {c}`?)"))
                .unwrap_or_default();
            return Err(CliError::Input(format!(
                "{shown}: no such journal file{hint}"
            )));
        }
    }
    Ok(())
}

/// Levenshtein distance, for command suggestions.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// Loads and analyses, reporting bad lines on stderr.
///
/// # Errors
/// [`CliError::Input`] with a one-line message naming file and line.
pub fn open(inputs: Inputs, common: &Common) -> Result<Investigation, CliError> {
    open_keeping(inputs, common).map(|(inv, _, _)| inv)
}

/// As [`open`], and gives back the configuration and the case file for
/// commands that re-analyse after a decision or cite the case file.
///
/// # Errors
/// As [`open`].
pub fn open_keeping(
    inputs: Inputs,
    common: &Common,
) -> Result<(Investigation, Config, crate::review::CaseContext), CliError> {
    let mut ignore = |_: Progress| {};
    let opts = load_options(common)?;
    let inv = Investigation::open_with(inputs.sources, &opts, &inputs.config, &mut ignore)
        .map_err(|e| CliError::Input(e.to_string()))?;
    report_load(&inv);
    Ok((inv, inputs.config, inputs.case))
}

/// Prints bad-line warnings and journal notes to stderr (at most ten bad
/// lines per journal, then a count).
fn report_load(inv: &Investigation) {
    let mut err = io::stderr().lock();
    for j in &inv.journals {
        for b in j.bad_lines.iter().take(10) {
            let _ = writeln!(err, "warning: {}", escape(&b.to_string()));
        }
        if j.bad_line_count > 10 {
            let _ = writeln!(
                err,
                "warning: {}: {} more bad line(s) not shown",
                escape(&j.name),
                j.bad_line_count - 10
            );
        }
        if j.bad_line_count > 0 {
            let _ = writeln!(
                err,
                "warning: {}: {} of {} lines could not be read and were skipped; the rest were used",
                escape(&j.name),
                j.bad_line_count,
                j.lines
            );
        }
    }
    for j in &inv.journals {
        for n in &j.notes {
            let _ = writeln!(err, "note: {}: {}", escape(&j.name), escape(n));
        }
    }
    for n in &inv.analysis.notes {
        let _ = writeln!(err, "note: {}", escape(n));
    }
}

pub(crate) fn write_json(out: &mut dyn Write, v: &impl serde::Serialize) -> Result<(), CliError> {
    crate::sanitize::write_json_pretty(&mut *out, v)?;
    writeln!(out)?;
    Ok(())
}

/// `retrace groups`.
///
/// # Errors
/// Input or output errors.
pub fn groups(
    inv: &Investigation,
    all: bool,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let filter = GroupFilter {
        all,
        ..GroupFilter::default()
    };
    let groups = inv.groups(&filter);
    if json {
        text::chain_header(inv, &mut io::stderr().lock())?;
        let v: Vec<_> = groups.iter().map(|g| inv.summary(g)).collect();
        return write_json(out, &v);
    }
    text::chain_header(inv, out)?;
    text::groups(inv, &groups, all, out)?;
    Ok(())
}

/// `retrace investigate --group ID`.
///
/// # Errors
/// An unknown or ambiguous group id is an input error.
pub fn investigate(
    inv: &Investigation,
    id: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<(), CliError> {
    let g = inv.group(id).map_err(|e| CliError::Input(e.to_string()))?;
    let d = inv.detail(g);
    if json {
        text::chain_header(inv, &mut io::stderr().lock())?;
        return write_json(
            out,
            &InvestigateJson {
                event_log: d
                    .executions_detail
                    .iter()
                    .map(|x| (x.execution_id.as_str(), inv.events(x.index)))
                    .collect(),
                detail: &d,
            },
        );
    }
    text::chain_header(inv, out)?;
    text::investigate(&d, out)?;
    Ok(())
}

/// `retrace investigate --json`: the group detail, and every event of each
/// execution (with its evidence and the fields retrace did not read).
#[derive(serde::Serialize)]
struct InvestigateJson<'a> {
    #[serde(flatten)]
    detail: &'a crate::query::GroupDetail,
    /// Execution id → its events in time order.
    event_log: std::collections::BTreeMap<&'a str, Vec<crate::query::EventView>>,
}

/// What `retrace verify` found for one journal (the `--json` element).
#[derive(Debug, serde::Serialize)]
pub struct VerifyReport {
    /// Journal name as given.
    pub journal: String,
    /// Format read, when the journal could be read.
    pub format: Option<Format>,
    /// Lines read.
    pub lines: u64,
    /// Lines that could not be read as records.
    pub bad_lines: u64,
    /// The chain rule's formula, when the journal is chained.
    pub rule: Option<&'static str>,
    /// The chain status; absent when the journal is unreadable.
    pub chain: Option<ChainStatus>,
    /// Why the journal is unreadable.
    pub error: Option<String>,
    /// Reader notes.
    pub notes: Vec<String>,
    /// For the case file (not a journal): its chain, by the native rule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_file: Option<crate::review::case::Verification>,
}

impl VerifyReport {
    /// 0 intact or no chain, 1 broken or not checked, 2 unreadable
    /// (DESIGN.md §7).
    pub fn exit_code(&self) -> u8 {
        if let Some(c) = &self.case_file {
            return if c.is_intact() { 0 } else { 1 };
        }
        match &self.chain {
            None => 2,
            Some(ChainStatus::Intact { .. } | ChainStatus::NoChain { .. }) => 0,
            Some(_) => 1,
        }
    }
}

/// The case file that goes with these journals (`--case`, or the default
/// beside the first journal), when it exists.
fn default_case_file(
    journals: &[std::path::PathBuf],
    common: &Common,
) -> Option<std::path::PathBuf> {
    let path = common.case.clone().or_else(|| {
        journals
            .first()
            .map(|j| crate::review::case::default_path(j))
    })?;
    path.exists().then_some(path)
}

/// Verifies one case file.
fn verify_case_file(path: &std::path::Path) -> VerifyReport {
    let name = path.display().to_string();
    let blank = VerifyReport {
        journal: name,
        format: None,
        lines: 0,
        bad_lines: 0,
        rule: Some(
            "hash = sha256(prev_hash ‖ JCS(entry without prev_hash and hash)), genesis 64 zeros (the native rule)",
        ),
        chain: None,
        error: None,
        notes: Vec::new(),
        case_file: None,
    };
    match crate::review::case::verify(path) {
        Ok(v) => {
            let mut notes = Vec::new();
            // Said once: by the chain when that is its only fault.
            let said = v
                .chain
                .status
                .failure()
                .is_some_and(|f| f.kind == crate::journal::chain::FailureKind::GuardsRemoved);
            if !v.append_only_guards && !said {
                notes.push(
                    "the triggers that refuse UPDATE and DELETE are missing: someone removed them, and the latest entries may have been deleted without a trace in the chain"
                        .into(),
                );
            }
            VerifyReport {
                lines: v.chain.entries(),
                notes,
                case_file: Some(v),
                ..blank
            }
        }
        Err(e) => VerifyReport {
            error: Some(e.to_string()),
            ..blank
        },
    }
}

/// `retrace verify`: verifies each journal on its own (one unreadable
/// journal does not stop the others) and returns the exit code: the worst
/// of the journals' codes.
///
/// # Errors
/// Unreadable key files, or output errors.
pub fn verify(
    journals: &[std::path::PathBuf],
    common: &Common,
    json: bool,
    out: &mut dyn Write,
) -> Result<u8, CliError> {
    let opts = load_options(common)?;
    // A case file given among the journals is verified as a case file
    // (`retrace verify JOURNAL retrace-case.sqlite`), once.
    let (cases, journals): (Vec<_>, Vec<_>) = journals
        .iter()
        .cloned()
        .partition(|p| crate::review::case::is_case_file(p));
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut case_paths = cases;
    if let Some(d) = default_case_file(&journals, common)
        && !case_paths.iter().any(|c| canonical(c) == canonical(&d))
    {
        case_paths.push(d);
    }
    let sources = if journals.is_empty() && case_paths.is_empty() {
        crate::sample::sources()
    } else {
        journals.iter().map(JournalSource::file).collect()
    };
    let reports: Vec<VerifyReport> = sources
        .into_iter()
        .map(|src| {
            let name = src.name.clone();
            match crate::journal::verify(src, &opts) {
                Ok(j) => VerifyReport {
                    journal: name,
                    format: Some(j.format),
                    lines: j.lines,
                    bad_lines: j.bad_line_count,
                    rule: match &j.chain {
                        ChainStatus::Intact { rule, .. } | ChainStatus::Broken { rule, .. } => {
                            Some(rule.formula())
                        }
                        ChainStatus::NotChecked { rule, .. } => rule.map(|r| r.formula()),
                        ChainStatus::NoChain { .. } => None,
                    },
                    chain: Some(j.chain),
                    error: None,
                    notes: j.notes,
                    case_file: None,
                },
                Err(e) => VerifyReport {
                    journal: name,
                    format: None,
                    lines: 0,
                    bad_lines: 0,
                    rule: None,
                    chain: None,
                    error: Some(e.to_string()),
                    notes: Vec::new(),
                    case_file: None,
                },
            }
        })
        .chain(case_paths.iter().map(|p| verify_case_file(p)))
        .collect();
    let code = reports
        .iter()
        .map(VerifyReport::exit_code)
        .max()
        .unwrap_or(0);
    if json {
        write_json(out, &reports)?;
    } else {
        text::verify(&reports, out)?;
    }
    Ok(code)
}
