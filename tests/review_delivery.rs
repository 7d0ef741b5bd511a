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

/// The execution the queue asks about in `journal` (the first create_issue,
/// line 3): its id is made from the request line, not the file name.
fn waiting(dir: &std::path::Path, journal: &str) -> String {
    let q = json(&run(dir, &["review", "list", journal, "--json"]));
    let id = q[0]["execution_id"].as_str().unwrap().to_string();
    assert!(id.starts_with("gh-aw:") && !id.contains("repeat"), "{id}");
    id
}

fn decide(dir: &std::path::Path, decision: &str) -> std::process::Output {
    decide_on(dir, "repeat-after-result.jsonl", decision)
}

fn decide_on(dir: &std::path::Path, journal: &str, decision: &str) -> std::process::Output {
    let id = waiting(dir, journal);
    run(
        dir,
        &[
            "review",
            "decide",
            &id,
            journal,
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

/// Issue: decisions were keyed by ids made from the file name, so a renamed
/// journal lost them and two logs named alike shared them (docs/design.md
/// §5.10: ids from content).
#[test]
fn a_decision_follows_the_journal_by_content_not_by_name() {
    let (d, j) = setup();
    let o = decide(d.path(), "confirmed_not_delivered");
    assert!(o.status.success(), "{}", stderr(&o));
    // Renamed, in the same folder (same case file): still decided.
    std::fs::rename(d.path().join(j), d.path().join("rpc-messages.jsonl")).unwrap();
    let v = json(&run(
        d.path(),
        &["groups", "--all", "rpc-messages.jsonl", "--json"],
    ));
    let g = v
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "create_issue")
        .unwrap();
    assert_eq!(g["verdict"], "duplicate_side_effect", "{g}");
    // Read through a pipe: the same group id.
    let piped = std::process::Command::new(env!("CARGO_BIN_EXE_retrace"))
        .current_dir(d.path())
        .args([
            "groups",
            "--all",
            "--json",
            "--case",
            "retrace-case.sqlite",
            "/dev/stdin",
        ])
        .stdin(std::fs::File::open(d.path().join("rpc-messages.jsonl")).unwrap())
        .output()
        .unwrap();
    let pv: serde_json::Value = serde_json::from_slice(&piped.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&piped.stderr)));
    let pg = pv
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["tool"] == "create_issue")
        .unwrap();
    assert_eq!(pg["group_id"], g["group_id"]);
    assert_eq!(pg["verdict"], "duplicate_side_effect");
}

#[test]
fn another_log_under_the_same_name_never_shows_the_decision() {
    let (d, j) = setup();
    let decided = waiting(d.path(), j);
    assert!(decide(d.path(), "confirmed_not_delivered").status.success());
    // The next run's log of the same calls, saved under the same name in the
    // same folder (same case file): another first line (its times).
    let other = std::fs::read_to_string(d.path().join(j))
        .unwrap()
        .replace("2026-", "2027-");
    std::fs::write(d.path().join(j), other).unwrap();
    let g = create_issue(d.path());
    assert_eq!(g["verdict"], "possible_duplicate", "{g}");
    assert!(
        g["resolutions"].as_array().is_none_or(|r| r.is_empty()),
        "{g}"
    );
    // Its call still waits, under an id of its own.
    assert_ne!(waiting(d.path(), j), decided);
}

