//! The headless commands on fixture journals and on the real gateway logs.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;

fn retrace() -> Command {
    Command::cargo_bin("retrace").unwrap()
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A folder of the team's real journals, or `None` after saying why
/// `test` is skipped (tests/common/skip.rs).
fn real(test: &str, dir: &str) -> Option<PathBuf> {
    common::skip::real_journal(test, dir)
}

fn json(args: &[&str]) -> Value {
    let out = retrace().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn no_journal_means_the_bundled_sample() {
    let v = json(&["groups", "--json"]);
    let groups = v.as_array().unwrap();
    assert_eq!(groups.len(), 1, "only the duplicate is worth a look: {v:#}");
    let g = &groups[0];
    assert_eq!(g["verdict"], "duplicate_side_effect");
    assert_eq!(g["severity"], "critical");
    assert_eq!(g["tool"], "deploy_release");
    assert_eq!(g["calls"], 2);
    assert_eq!(g["dispatches"], 2);
    assert_eq!(
        g["execution_ids"],
        serde_json::json!(["act_01J4K8J7DX7V", "act_01J4K8M3QF2Z"])
    );
    assert!(
        g["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("hmac-sha256:")
    );
    // The docs/design.md §7.4 shape, every key present.
    for k in [
        "group_id",
        "verdict",
        "severity",
        "tool",
        "actor",
        "intent_scope",
        "fingerprint",
        "calls",
        "executions",
        "dispatches",
        "first_at",
        "last_at",
        "execution_ids",
        "flags",
    ] {
        assert!(g.get(k).is_some(), "missing {k}");
    }
    let all = json(&["groups", "--all", "--json"]);
    assert_eq!(all.as_array().unwrap().len(), 3);
}

#[test]
fn investigate_answers_the_five_questions_with_evidence() {
    let v = json(&["groups", "--json"]);
    let id = v[0]["group_id"].as_str().unwrap().to_string();
    // A unique prefix is enough.
    let d = json(&["investigate", "--group", &id[..5], "--json"]);
    assert_eq!(d["group_id"], id.as_str());
    let q = d["questions"].as_array().unwrap();
    assert_eq!(q.len(), 5);
    assert!(
        q[0]["answer"].as_str().unwrap().starts_with("One process"),
        "{:#}",
        q[0]
    );
    assert!(q[2]["answer"].as_str().unwrap().contains("HTTP 201"));
    assert!(
        q[3]["answer"]
            .as_str()
            .unwrap()
            .starts_with("Yes: the target completed, then delivery failed")
    );
    assert!(
        q[4]["answer"]
            .as_str()
            .unwrap()
            .starts_with("Fresh attempt")
    );
    for a in q {
        for e in a["evidence"].as_array().unwrap() {
            assert!(e["journal"].as_str().unwrap().starts_with("<sample>/"));
            assert!(e["line"].as_u64().unwrap() >= 1);
        }
    }
    // Q4's evidence is the delivery_failed line, seq 10.
    let ev = &q[3]["evidence"][0];
    assert_eq!(
        (
            ev["line"].as_u64(),
            ev["seq"].as_u64(),
            ev["record"].as_str()
        ),
        (Some(10), Some(10), Some("delivery_failed"))
    );

    let text = retrace()
        .args(["investigate", "--group", &id])
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("DUPLICATE_SIDE_EFFECT"));
    assert!(
        text.contains(
            "evidence: <sample>/activity.jsonl:10 seq 10 (delivery_failed act_01J4K8J7DX7V)"
        ),
        "{text}"
    );
}

#[test]
fn unknown_group_is_an_input_error() {
    // With no journal, the sample was searched: the message says so (a
    // journal forgotten on the command line otherwise read as a wrong id).
    retrace()
        .args(["investigate", "--group", "gnothere"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "no group \"gnothere\" in the bundled sample (no journal was given)",
        ));
    let journal = root().join("sample-journals/deploy-release-incident/activity.jsonl");
    retrace()
        .args(["investigate", "--group", "gnothere"])
        .arg(&journal)
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no group \"gnothere\";"));
    // An empty id names no group (as a prefix, it named them all).
    retrace()
        .args(["investigate", "--group", ""])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no group \"\""));
}

