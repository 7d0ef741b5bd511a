//! What an investigation is made of, stated the same way by every front
//! end: the journals, a forced format, contracts, the deployment key, the
//! keys for third-party chains, the case file, the reviewer and read-only
//! mode. [`Setup::prepare`] reads every file it names (contracts, keys, the
//! case file) before any journal is loaded, so that a typo in a key path is
//! reported at once and the same way in the CLI and the TUI.

use crate::analysis::{Config, ContractError, Contracts, FingerprintKey, KeyError};
use crate::journal::{
    ChainKeys, Format, JournalSource, KeyFile, KeyFileError, LoadOptions, TimeWindow,
};
use crate::journal::{SourceData, is_database_url};
use crate::review::{CaseContext, CaseError};
use std::path::{Path, PathBuf};

/// The inputs of an investigation, as paths and flags. Built by the CLI from
/// its options and handed to the TUI as it is.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    /// Journal files and folders of them (each folder stands for the
    /// journal files in it, `super::journals`); empty means the bundled
    /// sample incident (with its own contracts and key).
    pub journals: Vec<PathBuf>,
    /// A folder also stands for the journal files in its subfolders.
    pub recursive: bool,
    /// Read every journal as this format instead of detecting it.
    pub input_format: Option<Format>,
    /// Tool contracts files (TOML, docs/design.md §4.4), in order: a later
    /// file's contract for a tool replaces an earlier one's.
    pub contracts: Vec<PathBuf>,
    /// Deployment key for HMAC-SHA256 fingerprints.
    pub key_file: Option<PathBuf>,
    /// Sallyport audit signer public key.
    pub signer_key: Option<PathBuf>,
    /// Sallyport exported audit identity (decrypts sealed events).
    pub audit_identity: Option<PathBuf>,
    /// mcp-audit attestation key.
    pub attestation_key: Option<PathBuf>,
    /// Case file; default `retrace-case.sqlite` beside the first journal.
    pub case: Option<PathBuf>,
    /// Reviewer name recorded with a decision (front ends fill in the
    /// login name when none is given; a blank name is none).
    pub reviewer: Option<String>,
    /// Never write a decision, a case file or an export file.
    pub read_only: bool,
    /// Only the executions that began in this window (`--since`,
    /// `--until`), each whole; open: every one. Readers apply it as they
    /// read (a database is queried for it), so what it leaves out is never
    /// held.
    pub window: TimeWindow,
    /// Read a journal that is a copy of another loaded with it too, with a
    /// warning, instead of once as the journal it copies
    /// (`super::journals` `copies`): a follower (`retrace watch`) cannot
    /// tell which of two alike files will grow.
    pub keep_copies: bool,
}

