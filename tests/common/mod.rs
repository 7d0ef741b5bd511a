//! Shared helpers for the end-to-end tests: run the real binary on a copy
//! of a fixture in a temporary folder.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub const BIN: &str = env!("CARGO_BIN_EXE_retrace");

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A temporary folder holding a copy of the fixture; returns (folder, journal).
pub fn copy_fixture(name: &str) -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let j = d.path().join(name);
    std::fs::copy(fixture(name), &j).unwrap();
    (d, j)
}

/// Runs retrace with `args` in `dir` (USER cleared so that --reviewer is
/// what decides).
pub fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env_remove("USER")
        .env_remove("LOGNAME")
        .env_remove("USERNAME")
        .output()
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

pub mod lab;
pub mod skip;
