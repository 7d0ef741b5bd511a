//! Tests that need something this machine may not have (tmux, the team's
//! real journals beside the repository, the lab's output) say so when they
//! cannot run: `SKIPPED <test>: <why>` on stderr, and the test returns. CI
//! installs everything (`.ci/run`) and sets `CI=true`; there a skip is a
//! failure, so that a missing install step cannot pass as green.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Whether this run is CI's (`CI=true`), where nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").as_deref() == Ok("true")
}

/// Reports that `test` cannot run here because of `why`: prints
/// `SKIPPED <test>: <why>` to stderr; under `CI=true` panics with the same
/// words instead.
pub fn skip(test: &str, why: &str) {
    let msg = format!("SKIPPED {test}: {why}");
    assert!(
        !in_ci(),
        "{msg} (CI=true: CI installs everything, so this test must run)"
    );
    eprintln!("{msg}");
}

/// `Ok(v)` as `Some(v)`; an `Err(why)` is a [`skip`] of `test`, then `None`.
pub fn require<T>(test: &str, found: Result<T, String>) -> Option<T> {
    match found {
        Ok(v) => Some(v),
        Err(why) => {
            skip(test, &why);
            None
        }
    }
}

/// Whether tmux runs here; if not, `test` is skipped ([`skip`]).
pub fn tmux(test: &str) -> bool {
    let ok = Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        skip(test, "tmux is not installed (`.ci/run` installs it)");
    }
    ok
}

/// The team's real journals: `real-journals/` in the shared folder beside
/// the repository (README: "the team's shared `real-journals/` folder").
pub fn real_journals_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/real-journals")
}

/// A file or folder under the real journals, or `None` after a [`skip`] of
/// `test` when it is absent.
pub fn real_journal(test: &str, rel: &str) -> Option<PathBuf> {
    let p = real_journals_dir().join(rel);
    require(
        test,
        if p.exists() {
            Ok(p)
        } else {
            Err(format!(
                "{} is absent (the real journals live beside the repository, not in it)",
                p.display()
            ))
        },
    )
}
