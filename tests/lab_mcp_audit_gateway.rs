//! retrace on a fresh lab run of mcp-audit-gateway (tests/lab): for each
//! scenario of `truth.json`, the verdict of the group of its tool is the one
//! the audit log can prove, or the most cautious one where it cannot, and
//! never one the ground truth contradicts.
//!
//! The lab's output is read from `RETRACE_LAB_DIR`, else `target/lab` under
//! the crate root (`common::lab::lab_dir`). Without it the test prints
//! `SKIPPED <test>: <why>` and passes, except when `CI` is `true`: CI runs
//! the lab first, so a missing output is a failure there.
//!
//! The expected verdicts are derived here from the log's own records (when
//! each call began and ended, how it ended), independently of retrace's
//! verdict code, and then checked against the truth.

mod common;

use chrono::{DateTime, Utc};
use common::lab;
use serde_json::Value;
use std::path::{Path, PathBuf};

const SYSTEM: &str = "mcp-audit-gateway";

/// The lab's output for the system, or `None` after saying why it is
/// skipped (a failure under `CI=true`, where the lab runs first).
fn lab(test: &str) -> Option<(PathBuf, Value)> {
    let dir = lab::lab_dir(test)?;
    let system = lab::system_truth(&dir, SYSTEM, test)?;
    Some((dir.join(SYSTEM), system))
}

fn time(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .unwrap_or_else(|e| panic!("{s:?}: {e}"))
        .with_timezone(&Utc)
}

/// One `tools/call` record of the audit log, as the test reads it.
#[derive(Debug, Clone)]
struct Rec {
    line: usize,
    tool: Option<String>,
    outcome: String,
    error: Option<String>,
    start: DateTime<Utc>,
    end: DateTime<Utc>,
}

fn records(log: &Path) -> Vec<Rec> {
    let text = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{}: {e}", log.display()));
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            let v: Value =
                serde_json::from_str(l).unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
            (i, v)
        })
        .filter(|(_, v)| v["method"] == "tools/call")
        .map(|(i, v)| {
            let end = time(v["timestamp"].as_str().unwrap_or_default());
            let ms = v["latency_ms"].as_f64().unwrap_or_default();
            Rec {
                line: i + 1,
                tool: v["tool"].as_str().map(str::to_string),
                outcome: v["outcome"].as_str().unwrap_or_default().to_string(),
                error: v["error"].as_str().map(str::to_string),
                start: end - chrono::TimeDelta::microseconds((ms * 1000.0).round() as i64),
                end,
            }
        })
        .collect()
}

/// The verdict the log itself supports for the calls of one tool (all of
/// one principal and tenant, with the same arguments: the lab's design),
/// and why. Without tool contracts, every tool is irreversible.
fn derive(calls: &[Rec]) -> (&'static str, String) {
    let mut c = calls.to_vec();
    c.sort_by_key(|r| r.start);
    let ok = |r: &Rec| r.outcome == "ok";
    let refused = |r: &Rec| {
        r.outcome == "upstream_error"
            && r.error
                .as_deref()
                .is_some_and(|e| e.contains("is unreachable: ") && e.contains("Connection refused"))
    };
    match c.as_slice() {
        [one] if ok(one) => (
            "clean",
            format!(
                "line {}: one call, ok; the log records no delivery, so it cannot show an undelivered result",
                one.line
            ),
        ),
        [first, rest @ ..] if refused(first) && !rest.is_empty() && rest.iter().all(ok) => (
            "safe_retry",
            format!(
                "line {}: the first call found the upstream refusing connections, nothing was sent; the retry is the one execution",
                first.line
            ),
        ),
        many if many.len() >= 2 && many.iter().all(ok) => {
            let overlap = many.iter().enumerate().find_map(|(i, a)| {
                many[i + 1..]
                    .iter()
                    .find(|b| a.end > b.start)
                    .map(|b| (a.line, b.line))
            });
            match overlap {
                Some((a, b)) => (
                    "duplicate_side_effect",
                    format!(
                        "line {a}'s call was still unanswered when line {b}'s was dispatched, and both came back ok"
                    ),
                ),
                None => (
                    "possible_duplicate",
                    "each call was answered before the next began, and the log cannot show whether that answer reached the client".to_string(),
                ),
            }
        }
        other => panic!("no derivation for these records: {other:?}"),
    }
}

/// `retrace groups --all --json [args] <journals>` on the real binary.
fn groups(journals: &[PathBuf], args: &[&str]) -> Vec<Value> {
    lab::groups(journals, args)
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_default()
}

fn n(v: &Value, k: &str) -> u64 {
    v[k].as_u64().unwrap_or_default()
}

#[test]
fn each_scenario_gets_the_verdict_the_log_can_prove_and_the_truth_allows() {
    let Some((dir, system)) =
        lab("each_scenario_gets_the_verdict_the_log_can_prove_and_the_truth_allows")
    else {
        return;
    };
    check(&dir, &system);
}

/// The same checks on the lab run committed as fixtures
/// (tests/lab/make-fixtures.sh), which need no lab.
#[test]
fn the_committed_lab_fixture_passes_the_same_checks() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lab");
    let text = std::fs::read_to_string(fixtures.join("truth.json")).expect("fixture truth.json");
    let truth: Value = serde_json::from_str(&text).expect("fixture truth.json is JSON");
    let system = truth["systems"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["system"] == SYSTEM))
        .expect("the fixture has mcp-audit-gateway");
    check(&fixtures.join(SYSTEM), system);
}

