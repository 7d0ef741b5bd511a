//! OpenTelemetry traces freshly written by the lab (tests/lab/run.sh, run
//! by `.ci/run` before the tests): the Collector-style line export and the
//! single OTLP/HTTP body of both instrumentations give every scenario its
//! verdict. Skips (saying so) without lab output; fails so under CI.

mod common;

use common::lab;

#[test]
fn fresh_otel_exports_give_each_scenario_its_verdict() {
    let Some(dir) = lab::lab_dir("fresh_otel_exports_give_each_scenario_its_verdict") else {
        return;
    };
    let truth = dir.join("truth.json");
    for (system, expected) in [
        ("otel-sdk", lab::OTEL_SDK),
        ("openllmetry", lab::OPENLLMETRY),
    ] {
        for file in ["traces.jsonl", "otlp-body.json"] {
            let groups = lab::groups(&[dir.join(system).join(file)], &[]);
            lab::check(system, &truth, &groups, expected);
        }
    }
}

/// The traces (client, gateway and server spans), ContextForge's log and
/// its database of one run, read together: every scenario's verdict, one
/// group per scenario, and every group's investigation as valid JSON.
#[test]
fn the_joined_sources_give_each_scenario_its_verdict() {
    let Some(dir) = lab::lab_dir("the_joined_sources_give_each_scenario_its_verdict") else {
        return;
    };
    let j = dir.join("joined");
    let journals = [
        j.join("traces.jsonl"),
        j.join("gateway.log"),
        j.join("mcp.db"),
    ];
    let groups = lab::groups(&journals, &[]);
    lab::check("joined", &dir.join("truth.json"), &groups, lab::JOINED);
    lab::one_group_per_scenario("joined", &dir.join("truth.json"), &groups);
    // Each service's spans in a file of its own (client, gateway, server):
    // the same groups, the gateway's spans joined to their clients across
    // the files.
    let split_dir = tempfile::tempdir().unwrap();
    let mut split = lab::split_by_service(&j.join("traces.jsonl"), split_dir.path());
    assert_eq!(split.len(), 3, "{split:?}");
    split.extend([j.join("gateway.log"), j.join("mcp.db")]);
    assert_eq!(lab::groups(&split, &[]), groups, "one file per service");
    // The same spans twice, as the line export and as the body: each span
    // counts once when gateway spans are joined to their clients (twice,
    // no gateway span was joined, and reads became possible duplicates).
    let alone = lab::groups(&[j.join("traces.jsonl")], &[]);
    assert_eq!(
        lab::groups(&[j.join("traces.jsonl"), j.join("otlp-body.json")], &[]),
        alone,
        "the same spans in two files"
    );
    for g in &groups {
        let out = std::process::Command::new(common::BIN)
            .args(["investigate", "--json", "--group"])
            .arg(g["group_id"].as_str().unwrap())
            .args(&journals)
            .output()
            .unwrap();
        let v = common::json(&out);
        assert_eq!(v["group_id"], g["group_id"]);
    }
}