/// `review list` once headed a delivery question with the status `clean`
/// beside a possible_duplicate group: it names what waits.
#[test]
fn the_list_names_what_waits() {
    let (d, j) = setup();
    let text = stdout(&run(d.path(), &["review", "list", j]));
    let head = text
        .lines()
        .find(|l| l.starts_with("gh-aw:"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(head.contains("  delivery_unknown  group "), "{head}");
    assert!(!head.contains(" clean "), "{head}");
}

/// The delivery question is open only where a repeat within the attach
/// window made the pair a possible duplicate (docs/design.md §5.8): a third
/// create_issue 21 minutes after the second (beyond the 15-minute default
/// window) leaves the second's delivery nothing to decide, and one refused
/// before dispatch would not either. The first still waits.
#[test]
fn a_repeat_after_the_attach_window_opens_no_delivery_question() {
    let (d, j) = setup();
    let path = d.path().join(j);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(concat!(
        r#"{"timestamp":"2026-04-28T11:10:30.000000000Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/call","payload":{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"arguments":{"owner":"acme","repo":"shop","title":"Checkout fails on Safari"},"name":"create_issue"}}}"#,
        "\n",
        r#"{"timestamp":"2026-04-28T11:10:30.900000000Z","direction":"IN","type":"RESPONSE","server_id":"github","payload":{"id":6,"jsonrpc":"2.0","result":{"content":[{"text":"{\"number\":420}","type":"text"}]}}}"#,
        "\n",
    ));
    std::fs::write(&path, text).unwrap();
    let q = json(&run(d.path(), &["review", "list", j, "--json"]));
    let asked: Vec<(&str, &str)> = q
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["execution_id"].as_str().unwrap(),
                i["asks"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(asked.len(), 1, "{q:#}");
    assert_eq!(asked[0].1, "delivery", "{q:#}");
    // The one asked about is the first create_issue (line 3).
    assert_eq!(
        q[0]["accepted_at"], "2026-04-28T10:48:58.316785893Z",
        "{q:#}"
    );
}

/// The group's first execution is compared with every later one within
/// the window, as judging compares it: 65 refused repeats (`422`) between
/// it and a successful one still leave its delivery asked about. Only the
/// next 64 executions were looked at, and the queue of a possible
/// duplicate came out empty.
#[test]
fn the_first_call_is_compared_with_every_repeat_in_the_window() {
    let d = tempfile::tempdir().unwrap();
    let request = |id: u32, at: &str| {
        format!(
            r#"{{"timestamp":"2026-04-28T10:{at}Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/call","payload":{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"arguments":{{"owner":"acme","repo":"shop","title":"Checkout fails on Safari"}},"name":"create_issue"}}}}}}"#
        )
    };
    let answer = |id: u32, at: &str, text: &str, error: bool| {
        format!(
            r#"{{"timestamp":"2026-04-28T10:{at}Z","direction":"IN","type":"RESPONSE","server_id":"github","payload":{{"id":{id},"jsonrpc":"2.0","result":{{"content":[{{"text":{},"type":"text"}}],"isError":{error}}}}}}}"#,
            serde_json::Value::String(text.into())
        )
    };
    let mut lines = vec![
        request(1, "48:00.000"),
        answer(1, "48:00.500", r#"{"number":412}"#, false),
    ];
    for k in 0..65u32 {
        let at = |ms: u32| format!("{:02}:{:02}.{:03}", 49 + k / 60, k % 60, ms);
        lines.push(request(k + 2, &at(0)));
        lines.push(answer(
            k + 2,
            &at(500),
            "422 Validation Failed: title",
            true,
        ));
    }
    lines.push(request(99, "51:30.000"));
    lines.push(answer(99, "51:30.500", r#"{"number":413}"#, false));
    std::fs::write(d.path().join("rpc-messages.jsonl"), lines.join("\n") + "\n").unwrap();
    let g = json(&run(
        d.path(),
        &["groups", "--json", "--read-only", "rpc-messages.jsonl"],
    ));
    assert_eq!(g[0]["verdict"], "possible_duplicate", "{g:#}");
    let q = json(&run(
        d.path(),
        &[
            "review",
            "list",
            "--read-only",
            "rpc-messages.jsonl",
            "--json",
        ],
    ));
    let firsts: Vec<&str> = q
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["accepted_at"] == "2026-04-28T10:48:00Z")
        .map(|i| i["asks"].as_str().unwrap())
        .collect();
    assert_eq!(firsts, ["delivery"], "{q:#}");
}