#[test]
fn bad_lines_are_reported_and_the_good_ones_used() {
    let dir = tempfile::tempdir().unwrap();
    let src = std::fs::read_to_string(
        root().join("sample-journals/deploy-release-incident/activity.jsonl"),
    )
    .unwrap();
    let mut lines: Vec<&str> = src.lines().collect();
    lines.insert(3, "{not json");
    lines.insert(
        7,
        r#"{"kind":"event","seq":99,"at":"yesterday","execution_id":"x","event":"delivered"}"#,
    );
    let p = dir.path().join("activity.jsonl");
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    let s = root().join("sample-journals");
    let out = retrace()
        .arg("groups")
        .arg(&p)
        .arg("--json")
        .arg("--contracts")
        .arg(s.join("contracts.toml"))
        .arg("--key-file")
        .arg(s.join("sample.key"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("activity.jsonl:4: not valid JSON"), "{err}");
    assert!(
        err.contains("activity.jsonl:8: field `at` is not an RFC 3339 time"),
        "{err}"
    );
    assert!(err.contains("2 of 22 lines could not be read"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        v[0]["verdict"], "duplicate_side_effect",
        "the good lines still tell the story"
    );
}

/// A binary file given as a journal gets one clean line naming its first
/// bytes; it once printed them as `\\x7fELF\\x02…` with doubled escapes and
/// raw U+FFFD.
#[test]
fn a_binary_file_is_named_by_its_first_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("retrace-bin");
    let mut elf = b"\x7fELF\x02\x01\x01\0\0\0\0\0\0\0\0\0\x03\0>\0".to_vec();
    elf.extend((0..=255u8).cycle().take(4096));
    std::fs::write(&p, &elf).unwrap();
    let o = retrace().arg("groups").arg(&p).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        err,
        format!(
            "retrace: {}: a binary file (starts with bytes 7f 45 4c 46), not a journal\n",
            p.display()
        )
    );
    // Text that no reader takes still shows its first line, escaped once.
    let q = dir.path().join("notes.txt");
    std::fs::write(&q, "h\u{e9}llo\x1b[2J w\u{f6}rld\n").unwrap();
    let o = retrace().arg("groups").arg(&q).output().unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("(first line starts \"h\u{e9}llo\\x1b[2J w\u{f6}rld\")"),
        "{err}"
    );
    assert!(!err.contains('\u{fffd}') && !err.contains("\\\\"), "{err}");
}

#[test]
fn unreadable_input_exits_2_naming_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("notes.txt");
    std::fs::write(&p, "\nhello world\n").unwrap();
    retrace()
        .arg("groups")
        .arg(&p)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "notes.txt:2: unknown journal format",
        ))
        .stderr(predicates::str::contains(
            "native, native-sqlite, gh-aw-mcpg",
        ));
    // Every line bad: exit 2 naming the first bad line.
    let q = dir.path().join("broken.jsonl");
    std::fs::write(&q, "{\"kind\":\"event\"}\n{\"kind\":\"event\",\"at\":1}\n").unwrap();
    retrace()
        .arg("groups")
        .arg(&q)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "broken.jsonl:1: missing field `at`",
        ));
    retrace()
        .args(["groups", "/nonexistent/journal.jsonl"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "/nonexistent/journal.jsonl: no such journal file",
        ));
    // A mistyped command reads as a journal path: say so.
    retrace()
        .arg("grups")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "did you mean the command `retrace groups`?",
        ));
    // A folder stands for its journals: notes.txt is skipped with a note,
    // and broken.jsonl, its only journal, has no readable line.
    retrace()
        .args(["groups", dir.path().to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "notes.txt: skipped: not a journal",
        ))
        .stderr(predicates::str::contains(
            "broken.jsonl:1: missing field `at`",
        ));
    // The TUI without a terminal says what to use instead.
    retrace()
        .write_stdin("")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("the TUI needs a terminal"));
}

#[test]
fn forced_format_overrides_detection() {
    let sample = root().join("sample-journals/scenarios/clean.jsonl");
    retrace()
        .arg("groups")
        .arg(&sample)
        .args(["--input-format", "gh-aw-mcpg"])
        .assert()
        .code(2);
    retrace()
        .arg("groups")
        .arg(&sample)
        .args(["--input-format", "csv"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "possible values: native, native-sqlite, gh-aw-mcpg",
        ));
}

#[test]
fn a_contracts_mistake_names_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let c = dir.path().join("contracts.toml");
    std::fs::write(
        &c,
        "[tools.deploy_release]\nclass = \"irreversible\"\nattach_window = \"two hours\"\n",
    )
    .unwrap();
    retrace()
        .arg("groups")
        .arg("--contracts")
        .arg(&c)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "tools.deploy_release.attach_window",
        ));
}

#[test]
fn escape_sequences_from_journals_never_reach_the_terminal_raw() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("evil.jsonl");
    let line = |seq: u32, x: &str, title: &str| {
        format!(
            r#"{{"kind":"event","seq":{seq},"at":"2026-08-01T10:00:0{seq}Z","execution_id":"{x}","event":"accepted","call":{{"session_id":"s\u001b]0;pwned\u0007"}},"action":{{"actor":"a","tool":"post\u001b[2J_message","arguments":{{"text":"{title}"}},"intent_scope":"run:1"}}}}"#
        )
    };
    std::fs::write(
        &p,
        [
            line(1, "x1", "hi\\u001b[31m"),
            line(2, "x2", "hi\\u001b[31m"),
        ]
        .join("\n"),
    )
    .unwrap();
    let out = retrace().arg("groups").arg(&p).output().unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(!stdout.contains('\u{1b}'), "{stdout:?}");
    assert!(stdout.contains("post\\x1b[2J_message"), "{stdout}");
    // The first group row, after the chain header and the column heads.
    let id = stdout
        .lines()
        .skip_while(|l| !l.starts_with("GROUP"))
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_string();
    let out = retrace()
        .arg("investigate")
        .arg(&p)
        .args(["--group", &id])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text:?}"
    );
    assert!(text.contains("\\x1b]0;pwned\\x07"), "{text}");
}

