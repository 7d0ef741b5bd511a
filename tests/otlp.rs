//! OpenTelemetry traces the real instrumentations wrote (the lab's
//! fixtures, tests/fixtures/lab/, made by tests/lab/make-fixtures.sh):
//! every scenario's verdict, from the committed export of one lab run.

mod common;

use common::lab;
use std::path::PathBuf;

fn fixture(system: &str) -> (PathBuf, PathBuf) {
    let root = common::fixture("lab");
    (
        root.join(system).join("traces.jsonl"),
        root.join("truth.json"),
    )
}

#[test]
fn the_mcp_sdks_spans_give_each_scenario_its_verdict() {
    let (traces, truth) = fixture("otel-sdk");
    let groups = lab::groups(&[traces], &[]);
    lab::check("otel-sdk", &truth, &groups, lab::OTEL_SDK);
    assert!(groups.iter().all(|g| {
        g["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "arguments_not_logged")
    }));
}

#[test]
fn openllmetrys_spans_give_each_scenario_its_verdict() {
    let (traces, truth) = fixture("openllmetry");
    let groups = lab::groups(&[traces], &[]);
    lab::check("openllmetry", &truth, &groups, lab::OPENLLMETRY);
}

/// The client's timeout and the server's cancelled handler: question 3
/// gives each layer's words, and cites both spans.
#[test]
fn an_unknown_outcome_is_told_in_each_layers_words() {
    let (traces, _) = fixture("otel-sdk");
    let groups = lab::groups(std::slice::from_ref(&traces), &[]);
    let g = groups
        .iter()
        .find(|g| g["tool"] == "deploy_release")
        .unwrap();
    let out = std::process::Command::new(common::BIN)
        .args(["investigate", "--json", "--group"])
        .arg(g["group_id"].as_str().unwrap())
        .arg(&traces)
        .output()
        .unwrap();
    let v = common::json(&out);
    let q3 = &v["questions"][2];
    let text = q3["answer"].as_str().unwrap();
    assert!(
        text.contains("the client: TimeoutError")
            && text.contains("the server: the handler stopped"),
        "{text}"
    );
    let lines: std::collections::BTreeSet<u64> = q3["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["line"].as_u64().unwrap())
        .collect();
    assert!(lines.len() >= 2, "both spans cited: {q3}");
}
