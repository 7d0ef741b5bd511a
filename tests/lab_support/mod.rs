//! The lab's output (tests/lab/README.md) for the tests that read it: where
//! it is, its truth per scenario, the verdict each scenario must get, and
//! retrace's verdicts per tool.
#![allow(dead_code)]

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `RETRACE_LAB_DIR`, else `target/lab` of the crate.
pub fn lab_dir() -> PathBuf {
    match std::env::var_os("RETRACE_LAB_DIR") {
        Some(d) if !d.is_empty() => PathBuf::from(d),
        _ => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lab"),
    }
}

/// Says why a test does not run: a notice, or under `CI=true` (where the
/// lab runs first) a failure.
pub fn skip(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!(
            "{why}; CI runs the lab first (tests/lab/run.sh target/lab), so this must not be missing"
        );
    }
    eprintln!("SKIPPED: {why}");
}

/// One scenario of `truth.json`.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub id: String,
    pub exposed_tool: String,
    pub effects: u64,
    pub calls_sent: u64,
    pub results_delivered: u64,
}

/// The reproduced scenarios of `system`, or `None` (with a notice) when
/// the lab output lacks them.
pub fn scenarios(system: &str) -> Option<Vec<Scenario>> {
    let truth = lab_dir().join("truth.json");
    let Ok(text) = std::fs::read_to_string(&truth) else {
        skip(&format!(
            "{} is absent (run tests/lab/run.sh)",
            truth.display()
        ));
        return None;
    };
    let t: Value = serde_json::from_str(&text).expect("truth.json is JSON");
    let Some(s) = t["systems"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["system"] == system)
    else {
        skip(&format!("{} has no system {system}", truth.display()));
        return None;
    };
    Some(
        s["scenarios"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|x| x["reproduced"] == true)
            .map(|x| Scenario {
                id: x["id"].as_str().unwrap_or_default().to_string(),
                exposed_tool: x["exposed_tool"]
                    .as_str()
                    .or_else(|| x["tool"].as_str())
                    .unwrap_or_default()
                    .to_string(),
                effects: x["effects"].as_u64().unwrap_or(0),
                calls_sent: x["calls_sent"].as_u64().unwrap_or(0),
                results_delivered: x["results_delivered"].as_u64().unwrap_or(0),
            })
            .collect(),
    )
}

/// What a scenario's group must be found to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// This verdict.
    Verdict(&'static str),
    /// Any verdict that is not a high or critical alert.
    NoAlert,
}

/// The verdict a ContextForge journal proves for each scenario, or the
/// most cautious one where it cannot prove one:
///
/// * drop_then_retry: the first call was dispatched and cancelled when the
///   client went away (outcome unknown), the retry acted: a possible
///   duplicate (the truth: acted twice; retrace cannot see the first effect);
/// * drop_no_retry: dispatched, outcome unknown, nothing settles it;
/// * repeat_after_result: the first result was written to the client
///   before the second call came: a distinct intent;
/// * target_down_then_retry: ConnectError, nothing reached the upstream;
///   the retry is safe (the truth: acted once);
/// * concurrent_sends: both acted, the first unresolved when the second
///   went out;
/// * read_only_noise: five reads, each after the last was delivered;
/// * gateway_timeout_then_retry: the gateway stopped waiting (outcome
///   unknown) and the retry acted: a possible duplicate (the truth: twice).
///
/// The database alone cannot tell a ConnectError by its type; it keeps
/// httpx's text for it, which retrace reads (inferred, and says so), so
/// target_down_then_retry is a safe retry from it too. Every other
/// scenario is decided the same way by the database, the log, or both.
pub fn expected(id: &str) -> Expect {
    match id {
        "drop_then_retry" => Expect::Verdict("possible_duplicate"),
        "drop_no_retry" => Expect::Verdict("pending_verification"),
        "repeat_after_result" => Expect::Verdict("distinct_intent"),
        "target_down_then_retry" => Expect::Verdict("safe_retry"),
        "concurrent_sends" => Expect::Verdict("duplicate_side_effect"),
        "read_only_noise" => Expect::NoAlert,
        "gateway_timeout_then_retry" => Expect::Verdict("possible_duplicate"),
        other => panic!("no expectation for scenario {other}"),
    }
}

/// Whether the truth contradicts a verdict: a duplicate where the tool
/// acted once, a safe retry or a clean group where it acted twice.
pub fn contradicted(verdict: &str, s: &Scenario) -> bool {
    match verdict {
        "duplicate_side_effect" => s.effects < 2,
        "safe_retry" | "clean" | "attached_retry" | "deduplicated_by_target" => s.effects > 1,
        _ => false,
    }
}

/// One group as `retrace groups --json` prints it: (verdict, severity).
pub type Verdicts = HashMap<String, Vec<(String, String)>>;

/// Runs `retrace groups --all --json` with `args`; the groups by tool, and
/// stderr.
pub fn groups(args: &[&str]) -> (Verdicts, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_retrace"))
        .args(["groups", "--all", "--json"])
        .args(args)
        .output()
        .expect("retrace runs");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "retrace {args:?}: {err}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("groups --json is JSON");
    let mut by_tool: Verdicts = HashMap::new();
    for g in v.as_array().into_iter().flatten() {
        by_tool
            .entry(g["tool"].as_str().unwrap_or_default().to_string())
            .or_default()
            .push((
                g["verdict"].as_str().unwrap_or_default().to_string(),
                g["severity"].as_str().unwrap_or_default().to_string(),
            ));
    }
    (by_tool, err)
}

/// Checks every scenario against the groups retrace found; `what` names
/// the sources in messages.
pub fn check(what: &str, scenarios: &[Scenario], found: &Verdicts) {
    for s in scenarios {
        let groups = found.get(&s.exposed_tool).unwrap_or_else(|| {
            panic!(
                "{what}: {}: no group of {}: {found:?}",
                s.id, s.exposed_tool
            )
        });
        assert_eq!(
            groups.len(),
            1,
            "{what}: {}: one group of {} expected: {groups:?}",
            s.id,
            s.exposed_tool
        );
        let (verdict, severity) = &groups[0];
        match expected(&s.id) {
            Expect::Verdict(v) => assert_eq!(verdict, v, "{what}: {}", s.id),
            Expect::NoAlert => assert!(
                severity != "high" && severity != "critical",
                "{what}: {}: {verdict} ({severity}) is an alert",
                s.id
            ),
        }
        assert!(
            !contradicted(verdict, s),
            "{what}: {}: {verdict} contradicts the truth ({} effects of {} calls)",
            s.id,
            s.effects,
            s.calls_sent
        );
    }
}
