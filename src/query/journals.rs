//! Journal paths as given on the command line: files, and folders of
//! journals as an incident leaves them (README "Journals in a folder").
//!
//! A folder stands for the journal files in it, in sorted order (by path,
//! byte for byte, so the same folder always loads the same way), its
//! subfolders too when asked (`-r`). Hidden files and folders (a name
//! starting with `.`) are left out, and so are case files and the side
//! files SQLite keeps beside them: they belong to the investigation, not to
//! the incident. A file in a folder that no reader takes (notes, a binary)
//! is skipped with a note; the same file named on its own stays an error,
//! since the user meant it as a journal.

use super::SetupError;
use crate::journal::{self, JournalError, JournalSource};
use std::cmp::Ordering;
use std::path::{Path, PathBuf};

/// The journal files a list of paths stands for, and why files in folders
/// were skipped.
#[derive(Debug, Default)]
pub(super) struct Expanded {
    /// Journal files, in the order given (a folder's in sorted order).
    pub files: Vec<PathBuf>,
    /// One line per file or folder left out of a folder, naming it and why.
    pub skipped: Vec<String>,
    /// The files of `files` found in a folder (not named on their own).
    pub in_folder: std::collections::HashSet<PathBuf>,
}

/// Expands `paths`: a file stays, a folder becomes its journal files
/// (with `recursive`, its subfolders' too). Unless `forced` (a format
/// given for every journal), each file of a folder is detected first and
/// kept only if some reader takes it.
///
/// A path that is not a folder stays as it is, whether it exists or not
/// (the caller says what is missing).
///
/// # Errors
/// [`SetupError::EmptyFolder`] for a folder that holds no journal file;
/// [`SetupError::Folder`] for one that cannot be listed.
pub(super) fn expand(
    paths: &[PathBuf],
    recursive: bool,
    forced: bool,
) -> Result<Expanded, SetupError> {
    let mut out = Expanded::default();
    for p in paths {
        if !p.is_dir() {
            out.files.push(p.clone());
            continue;
        }
        let mut files = Vec::new();
        let mut folders_left = 0usize;
        list(p, recursive, &mut files, &mut folders_left)?;
        files.sort();
        let before = out.files.len();
        let mut skipped = 0usize;
        for f in files {
            match skip_reason(&f, forced) {
                Some(why) => {
                    skipped += 1;
                    out.skipped.push(format!("{}: skipped: {why}", f.display()));
                }
                None => {
                    out.in_folder.insert(f.clone());
                    out.files.push(f);
                }
            }
        }
        if folders_left > 0 {
            out.skipped.push(format!(
                "{}: {folders_left} folder{} inside not read (-r reads them)",
                p.display(),
                if folders_left == 1 { "" } else { "s" }
            ));
        }
        if out.files.len() == before {
            return Err(SetupError::EmptyFolder {
                folder: crate::sanitize::escape(&p.display().to_string()).into_owned(),
                skipped,
                hint: if folders_left > 0 && !recursive {
                    " (it has folders inside: -r reads them)"
                } else {
                    ""
                },
            });
        }
    }
    Ok(out)
}

