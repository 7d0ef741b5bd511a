//! Writes a file so that it is either complete or untouched: the content
//! goes to a temporary file in the target's folder, is flushed to disk
//! (`fsync`), then renamed over the target (`rename` is atomic within one
//! file system, POSIX `rename(2)`), and the folder is synced so that the
//! rename itself survives a crash.
//!
//! A process killed before the rename leaves the target as it was and a
//! temporary file named `.<target name>.<random>.retrace-tmp` beside it.
//!
//! [`write()`] only ever replaces a regular file: an existing target that is
//! a symbolic link, a folder, a FIFO, a socket or a device node is refused
//! (renaming over it would put a regular file in its place, and as root
//! replace `/dev/null` or `/dev/full`). [`check_not_input`] lets a command
//! refuse a target that is one of the files it reads (a journal, the case
//! file), compared by device and inode so that another spelling, a
//! symbolic link or a hard link of an input is caught too.
//!
//! Test hook: when the environment variable [`PAUSE_BEFORE_RENAME_ENV`]
//! holds a number of milliseconds, [`write()`] prints
//! `retrace: test hook: pausing before rename` on stderr and sleeps that
//! long after the temporary file is complete and before the rename, so
//! that a test can kill the process there.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Test hook: milliseconds to sleep before the rename.
pub const PAUSE_BEFORE_RENAME_ENV: &str = "RETRACE_TEST_PAUSE_BEFORE_RENAME_MS";

/// Writes `bytes` to `path` atomically. An existing file keeps its
/// permissions; a new one gets the usual ones (`0666` less the process's
/// umask, `-rw-r--r--` under umask 022), as any other program's output
/// would: a postmortem is meant to be shared, and `--anonymize` is the way
/// to take sensitive detail out of it.
///
/// # Errors
/// I/O errors, with the path in the message; the target is then untouched.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let with_path = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    if let Some(kind) = not_regular(path) {
        return Err(with_path(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "it is {kind}, not a regular file; only a regular file is ever replaced (write to another file, or leave out -o to print to stdout)"
            ),
        )));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            with_path(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a file name",
            ))
        })?;
    let prefix = format!(".{name}.");
    let mut builder = tempfile::Builder::new();
    builder.prefix(&prefix).suffix(".retrace-tmp");
    #[cfg(unix)]
    {
        // Created with mode 0666: the kernel applies the umask.
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    let mut tmp = builder.tempfile_in(dir).map_err(with_path)?;
    tmp.write_all(bytes).map_err(with_path)?;
    tmp.flush().map_err(with_path)?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(with_path)?;
    }
    tmp.as_file().sync_all().map_err(with_path)?;
    crate::review::case::test_pause(PAUSE_BEFORE_RENAME_ENV, "before rename");
    tmp.persist(path).map_err(|e| with_path(e.error))?;
    sync_dir(dir);
    Ok(())
}

/// What an existing `path` is when it is not a regular file (`a symbolic
/// link`, `a folder`, `a FIFO`, `a socket`, `a character device`, `a block
/// device`); `None` for a regular file or a path that does not exist. A
/// symbolic link is named as such whatever it points to: renaming over it
/// would replace the link, not the file it names.
pub fn not_regular(path: &Path) -> Option<&'static str> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_symlink() {
        return Some("a symbolic link");
    }
    if t.is_dir() {
        return Some("a folder");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a FIFO");
        }
        if t.is_socket() {
            return Some("a socket");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
    }
    Some("a special file")
}

/// An output file that is one of the command's inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{target} is {what}, which retrace reads: refusing to write over it")]
pub struct IsInput {
    /// The output as given (escaped for a terminal).
    pub target: String,
    /// Which input it is, e.g. `the journal j.jsonl` (escaped).
    pub what: String,
}

/// The journals and the case file (with the side files SQLite keeps beside
/// it), each with its description, for [`check_not_input`].
pub fn inputs<'a>(
    journals: impl IntoIterator<Item = &'a Path>,
    case: Option<&Path>,
) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = journals
        .into_iter()
        .map(|j| (j.to_path_buf(), format!("the journal {}", j.display())))
        .collect();
    if let Some(c) = case {
        let what = format!("the case file {}", c.display());
        out.push((c.to_path_buf(), what.clone()));
        for side in ["-wal", "-shm", "-journal"] {
            let mut p = c.as_os_str().to_owned();
            p.push(side);
            out.push((PathBuf::from(p), format!("a side file of {what}")));
        }
    }
    out
}

/// Refuses `target` when it is the same file as one of `inputs` (each with
/// its description, e.g. `the journal j.jsonl`): compared by device and
/// inode when both exist (so a symbolic link, a hard link or another
/// spelling of an input is caught), else by resolved path (an input that
/// does not exist yet, such as a case file the first decision creates).
///
/// # Errors
/// [`IsInput`] naming the input.
pub fn check_not_input(target: &Path, inputs: &[(PathBuf, String)]) -> Result<(), IsInput> {
    for (input, what) in inputs {
        if same_file(target, input) {
            return Err(IsInput {
                target: crate::sanitize::escape(&target.display().to_string()).into_owned(),
                what: crate::sanitize::escape(what).into_owned(),
            });
        }
    }
    Ok(())
}