/// The real gh-aw gateway logs: every `tools/call` is its own execution, and
/// the repeated calls their README lists show up with the verdicts of docs/design.md §5.3.
#[test]
fn real_gh_aw_logs() {
    let (Some(v1), Some(v2)) = (
        real("real_gh_aw_logs", "gh-aw-mcpg"),
        real("real_gh_aw_logs", "gh-aw-mcpg-v2"),
    ) else {
        return;
    };
    // tools/call counts from the real-journals README.
    let expected_calls = [
        ("ci-failure-analysis-repeated-pr-reads.jsonl", 15),
        ("daily-repo-status-gateway-error.jsonl", 12),
        ("docs-unbloat-create-pr-retries.jsonl", 5),
        ("star-list-maintainer-403s.jsonl", 3),
        ("work-item-eval-missing-server.jsonl", 2),
    ];
    for (f, n) in expected_calls {
        let path = v1.join(f);
        let all = json(&["groups", path.to_str().unwrap(), "--all", "--json"]);
        let execs: u64 = all
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["executions"].as_u64().unwrap())
            .sum();
        assert_eq!(execs, n, "{f}");
    }
    let path = v2.join("weekly-research-v2.jsonl");
    let all = json(&["groups", path.to_str().unwrap(), "--all", "--json"]);
    assert_eq!(all.as_array().unwrap().len(), 7);
    assert!(
        json(&["groups", path.to_str().unwrap(), "--json"])
            .as_array()
            .unwrap()
            .is_empty()
    );

    // ci-failure-analysis: pull_request_read repeated at lines 13, 17, 25 and 19, 23.
    // Each earlier read completed, but the log cannot show delivery and the
    // tool has no contract: possible_duplicate, never a proven duplicate.
    let p = v1.join("ci-failure-analysis-repeated-pr-reads.jsonl");
    let g = json(&["groups", p.to_str().unwrap(), "--json"]);
    // Listed too: the lone calls whose intent drifted into another group
    // (issue_read "37864" and 37864, pull_request_read "38281"), whose
    // repeat is there.
    let (g, drifted): (Vec<Value>, Vec<Value>) = g
        .as_array()
        .unwrap()
        .iter()
        .cloned()
        .partition(|x| x["calls"].as_u64() > Some(1));
    assert_eq!(g.len(), 2, "{g:#?}");
    assert_eq!(drifted.len(), 3, "{drifted:#?}");
    for x in &drifted {
        assert_eq!(x["verdict"], "clean");
        assert!(
            x["flags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "fingerprint_drift"),
            "{x}"
        );
    }
    let ids = |x: &Value| begin_lines(&p, x);
    assert_eq!(ids(&g[0]), [13, 17, 25]);
    assert_eq!(ids(&g[1]), [19, 23]);
    for x in &g {
        assert_eq!(x["verdict"], "possible_duplicate");
        assert_eq!(x["tool"], "pull_request_read");
        assert!(
            x["flags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "no_replay_contract")
        );
    }
    // "38281" and 38281 name one pull request: drift between the groups.
    assert!(
        g[0]["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f == "fingerprint_drift")
    );
    let all = json(&["groups", p.to_str().unwrap(), "--all", "--json"]);
    let drift: Vec<Vec<u64>> = all
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| {
            x["flags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "fingerprint_drift")
        })
        .map(ids)
        .collect();
    assert_eq!(drift, [vec![13, 17, 25], vec![7], vec![9], vec![15]]);
    // The 406 at line 28 answers the get_diff request at line 27.
    let d = json(&["groups", p.to_str().unwrap(), "--all", "--json"]);
    let diff = d
        .as_array()
        .unwrap()
        .iter()
        .find(|x| ids(x) == [27])
        .unwrap();
    let detail = json(&[
        "investigate",
        p.to_str().unwrap(),
        "--group",
        diff["group_id"].as_str().unwrap(),
        "--json",
    ]);
    assert!(
        detail["questions"][2]["answer"]
            .as_str()
            .unwrap()
            .contains("406"),
        "{detail:#}"
    );
    assert!(
        detail["questions"][3]["answer"]
            .as_str()
            .unwrap()
            .starts_with("unknown:")
    );

    // docs-unbloat: create_pull_request at lines 11 and 13 are identical, and
    // the first was answered "No changes to commit" (a failure): the retry
    // could not duplicate anything.
    let p = v1.join("docs-unbloat-create-pr-retries.jsonl");
    let g = json(&["groups", p.to_str().unwrap(), "--json"]);
    let g = g.as_array().unwrap();
    assert_eq!(g.len(), 1, "{g:#?}");
    assert_eq!(begin_lines(&p, &g[0]), [11, 13]);
    assert_eq!(g[0]["verdict"], "safe_retry");

    // daily-repo-status: no repeats, but five requests to github overlapped
    // and one answer was the 403 of get_me (line 8, per the README). By
    // position it went to list_releases (line 7); its text names get_me's
    // operation ("failed to get user"), so it is paired by content
    // (docs/design.md §2.5): get_me failed, and the answers left are all
    // results, so no call is in doubt and list_releases is not blamed.
    let p = v1.join("daily-repo-status-gateway-error.jsonl");
    let g = json(&["groups", p.to_str().unwrap(), "--json"]);
    assert!(g.as_array().unwrap().is_empty(), "{g:#?}");
    let all = json(&["groups", p.to_str().unwrap(), "--all", "--json"]);
    let detail = |tool: &str| {
        let g = all
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["tool"] == tool)
            .unwrap_or_else(|| panic!("{tool}: {all:#}"));
        assert_eq!(g["verdict"], "clean", "{g:#}");
        json(&[
            "investigate",
            p.to_str().unwrap(),
            "--group",
            g["group_id"].as_str().unwrap(),
            "--json",
        ])
    };
    let d = detail("get_me");
    assert_eq!(d["executions_detail"][0]["first_event"]["line"], 8);
    let q3 = d["questions"][2]["answer"].as_str().unwrap();
    assert!(
        q3.contains("403") && q3.contains("paired by content") && q3.contains("\"get\""),
        "{q3}"
    );
    assert_eq!(d["executions_detail"][0]["state"], "failed");
    let d = detail("list_releases");
    let q3 = d["questions"][2]["answer"].as_str().unwrap();
    assert!(
        !q3.contains("403") && q3.contains("paired by position"),
        "{q3}"
    );
    assert_eq!(
        d["executions_detail"][0]["state"],
        "completed_delivery_not_recorded"
    );

    // No repeats in the others; their answers, paired by position or not,
    // do not differ within a burst.
    for f in [
        "star-list-maintainer-403s.jsonl",
        "work-item-eval-missing-server.jsonl",
    ] {
        let p = v1.join(f);
        assert!(
            json(&["groups", p.to_str().unwrap(), "--json"])
                .as_array()
                .unwrap()
                .is_empty(),
            "{f}"
        );
    }
}

/// Responses to concurrent requests are paired by position and marked so.
/// The lines where a group's executions begin (ids made from content do
/// not say; docs/design.md §5.10), from `investigate --json`.
fn begin_lines(p: &std::path::Path, group: &Value) -> Vec<u64> {
    let d = json(&[
        "investigate",
        p.to_str().unwrap(),
        "--group",
        group["group_id"].as_str().unwrap(),
        "--json",
    ]);
    let ex = d["executions_detail"].as_array().unwrap();
    for e in ex {
        let id = e["execution_id"].as_str().unwrap();
        let stem = p.file_stem().unwrap().to_str().unwrap();
        assert!(id.starts_with("gh-aw:") && !id.contains(stem), "{id}");
    }
    ex.iter()
        .map(|e| e["first_event"]["line"].as_u64().unwrap())
        .collect()
}

#[test]
fn concurrent_gh_aw_responses_are_marked_positional() {
    let Some(v1) = real(
        "concurrent_gh_aw_responses_are_marked_positional",
        "gh-aw-mcpg",
    ) else {
        return;
    };
    let p = v1.join("daily-repo-status-gateway-error.jsonl");
    let all = json(&["groups", p.to_str().unwrap(), "--all", "--json"]);
    let get_me = all
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "get_me")
        .unwrap();
    let d = json(&[
        "investigate",
        p.to_str().unwrap(),
        "--group",
        get_me["group_id"].as_str().unwrap(),
        "--json",
    ]);
    // get_me (line 8) was one of five requests in flight; the 403 that
    // names it is paired by content.
    assert_eq!(d["executions_detail"][0]["first_event"]["line"], 8);
    let q3 = d["questions"][2]["answer"].as_str().unwrap();
    assert!(
        q3.contains("(response paired by content: the error names"),
        "{q3}"
    );
    // list_pull_requests (line 9) got a result that names no one request:
    // its outcome evidence is the positional pairing, which the load notes
    // report.
    let pulls = all
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "list_pull_requests")
        .unwrap();
    let d = json(&[
        "investigate",
        p.to_str().unwrap(),
        "--group",
        pulls["group_id"].as_str().unwrap(),
        "--json",
    ]);
    let q3 = d["questions"][2]["answer"].as_str().unwrap();
    assert!(
        q3.contains("paired by position") && q3.contains("requests to github were in flight"),
        "{q3}"
    );
    // A request answered with nothing else in flight is not marked.
    let search = all
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "search_repositories")
        .unwrap();
    let d = json(&[
        "investigate",
        p.to_str().unwrap(),
        "--group",
        search["group_id"].as_str().unwrap(),
        "--json",
    ]);
    assert!(
        !d["questions"][2]["answer"]
            .as_str()
            .unwrap()
            .contains("paired by position")
    );
}

