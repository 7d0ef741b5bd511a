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

/// What `retrace ARGS JOURNAL` prints on stdout; it must succeed.
fn stdout_of(args: &[&str], journal: &std::path::Path) -> String {
    let mut all = args.to_vec();
    all.push(journal.to_str().unwrap());
    let o = common::run(journal.parent().unwrap(), &all);
    assert!(o.status.success(), "{}", common::stderr(&o));
    common::stdout(&o)
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

/// Each service exporting its own spans (the client's in one file, the
/// server's in another) gives the groups one file gives, byte for byte:
/// the server span's caller, the caller's timeout and OpenLLMetry's
/// response write are looked up across the files. Before, the MCP SDK's
/// split traces gave `duplicate_side_effect` for a retried call whose first
/// handler was cancelled, and OpenLLMetry's server file stopped the load
/// ("no usable line").
#[test]
fn a_trace_split_over_one_file_per_service_reads_as_one() {
    for system in ["otel-sdk", "openllmetry"] {
        let (traces, truth) = fixture(system);
        let dir = tempfile::tempdir().unwrap();
        let files = lab::split_by_service(&traces, dir.path());
        let (split, notes) = lab::groups_and_notes(&files, &[]);
        assert_eq!(split, lab::groups(&[traces], &[]), "{system}: {notes}");
        let expected = if system == "otel-sdk" {
            lab::OTEL_SDK
        } else {
            lab::OPENLLMETRY
        };
        lab::check(system, &truth, &split, expected);
        assert!(
            notes.contains("spans, looked up with")
                && notes.contains("other OpenTelemetry journal(s):"),
            "{notes}"
        );
    }
}

/// Files of sound spans that give no call of their own are read, not
/// refused: OpenLLMetry's server spans alone (whose calls are their
/// client's) say what to load with them, and a file of spans that are no
/// tool call (one file per span of a real export) says so. Both stopped
/// the whole load with "no usable line … is it another format?".
#[test]
fn files_of_spans_without_calls_of_their_own_are_read() {
    let (traces, _) = fixture("openllmetry");
    let dir = tempfile::tempdir().unwrap();
    let files = lab::split_by_service(&traces, dir.path());
    let server = files
        .iter()
        .find(|f| f.ends_with("lab-tools.jsonl"))
        .unwrap();
    let (groups, notes) = lab::groups_and_notes(std::slice::from_ref(server), &[]);
    assert!(groups.is_empty());
    assert!(
        notes.contains(
            "OpenLLMetry server spans answer tool calls whose client spans are in no journal loaded"
        ) && notes.contains("load the client's spans with them"),
        "{notes}"
    );
    let out = common::run(dir.path(), &["verify", server.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", common::stdout(&out));
    assert!(common::stdout(&out).starts_with("NO CHAIN"));

    // One file per span: most hold no tool call; all of them read
    // together give the groups of the whole export.
    let (traces, _) = fixture("otel-sdk");
    let per_span = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (n, line) in std::fs::read_to_string(&traces)
        .unwrap()
        .lines()
        .enumerate()
    {
        let data: serde_json::Value = serde_json::from_str(line).unwrap();
        for (r, rs) in data["resourceSpans"].as_array().unwrap().iter().enumerate() {
            for (k, ss) in rs["scopeSpans"].as_array().unwrap().iter().enumerate() {
                for (m, span) in ss["spans"].as_array().unwrap().iter().enumerate() {
                    let one = serde_json::json!({"resourceSpans": [{
                        "resource": rs["resource"],
                        "scopeSpans": [{"scope": ss["scope"], "spans": [span]}],
                    }]});
                    let path = per_span.path().join(format!("{n:03}-{r}-{k}-{m:03}.jsonl"));
                    std::fs::write(&path, format!("{one}\n")).unwrap();
                    files.push(path);
                }
            }
        }
    }
    let (groups, notes) = lab::groups_and_notes(&files, &[]);
    assert_eq!(groups, lab::groups(&[traces], &[]));
    assert!(
        notes.contains("none of its spans is an MCP tool call"),
        "{notes}"
    );
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

/// The MCP SDK's spans record a tool's name, not its arguments: the review
/// queue, the postmortem and its timeline say the arguments were not
/// recorded. They showed `{}`, which reads as a call with no arguments.
#[test]
fn arguments_a_span_does_not_record_are_said_to_be_not_recorded() {
    let (traces, _) = fixture("otel-sdk");
    let text = stdout_of(&["review", "list", "--read-only"], &traces);
    assert!(
        text.contains("arguments       (not recorded: the MCP SDK's spans record the tool's name, not its arguments)"),
        "{text}"
    );
    assert!(!text.contains("arguments       {}"), "{text}");
    let md = stdout_of(
        &[
            "export",
            "--format",
            "markdown",
            "-o",
            "-",
            "--group",
            "g7b6585d38a",
        ],
        &traces,
    );
    assert!(
        md.contains("| Arguments (fingerprinted) | (not recorded: the MCP SDK"),
        "{md}"
    );
    assert!(
        md.contains("deploy\\_release (arguments not recorded)"),
        "{md}"
    );
    assert!(!md.contains("deploy\\_release {}"), "{md}");
    let text = stdout_of(&["investigate", "--group", "g7b6585d38a"], &traces);
    assert!(
        text.contains("  arguments    (not recorded: the MCP SDK's spans record the tool's name, not its arguments)\n"),
        "{text}"
    );
}

/// A call the client's and the server's spans both record is drawn as one
/// call and one dispatch, the server's record a note, and a group with no
/// target names no target: the postmortem's diagram drew each layer's
/// record as a call of its own (four calls and four dispatches for two),
/// to "Target the target".
#[test]
fn the_diagram_draws_a_call_two_layers_recorded_once() {
    let (traces, _) = fixture("otel-sdk");
    let md = stdout_of(
        &[
            "export",
            "--format",
            "markdown",
            "-o",
            "-",
            "--group",
            "g7b6585d38a",
        ],
        &traces,
    );
    let diagram: Vec<&str> = md
        .lines()
        .skip_while(|l| *l != "```mermaid")
        .take_while(|l| *l != "```")
        .collect();
    let count = |p: &str| {
        diagram
            .iter()
            .filter(|l| l.trim_start().starts_with(p))
            .count()
    };
    assert_eq!(count("A->>G:"), 2, "{diagram:#?}");
    assert_eq!(count("G->>T:"), 2, "{diagram:#?}");
    assert_eq!(
        diagram
            .iter()
            .filter(|l| l.contains("reaches the server"))
            .count(),
        2,
        "{diagram:#?}"
    );
    assert!(
        diagram.contains(&"    participant T as Target"),
        "{diagram:#?}"
    );
}

/// The same spans in two files (an export that overlaps the one before
/// it): each span is read once, from the first file that holds it, and
/// the second file's note says so. Read in both, every event of a call in
/// both counted twice in its execution's timeline (14 events for 7).
#[test]
fn a_span_in_two_files_is_read_once() {
    let (traces, _) = fixture("otel-sdk");
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(&traces).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let half = lines.len() / 2;
    // a: the first two thirds; b: the last two thirds (overlapping a).
    let a = d.path().join("a.jsonl");
    let b = d.path().join("b.jsonl");
    std::fs::write(&a, lines[..half + lines.len() / 6].join("\n") + "\n").unwrap();
    std::fs::write(&b, lines[half - lines.len() / 6..].join("\n") + "\n").unwrap();
    let events = |files: &[&std::path::Path]| {
        let out = std::process::Command::new(common::BIN)
            .args(["investigate", "--json", "--group", "gc75aa19691"])
            .args(files)
            .output()
            .unwrap();
        let v = common::json(&out);
        let counts: Vec<u64> = v["executions_detail"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["events"].as_u64().unwrap())
            .collect();
        (counts, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (alone, _) = events(&[&traces]);
    let (split, err) = events(&[&a, &b]);
    assert_eq!(split, alone, "{err}");
    assert!(
        err.contains("b.jsonl: ") && err.contains("are in a journal loaded before it too"),
        "{err}"
    );
    assert_eq!(
        lab::groups(&[a.clone(), b.clone()], &[]),
        lab::groups(std::slice::from_ref(&traces), &[])
    );
}

/// An event whose request line is in another file names that file:
/// `request_line` alone named a line of the other file as if it were the
/// event's own.
#[test]
fn a_request_line_in_another_file_names_its_file() {
    let (traces, _) = fixture("openllmetry");
    let d = tempfile::tempdir().unwrap();
    let split = lab::split_by_service(&traces, d.path());
    let requests = |files: &[std::path::PathBuf]| {
        let mut found = Vec::new();
        for g in lab::groups(files, &[]) {
            let out = std::process::Command::new(common::BIN)
                .args(["investigate", "--json", "--group"])
                .arg(g["group_id"].as_str().unwrap())
                .args(files)
                .output()
                .unwrap();
            let v = common::json(&out);
            let mut stack = vec![v];
            while let Some(o) = stack.pop() {
                match o {
                    serde_json::Value::Object(m) => {
                        if m.get("facts").and_then(|f| f.get("request_line")).is_some() {
                            found.push((
                                m["evidence"]["journal"].as_str().unwrap().to_string(),
                                m.get("request_journal")
                                    .and_then(|j| j.as_str())
                                    .map(str::to_string),
                            ));
                        }
                        stack.extend(m.into_iter().map(|(_, v)| v));
                    }
                    serde_json::Value::Array(a) => stack.extend(a),
                    _ => {}
                }
            }
        }
        found
    };
    let alone = requests(std::slice::from_ref(&traces));
    assert!(!alone.is_empty());
    assert!(alone.iter().all(|(_, r)| r.is_none()), "{alone:?}");
    let across = requests(&split);
    assert!(
        across
            .iter()
            .any(|(j, r)| r.as_ref().is_some_and(|r| r != j)),
        "{across:?}"
    );
    assert!(
        across.iter().all(|(j, r)| r.as_ref() != Some(j)),
        "{across:?}"
    );
}
