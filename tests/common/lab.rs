//! Checking retrace's verdicts against the lab's ground truth
//! (tests/lab/README.md): each scenario's group must get the verdict the
//! journal can prove (or the most cautious one where it cannot), and never
//! one that what really happened contradicts.

use super::{BIN, stderr};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where the lab's output is: `RETRACE_LAB_DIR`, else `target/lab` (what
/// `tests/lab/run.sh` writes and `.ci/run` runs first). `None` after a
/// [`super::skip::skip`] when it holds no `truth.json` (a failure under
/// `CI=true`, since CI runs the lab before the tests).
pub fn lab_dir(test: &str) -> Option<PathBuf> {
    let dir = std::env::var_os("RETRACE_LAB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/lab"));
    if dir.join("truth.json").is_file() {
        return Some(dir);
    }
    super::skip::skip(
        test,
        &format!(
            "no lab output in {} (run tests/lab/run.sh, or set RETRACE_LAB_DIR)",
            dir.display()
        ),
    );
    None
}

/// The truth of one system of a lab run: its scenarios by id.
pub fn scenarios(truth: &Path, system: &str) -> BTreeMap<String, Value> {
    let t: Value = serde_json::from_slice(&std::fs::read(truth).unwrap()).unwrap();
    let sys = t["systems"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["system"] == system)
        .unwrap_or_else(|| panic!("{system} is not in {}", truth.display()));
    sys["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["id"].as_str().unwrap().to_string(), s.clone()))
        .collect()
}

/// `retrace groups --all --json` over `journals`: the groups.
pub fn groups(journals: &[PathBuf], extra: &[&str]) -> Vec<Value> {
    groups_and_notes(journals, extra).0
}

/// `retrace groups --all --json` over `journals` (files or URLs): the
/// groups, and what it said on stderr.
pub fn groups_and_notes<S: AsRef<std::ffi::OsStr>>(
    journals: &[S],
    extra: &[&str],
) -> (Vec<Value>, String) {
    let out = Command::new(BIN)
        .arg("groups")
        .arg("--all")
        .arg("--json")
        .args(extra)
        .args(journals)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let groups = serde_json::from_slice::<Value>(&out.stdout)
        .unwrap()
        .as_array()
        .unwrap()
        .clone();
    (groups, stderr(&out))
}

/// Splits an OTLP JSON line export (one `TracesData` a line) into one
/// file per service in `dir`, as when each service exports its own spans:
/// each `resourceSpans` entry goes, as a `TracesData` line of its own, to
/// `<service.name>.jsonl`. Returns the files, by service name.
pub fn split_by_service(traces: &Path, dir: &Path) -> Vec<PathBuf> {
    let mut by_service: BTreeMap<String, String> = BTreeMap::new();
    for line in std::fs::read_to_string(traces).unwrap().lines() {
        if line.trim().is_empty() {
            continue;
        }
        let data: Value = serde_json::from_str(line).unwrap();
        for rs in data["resourceSpans"].as_array().unwrap() {
            let service = rs["resource"]["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["key"] == "service.name")
                .and_then(|a| a["value"]["stringValue"].as_str())
                .unwrap_or("unknown_service")
                .to_string();
            let text = by_service.entry(service).or_default();
            text.push_str(&serde_json::json!({ "resourceSpans": [rs] }).to_string());
            text.push('\n');
        }
    }
    assert!(
        by_service.len() > 1,
        "{} holds one service",
        traces.display()
    );
    by_service
        .into_iter()
        .map(|(service, text)| {
            let path = dir.join(format!("{service}.jsonl"));
            std::fs::write(&path, text).unwrap();
            path
        })
        .collect()
}

pub use super::skip::skip;

// The verdicts each system's journals can prove, by scenario (or the
// most cautious one where they cannot), for `check`.

/// The MCP SDK's own tracing: no arguments, a cancelled handler ends like
/// a finished one, so a client timeout leaves the outcome unknown.
pub const OTEL_SDK: &[(&str, &str)] = &[
    ("drop_then_retry", "possible_duplicate"),
    ("drop_no_retry", "pending_verification"),
    ("repeat_after_result", "distinct_intent"),
    ("target_down_then_retry", "possible_duplicate"),
    ("concurrent_sends", "duplicate_side_effect"),
    ("read_only_noise", "distinct_intent"),
];

/// OpenLLMetry: the server's response write proves the tool finished.
pub const OPENLLMETRY: &[(&str, &str)] = &[
    ("drop_then_retry", "duplicate_side_effect"),
    ("drop_no_retry", "undelivered_result"),
    ("repeat_after_result", "distinct_intent"),
    ("target_down_then_retry", "possible_duplicate"),
    ("concurrent_sends", "duplicate_side_effect"),
    ("read_only_noise", "distinct_intent"),
];

/// The client's spans, ContextForge's gateway spans, its log and its
/// database, read together (the lab's `joined` system): one execution per
/// call, seen by every layer.
pub const JOINED: &[(&str, &str)] = &[
    ("drop_then_retry", "possible_duplicate"),
    ("drop_no_retry", "pending_verification"),
    ("repeat_after_result", "distinct_intent"),
    ("target_down_then_retry", "safe_retry"),
    ("concurrent_sends", "duplicate_side_effect"),
    ("read_only_noise", "distinct_intent"),
    ("gateway_timeout_then_retry", "possible_duplicate"),
];

/// ContextForge's database, its log, or both: every scenario decided the
/// same way (its database keeps httpx's text for a connect failure, read as
/// a dispatch failure and marked inferred).
pub const CONTEXTFORGE: &[(&str, &str)] = JOINED;

/// Checks that each reproduced scenario's tool has exactly one group: every
/// record of each call joined into one execution, every call of one intent
/// in one group.
pub fn one_group_per_scenario(system: &str, truth: &Path, groups: &[Value]) {
    for (id, s) in scenarios(truth, system) {
        if s["reproduced"] != true {
            continue;
        }
        let tool = s["exposed_tool"].as_str().unwrap();
        let n = groups.iter().filter(|g| g["tool"] == tool).count();
        assert_eq!(
            n, 1,
            "{system}/{id}: one group of {tool}, found {n}: {groups:?}"
        );
    }
}

/// The system's truth, or `None` (with a notice; a failure under
/// `CI=true`) when the lab output holds none.
pub fn system_truth(dir: &Path, system: &str, test: &str) -> Option<Value> {
    let t: Value = serde_json::from_slice(&std::fs::read(dir.join("truth.json")).ok()?).ok()?;
    let found = t["systems"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["system"] == system))
        .cloned();
    if found.is_none() {
        skip(
            test,
            &format!("the lab output has no system {system} (LAB_SYSTEMS left it out)"),
        );
    }
    found
}

/// What really happened in a scenario, and the verdicts that would deny it.
fn contradicted_by(scenario: &str) -> &'static [&'static str] {
    const DENY_DUPLICATE: &[&str] = &[
        "clean",
        "attached_retry",
        "safe_retry",
        "deduplicated_by_target",
        "distinct_intent",
    ];
    match scenario {
        // The target acted twice for one intent.
        "drop_then_retry" | "concurrent_sends" | "gateway_timeout_then_retry" => DENY_DUPLICATE,
        // It acted once and the result never reached the agent ("clean"
        // is what a journal that cannot show delivery can say, in words
        // that say so).
        "drop_no_retry" => &["safe_retry", "duplicate_side_effect"],
        // Two intents, two effects, both delivered; one effect in all
        // (the first attempt never reached the target); no effect at all.
        "repeat_after_result" | "target_down_then_retry" | "read_only_noise" => {
            &["duplicate_side_effect"]
        }
        other => panic!("no truth for scenario {other}"),
    }
}