/// gh-aw logs reuse JSON-RPC ids, so overlapping requests are paired with
/// answers by position. Within a burst whose answers differ, any answer may
/// be another call's: a failure cannot clear its call, nor a success show
/// that the target acted; within a burst of like answers, the positional
/// pairing cannot mislead. (A 403 of one call was once shown as another's
/// own failure, and the call called clean.)
#[test]
fn gh_aw_failures_paired_by_position_among_differing_answers_are_ambiguous() {
    let dir = tempfile::tempdir().unwrap();
    let req = |t: &str, tool: &str, n: u32| {
        format!(
            r#"{{"timestamp":"2026-05-21T21:36:{t}Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/call","payload":{{"jsonrpc":"2.0","method":"tools/call","params":{{"arguments":{{"n":{n}}},"name":"{tool}"}}}}}}"#
        )
    };
    let resp = |t: &str, error: bool| {
        format!(
            r#"{{"timestamp":"2026-05-21T21:36:{t}Z","direction":"IN","type":"RESPONSE","server_id":"github","payload":{{"id":1,"jsonrpc":"2.0","result":{{"content":[{{"type":"text","text":"{}"}}],"isError":{error}}}}}}}"#,
            if error { "403 Forbidden" } else { "[]" }
        )
    };
    let lines = [
        // Burst 1: answers differ.
        req("01.000", "list_releases", 1),
        req("01.100", "get_me", 2),
        resp("01.200", true),
        resp("01.300", false),
        // Burst 2: both answers are failures.
        req("05.000", "list_tags", 3),
        req("05.100", "list_forks", 4),
        resp("05.200", true),
        resp("05.300", true),
    ];
    let path = dir.path().join("rpc-messages.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    // Two failures, then one answer too many, then the first call again:
    // the pairing is off by one, so the first failure cannot clear the call
    // (it once made the repeat a safe_retry).
    let off = [
        req("20.000", "create_branch", 7),
        req("20.100", "create_branch", 8),
        resp("20.200", true),
        resp("20.300", true),
        resp("20.400", false),
        req("30.000", "create_branch", 7),
        resp("30.100", false),
    ];
    let off_path = dir.path().join("off-by-one.jsonl");
    std::fs::write(&off_path, off.join("\n") + "\n").unwrap();
    let g = json(&["groups", off_path.to_str().unwrap(), "--json"]);
    let repeat = g
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["calls"] == 2)
        .unwrap_or_else(|| panic!("{g:#}"));
    assert_eq!(repeat["verdict"], "possible_duplicate", "{g:#}");

    let all = json(&["groups", path.to_str().unwrap(), "--all", "--json"]);
    let verdict = |tool: &str| {
        all.as_array()
            .unwrap()
            .iter()
            .find(|g| g["tool"] == tool)
            .unwrap_or_else(|| panic!("{tool}: {all:#}"))["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(verdict("list_releases"), "pending_verification");
    // The reviewer sees the call that created it, with no empty "()" where
    // the log names no session or JSON-RPC id.
    let out = retrace()
        .args(["review", "list", path.to_str().unwrap(), "--read-only"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let calls = text
        .lines()
        .find(|l| l.trim_start().starts_with("calls"))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(calls.trim_end().ends_with("created call line 1"), "{calls}");
    // Both calls of the burst wait for a reviewer, each told why its answer
    // may be the other's.
    assert_eq!(
        text.matches(
            "may have got differ (1 failed, 1 succeeded): this answer may be another call's"
        )
        .count(),
        2,
        "{text}"
    );
    assert!(
        text.contains("known outcome   ambiguous: success · via response · paired by position"),
        "{text}"
    );
    // The success paired by position in the same burst may be the other
    // call's answer too: get_me's own outcome is not known
    // (docs/design.md §2.5). (Its success once read as "the target acted".)
    assert_eq!(verdict("get_me"), "pending_verification");
    assert_eq!(verdict("list_tags"), "clean");
    assert_eq!(verdict("list_forks"), "clean");
    // Every positional pairing is visible in the execution's outcome line.
    let g = all
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "list_tags")
        .unwrap();
    let out = retrace()
        .args([
            "investigate",
            path.to_str().unwrap(),
            "--group",
            g["group_id"].as_str().unwrap(),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("outcome: failure · via response · paired by position"),
        "{text}"
    );
    assert!(
        text.contains("one call, one execution; the target did not act"),
        "{text}"
    );
    // "One call" says it: "and nothing was repeated" contradicted a near
    // duplicate in another group, a repeat with one argument rewritten.
    assert!(!text.contains("nothing was repeated"), "{text}");
}

/// A TOML syntax error is one readable line with its position (it once came
/// out as the parser's multi-line report full of escaped `\n`), and a file
/// name with a newline cannot forge a second error line.
#[test]
fn a_theme_syntax_error_is_one_line_with_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let theme = dir.path().join("broken.toml");
    std::fs::write(&theme, "[roles]\ncritical = \"red\n").unwrap();
    let out = retrace()
        .args(["--theme", theme.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("line 2, column 16 (`critical = \"red`): invalid basic string"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let forged = dir.path().join("bad\nretrace: fake line.jsonl");
    std::fs::write(&forged, "not json\n").unwrap();
    let out = retrace()
        .args(["groups", forged.to_str().unwrap()])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        !err.lines().any(|l| l.starts_with("retrace: fake line")),
        "{err}"
    );
}

/// Unknown fields are kept and shown (docs/design.md §3): `investigate --json`
/// lists each execution's events with the fields retrace did not read, and
/// JSON escapes any control characters in them.
#[test]
fn investigate_json_shows_unknown_fields_of_each_event() {
    let dir = tempfile::tempdir().unwrap();
    let src = root().join("sample-journals/scenarios/pending-verification.jsonl");
    let lines: Vec<String> = std::fs::read_to_string(src)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut o: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
            o.remove("hash");
            o.remove("prev_hash");
            if o.get("event").and_then(Value::as_str) == Some("accepted") {
                o.insert(
                    "zz_custom".into(),
                    serde_json::json!({"ticket": "INC-42", "evil": "\u{1b}]0;pwned\u{7}"}),
                );
            }
            serde_json::to_string(&o).unwrap()
        })
        .collect();
    let path = dir.path().join("j.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let p = path.to_str().unwrap();
    let groups = json(&["groups", p, "--json"]);
    let id = groups[0]["group_id"].as_str().unwrap();
    let out = retrace()
        .args(["investigate", p, "--group", id, "--json"])
        .output()
        .unwrap();
    assert!(!out.stdout.contains(&0x1b), "raw ESC in JSON output");
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let log = d["event_log"].as_object().unwrap();
    assert!(!log.is_empty(), "{d:#}");
    let accepted: Vec<&Value> = log
        .values()
        .flat_map(|v| v.as_array().unwrap())
        .filter(|e| e["event"] == "accepted")
        .collect();
    assert!(!accepted.is_empty());
    for e in accepted {
        assert_eq!(e["extra"]["zz_custom"]["ticket"], "INC-42", "{e:#}");
        assert_eq!(e["extra"]["zz_custom"]["evil"], "\u{1b}]0;pwned\u{7}");
        assert!(e["evidence"]["line"].as_u64().is_some());
    }
}

/// Secret fields of a tool contract never show in `investigate --json`'s
/// event log (it once printed a card token the canonical action redacted).
#[test]
fn investigate_json_redacts_secret_fields_in_the_event_log() {
    let j = root().join("sample-journals/scenarios/idempotency-key-conflict.jsonl");
    let c = root().join("sample-journals/contracts.toml");
    let raw = std::fs::read_to_string(&j).unwrap();
    assert!(raw.contains("tok_live_4f2a9c"), "fixture changed");
    let groups = json(&[
        "groups",
        j.to_str().unwrap(),
        "--contracts",
        c.to_str().unwrap(),
        "--json",
    ]);
    for g in groups.as_array().unwrap() {
        let out = retrace()
            .args([
                "investigate",
                j.to_str().unwrap(),
                "--contracts",
                c.to_str().unwrap(),
            ])
            .args(["--group", g["group_id"].as_str().unwrap(), "--json"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("\"event_log\""), "{text}");
        assert!(!text.contains("tok_live_4f2a9c"), "{text}");
        assert!(text.contains("[secret field]"), "{text}");
    }
}

/// docs/design.md §5.13: a retry that rewrote one argument (the pull
/// request body) is its own group, linked both ways to the attempts it
/// follows, in `groups`, `investigate` (text and JSON) and the export.
#[test]
fn a_retry_with_one_field_changed_is_linked_to_its_attempt() {
    let f = root().join("tests/fixtures/near-duplicate.jsonl");
    let f = f.to_str().unwrap();
    let v = json(&["groups", "--all", "--json", f]);
    let groups = v.as_array().unwrap();
    let pr: Vec<&Value> = groups
        .iter()
        .filter(|g| g["tool"] == "create_pull_request")
        .collect();
    assert_eq!(pr.len(), 2, "{v:#}");
    let (retries, first) = (pr[0], pr[1]);
    assert_eq!(
        (&retries["verdict"], &retries["calls"]),
        (&Value::from("safe_retry"), &Value::from(2))
    );
    assert_eq!(first["verdict"], "clean");
    for g in &pr {
        assert!(
            g["flags"]
                .as_array()
                .unwrap()
                .contains(&Value::from("near_duplicate")),
            "{g:#}"
        );
    }
    // The read is not linked to anything.
    let read = groups
        .iter()
        .find(|g| g["tool"] == "pull_request_read")
        .unwrap();
    assert!(
        !read["flags"]
            .as_array()
            .unwrap()
            .contains(&Value::from("near_duplicate"))
    );
    let (rid, fid) = (
        retries["group_id"].as_str().unwrap(),
        first["group_id"].as_str().unwrap(),
    );
    for (this, other, verdict, calls) in [(rid, fid, "clean", 1), (fid, rid, "safe_retry", 2)] {
        let d = json(&["investigate", "--group", this, "--json", f]);
        assert_eq!(
            d["near_duplicates"],
            serde_json::json!([{
                "group_id": other,
                "verdict": verdict,
                "severity": "ok",
                "calls": calls,
                "field": "body",
            }]),
            "{d:#}"
        );
        let finding = d["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["kind"] == "near_duplicate")
            .unwrap();
        assert!(
            finding["detail"].as_str().unwrap().starts_with(&format!(
                "one argument away from {other} ({verdict}, {calls} call"
            )),
            "{finding:#}"
        );
    }
    let out = retrace()
        .args(["investigate", "--group", rid, f])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let section = text
        .split("Near duplicates (one argument field away)\n")
        .nth(1)
        .unwrap_or_else(|| panic!("{text}"));
    assert!(
        section.starts_with(&format!("  {fid:<12} clean"))
            && section.lines().next().unwrap().ends_with("differs in body"),
        "{text}"
    );
    let out = retrace()
        .args(["export", "--format", "markdown", "--group", rid, f])
        .output()
        .unwrap();
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(
        md.contains(&format!(
            "### Near duplicates (one argument field away)\n\n| Group | Verdict | Calls | Differs in |\n|---|---|---:|---|\n| `{fid}` | `clean` | 1 | `body` |\n"
        )),
        "{md}"
    );
}

/// `export` needs a group or `--all`, and says so (it named only
/// `--group`).
#[test]
fn export_without_a_group_names_both_choices() {
    retrace()
        .args(["export", "--format", "json"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("<--group <ID>|--all>"));
}

/// A gh-aw log where github-mcp-server passed on the API's `504 Gateway
/// Timeout` as a tool error, and where the gateway gave up waiting
/// (`context deadline exceeded`), then the same issue was created again:
/// neither answer shows the target did not act (docs/design.md §10.6), so
/// each repeat is a possible duplicate, not a safe retry.
#[test]
fn a_timeout_or_an_open_status_in_a_tool_error_is_no_proof_the_target_did_not_act() {
    let j = root().join("tests/fixtures/gh-aw/retry-after-gateway-timeout.jsonl");
    let v = json(&["groups", "--json", "--read-only", j.to_str().unwrap()]);
    let verdicts: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(
        verdicts,
        ["possible_duplicate", "possible_duplicate"],
        "{v}"
    );
    // Question 3's answer on the group at `k`.
    let q3_of = |k: usize| {
        let id = v[k]["group_id"].as_str().unwrap();
        let d = json(&[
            "investigate",
            "--read-only",
            j.to_str().unwrap(),
            "--group",
            id,
            "--json",
        ]);
        d["questions"][2]["answer"].as_str().unwrap().to_string()
    };
    let q3 = q3_of(0);
    assert!(
        q3.starts_with("Yes, but it does not tell whether the target acted: HTTP 504 (failure)"),
        "{q3}"
    );
    // The gateway's own timeout is an answer that says so, read as an
    // unknown outcome; it is not said to be "recorded as unknown".
    let q3 = q3_of(1);
    assert_eq!(
        q3,
        "Yes, but it does not tell whether the target acted: the answer says the call timed out or its connection dropped (calling \"tools/call\": context deadline exceeded); nothing has resolved it.",
    );
}

/// An unchained journal shipped twice (an at-least-once log shipper
/// repeats lines; without a chain nothing proves a line a copy) shows each
/// execution dispatched twice. For a `read_only` tool that is no duplicate
/// side effect: it has no side effect to repeat (docs/design.md §4.4).
/// Before, the sample's `list_releases` read this way was
/// `duplicate_side_effect`, critical.
#[test]
fn a_read_only_tool_dispatched_twice_duplicates_nothing() {
    let s = root().join("sample-journals");
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(s.join("deploy-release-incident/activity.jsonl")).unwrap();
    let a: String = text
        .lines()
        .map(|l| {
            let mut m: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(l).unwrap();
            m.remove("prev_hash");
            m.remove("hash");
            format!("{}\n", serde_json::Value::Object(m))
        })
        .collect();
    let twice = dir.path().join("twice.jsonl");
    std::fs::write(&twice, [a.clone(), a].concat()).unwrap();
    let (c, k) = (s.join("contracts.toml"), s.join("sample.key"));
    let args = [
        "--contracts",
        c.to_str().unwrap(),
        "--key-file",
        k.to_str().unwrap(),
    ];
    let mut cmd = vec!["groups", "--all", "--json", twice.to_str().unwrap()];
    cmd.extend(args);
    let v = json(&cmd);
    let verdict = |tool: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|g| g["tool"] == tool)
            .map(|g| (g["verdict"].clone(), g["dispatches"].clone()))
            .unwrap()
    };
    assert_eq!(
        verdict("list_releases"),
        ("distinct_intent".into(), 2.into()),
        "{v:#}"
    );
    assert_eq!(
        verdict("get_release_status"),
        ("distinct_intent".into(), 2.into()),
        "{v:#}"
    );
    // The deploy did act twice over: still the duplicate.
    assert_eq!(
        verdict("deploy_release").0,
        "duplicate_side_effect",
        "{v:#}"
    );
    let id = v
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "list_releases")
        .unwrap()["group_id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut cmd = vec![
        "investigate",
        "--group",
        &id,
        "--json",
        twice.to_str().unwrap(),
    ];
    cmd.extend(args);
    let d = json(&cmd);
    assert!(
        d["reason"]
            .as_str()
            .unwrap()
            .ends_with("2 times; the tool is read-only, so a repeat duplicates nothing"),
        "{d:#}"
    );
}

/// A line cut short in the middle of a journal took the retry's accepted
/// record with it: the retry's dispatch and HTTP 201 made a group of their
/// own, `clean` with 0 calls, hidden among the clean single calls. Such a
/// group is shown now, flagged `no_accepted_record`.
#[test]
fn an_execution_without_its_accepted_record_is_shown_and_flagged() {
    let s = root().join("sample-journals");
    let text = std::fs::read_to_string(s.join("deploy-release-incident/activity.jsonl")).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    // Line 11: the retry's accepted record.
    assert!(lines[10].contains("\"accepted\""), "{}", lines[10]);
    lines[10] = &lines[10][..200];
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.jsonl");
    std::fs::write(&cut, lines.join("\n")).unwrap();
    let v = json(&[
        "groups",
        "--json",
        cut.to_str().unwrap(),
        "--contracts",
        s.join("contracts.toml").to_str().unwrap(),
        "--key-file",
        s.join("sample.key").to_str().unwrap(),
    ]);
    let orphan = v
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["tool"] == "?")
        .unwrap_or_else(|| panic!("the orphan is listed by default: {v:#}"));
    assert_eq!(orphan["calls"], 0, "{v:#}");
    assert_eq!(
        orphan["flags"],
        serde_json::json!(["no_accepted_record"]),
        "{v:#}"
    );
}

/// `investigate` names the intent's arguments (which release, which
/// invoice): before, only the export, `--json` and the TUI showed them.
#[test]
fn investigate_names_the_arguments_of_the_intent() {
    let out = retrace()
        .args(["investigate", "--group", "gfc4a6c60d4"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "  arguments    {\"region\":\"us-east-1\",\"service\":\"catalog\",\"version\":\"2026.07.22\"}\n"
        ),
        "{text}"
    );
}

/// A journal piped in with `--since` is read twice (the window's lookback,
/// docs/design.md §7.2): the second read found the pipe drained and showed
/// an empty journal, exit 0. The pipe's bytes are taken in once now.
#[test]
fn a_piped_journal_with_since_is_read_whole() {
    let s = root().join("sample-journals");
    let text = std::fs::read(s.join("deploy-release-incident/activity.jsonl")).unwrap();
    let out = retrace()
        .args([
            "groups",
            "--json",
            "--all",
            "/dev/stdin",
            "--since",
            "2026-07-22T14:04:00Z",
        ])
        .arg("--contracts")
        .arg(s.join("contracts.toml"))
        .arg("--key-file")
        .arg(s.join("sample.key"))
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let verdicts: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["duplicate_side_effect", "clean"], "{v:#}");
}

/// A journal that records the arguments of some calls only: each call
/// without them fingerprints alike, one group whose calls span the day.
/// Only the recorded intents one of those calls ran within the attach
/// window of are pointed at: the whole day's deploys were, measured by
/// the groups' spans.
#[test]
fn unrecorded_arguments_point_only_at_calls_within_the_attach_window() {
    let dir = tempfile::tempdir().unwrap();
    let line = |n: u32, at: &str, args: &str| {
        format!(
            r#"{{"id":"00000000-0000-4000-8000-{n:012}","timestamp":"2026-12-07T{at}:00+00:00","tenant":"lab","principal_id":"lab-agent","role":"agent","method":"tools/call","tool":"lab-tools.deploy_release","upstream":"lab-tools","outcome":"ok","denial_reason":null,"latency_ms":12.0,"redaction_counts":{{}},"arguments":{args},"error":null}}"#
        )
    };
    let lines = [
        line(1, "00:00", "null"),
        line(2, "05:00", r#"{"version":"1"}"#),
        line(3, "07:00", r#"{"version":"2"}"#),
        line(4, "07:05", "null"),
        line(5, "09:00", r#"{"version":"3"}"#),
    ];
    let path = dir.path().join("audit-log.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let v = json(&["groups", "--all", "--json", path.to_str().unwrap()]);
    let drifted: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|g| {
            g["flags"]
                .as_array()
                .unwrap()
                .iter()
                .any(|f| f == "fingerprint_drift")
        })
        .map(|g| g["first_at"].as_str().unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        drifted.len(),
        2,
        "the 07:00 deploy and the unrecorded calls: {drifted:?}"
    );
    // Its start is its end less its latency.
    assert!(
        drifted.iter().any(|t| t.contains("T06:59:59")),
        "{drifted:?}"
    );
}

/// A chained journal shipped twice is read once (docs/design.md §6.9): the
/// same groups as the journal itself, the chain intact, and a note. Each
/// repeated `dispatched` was a second dispatch: the sample's `list_releases`
/// read `distinct_intent`, its chain broken at the first copy.
#[test]
fn a_chained_journal_shipped_twice_is_read_once() {
    let s = root().join("sample-journals");
    let dir = tempfile::tempdir().unwrap();
    let once = s.join("deploy-release-incident/activity.jsonl");
    let a = std::fs::read(&once).unwrap();
    let twice = dir.path().join("twice.jsonl");
    std::fs::write(&twice, [a.clone(), a].concat()).unwrap();
    let (c, k) = (s.join("contracts.toml"), s.join("sample.key"));
    let groups = |p: &std::path::Path| {
        retrace()
            .args(["groups", "--all", "--json"])
            .arg(p)
            .arg("--contracts")
            .arg(&c)
            .arg("--key-file")
            .arg(&k)
            .output()
            .unwrap()
    };
    let (o1, o2) = (groups(&once), groups(&twice));
    assert_eq!(
        String::from_utf8_lossy(&o1.stdout),
        String::from_utf8_lossy(&o2.stdout)
    );
    let err = String::from_utf8_lossy(&o2.stderr);
    assert!(err.contains("chain intact (native, 20 line(s))"), "{err}");
    assert!(
        err.contains("lines 21–40 (seq 1–20) repeat earlier lines of the chain byte for byte"),
        "{err}"
    );
}

/// A call pending review whose retry's arguments were not logged (it sits
/// in another group, `fingerprint_drift`): the review queue said "no later
/// call has asked for this action", and a reviewer could confirm it as the
/// only deploy. It now says the action may have been sent again.
#[test]
fn the_review_queue_does_not_say_never_sent_again_when_another_group_may_hold_the_retry() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(root().join("tests/fixtures/lab/contextforge/gateway.log"))
        .unwrap();
    let retry = "d3e64e2515bc45fbadbf80111355504b";
    let unsampled: String = text
        .lines()
        .filter(|l| !(l.contains(retry) && l.contains("Incoming request")))
        .map(|l| format!("{l}\n"))
        .collect();
    let log = dir.path().join("gateway.log");
    std::fs::write(&log, unsampled).unwrap();
    let out = retrace()
        .args(["review", "list", "--read-only"])
        .arg(&log)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let first = text
        .split("\ncontextforge:")
        .find(|item| item.contains("39962c49b13849849a8a0d49e4eeabef"))
        .unwrap_or_default();
    assert!(
        first.contains("it may have been sent again under another fingerprint"),
        "{text}"
    );
    assert!(!first.contains("no later call has asked"), "{text}");
}
