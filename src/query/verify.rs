//! `retrace verify`: the audit chain of each journal and of the case file,
//! each by its own rule (docs/design.md §6), as plain reports.

use super::{ChainStatus, Format, QueryError, Setup};
use crate::journal::JournalSource;

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
    /// Every bad line: file, line and reason (docs/design.md §6.2), up to
    /// [`crate::journal::MAX_KEPT_BAD_LINES`]; `bad_lines` counts them all.
    pub bad_line_details: Vec<BadLine>,
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
    /// The journal compared with its anchor (`--anchor FILE`,
    /// docs/design.md §6.7).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub anchor: Option<super::anchor::AnchorCheck>,
    /// What the chain cannot show without an anchor (docs/design.md §6.4),
    /// for a chained journal verified without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caveat: Option<&'static str>,
    /// The journal's compressed stream ended early: only the lines before
    /// were checked (a note says where), so the journal is not checked
    /// whole.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cut_short: bool,
}

/// Said of every chained journal verified without an anchor.
pub const NO_ANCHOR_CAVEAT: &str = "without an anchor, lines cut from the end, or a journal re-chained after an edit, cannot be detected: every remaining line still verifies (`retrace verify --anchor FILE` records one and checks against it)";

/// One line that could not be read as a record.
#[derive(Debug, Clone, serde::Serialize)]
pub struct BadLine {
    /// The journal (the path as given).
    pub file: String,
    /// 1-based line number.
    pub line: u32,
    /// What is wrong with it.
    pub reason: String,
}

impl VerifyReport {
    /// 0 intact or no chain, 1 broken or not checked, 2 unreadable
    /// (docs/design.md §7).
    pub fn exit_code(&self) -> u8 {
        if let Some(c) = &self.case_file {
            return if c.is_intact() { 0 } else { 1 };
        }
        if self.anchor.as_ref().is_some_and(|a| a.is_tampered()) {
            return 1;
        }
        match &self.chain {
            None => 2,
            // Only its first part could be read: not checked whole.
            Some(ChainStatus::Intact { .. } | ChainStatus::NoChain { .. }) if self.cut_short => 1,
            Some(ChainStatus::Intact { .. } | ChainStatus::NoChain { .. }) => 0,
            Some(_) => 1,
        }
    }
}

/// The case file that goes with these journals (`--case`, or the default
/// beside the first journal), when it exists.
fn default_case_file(journals: &[std::path::PathBuf], setup: &Setup) -> Option<std::path::PathBuf> {
    let path = setup.case.clone().or_else(|| {
        // One an earlier version left in a subfolder is still checked.
        if let Some((old, _)) = setup.legacy_case(journals.first().map(std::path::PathBuf::as_path))
        {
            return Some(old);
        }
        journals
            .first()
            .and(setup.case_anchor())
            .map(crate::review::case::default_path)
    })?;
    // A link to nothing is reported, not skipped (docs/design.md §6.6).
    std::fs::symlink_metadata(&path).is_ok().then_some(path)
}

/// Verifies one case file.
fn verify_case_file(path: &std::path::Path) -> VerifyReport {
    let name = path.display().to_string();
    let blank = VerifyReport {
        journal: name,
        format: None,
        lines: 0,
        bad_lines: 0,
        bad_line_details: Vec::new(),
        rule: Some(
            "hash = sha256(prev_hash ‖ JCS(entry without prev_hash and hash)), genesis 64 zeros (the native rule)",
        ),
        chain: None,
        error: None,
        notes: Vec::new(),
        case_file: None,
        anchor: None,
        caveat: None,
        cut_short: false,
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
        // Not a regular file: refused, as a write would be (exit 1).
        Err(e @ crate::review::case::CaseError::NotRegular { .. }) => VerifyReport {
            chain: Some(ChainStatus::NotChecked {
                rule: None,
                reason: e.to_string(),
            }),
            error: Some(e.to_string()),
            ..blank
        },
        Err(e) => VerifyReport {
            error: Some(e.to_string()),
            ..blank
        },
    }
}

/// What `retrace verify` found: a report per journal and case file, and
/// the files left out of the folders given as journals.
#[derive(Debug)]
pub struct Verification {
    /// One report per journal, then per case file.
    pub reports: Vec<VerifyReport>,
    /// Files and folders left out of folders, one line each naming the
    /// file and why (as [`super::Investigation::skipped`]).
    pub skipped: Vec<String>,
}

/// Verifies each journal of the setup on its own (one unreadable journal
/// does not stop the others; a folder stands for the journal files in it)
/// and the case file that goes with them (the one named, the default
/// beside the first journal, or a case file named among the journals),
/// each by its own chain rule (docs/design.md §6).
///
/// # Errors
/// [`QueryError::Setup`] for a chain key file that cannot be read, a
/// journal path that names nothing, or a folder with no journal file.
pub fn verify(setup: &Setup) -> Result<Verification, QueryError> {
    verify_anchored(setup, None)
}