/// Checks every reproduced scenario of one lab run of the system, whose
/// journals are in `dir`.
fn check(dir: &Path, system: &Value) {
    let journals: Vec<PathBuf> = system["journals"]
        .as_array()
        .expect("journals")
        .iter()
        .map(|j| dir.join(j.as_str().unwrap_or_default()))
        .collect();
    assert_eq!(journals.len(), 1, "{journals:?}");
    let recs = records(&journals[0]);
    let got = groups(&journals, &[]);

    // Nothing the journal holds is dropped: every tools/call record is a
    // call of some group.
    let calls: u64 = got.iter().map(|g| n(g, "calls")).sum();
    assert_eq!(calls, recs.len() as u64, "{got:#?}");

    let unnamed: Vec<&Value> = got.iter().filter(|g| s(g, "tool") == "?").collect();
    let scenarios = system["scenarios"].as_array().expect("scenarios");
    let mut checked = Vec::new();
    for sc in scenarios {
        let id = s(sc, "id");
        if sc["reproduced"] != true {
            println!(
                "{id}: not reproduced by the lab ({}); nothing to check",
                s(sc, "why")
            );
            continue;
        }
        let tool = s(sc, "exposed_tool");
        let mine: Vec<Rec> = recs
            .iter()
            .filter(|r| r.tool.as_deref() == Some(tool))
            .cloned()
            .collect();
        let group: Vec<&Value> = got.iter().filter(|g| s(g, "tool") == tool).collect();
        assert_eq!(group.len(), 1, "{id}: groups of {tool}: {group:#?}");
        let g = group[0];
        assert_eq!(n(g, "calls"), mine.len() as u64, "{id}");

        // Calls the log records with no tool that left the gateway right
        // after the scenario's first call was sent (the gateway's own
        // timeout, whose record names no tool).
        let first = &sc["calls"][0];
        let (sent, ended) = (time(s(first, "sent_at")), time(s(first, "ended_at")));
        let latest = ended.min(sent + chrono::TimeDelta::seconds(1));
        let orphans: Vec<&&Value> = unnamed
            .iter()
            .filter(|u| {
                let at = time(s(u, "first_at"));
                at >= sent - chrono::TimeDelta::milliseconds(200) && at <= latest
            })
            .collect();

        let (expected, why) = derive(&mine);
        let verdict = s(g, "verdict");
        assert_eq!(verdict, expected, "{id}: {why}; group {g:#}");

        // The truth must not contradict it.
        let effects = n(sc, "effects");
        let pending = orphans.len() as u64;
        assert!(
            effects <= n(g, "dispatches") + pending,
            "{id}: {effects} effects, but retrace shows {} dispatches and {pending} unnamed call(s)",
            n(g, "dispatches")
        );
        match verdict {
            "duplicate_side_effect" => assert!(effects >= 2, "{id}: the truth saw {effects}"),
            "possible_duplicate" => assert!(n(sc, "calls_sent") >= 2, "{id}"),
            // No duplicate among the calls the log ties to this tool: the
            // truth's effects beyond one are the unnamed calls'.
            "clean" | "safe_retry" => assert!(effects <= 1 + pending, "{id}: {effects} effects"),
            other => panic!("{id}: unexpected verdict {other}"),
        }
        match id {
            // A format without delivery: a dropped result looks delivered.
            "drop_no_retry" => {
                assert_eq!(verdict, "clean");
                assert_eq!(n(sc, "results_delivered"), 0, "the truth: never delivered");
            }
            // The timeout record names no tool: the retry alone is the
            // tool's group, and the timed-out call is a `?` call whose
            // outcome is unknown.
            "gateway_timeout_then_retry" => {
                assert_eq!(orphans.len(), 1, "{id}: {unnamed:#?}");
                assert_eq!(s(orphans[0], "verdict"), "pending_verification");
                assert_eq!(n(orphans[0], "dispatches"), 1);
                assert_eq!(effects, 2);
            }
            _ => assert!(orphans.is_empty(), "{id}: {orphans:#?}"),
        }
        checked.push(format!("{id}: {tool} → {verdict} ({why})"));
    }
    assert!(checked.len() >= 6, "{checked:#?}");
    println!("{}", checked.join("\n"));
}

/// With a contract saying `get_status` is read-only, its repeats are new
/// requests, not duplicates: the truth saw no effect.
#[test]
fn a_read_only_contract_makes_the_status_reads_distinct() {
    let Some((dir, system)) = lab("a_read_only_contract_makes_the_status_reads_distinct") else {
        return;
    };
    let Some(sc) = system["scenarios"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["id"] == "read_only_noise"))
        .filter(|s| s["reproduced"] == true)
    else {
        common::skip::skip(
            "a_read_only_contract_makes_the_status_reads_distinct",
            "the lab run did not reproduce read_only_noise",
        );
        return;
    };
    assert_eq!(n(sc, "effects"), 0);
    let tool = s(sc, "exposed_tool");
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let contracts = tmp.path().join("contracts.toml");
    std::fs::write(
        &contracts,
        format!("[tools.{:?}]\nclass = \"read_only\"\n", tool),
    )
    .expect("contracts written");
    let journals: Vec<PathBuf> = system["journals"]
        .as_array()
        .expect("journals")
        .iter()
        .map(|j| dir.join(j.as_str().unwrap_or_default()))
        .collect();
    let c = contracts.to_string_lossy().into_owned();
    let got = groups(&journals, &["--contracts", &c]);
    let g = got
        .iter()
        .find(|g| s(g, "tool") == tool)
        .unwrap_or_else(|| panic!("no group of {tool}"));
    assert_eq!(s(g, "verdict"), "distinct_intent", "{g:#}");
    assert_eq!(n(g, "calls"), n(sc, "calls_sent"));
}