/// Checks every reproduced scenario of `system`: its tool's groups (by the
/// tool name the client called) get `expected[scenario]`, and none gets a
/// verdict the truth contradicts. Returns the table rows (scenario, truth,
/// verdict) for the lab note.
pub fn check(
    system: &str,
    truth: &Path,
    groups: &[Value],
    expected: &[(&str, &str)],
) -> Vec<(String, String, String)> {
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (id, s) in scenarios(truth, system) {
        if s["reproduced"] != true {
            continue;
        }
        let tool = s["exposed_tool"].as_str().unwrap();
        let verdicts: Vec<&str> = groups
            .iter()
            .filter(|g| g["tool"] == tool)
            .map(|g| g["verdict"].as_str().unwrap())
            .collect();
        let Some(&(_, want)) = expected.iter().find(|(sc, _)| *sc == id) else {
            failures.push(format!("{system}/{id}: no expected verdict in the test"));
            continue;
        };
        // The scenario's verdict is its most severe group's (the groups
        // list is sorted worst first).
        let got = verdicts.first().copied().unwrap_or("(no group)");
        if got != want {
            failures.push(format!(
                "{system}/{id} ({tool}): expected {want}, retrace said {got} (all groups: {verdicts:?})"
            ));
        }
        for v in &verdicts {
            if contradicted_by(&id).contains(v) {
                failures.push(format!(
                    "{system}/{id} ({tool}): {v} is contradicted by what happened ({} effects, client saw {})",
                    s["effects"], s["client_saw"]
                ));
            }
        }
        rows.push((
            id,
            format!("{} effects, client saw {}", s["effects"], s["client_saw"]),
            got.to_string(),
        ));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    rows
}
