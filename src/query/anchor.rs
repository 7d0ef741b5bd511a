//! Anchors: what a chain cannot show by itself (docs/design.md §6.4, §6.7).
//! Every line of a journal cut at the end still verifies, and so does a
//! journal re-chained after an edit. An anchor kept elsewhere records, per
//! journal, its identity (the digest of its first line), its length in lines
//! and bytes, a digest of those bytes, the last `seq` and head hash, and
//! when; a later `retrace verify --anchor FILE` compares the journal with it.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The format name of an anchor file.
pub const FORMAT: &str = "retrace-anchor/1";

/// What an anchor keeps of one journal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnchorEntry {
    /// The journal's path as given when anchored.
    pub journal: String,
    /// `sha256:` of its first line: the journal's identity, kept across a
    /// rename.
    pub identity: String,
    /// Lines (a last line without a newline counts).
    pub lines: u64,
    /// Bytes.
    pub bytes: u64,
    /// `sha256:` of those bytes: any change to the anchored part shows.
    pub digest: String,
    /// The last line's `seq`, when it has one.
    pub last_seq: Option<u64>,
    /// The last line's `hash` (the chain's head), when it has one.
    pub head_hash: Option<String>,
    /// When the anchor was taken.
    pub at: DateTime<Utc>,
}

/// An anchor file: the anchors of the journals verified with it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct AnchorFile {
    /// [`FORMAT`].
    pub format: String,
    /// One entry per journal.
    pub journals: Vec<AnchorEntry>,
}

/// What comparing a journal with its anchor found (the `anchor` of a
/// `verify --json` element).
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum AnchorCheck {
    /// No anchor for the journal yet: one was recorded.
    Recorded {
        /// What was recorded.
        anchor: AnchorEntry,
    },
    /// The anchored part is unchanged; `added` lines came after it.
    Consistent {
        /// The anchor it was compared with.
        anchor: AnchorEntry,
        /// Lines added since.
        added: u64,
    },
    /// Lines were cut from the end: the journal is shorter than anchored.
    CutTail {
        /// The anchor.
        anchor: AnchorEntry,
        /// Lines now.
        lines: u64,
    },
    /// The anchored part changed (an edit, a re-chained journal, lines
    /// replaced): history was rewritten.
    Rewritten {
        /// The anchor.
        anchor: AnchorEntry,
    },
    /// The journal could not be anchored (a pipe, an unreadable file).
    Unavailable {
        /// Why.
        reason: String,
    },
}

impl AnchorCheck {
    /// Whether the journal contradicts its anchor.
    pub fn is_tampered(&self) -> bool {
        matches!(
            self,
            AnchorCheck::CutTail { .. } | AnchorCheck::Rewritten { .. }
        )
    }

    /// In words, for `retrace verify`.
    pub fn describe(&self) -> String {
        match self {
            AnchorCheck::Recorded { anchor } => format!(
                "anchor recorded: {} line(s), last seq {}, head {}",
                anchor.lines,
                anchor.last_seq.map_or("-".into(), |s| s.to_string()),
                anchor.head_hash.as_deref().map_or("-", short)
            ),
            AnchorCheck::Consistent { anchor, added } => format!(
                "consistent with the anchor of {} ({} line(s), head {}); {added} line(s) added since",
                anchor.at.format("%Y-%m-%d %H:%M:%SZ"),
                anchor.lines,
                anchor.head_hash.as_deref().map_or("-", short)
            ),
            AnchorCheck::CutTail { anchor, lines } => format!(
                "CUT TAIL: the anchor of {} recorded {} line(s) up to seq {} (head {}); the journal now has {lines}: lines were cut from the end",
                anchor.at.format("%Y-%m-%d %H:%M:%SZ"),
                anchor.lines,
                anchor.last_seq.map_or("-".into(), |s| s.to_string()),
                anchor.head_hash.as_deref().map_or("-", short)
            ),
            AnchorCheck::Rewritten { anchor } => format!(
                "REWRITTEN HISTORY: the {} line(s) anchored on {} (head {}) are no longer as they were: the journal was edited (and re-chained, if its chain verifies)",
                anchor.lines,
                anchor.at.format("%Y-%m-%d %H:%M:%SZ"),
                anchor.head_hash.as_deref().map_or("-", short)
            ),
            AnchorCheck::Unavailable { reason } => format!("not anchored: {reason}"),
        }
    }
}