/// Whether `a` and `b` name one file (or would, once created).
fn same_file(a: &Path, b: &Path) -> bool {
    if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b))
        && let Some(same) = same_inode(&ma, &mb)
    {
        return same;
    }
    match (resolved(a), resolved(b)) {
        (Some(x), Some(y)) => x == y,
        _ => false,
    }
}

#[cfg(unix)]
fn same_inode(a: &std::fs::Metadata, b: &std::fs::Metadata) -> Option<bool> {
    use std::os::unix::fs::MetadataExt;
    Some(a.dev() == b.dev() && a.ino() == b.ino())
}

#[cfg(not(unix))]
fn same_inode(_: &std::fs::Metadata, _: &std::fs::Metadata) -> Option<bool> {
    None
}

/// The path with symbolic links resolved; for a file that does not exist,
/// its resolved folder joined with its name.
fn resolved(p: &Path) -> Option<PathBuf> {
    if let Ok(c) = std::fs::canonicalize(p) {
        return Some(c);
    }
    let name = p.file_name()?;
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(dir).ok()?.join(name))
}

/// Syncs a folder so that a rename in it is durable (best effort: not every
/// platform or file system can open a folder for syncing).
fn sync_dir(dir: &Path) {
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new export gets the permissions any program's new file gets (it
    /// was once created `-rw-------` under umask 022); an existing one
    /// keeps its own.
    #[cfg(unix)]
    #[test]
    fn new_files_get_the_usual_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let usual = d.path().join("usual");
        std::fs::File::create(&usual).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let new = d.path().join("pm.md");
        write(&new, b"x").unwrap();
        assert_eq!(mode(&new), mode(&usual));
        std::fs::set_permissions(&new, std::fs::Permissions::from_mode(0o640)).unwrap();
        write(&new, b"y").unwrap();
        assert_eq!(mode(&new), 0o640);
    }

    #[test]
    fn replaces_whole_and_leaves_no_temp_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("out.md");
        write(&p, b"first").unwrap();
        write(&p, b"second, longer").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"second, longer");
        let names: Vec<_> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("out.md")]);
    }

    #[cfg(unix)]
    #[test]
    fn special_files_and_links_are_never_replaced() {
        let d = tempfile::tempdir().unwrap();
        let real = d.path().join("real.md");
        std::fs::write(&real, "keep").unwrap();
        let link = d.path().join("link.md");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let fifo = d.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        for (p, kind) in [
            (&link, "a symbolic link"),
            (&fifo, "a FIFO"),
            (&d.path().to_path_buf(), "a folder"),
            (&PathBuf::from("/dev/null"), "a character device"),
        ] {
            let before = std::fs::symlink_metadata(p).unwrap().file_type();
            let e = write(p, b"x").unwrap_err();
            assert!(e.to_string().contains(kind), "{p:?}: {e}");
            assert_eq!(std::fs::symlink_metadata(p).unwrap().file_type(), before);
        }
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "keep");
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    #[test]
    fn an_input_is_caught_by_any_name() {
        let d = tempfile::tempdir().unwrap();
        let j = d.path().join("j.jsonl");
        std::fs::write(&j, "{}").unwrap();
        let inputs = vec![
            (j.clone(), "the journal j.jsonl".to_string()),
            (
                d.path().join("retrace-case.sqlite"),
                "the case file".to_string(),
            ),
        ];
        // The same path, another spelling, a hard link, a symbolic link.
        let other = d.path().join(".").join("j.jsonl");
        let hard = d.path().join("hard.jsonl");
        std::fs::hard_link(&j, &hard).unwrap();
        let mut names = vec![j.clone(), other, hard];
        #[cfg(unix)]
        {
            let soft = d.path().join("soft.jsonl");
            std::os::unix::fs::symlink(&j, &soft).unwrap();
            names.push(soft);
        }
        for n in names {
            let e = check_not_input(&n, &inputs).unwrap_err();
            assert!(e.to_string().contains("the journal j.jsonl"), "{e}");
        }
        // A case file that does not exist yet is an input too.
        let e = check_not_input(&d.path().join("retrace-case.sqlite"), &inputs).unwrap_err();
        assert!(e.to_string().contains("the case file"), "{e}");
        assert!(check_not_input(&d.path().join("out.md"), &inputs).is_ok());
    }

    #[test]
    fn a_missing_folder_is_an_error_naming_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("no/such/out.md");
        let e = write(&p, b"x").unwrap_err();
        assert!(e.to_string().contains("out.md"), "{e}");
    }
}
