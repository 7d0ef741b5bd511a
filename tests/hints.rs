//! Servers' tool annotations as hints (docs/design.md §4.5): with no
//! contract, a `readOnlyHint` from every `tools/list` answer that listed a
//! tool makes it read-only, every view says the verdict rests on a hint,
//! and a contract wins.

mod common;

use common::lab;
use std::path::PathBuf;
use std::process::Command;

fn otel(system: &str) -> PathBuf {
    common::fixture("lab").join(system).join("traces.jsonl")
}

fn by_tool<'a>(groups: &'a [serde_json::Value], tool: &str) -> Vec<&'a serde_json::Value> {
    groups.iter().filter(|g| g["tool"] == tool).collect()
}

#[test]
fn openllmetrys_tools_list_answer_gives_the_hints() {
    let (groups, notes) = lab::groups_and_notes(&[otel("openllmetry")], &[]);
    // The note on running without contracts says a server's hint counts:
    // it said every tool is treated as irreversible, beside a verdict
    // that rests on a read-only hint.
    assert!(
        notes.contains("irreversible with a 15m attach window (read_only where its server declares readOnlyHint"),
        "{notes}"
    );
    // The lab's server declares get_status read-only, the others not.
    for g in by_tool(&groups, "get_status") {
        assert_eq!(g["class_basis"], "hint", "{g}");
    }
    for g in by_tool(&groups, "deploy_release") {
        assert_eq!(g["class_basis"], "default", "{g}");
    }
}

#[test]
fn a_contract_wins_over_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("contracts.toml");
    std::fs::write(&c, "[tools.get_status]\nclass = \"irreversible\"\n").unwrap();
    let groups = lab::groups(
        &[otel("openllmetry")],
        &["--contracts", c.to_str().unwrap()],
    );
    for g in by_tool(&groups, "get_status") {
        assert_eq!(g["class_basis"], "contract", "{g}");
    }
}

#[test]
fn every_view_says_a_verdict_rests_on_a_hint() {
    let traces = otel("openllmetry");
    let groups = lab::groups(std::slice::from_ref(&traces), &[]);
    let id = by_tool(&groups, "get_status")[0]["group_id"]
        .as_str()
        .unwrap()
        .to_string();
    let run = |args: &[&str]| {
        let o = Command::new(common::BIN)
            .args(args)
            .arg(&traces)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", common::stderr(&o));
        common::stdout(&o)
    };
    let text = run(&["investigate", "--group", &id]);
    assert!(
        text.contains("only by the server's readOnlyHint (an untrusted hint"),
        "{text}"
    );
    assert!(
        text.contains("(no contract: the server's readOnlyHint"),
        "{text}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&run(&["investigate", "--json", "--group", &id])).unwrap();
    assert_eq!(json["class_basis"], "hint");
    assert_eq!(json["contract"]["hint"]["annotation"], "readOnlyHint");
    let dir = tempfile::tempdir().unwrap();
    let md = dir.path().join("pm.md");
    run(&[
        "export",
        "--format",
        "markdown",
        "--group",
        &id,
        "-o",
        md.to_str().unwrap(),
    ]);
    let md = std::fs::read_to_string(&md).unwrap();
    assert!(md.contains("readOnlyHint"), "{md}");
}

/// The real gh-aw log whose line 4 is the GitHub server's `tools/list`
/// answer, with annotations.
#[test]
fn gh_aw_logs_carry_the_servers_hints() {
    let Some(p) = common::skip::real_journal(
        "gh_aw_logs_carry_the_servers_hints",
        "gh-aw-mcpg/daily-repo-status-gateway-error.jsonl",
    ) else {
        return;
    };
    let groups = lab::groups(&[p], &[]);
    let reads = by_tool(&groups, "list_releases");
    assert!(!reads.is_empty());
    for g in reads {
        assert_eq!(g["class_basis"], "hint", "{g}");
    }
    for g in by_tool(&groups, "create_issue") {
        assert_eq!(g["class_basis"], "default", "{g}");
    }
}