/// Whether a name is hidden (`.git`, `.activity.jsonl.swp`).
fn hidden(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

/// The files of folder `dir` (not hidden, not case files), and with
/// `recursive` those of its subfolders; symbolic links to folders are not
/// followed (a loop would never end). `folders_left` counts the
/// subfolders not read.
fn list(
    dir: &Path,
    recursive: bool,
    files: &mut Vec<PathBuf>,
    folders_left: &mut usize,
) -> Result<(), SetupError> {
    let err = |e: std::io::Error| SetupError::Folder {
        folder: crate::sanitize::escape(&dir.display().to_string()).into_owned(),
        source: e,
    };
    for entry in std::fs::read_dir(dir).map_err(err)? {
        let entry = entry.map_err(err)?;
        let p = entry.path();
        if hidden(&p) {
            continue;
        }
        let is_link = entry.file_type().map_err(err)?.is_symlink();
        if p.is_dir() {
            if recursive && !is_link {
                list(&p, recursive, files, folders_left)?;
            } else {
                *folders_left += 1;
            }
        } else if !is_case_file_or_side(&p) {
            files.push(p);
        }
    }
    Ok(())
}

/// A case file, or a side file SQLite keeps beside one (`-wal`, `-shm`,
/// `-journal`).
fn is_case_file_or_side(p: &Path) -> bool {
    let name = p.to_string_lossy();
    let main = ["-wal", "-shm", "-journal"]
        .iter()
        .find_map(|s| name.strip_suffix(s))
        .map(PathBuf::from);
    match main {
        Some(m) => m.is_file() && crate::review::case::is_case_file(&m),
        None => crate::review::case::is_case_file(p),
    }
}

/// Why a file found in a folder is not a journal, if it is clearly not
/// one: no reader takes it, or it is binary. A file that cannot be read
/// is kept: loading it says why, as for any journal.
fn skip_reason(f: &Path, forced: bool) -> Option<String> {
    if forced {
        return None;
    }
    match journal::detect(&JournalSource::file(f)) {
        Err(JournalError::UnknownFormat { reason, .. }) => {
            Some(format!("not a journal retrace reads ({reason})"))
        }
        Err(JournalError::Binary { first_bytes, .. }) => Some(format!(
            "a binary file (starts with bytes {first_bytes}), not a journal"
        )),
        _ => None,
    }
}

/// Journal files that hold a copy of another's bytes, whole or the start of
/// it: a `.bak` beside a journal, a snapshot taken before the journal grew,
/// a log copied into the incident folder twice, compressed or not. Reading
/// both counts each of the copy's records twice, and in formats whose ids
/// carry the journal's identity (docs/design.md §5.10) as two calls of one
/// intent: a duplicate made by the copy. Returns one [`Copy`] per file left
/// out: the shorter of two is the copy, and of two alike the later one.
///
/// Only regular files whose first lines are the same (their identity,
/// [`JournalSource::identity`]) are compared, byte for byte as decompressed,
/// so unrelated journals cost a read of their first line. Files that cannot
/// be read are left to the load, which says why.
pub(super) fn copies(files: &[PathBuf]) -> Vec<Copy> {
    let mut by_identity: std::collections::HashMap<String, Vec<usize>> =
        std::collections::HashMap::new();
    for (i, p) in files.iter().enumerate() {
        if !std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.len() > 0) {
            continue;
        }
        if let Ok(id) = JournalSource::file(p).identity() {
            by_identity.entry(id).or_default().push(i);
        }
    }
    let mut out = Vec::new();
    for same in by_identity.into_values().filter(|v| v.len() > 1) {
        // Each file in load order against the ones kept so far: a copy of
        // one of them is left out; one they are copies of replaces them.
        let mut kept: Vec<usize> = Vec::new();
        for i in same {
            let mut copy_of = None;
            let mut replaced = Vec::new();
            for (n, &k) in kept.iter().enumerate() {
                match compare(&files[i], &files[k]) {
                    Some(o @ (Ordering::Less | Ordering::Equal)) => {
                        copy_of = Some(Copy {
                            copy: i,
                            of: k,
                            whole: o == Ordering::Equal,
                        });
                        break;
                    }
                    Some(Ordering::Greater) => replaced.push(n),
                    None => {}
                }
            }
            match copy_of {
                Some(c) => out.push(c),
                None => {
                    for &n in replaced.iter().rev() {
                        out.push(Copy {
                            copy: kept.remove(n),
                            of: i,
                            whole: false,
                        });
                    }
                    kept.push(i);
                }
            }
        }
    }
    out.sort_unstable_by_key(|c| c.copy);
    out
}

/// A journal file that is a copy of another ([`copies`]): positions in the
/// list of files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Copy {
    /// The file left out.
    pub copy: usize,
    /// The file read in its place.
    pub of: usize,
    /// The same bytes (decompressed); else the start of `of`'s.
    pub whole: bool,
}

/// How the bytes of journal `a` (decompressed) stand to those of `b`:
/// `Less` when they are the start of `b`'s, `Equal` when the same,
/// `Greater` when `b`'s are the start of `a`'s; `None` when they differ or
/// either cannot be read whole.
fn compare(a: &Path, b: &Path) -> Option<Ordering> {
    use std::io::BufRead;
    let (sa, sb) = (JournalSource::file(a), JournalSource::file(b));
    let (mut a, mut b) = (sa.open().ok()?, sb.open().ok()?);
    loop {
        let (x, y) = (a.fill_buf().ok()?, b.fill_buf().ok()?);
        let n = x.len().min(y.len());
        match (x.len(), y.len()) {
            (0, 0) => return Some(Ordering::Equal),
            (0, _) => return Some(Ordering::Less),
            (_, 0) => return Some(Ordering::Greater),
            _ if x[..n] != y[..n] => return None,
            _ => {}
        }
        a.consume(n);
        b.consume(n);
    }
}