/// [`verify`], each journal file also compared with its anchor in
/// `anchor` (recorded there when it has none; docs/design.md §6.7).
///
/// # Errors
/// [`QueryError::Setup`] as for [`verify`];
/// [`QueryError::Anchor`] for an anchor file that cannot be read or written.
pub fn verify_anchored(
    setup: &Setup,
    anchor: Option<&std::path::Path>,
) -> Result<Verification, QueryError> {
    let opts = setup.load_options()?;
    // A case file named among the journals is kept for the partition
    // below; a folder's case file is left out of it (as for every command)
    // and found again as the default beside its first journal.
    let expanded = super::journals::expand(
        &setup.journals,
        setup.recursive,
        setup.input_format.is_some(),
    )?;
    let journals = &expanded.files;
    // A case file given among the journals is verified as a case file
    // (`retrace verify JOURNAL retrace-case.sqlite`), once.
    let (cases, journals): (Vec<_>, Vec<_>) = journals
        .iter()
        .cloned()
        .partition(|p| crate::review::case::is_case_file(p));
    let canonical =
        |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let mut case_paths = cases;
    if let Some(d) = default_case_file(&journals, setup)
        && !case_paths.iter().any(|c| canonical(c) == canonical(&d))
    {
        case_paths.push(d);
    }
    let sources = if journals.is_empty() && case_paths.is_empty() {
        crate::sample::sources()
    } else {
        journals.iter().map(JournalSource::file).collect()
    };
    let mut reports: Vec<VerifyReport> = sources
        .into_iter()
        .map(|src| {
            let name = src.name.clone();
            match crate::journal::verify(src, &opts) {
                Ok(j) => VerifyReport {
                    cut_short: j.source().cut_short().is_some(),
                    journal: name,
                    format: Some(j.format),
                    lines: j.lines,
                    bad_lines: j.bad_line_count,
                    bad_line_details: j
                        .bad_lines
                        .iter()
                        .map(|b| BadLine {
                            file: b.journal.clone(),
                            line: b.line,
                            reason: b.message.clone(),
                        })
                        .collect(),
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
                    anchor: None,
                    caveat: None,
                },
                Err(e) => VerifyReport {
                    journal: name,
                    format: None,
                    lines: 0,
                    bad_lines: 0,
                    bad_line_details: Vec::new(),
                    rule: None,
                    chain: None,
                    error: Some(e.to_string()),
                    notes: Vec::new(),
                    case_file: None,
                    anchor: None,
                    caveat: None,
                    cut_short: false,
                },
            }
        })
        .chain(case_paths.iter().map(|p| verify_case_file(p)))
        .collect();
    {
        let anchored = match anchor {
            Some(a) if !journals.is_empty() => Some(super::anchor::check_all(a, &journals)?),
            _ => None,
        };
        for (i, r) in reports.iter_mut().enumerate() {
            if r.case_file.is_some() {
                continue;
            }
            let chained = matches!(
                r.chain,
                Some(ChainStatus::Intact { .. } | ChainStatus::Broken { .. })
            );
            match anchored.as_ref().and_then(|a| a.get(i)) {
                Some(c) => r.anchor = Some(c.clone()),
                None => match journals.get(i).and_then(|j| case_anchor(&case_paths, j)) {
                    // The case file kept the journal's anchor with a
                    // decision (docs/design.md §6.7).
                    Some((check, from)) => {
                        r.notes.push(format!("anchored by {from}"));
                        r.anchor = Some(check);
                    }
                    None if chained => r.caveat = Some(NO_ANCHOR_CAVEAT),
                    None => {}
                },
            }
        }
    }
    Ok(Verification {
        reports,
        skipped: expanded.skipped,
    })
}

/// The journal compared with the latest anchor of it that a case file kept
/// with a decision, and where that anchor comes from.
fn case_anchor(
    cases: &[std::path::PathBuf],
    journal: &std::path::Path,
) -> Option<(super::anchor::AnchorCheck, String)> {
    use crate::review::case::{Access, CaseFile};
    let mut best: Option<(u64, super::anchor::AnchorEntry, String)> = None;
    for c in cases {
        // Read as an investigation reads it (`Access::Read`): a read-only
        // connection leaves the WAL's `-wal` and `-shm` files beside it.
        let Ok(file) = CaseFile::open(c, Access::Read) else {
            continue;
        };
        let Ok((decisions, _)) = file.decisions() else {
            continue;
        };
        for d in decisions {
            let entries: Vec<super::anchor::AnchorEntry> = d
                .payload
                .journal_anchors
                .iter()
                .filter_map(|v| serde_json::from_value(v.clone()).ok())
                .collect();
            let file = super::anchor::AnchorFile {
                format: super::anchor::FORMAT.into(),
                journals: entries,
            };
            if let Some(a) = super::anchor::find(&file, journal)
                && best.as_ref().is_none_or(|(at, ..)| d.seq > *at)
            {
                best = Some((
                    d.seq,
                    a.clone(),
                    format!("case file {} entry {}", c.display(), d.seq),
                ));
            }
        }
    }
    let (_, anchor, from) = best?;
    super::anchor::compare(journal, &anchor)
        .ok()
        .map(|check| (check, from))
}
