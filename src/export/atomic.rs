//! Writes a file so that it is either complete or untouched: the content
//! goes to a temporary file in the target's folder, is flushed to disk
//! (`fsync`), then renamed over the target (`rename` is atomic within one
//! file system, POSIX `rename(2)`), and the folder is synced so that the
//! rename itself survives a crash.
//!
//! A process killed before the rename leaves the target as it was and a
//! temporary file named `.<target name>.<random>.retrace-tmp` beside it.
//!
//! Test hook: when the environment variable [`PAUSE_BEFORE_RENAME_ENV`]
//! holds a number of milliseconds, [`write`] prints
//! `retrace: test hook: pausing before rename` on stderr and sleeps that
//! long after the temporary file is complete and before the rename, so
//! that a test can kill the process there.

use std::io::{self, Write};
use std::path::Path;

/// Test hook: milliseconds to sleep before the rename.
pub const PAUSE_BEFORE_RENAME_ENV: &str = "RETRACE_TEST_PAUSE_BEFORE_RENAME_MS";

/// Writes `bytes` to `path` atomically. An existing file keeps its
/// permissions; a new one is created readable by its owner only (as the
/// temporary file is), since a postmortem can hold sensitive detail.
///
/// # Errors
/// I/O errors, with the path in the message; the target is then untouched.
pub fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let with_path = |e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", path.display()));
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
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".retrace-tmp")
        .tempfile_in(dir)
        .map_err(with_path)?;
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

    #[test]
    fn a_missing_folder_is_an_error_naming_the_file() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("no/such/out.md");
        let e = write(&p, b"x").unwrap_err();
        assert!(e.to_string().contains("out.md"), "{e}");
    }
}