fn short(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

/// Errors reading or writing an anchor file.
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    /// The file cannot be read.
    #[error("anchor {path}: {source}")]
    Io {
        /// The anchor file.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
    /// The file is not an anchor file.
    #[error("anchor {path}: not a retrace anchor file ({message})")]
    Invalid {
        /// The anchor file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Reads an anchor file; `None` when it does not exist yet.
///
/// # Errors
/// [`AnchorError`] naming the file.
pub fn read(path: &Path) -> Result<Option<AnchorFile>, AnchorError> {
    let io = |source| AnchorError::Io {
        path: path.display().to_string(),
        source,
    };
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(None);
    }
    if let Some(what) = crate::export::atomic::not_regular(path) {
        return Err(AnchorError::Invalid {
            path: path.display().to_string(),
            message: format!("it is {what}, not a regular file"),
        });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    let file: AnchorFile = serde_json::from_str(&text).map_err(|e| AnchorError::Invalid {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    if file.format != FORMAT {
        return Err(AnchorError::Invalid {
            path: path.display().to_string(),
            message: format!("format {:?}, expected {FORMAT:?}", file.format),
        });
    }
    Ok(Some(file))
}

/// Writes an anchor file atomically (a temporary file renamed into place).
///
/// # Errors
/// [`AnchorError::Io`] naming the file; it is then untouched.
pub fn write(path: &Path, file: &AnchorFile) -> Result<(), AnchorError> {
    let mut bytes = serde_json::to_vec_pretty(file).map_err(|e| AnchorError::Io {
        path: path.display().to_string(),
        source: std::io::Error::other(e),
    })?;
    bytes.push(b'\n');
    crate::export::atomic::write(path, &bytes).map_err(|source| AnchorError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Takes the anchor of a journal file as it is now.
///
/// # Errors
/// When the file cannot be read.
pub fn take(journal: &Path, at: DateTime<Utc>) -> std::io::Result<AnchorEntry> {
    let meta = std::fs::metadata(journal)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file (a pipe cannot be read again to compare)",
        ));
    }
    let mut f = std::io::BufReader::new(std::fs::File::open(journal)?);
    let mut all = Sha256::new();
    let mut first = Sha256::new();
    let mut in_first = true;
    let mut lines = 0u64;
    let mut bytes = 0u64;
    let mut last = Vec::new();
    let mut cur = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        all.update(chunk);
        bytes += n as u64;
        for &b in chunk {
            if in_first {
                if b == b'\n' {
                    in_first = false;
                } else {
                    first.update([b]);
                }
            }
            if b == b'\n' {
                lines += 1;
                if !crate::journal::lines::is_blank(&cur) {
                    std::mem::swap(&mut last, &mut cur);
                }
                cur.clear();
            } else if cur.len() <= crate::journal::lines::MAX_LINE {
                cur.push(b);
            }
        }
    }
    if !cur.is_empty() {
        lines += 1;
        if !crate::journal::lines::is_blank(&cur) {
            last = cur;
        }
    }
    let last: Option<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_slice(&last).ok();
    Ok(AnchorEntry {
        journal: std::fs::canonicalize(journal)
            .unwrap_or_else(|_| journal.to_path_buf())
            .display()
            .to_string(),
        identity: format!("sha256:{}", hex::encode(first.finalize())),
        lines,
        bytes,
        digest: format!("sha256:{}", hex::encode(all.finalize())),
        last_seq: last
            .as_ref()
            .and_then(|m| m.get("seq"))
            .and_then(serde_json::Value::as_u64),
        head_hash: last
            .as_ref()
            .and_then(|m| m.get("hash"))
            .and_then(serde_json::Value::as_str)
            .map(str::to_string),
        at,
    })
}

/// Compares a journal with its anchor.
///
/// # Errors
/// When the journal cannot be read.
pub fn compare(journal: &Path, anchor: &AnchorEntry) -> std::io::Result<AnchorCheck> {
    let now = take(journal, Utc::now())?;
    if now.bytes < anchor.bytes || now.lines < anchor.lines {
        // Shorter, with the anchored first line: cut at the end (and
        // perhaps edited too; the anchor cannot tell). Another first line:
        // rewritten.
        return Ok(if now.identity == anchor.identity {
            AnchorCheck::CutTail {
                anchor: anchor.clone(),
                lines: now.lines,
            }
        } else {
            AnchorCheck::Rewritten {
                anchor: anchor.clone(),
            }
        });
    }
    let mut f = std::fs::File::open(journal)?.take(anchor.bytes);
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    if format!("sha256:{}", hex::encode(h.finalize())) == anchor.digest {
        Ok(AnchorCheck::Consistent {
            anchor: anchor.clone(),
            added: now.lines - anchor.lines,
        })
    } else {
        Ok(AnchorCheck::Rewritten {
            anchor: anchor.clone(),
        })
    }
}

/// The anchor file's entry for a journal: by path, else by identity.
pub fn find<'a>(file: &'a AnchorFile, journal: &Path) -> Option<&'a AnchorEntry> {
    let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let want = canon(journal);
    file.journals
        .iter()
        .find(|e| canon(Path::new(&e.journal)) == want)
        .or_else(|| {
            let id = take(journal, Utc::now()).ok()?.identity;
            file.journals.iter().find(|e| e.identity == id)
        })
}

/// Checks each journal against the anchor file and records what is new:
/// journals without an anchor are anchored, and an anchor is moved forward
/// when its journal only grew. Nothing is written when a journal
/// contradicts its anchor (the anchor is the evidence).
///
/// # Errors
/// [`AnchorError`] when the anchor file cannot be read or written.
pub fn check_all(anchor: &Path, journals: &[PathBuf]) -> Result<Vec<AnchorCheck>, AnchorError> {
    let existing = read(anchor)?;
    let now = Utc::now();
    let mut checks = Vec::new();
    let mut next = existing.clone().unwrap_or(AnchorFile {
        format: FORMAT.into(),
        journals: Vec::new(),
    });
    for j in journals {
        let found = existing.as_ref().and_then(|f| find(f, j)).cloned();
        let check = match found {
            None => match take(j, now) {
                Ok(entry) => {
                    next.journals.push(entry.clone());
                    AnchorCheck::Recorded { anchor: entry }
                }
                Err(e) => AnchorCheck::Unavailable {
                    reason: e.to_string(),
                },
            },
            Some(a) => match compare(j, &a) {
                Ok(c) => {
                    if let AnchorCheck::Consistent { .. } = c
                        && let Ok(entry) = take(j, now)
                        && let Some(slot) = next.journals.iter_mut().find(|e| **e == a)
                    {
                        *slot = entry;
                    }
                    c
                }
                Err(e) => AnchorCheck::Unavailable {
                    reason: e.to_string(),
                },
            },
        };
        checks.push(check);
    }
    if !checks.iter().any(AnchorCheck::is_tampered) {
        write(anchor, &next)?;
    }
    Ok(checks)
}