/// A file named by the setup that could not be used.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// A folder given as a journal holds no journal file.
    #[error("{folder}: no journal file in this folder{}{hint}", if *skipped > 0 { format!(" ({skipped} file(s) skipped: not journals)") } else { String::new() })]
    EmptyFolder {
        /// The folder as given (escaped).
        folder: String,
        /// How many files in it were skipped.
        skipped: usize,
        /// What else to try, or empty.
        hint: &'static str,
    },
    /// A folder given as a journal cannot be listed.
    #[error("{folder}: cannot list the folder: {source}")]
    Folder {
        /// The folder as given (escaped).
        folder: String,
        /// Why.
        source: std::io::Error,
    },
    /// A journal path names nothing.
    #[error("{path}: no such journal file{hint}")]
    Missing {
        /// The path as given (escaped).
        path: String,
        /// A "did you mean" hint, or empty.
        hint: String,
    },
    /// The contracts file.
    #[error(transparent)]
    Contracts(#[from] ContractError),
    /// The deployment key.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A chain key (signer key, audit identity, attestation key).
    #[error(transparent)]
    ChainKey(#[from] KeyFileError),
    /// The case file.
    #[error(transparent)]
    Case(#[from] CaseError),
    /// `--since` is after `--until`: the window holds nothing.
    #[error("--since {since} is after --until {until}: no call can lie between them")]
    EmptyWindow {
        /// `--since`, RFC 3339.
        since: String,
        /// `--until`, RFC 3339.
        until: String,
    },
}

/// The subcommands, for "did you mean" when a journal path is a typo of one.
const COMMANDS: [&str; 5] = ["groups", "investigate", "verify", "review", "export"];

/// A setup whose files have been read: what [`crate::query::Investigation`]
/// loads, and what the front ends need to know before it does.
#[derive(Debug)]
pub struct Prepared {
    pub(super) sources: Vec<JournalSource>,
    pub(super) options: LoadOptions,
    pub(super) config: Config,
    /// The case file and the decisions read from it.
    pub case: CaseContext,
    /// Whether the bundled sample incident is used.
    pub sample: bool,
    /// The reviewer name, if any.
    pub reviewer: Option<String>,
    /// Read-only mode.
    pub read_only: bool,
    /// The executions looked at: those that began in this window.
    pub window: super::TimeWindow,
    /// Things worth saying before anything is loaded (a journal given
    /// twice, a case file whose chain is broken), one line each.
    pub warnings: Vec<String>,
    /// Files and folders left out of the folders given as journals, one
    /// line each naming the file and why (not a journal, a binary file,
    /// subfolders without `-r`).
    pub skipped: Vec<String>,
    /// Per source: whether it is a file of a folder given as a journal,
    /// which is skipped with a note when not one of its lines can be read
    /// (the same file named on its own stays an error).
    pub(super) in_folder: Vec<bool>,
    inputs: Vec<(PathBuf, String)>,
}

impl Setup {
    /// A setup of these journals with no other option.
    pub fn new(journals: Vec<PathBuf>) -> Setup {
        Setup {
            journals,
            ..Setup::default()
        }
    }

    /// What the default case file goes with
    /// ([`crate::review::case::default_path`]): the first journal as named
    /// (a folder named is the place of its case file, whichever subfolder
    /// its first journal file is in), skipping database URLs (no folder to
    /// keep one beside) and case files named among the journals; `None`
    /// when there is none (the bundled sample has no case file).
    pub(crate) fn case_anchor(&self) -> Option<&Path> {
        self.journals
            .iter()
            .map(PathBuf::as_path)
            .find(|p| !is_database_url(p) && !crate::review::case::is_case_file(p))
    }

    /// A case file an earlier version left beside the first journal file
    /// (`first`) of the folder named first, which `-r` may find in a
    /// subfolder, when the folder itself has none and `--case` is not
    /// given: (where it is, where it belongs). Still the investigation's.
    pub(crate) fn legacy_case(&self, first: Option<&Path>) -> Option<(PathBuf, PathBuf)> {
        let anchor = self.case_anchor()?;
        if self.case.is_some() || !anchor.is_dir() {
            return None;
        }
        let new = crate::review::case::default_path(anchor);
        let old = crate::review::case::default_path(first?);
        (!new.exists() && old != new && old.is_file()).then_some((old, new))
    }

    /// Reads the contracts, keys and case file the setup names and resolves
    /// the journals (each given once; none: the bundled sample).
    ///
    /// # Errors
    /// [`SetupError`] naming the first file that cannot be used.
    pub fn prepare(&self) -> Result<Prepared, SetupError> {
        for p in self.journals.iter().filter(|p| !is_database_url(p)) {
            check_exists(p)?;
        }
        let expanded =
            super::journals::expand(&self.journals, self.recursive, self.input_format.is_some())?;
        let mut warnings = Vec::new();
        // The same file twice would count every event twice.
        let mut seen = std::collections::HashSet::new();
        let mut journals = Vec::with_capacity(expanded.files.len());
        for p in &expanded.files {
            let id = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
            if seen.insert(id) {
                journals.push(p.clone());
            } else {
                let shown = match p.to_str().filter(|_| is_database_url(p)) {
                    Some(url) => JournalSource::database(url).name,
                    None => p.display().to_string(),
                };
                warnings.push(format!("{shown} is given more than once; it is read once"));
            }
        }
        // A copy of another journal (whole, or the start of it) is read
        // once, as the journal it copies.
        let mut copied = super::journals::copies(&journals);
        for c in &copied {
            let (copy, of) = (journals[c.copy].display(), journals[c.of].display());
            warnings.push(if self.keep_copies {
                format!(
                    "{copy} is a copy of {of}, or of its start; both are read, as either may grow: their calls count twice until they differ"
                )
            } else {
                let what = if c.whole { "a copy" } else { "a copy of the start" };
                format!("{copy} is {what} of {of}; read once, as {of}")
            });
        }
        if self.keep_copies {
            copied.clear();
        }
        let journals: Vec<PathBuf> = journals
            .into_iter()
            .enumerate()
            .filter(|(i, _)| !copied.iter().any(|c| c.copy == *i))
            .map(|(_, p)| p)
            .collect();
        let sample = journals.is_empty();
        let in_folder = journals
            .iter()
            .map(|p| expanded.in_folder.contains(p))
            .collect();
        let sources = if sample {
            crate::sample::sources()
        } else {
            journals
                .iter()
                .map(|p| match p.to_str().filter(|_| is_database_url(p)) {
                    Some(url) => JournalSource::database(url),
                    None => JournalSource::file(p),
                })
                .collect()
        };
        let contracts = if self.contracts.is_empty() && sample {
            crate::sample::contracts()
        } else {
            let mut all = Contracts::none();
            for (i, p) in self.contracts.iter().enumerate() {
                for tool in all.merge(Contracts::load(p)?) {
                    warnings.push(format!(
                        "the contract for {tool} in {} replaces the one in an earlier contracts file ({})",
                        p.display(),
                        self.contracts[..i]
                            .iter()
                            .map(|q| q.display().to_string())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
            all
        };
        let key = match &self.key_file {
            Some(p) => FingerprintKey::load(p)?,
            None if sample => crate::sample::key(),
            None => FingerprintKey::none(),
        };
        let options = self.load_options()?;
        let anchor: Vec<PathBuf> = self
            .case_anchor()
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        let legacy = self.legacy_case(journals.first().map(PathBuf::as_path));
        if let Some((old, new)) = &legacy {
            warnings.push(format!(
                "using the case file {}, where earlier versions kept this folder's; move it to {}",
                old.display(),
                new.display()
            ));
        }
        let legacy = legacy.map(|(old, _)| old);
        let case = CaseContext::load(
            self.case.as_deref().or(legacy.as_deref()),
            &anchor,
            self.read_only,
        )?;
        if let (Some(status), Some(name)) = (&case.chain, case.name())
            && !status.is_intact()
        {
            warnings.push(format!(
                "case file {name}: chain {}; later entries are ignored (run `retrace verify`)",
                status.describe()
            ));
        }
        let config = Config {
            contracts,
            key,
            resolutions: case.resolutions(),
        };
        let mut inputs = crate::export::atomic::inputs(
            sources.iter().filter_map(source_path),
            case.path.as_deref(),
        );
        for p in &self.contracts {
            inputs.push((p.clone(), format!("the contracts file {}", p.display())));
        }
        for (p, what) in [
            (&self.key_file, "the key file"),
            (&self.signer_key, "the signer key"),
            (&self.audit_identity, "the audit identity"),
            (&self.attestation_key, "the attestation key"),
        ] {
            if let Some(p) = p {
                inputs.push((p.clone(), format!("{what} {}", p.display())));
            }
        }
        Ok(Prepared {
            sources,
            options,
            config,
            case,
            sample,
            reviewer: self
                .reviewer
                .as_deref()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(str::to_string),
            read_only: self.read_only,
            window: self.window,
            warnings,
            skipped: expanded.skipped,
            in_folder,
            inputs,
        })
    }
}

impl Setup {
    /// How journals are read: the forced format, the time window and the
    /// keys for third-party chains and sealed events, read from their files.
    ///
    /// # Errors
    /// [`SetupError::ChainKey`] naming the key file that cannot be read;
    /// [`SetupError::EmptyWindow`] when `--since` is after `--until`.
    pub fn load_options(&self) -> Result<LoadOptions, SetupError> {
        let chain_key = |p: &Option<PathBuf>| p.as_deref().map(KeyFile::load).transpose();
        if let (Some(since), Some(until)) = (self.window.since, self.window.until)
            && since > until
        {
            return Err(SetupError::EmptyWindow {
                since: since.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                until: until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            });
        }
        Ok(LoadOptions {
            window: self.window,
            lookback: None,
            forced: self.input_format,
            keys: ChainKeys {
                signer_key: chain_key(&self.signer_key)?,
                audit_identity: chain_key(&self.audit_identity)?,
                attestation_key: chain_key(&self.attestation_key)?,
            },
        })
    }
}

impl Prepared {
    /// Display names of the journals, in load order.
    pub fn journal_names(&self) -> Vec<String> {
        self.sources.iter().map(|s| s.name.clone()).collect()
    }

    /// The files this investigation reads, each with its description: an
    /// output file must never replace one of them (the journals, the case
    /// file and the side files SQLite keeps beside it, contracts, keys).
    pub fn input_files(&self) -> &[(PathBuf, String)] {
        &self.inputs
    }
}

/// Says clearly what is wrong with a journal path that names nothing: a
/// missing file that looks like a mistyped command gets a "did you mean".
fn check_exists(p: &Path) -> Result<(), SetupError> {
    if p.exists() {
        return Ok(());
    }
    let shown = crate::sanitize::escape(&p.display().to_string()).into_owned();
    let name = p.to_string_lossy();
    let hint = COMMANDS
        .iter()
        .find(|c| !name.contains(['/', '.']) && strsim::levenshtein(c, &name) <= 2)
        .map(|c| format!(" (did you mean the command `retrace {c}`?)"))
        .unwrap_or_default();
    Err(SetupError::Missing { path: shown, hint })
}

/// The file a journal was read from, for output checks: a pipe read whole is
/// named by the path it came by; the bundled sample has none.
fn source_path(s: &JournalSource) -> Option<&Path> {
    match &s.data {
        SourceData::File(p) => Some(p.as_path()),
        SourceData::Memory(_) => Some(Path::new(s.name.as_str())),
        SourceData::Embedded(_) => None,
    }
}
