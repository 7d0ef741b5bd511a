//! Deciding what a journal cannot show (docs/design.md §5.8): a completed
//! call whose delivery a gateway log does not record, repeated, waits in
//! the review queue; the reviewer's word on delivery settles the verdict,
//! with its provenance, and the question leaves the queue.

mod common;

use common::*;

const J: &str = "gh-aw/repeat-after-result.jsonl";

fn setup() -> (tempfile::TempDir, &'static str) {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(fixture(J), d.path().join("repeat-after-result.jsonl")).unwrap();
    (d, "repeat-after-result.jsonl")
}

fn decide(dir: &std::path::Path, decision: &str) -> std::process::Output {
    run(
        dir,
        &[
            "review",
            "decide",
            "repeat-after-result:3",
            "repeat-after-result.jsonl",
            "--decision",
            decision,
            "--note",
            "the agent's transcript shows issue 412 read back",
            "--reviewer",
            "alice",
        ],
    )
}

fn create_issue(dir: &std::path::Path) -> serde_json::Value {
    let v = json(&run(
        dir,
        &["groups", "--all", "repeat-after-result.jsonl", "--json"],
    ));
    v.as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "create_issue")
        .unwrap()
        .clone()
}

#[test]
fn a_repeat_after_an_unrecorded_delivery_waits_for_a_reviewer() {
    let (d, j) = setup();
    assert_eq!(create_issue(d.path())["verdict"], "possible_duplicate");
    let q = json(&run(d.path(), &["review", "list", j, "--json"]));
    let items = q.as_array().unwrap();
    assert_eq!(
        items.len(),
        1,
        "only the write; the read-only repeat is not asked: {q}"
    );
    assert_eq!(items[0]["asks"], "delivery");
    assert_eq!(
        items[0]["allowed"],
        serde_json::json!([
            "confirmed_delivered",
            "confirmed_not_delivered",
            "escalated"
        ])
    );
    // An outcome decision does not answer a delivery question.
    let o = decide(d.path(), "confirmed_not_executed");
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn confirmed_delivered_makes_the_repeat_a_new_request() {
    let (d, j) = setup();
    let o = decide(d.path(), "confirmed_delivered");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("possible_duplicate → distinct_intent"),
        "{}",
        stdout(&o)
    );
    let g = create_issue(d.path());
    assert_eq!(g["verdict"], "distinct_intent");
    assert_eq!(g["resolutions"][0]["decision"], "confirmed_delivered");
    // Question 4 says whose word it is.
    let inv = json(&run(
        d.path(),
        &[
            "investigate",
            "--group",
            g["group_id"].as_str().unwrap(),
            "--json",
            j,
        ],
    ));
    let q4 = inv["questions"][3]["answer"].as_str().unwrap();
    assert!(
        q4.contains("as reviewer alice decided (confirmed_delivered)"),
        "{q4}"
    );
    let q = json(&run(d.path(), &["review", "list", j, "--json"]));
    assert_eq!(q.as_array().unwrap().len(), 0, "settled: {q}");
}

#[test]
fn confirmed_not_delivered_makes_it_a_duplicate_side_effect() {
    let (d, _) = setup();
    let o = decide(d.path(), "confirmed_not_delivered");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(create_issue(d.path())["verdict"], "duplicate_side_effect");
}
