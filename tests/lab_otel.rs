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
