//! A test that cannot run here says so, and under `CI=true` a skip is a
//! failure (tests/common/skip.rs).

mod common;

use std::process::Command;

/// Runs this very test again as a child, as the probe that skips, with
/// `CI` as given: (passed, stdout and stderr).
fn probe(ci: Option<&str>) -> (bool, String) {
    let exe = std::env::current_exe().unwrap();
    let mut cmd = Command::new(exe);
    cmd.args([
        "--exact",
        "a_skip_says_so_and_fails_under_ci",
        "--nocapture",
    ])
    .env("RETRACE_SKIP_PROBE", "1");
    match ci {
        Some(v) => cmd.env("CI", v),
        None => cmd.env_remove("CI"),
    };
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn a_skip_says_so_and_fails_under_ci() {
    if std::env::var_os("RETRACE_SKIP_PROBE").is_some() {
        common::skip::skip("the_probe", "nothing to run it on");
        return;
    }
    let (passed, text) = probe(None);
    assert!(passed, "{text}");
    assert!(
        text.contains("SKIPPED the_probe: nothing to run it on"),
        "{text}"
    );
    let (passed, text) = probe(Some("false"));
    assert!(passed, "only CI=true makes a skip fail: {text}");
    let (passed, text) = probe(Some("true"));
    assert!(!passed, "a skip under CI=true must fail: {text}");
    assert!(
        text.contains("SKIPPED the_probe: nothing to run it on"),
        "{text}"
    );
}
