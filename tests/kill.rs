//! Killing retrace in the middle of a decision or an export leaves the case
//! file and the output either complete or untouched. The real binary is
//! paused at the risky moment by its documented test hooks
//! (`RETRACE_TEST_PAUSE_BEFORE_COMMIT_MS`: inside the case file
//! transaction, after the insert; `RETRACE_TEST_PAUSE_BEFORE_RENAME_MS`:
//! after the temporary file is complete, before the rename) and killed
//! with SIGKILL there.

mod common;

use common::*;
use retrace::journal::chain::ChainStatus;
use retrace::review::case;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

/// Starts retrace with a pause hook, waits until it announces the pause,
/// then kills it with SIGKILL.
fn kill_at_hook(dir: &Path, hook: &str, args: &[&str]) {
    let mut child = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .env(hook, "60000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        let paused = line.contains("test hook: pausing");
        seen.push(line);
        if paused {
            child.kill().unwrap(); // SIGKILL on Unix
            let status = child.wait().unwrap();
            assert!(!status.success());
            return;
        }
    }
    let status = child.wait().unwrap();
    panic!("retrace never reached the hook ({status}): {seen:?}");
}

fn entries(case_path: &Path) -> u64 {
    match case::verify(case_path).unwrap().chain.status {
        ChainStatus::Intact { lines, .. } => lines,
        s => panic!("chain not intact after a kill: {s:?}"),
    }
}

const J: &str = "pending-retry.jsonl";

fn decide(decision: &str) -> Vec<String> {
    [
        "review",
        "decide",
        "act_R1",
        J,
        "--decision",
        decision,
        "--note",
        "checked the target",
        "--reviewer",
        "alice",
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn killed_inside_the_decision_transaction_leaves_the_case_file_untouched() {
    let (d, _) = copy_fixture(J);
    let case_path = d.path().join(case::DEFAULT_FILE_NAME);
    // One decision first, so that there is something to lose.
    let o = run(
        d.path(),
        &decide("escalated")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(&case_path), 1);

    let args = decide("confirmed_completed");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    kill_at_hook(d.path(), case::PAUSE_BEFORE_COMMIT_ENV, &args);

    // Untouched: the earlier entry, an intact chain, the old verdict.
    assert_eq!(entries(&case_path), 1);
    let v = json(&run(d.path(), &["groups", J, "--json"]));
    assert_eq!(v[0]["verdict"], "possible_duplicate");
    // Nothing is left locked: the same decision now goes through whole.
    let o = run(d.path(), &args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(entries(&case_path), 2);
    let v = json(&run(d.path(), &["groups", J, "--json"]));
    assert_eq!(v[0]["verdict"], "duplicate_side_effect");
}

#[test]
fn killed_inside_the_first_decision_leaves_an_empty_intact_case_file() {
    let (d, _) = copy_fixture(J);
    let case_path = d.path().join(case::DEFAULT_FILE_NAME);
    let args = decide("confirmed_completed");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    kill_at_hook(d.path(), case::PAUSE_BEFORE_COMMIT_ENV, &args);
    assert_eq!(entries(&case_path), 0);
    let q = json(&run(d.path(), &["review", "list", J, "--json"]));
    assert_eq!(q.as_array().unwrap().len(), 1);
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn killed_before_the_rename_an_export_leaves_the_old_file_untouched() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("postmortem.md");
    std::fs::write(&out, "the previous export\n").unwrap();
    kill_at_hook(
        d.path(),
        retrace::export::atomic::PAUSE_BEFORE_RENAME_ENV,
        &[
            "export",
            "--all",
            "--format",
            "markdown",
            "-o",
            "postmortem.md",
        ],
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "the previous export\n"
    );
    // The complete temporary file is left beside it, under a name that
    // says what it is; it never replaces the target half-written.
    let names = files(d.path());
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(
        names[0].starts_with(".postmortem.md.") && names[0].ends_with(".retrace-tmp"),
        "{names:?}"
    );
}

#[test]
fn killed_before_the_rename_a_new_export_is_absent() {
    let d = tempfile::tempdir().unwrap();
    kill_at_hook(
        d.path(),
        retrace::export::atomic::PAUSE_BEFORE_RENAME_ENV,
        &["export", "--all", "--format", "json", "-o", "pm.json"],
    );
    assert!(!d.path().join("pm.json").exists());
    // Run again without the hook: the file is complete JSON.
    let o = run(
        d.path(),
        &["export", "--all", "--format", "json", "-o", "pm.json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.path().join("pm.json")).unwrap()).unwrap();
    assert_eq!(v["groups"][0]["verdict"], "duplicate_side_effect");
}

#[test]
fn killed_before_the_rename_a_decision_export_is_absent() {
    let (d, _) = copy_fixture(J);
    let o = run(
        d.path(),
        &decide("escalated")
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    kill_at_hook(
        d.path(),
        retrace::export::atomic::PAUSE_BEFORE_RENAME_ENV,
        &["review", "export", J, "-o", "decisions.jsonl"],
    );
    assert!(!d.path().join("decisions.jsonl").exists());
    assert_eq!(entries(&d.path().join(case::DEFAULT_FILE_NAME)), 1);
}
