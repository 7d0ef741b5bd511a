//! Postmortem export through the real binary: content of each format,
//! and `--anonymize` leaving no original actor, target, argument value, id
//! or name in the output.

mod common;

use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn sample_journals() -> Vec<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals/deploy-release-incident");
    vec![dir.join("sessions.jsonl"), dir.join("activity.jsonl")]
}

#[test]
fn markdown_of_the_sample_has_every_part() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        &["export", "--group", "gfc", "--format", "markdown"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    for part in [
        "## Group `gfc4a6c60d4`",
        "**Verdict:** `duplicate_side_effect` (severity **critical**)",
        "### Timeline",
        "| UTC time | Since first event | Execution | Call | Stage | Detail | Evidence |",
        "## Summary",
        "**Impact:** **1 duplicate side effect(s)** on `deploy-api.internal.example/releases`, between 2026-07-22 14:03 and 2026-07-22 14:04 UTC.",
        "## Action items",
        "## Journals",
        "```mermaid\nsequenceDiagram\n    participant A as Agent\n    participant G as Gateway\n    participant T as Target deploy-api.internal.example/releases\n",
        "### The five questions",
        "### Reviewer decisions",
        "### Chain status of the evidence",
        "G--xA: ",
    ] {
        assert!(md.contains(part), "missing {part:?} in\n{md}");
    }
    // One timeline row per event (20 events, 10 in this group), in order.
    let rows: Vec<&str> = md
        .lines()
        .filter(|l| l.starts_with("| 2026-07-22 "))
        .collect();
    assert_eq!(rows.len(), 10, "{md}");
    assert!(rows[0].contains("| +0.000s |"));
    assert!(rows[9].contains("| +51.003s |") && rows[9].contains("`delivered`"));
    for q in 1..=5 {
        assert!(md.contains(&format!("\n{q}. **")), "question {q}");
    }
}

#[test]
fn json_has_the_markdown_content() {
    let d = tempfile::tempdir().unwrap();
    let v = json(&run(d.path(), &["export", "--all", "--format", "json"]));
    assert_eq!(v["anonymized"], false);
    let g = &v["groups"][0];
    assert_eq!(g["verdict"], "duplicate_side_effect");
    assert_eq!(g["severity"], "critical");
    assert_eq!(g["timeline"].as_array().unwrap().len(), 10);
    assert_eq!(g["questions"].as_array().unwrap().len(), 5);
    assert_eq!(g["chain"].as_array().unwrap().len(), 2);
    assert!(
        g["sequence_diagram"]
            .as_str()
            .unwrap()
            .starts_with("sequenceDiagram\n")
    );
    assert_eq!(g["timeline"][4]["stage"], "delivery_failed");
    assert_eq!(g["timeline"][4]["offset_ms"], 7004);
}

/// Splits RFC 4180 CSV text into rows of cells.
fn parse_csv(s: &str) -> Vec<Vec<String>> {
    let mut rows = vec![];
    let mut row = vec![];
    let mut cell = String::new();
    let mut quoted = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                cell.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => cell.push(c),
            (false, '"') => quoted = true,
            (false, ',') => row.push(std::mem::take(&mut cell)),
            (false, '\r') => {}
            (false, '\n') => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            (false, c) => cell.push(c),
        }
    }
    rows
}

#[test]
fn csv_is_the_timeline() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        &["export", "--group", "gfc", "--format", "csv", "-o", "t.csv"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let rows = parse_csv(&std::fs::read_to_string(d.path().join("t.csv")).unwrap());
    assert_eq!(rows.len(), 11);
    assert_eq!(rows[0][0], "group_id");
    assert!(rows.iter().all(|r| r.len() == 10), "{rows:?}");
    assert_eq!(rows[1][7], "accepted");
    assert!(
        rows[1][8].contains("\"service\":\"catalog\""),
        "{:?}",
        rows[1]
    );
}

/// Every identifying value in a native journal: ids, actors, targets,
/// credential references, scopes, keys, result references, error texts,
/// approvers, pids and argument values (recursively).
fn originals(journals: &[std::path::PathBuf]) -> (BTreeSet<String>, BTreeSet<String>) {
    fn leaves(v: &Value, out: &mut BTreeSet<String>) {
        match v {
            Value::String(s) => {
                out.insert(s.clone());
            }
            Value::Number(n) if n.to_string().len() >= 3 => {
                out.insert(n.to_string());
            }
            Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
            Value::Object(m) => m.values().for_each(|x| leaves(x, out)),
            _ => {}
        }
    }
    fn walk(v: &Value, out: &mut BTreeSet<String>, rpc: &mut BTreeSet<String>) {
        let Value::Object(m) = v else { return };
        for (k, x) in m {
            match (k.as_str(), x) {
                ("arguments", _) => leaves(x, out),
                ("jsonrpc_id", Value::Number(n)) => {
                    rpc.insert(format!("JSON-RPC id {n}"));
                }
                ("pid", Value::Number(n)) => {
                    out.insert(n.to_string());
                }
                (
                    "execution_id" | "call_id" | "session_id" | "mcp_session_id" | "actor"
                    | "target" | "credential_ref" | "intent_scope" | "idempotency_key"
                    | "result_reference" | "error" | "approver" | "jsonrpc_id" | "host_key"
                    | "account" | "command" | "cwd" | "client",
                    Value::String(s),
                ) => {
                    out.insert(s.clone());
                }
                (_, Value::Object(_)) => walk(x, out, rpc),
                _ => {}
            }
        }
    }
    let mut out = BTreeSet::new();
    let mut rpc = BTreeSet::new();
    for j in journals {
        for line in std::fs::read_to_string(j).unwrap().lines() {
            walk(&serde_json::from_str(line).unwrap(), &mut out, &mut rpc);
        }
    }
    (out, rpc)
}

fn assert_no_original(output: &str, originals: &BTreeSet<String>, phrases: &BTreeSet<String>) {
    assert!(!originals.is_empty());
    for o in originals {
        assert!(
            !output.contains(o.as_str()),
            "original {o:?} leaked:\n{output}"
        );
        // Quoted in part (an error cut to fit an answer).
        if o.chars().count() > 20 {
            let head: String = o.chars().take(20).collect();
            assert!(!output.contains(&head), "start of {o:?} leaked:\n{output}");
        }
    }
    for p in phrases {
        assert!(!output.contains(p.as_str()), "{p:?} leaked");
    }
}

#[test]
fn anonymize_leaves_no_original_in_any_format() {
    let (d, j) = copy_fixture("pending-retry.jsonl");
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R1",
            "pending-retry.jsonl",
            "--decision",
            "confirmed_completed",
            "--note",
            "vault audit log shows rotation",
            "--reviewer",
            "alice.reviewer",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let (mut orig, rpc) = originals(std::slice::from_ref(&j));
    orig.insert("alice.reviewer".into());
    orig.insert("vault audit log shows rotation".into());
    orig.insert("pending-retry".into());
    orig.insert("retrace-case".into());
    let plain = json(&run(d.path(), &["groups", "pending-retry.jsonl", "--json"]));
    orig.insert(plain[0]["group_id"].as_str().unwrap().into());
    orig.insert(plain[0]["fingerprint"].as_str().unwrap().into());
    for format in ["markdown", "json", "csv"] {
        let o = run(
            d.path(),
            &[
                "export",
                "pending-retry.jsonl",
                "--all",
                "--format",
                format,
                "--anonymize",
            ],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_no_original(&stdout(&o), &orig, &rpc);
    }
    // The story survives: same verdict, same timeline, one pseudonym per
    // execution everywhere it shows.
    let a = json(&run(
        d.path(),
        &[
            "export",
            "pending-retry.jsonl",
            "--all",
            "--format",
            "json",
            "--anonymize",
        ],
    ));
    let p = json(&run(
        d.path(),
        &["export", "pending-retry.jsonl", "--all", "--format", "json"],
    ));
    let (ga, gp) = (&a["groups"][0], &p["groups"][0]);
    assert_eq!(a["anonymized"], true);
    assert_eq!(ga["verdict"], "duplicate_side_effect");
    assert_eq!(ga["verdict"], gp["verdict"]);
    assert_eq!(
        ga["timeline"].as_array().unwrap().len(),
        gp["timeline"].as_array().unwrap().len()
    );
    let first = ga["executions"][0].as_str().unwrap();
    assert!(first.starts_with("execution-"));
    assert_eq!(ga["timeline"][0]["execution_id"], first);
    assert!(ga["sequence_diagram"].as_str().unwrap().contains(first));
    assert!(
        ga["questions"][1]["evidence"][0]
            .as_str()
            .unwrap()
            .contains(first)
    );
    assert_eq!(ga["decisions"][0]["execution_id"], first);
    let reviewer = ga["decisions"][0]["reviewer"].as_str().unwrap();
    assert!(reviewer.starts_with("person-"));
    assert!(ga["provenance"].as_str().unwrap().contains(reviewer));
}

/// Question 1 lists each session's process (`(pid 5151, rotator, started
/// …)`): the process name is replaced there, as the pid is, while the same
/// word in retrace's own sentences is kept.
#[test]
fn anonymize_replaces_process_and_client_names() {
    let (d, j) = copy_fixture("pending-retry.jsonl");
    let text = std::fs::read_to_string(&j)
        .unwrap()
        .replace("\"name\":\"rotator\"", "\"name\":\"SECRETPROC\"")
        .replace("rotator-agent/2.0", "SECRETCLIENT/9.9");
    std::fs::write(&j, text).unwrap();
    let export = |format: &str, anonymize: bool| {
        let mut args = vec!["export", "pending-retry.jsonl", "--all", "--format", format];
        if anonymize {
            args.push("--anonymize");
        }
        let o = run(d.path(), &args);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    // The plain export names the process in question 1.
    assert!(export("markdown", false).contains("SECRETPROC"));
    for format in ["markdown", "json", "csv"] {
        let out = export(format, true);
        for secret in ["SECRETPROC", "SECRETCLIENT"] {
            assert!(!out.contains(secret), "{format}: {secret} leaked:\n{out}");
        }
    }
    let md = export("markdown", true);
    assert!(md.contains(", process-1, started "), "{md}");
    assert!(md.contains("result delivered to the agent"), "{md}");
}

#[test]
fn anonymize_the_sample() {
    let d = tempfile::tempdir().unwrap();
    let (mut orig, rpc) = originals(&sample_journals());
    orig.insert("sessions.jsonl".into());
    orig.insert("activity.jsonl".into());
    orig.insert("gfc4a6c60d4".into());
    for format in ["markdown", "json", "csv"] {
        let o = run(
            d.path(),
            &["export", "--all", "--format", format, "--anonymize"],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        assert_no_original(&stdout(&o), &orig, &rpc);
    }
}

#[test]
fn anonymize_hostile_values_in_json() {
    let (d, j) = copy_fixture("hostile.jsonl");
    let o = run(
        d.path(),
        &[
            "export",
            "hostile.jsonl",
            "--all",
            "--format",
            "json",
            "--anonymize",
        ],
    );
    let v = json(&o);
    // Compare decoded strings with decoded originals (long enough to be
    // identifying: the fixture also holds lone punctuation and "end").
    let (orig, _) = originals(&[j]);
    let orig: BTreeSet<String> = orig
        .into_iter()
        .filter(|o| o.chars().count() >= 6)
        .collect();
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
            Value::Object(m) => m.values().for_each(|x| strings(x, out)),
            _ => {}
        }
    }
    let mut all = vec![];
    strings(&v, &mut all);
    let all = all.join("\n");
    assert_no_original(&all, &orig, &BTreeSet::new());
}

#[test]
fn export_to_a_file_is_complete_and_leaves_no_temp_file() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("pm.md"), "old").unwrap();
    let o = run(
        d.path(),
        &["export", "--all", "--format", "markdown", "-o", "pm.md"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.path().join("pm.md")).unwrap();
    assert!(
        md.starts_with("# Postmortem") && md.ends_with("|\n"),
        "{md}"
    );
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    // An unknown group is an input error, and the file is untouched.
    let o = run(
        d.path(),
        &[
            "export", "--group", "gnope", "--format", "json", "-o", "pm.md",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read_to_string(d.path().join("pm.md")).unwrap(), md);
}

#[test]
fn real_journals_export_in_every_format() {
    let Some(dir) = common::skip::real_journal("real_journals_export_in_every_format", "") else {
        return;
    };
    let dir = dir.as_path();
    let mut seen = 0;
    for sub in ["gh-aw-mcpg", "gh-aw-mcpg-v2"] {
        let Ok(rd) = std::fs::read_dir(dir.join(sub)) else {
            continue;
        };
        for e in rd {
            let p = e.unwrap().path();
            if p.extension().is_none_or(|x| x != "jsonl") {
                continue;
            }
            let d = tempfile::tempdir().unwrap();
            let path = p.to_str().unwrap();
            let v = json(&run(
                d.path(),
                &[
                    "--read-only",
                    "export",
                    path,
                    "--all",
                    "--format",
                    "json",
                    "--anonymize",
                ],
            ));
            for g in v["groups"].as_array().unwrap() {
                assert!(
                    g["sequence_diagram"]
                        .as_str()
                        .unwrap()
                        .starts_with("sequenceDiagram\n")
                );
                assert!(!g["timeline"].as_array().unwrap().is_empty());
            }
            for format in ["markdown", "csv"] {
                let o = run(
                    d.path(),
                    &["--read-only", "export", path, "--all", "--format", format],
                );
                assert!(o.status.success(), "{path}: {}", stderr(&o));
            }
            seen += 1;
        }
    }
    assert!(seen > 0);
}

/// `-o` never writes over what the command reads (a journal, the case file,
/// by any name) nor over a special file or a link; `-o -` is stdout.
#[test]
fn output_never_replaces_an_input_or_a_special_file() {
    let (d, j) = copy_fixture("pending-retry.jsonl");
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R1",
            "pending-retry.jsonl",
            "--decision",
            "escalated",
            "--note",
            "asked the vault team",
            "--reviewer",
            "alice",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let case = d.path().join("retrace-case.sqlite");
    let journal_before = std::fs::read(&j).unwrap();
    let case_before = std::fs::read(&case).unwrap();
    std::fs::hard_link(&j, d.path().join("hard.jsonl")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&case, d.path().join("case-link")).unwrap();
    let export = |out: &str| {
        run(
            d.path(),
            &[
                "export",
                "pending-retry.jsonl",
                "--all",
                "--format",
                "markdown",
                "-o",
                out,
            ],
        )
    };
    let review_export = |out: &str| {
        run(
            d.path(),
            &["review", "export", "pending-retry.jsonl", "-o", out],
        )
    };
    let mut inputs = vec![
        ("pending-retry.jsonl", "the journal"),
        ("./pending-retry.jsonl", "the journal"),
        ("hard.jsonl", "the journal"),
        ("retrace-case.sqlite", "the case file"),
    ];
    if cfg!(unix) {
        inputs.push(("case-link", "the case file"));
    }
    for (out, what) in inputs {
        for o in [export(out), review_export(out)] {
            assert_eq!(o.status.code(), Some(2), "-o {out}: {}", stderr(&o));
            assert!(
                stderr(&o).contains(what) && stderr(&o).contains("refusing"),
                "-o {out}: {}",
                stderr(&o)
            );
        }
    }
    assert_eq!(std::fs::read(&j).unwrap(), journal_before);
    assert_eq!(std::fs::read(&case).unwrap(), case_before);
    assert!(
        retrace::review::case::verify(&case)
            .unwrap()
            .chain
            .is_intact()
    );

    #[cfg(unix)]
    {
        let fifo = d.path().join("fifo");
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
        std::fs::write(d.path().join("other.md"), "old").unwrap();
        std::os::unix::fs::symlink("other.md", d.path().join("link.md")).unwrap();
        for (out, kind) in [
            ("fifo", "a FIFO"),
            ("link.md", "a symbolic link"),
            ("/dev/null", "a character device"),
        ] {
            for o in [export(out), review_export(out)] {
                assert_eq!(o.status.code(), Some(1), "-o {out}: {}", stderr(&o));
                assert!(stderr(&o).contains(kind), "-o {out}: {}", stderr(&o));
            }
        }
        let ft = std::fs::symlink_metadata(&fifo).unwrap().file_type();
        use std::os::unix::fs::FileTypeExt;
        assert!(ft.is_fifo());
        assert!(
            std::fs::symlink_metadata(d.path().join("link.md"))
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read_to_string(d.path().join("other.md")).unwrap(),
            "old"
        );
    }

    // `-o -` prints, and a plain new file is written.
    let o = export("-");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("# Postmortem"));
    assert!(!d.path().join("-").exists());
    let o = export("post.md");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        std::fs::read_to_string(d.path().join("post.md"))
            .unwrap()
            .starts_with("# Postmortem")
    );
}

/// CSV goes to terminals too (`cat`): journal text in it is escaped.
#[test]
fn csv_holds_no_terminal_control_from_a_journal() {
    for name in ["escape-sequences.jsonl", "hostile.jsonl"] {
        let (d, _) = copy_fixture(name);
        let o = run(d.path(), &["export", name, "--all", "--format", "csv"]);
        assert!(o.status.success(), "{}", stderr(&o));
        let text = stdout(&o);
        assert!(text.lines().count() > 1, "{name}: {text}");
        for row in text.split("\r\n") {
            assert!(
                !row.chars().any(retrace::sanitize::is_unsafe),
                "{name}: a raw control character in {row:?}"
            );
        }
        assert!(
            text.contains("\\x1b") || text.contains("\\u{202e}"),
            "{name}: the escapes stay visible"
        );
    }
}

/// Markdown marks each piece of evidence past a chain break, as
/// `retrace investigate` does.
#[test]
fn markdown_marks_unverified_evidence() {
    let d = tempfile::tempdir().unwrap();
    let name = "possible-duplicate-ssh.jsonl";
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-journals/scenarios")
        .join(name);
    // Change act_MIG2's authorization (line 8): the chain breaks there.
    let lines: Vec<String> = std::fs::read_to_string(src)
        .unwrap()
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i == 7 {
                l.replace("per_use_approval", "session_grant")
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(d.path().join(name), lines.join("\n") + "\n").unwrap();
    let o = run(d.path(), &["export", name, "--all", "--format", "markdown"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    let mark = "[UNVERIFIED: at or after the chain break at line 8]";
    let evidence: Vec<&str> = md
        .lines()
        .filter(|l| l.trim_start().starts_with("- evidence:"))
        .collect();
    assert!(evidence.len() >= 5, "{md}");
    for l in &evidence {
        let line: u32 = l
            .split(&format!("{name}:"))
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no citation in {l}"));
        assert_eq!(l.contains(mark), line >= 8, "{l}");
    }
    // The timeline's evidence column too.
    assert!(
        md.lines()
            .any(|l| l.contains("`authorized`") && l.contains("act_MIG2") && l.contains(mark)),
        "{md}"
    );
}

/// An unknown answer (`unknown: <what the journal lacks>`) says unknown once.
#[test]
fn markdown_says_unknown_once() {
    let d = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixture("mcpproxy/activity-export.jsonl"),
        d.path().join("activity-export.jsonl"),
    )
    .unwrap();
    let o = run(
        d.path(),
        &[
            "export",
            "activity-export.jsonl",
            "--all",
            "--format",
            "markdown",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.contains("   *Unknown:* "), "{md}");
    assert!(!md.contains("*Unknown.* unknown"), "{md}");
    assert!(!md.contains("*Unknown:* unknown"), "{md}");
}

/// Nothing worth a look: the export says so rather than print an empty
/// summary table.
#[test]
fn an_empty_markdown_export_says_so() {
    let d = tempfile::tempdir().unwrap();
    let clean = Path::new(env!("CARGO_MANIFEST_DIR")).join("sample-journals/scenarios/clean.jsonl");
    let o = run(
        d.path(),
        &[
            "export",
            clean.to_str().unwrap(),
            "--all",
            "--format",
            "markdown",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    assert!(md.contains("No group is worth a look"), "{md}");
    assert!(
        !md.contains("## Action items") && !md.contains("| Group |"),
        "{md}"
    );
}

/// GitHub-flavoured Markdown as comrak renders it (tables, task lists).
fn gfm(md: &str) -> String {
    let mut o = comrak::Options::default();
    o.extension.table = true;
    o.extension.tasklist = true;
    comrak::markdown_to_html(md, &o)
}

/// A postmortem a writer can paste: after a reviewer's decision it says
/// what happened and what it cost, lists action items, gives the
/// decision's time as a time (not "+2881h"), renders as GitHub-flavoured
/// Markdown with every table whole, shows no HTML entity when read raw,
/// and is written with the usual permissions (once `-rw-------`).
#[test]
fn the_postmortem_after_a_decision_can_be_pasted() {
    let (d, _) = copy_fixture("pending-retry.jsonl");
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R1",
            "pending-retry.jsonl",
            "--decision",
            "confirmed_completed",
            "--note",
            "vault log shows the rotation at 09:02:07 <ops-1234>",
            "--reviewer",
            "alice",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(
        d.path(),
        &[
            "export",
            "pending-retry.jsonl",
            "--all",
            "--format",
            "markdown",
            "-o",
            "pm.md",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = std::fs::read_to_string(d.path().join("pm.md")).unwrap();
    for part in [
        "**Impact:** **1 duplicate side effect(s)** on `vault.acme.example/credentials`",
        "- `duplicate_side_effect` (critical) `rotate_credential` on `vault.acme.example/credentials`: act\\_R2 was dispatched while act\\_R1 was still unresolved",
        "reviewer alice decided confirmed\\_completed at",
        "- [ ] Make the gateway attach retries of rotate\\_credential",
        "- [ ] Send an idempotency key to vault.acme.example/credentials",
        "- [ ] Write a replay contract for rotate\\_credential",
        "vault log shows the rotation at 09:02:07 \\<ops-1234\\>",
    ] {
        assert!(md.contains(part), "missing {part:?} in\n{md}");
    }
    // Readable offsets: nothing above a day is written in hours.
    for l in md.lines().filter(|l| l.starts_with("| 20")) {
        let cells: Vec<&str> = l.split(" | ").collect();
        let since = cells[1];
        if let Some(h) = since
            .split('h')
            .next()
            .and_then(|h| h.trim_start_matches('+').parse::<u64>().ok())
        {
            assert!(h < 24, "{l}");
        }
    }
    assert!(md.contains("reviewer_decision"), "{md}");
    assert!(md.contains("d ") && md.contains("| +"), "{md}");
    // Raw, it reads without entities; rendered, every table is whole.
    assert!(!md.contains("&lt;") && !md.contains("&amp;"), "{md}");
    let html = gfm(&md);
    assert!(!html.contains("&amp;lt;"), "{html}");
    assert!(html.contains("&lt;ops-1234&gt;"), "{html}");
    assert!(
        html.contains("type=\"checkbox\""),
        "action items are a task list"
    );
    for table in html.split("<table>").skip(1) {
        let table = &table[..table.find("</table>").unwrap()];
        let head = table[..table.find("</thead>").unwrap()]
            .matches("</th>")
            .count();
        for row in table.split("<tr>").skip(2) {
            assert_eq!(row.matches("</td>").count(), head, "a broken row:\n{row}");
        }
    }
    // The usual permissions, as any new file in that folder gets.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::File::create(d.path().join("usual")).unwrap();
        let mode = |n: &str| {
            std::fs::metadata(d.path().join(n))
                .unwrap()
                .permissions()
                .mode()
                & 0o777
        };
        assert_eq!(mode("pm.md"), mode("usual"));
    }
}

/// The summary once said "1 possible duplicate" and nothing else while
/// every cited line lay after a chain break: pasted alone, it overstated the
/// finding. It names the break (and arguments not logged) as caveats.
#[test]
fn the_summary_names_a_broken_chain_under_its_evidence() {
    let d = tempfile::tempdir().unwrap();
    let [sessions, activity] = [0, 1].map(|i| sample_journals()[i].clone());
    std::fs::copy(&sessions, d.path().join("sessions.jsonl")).unwrap();
    let text = std::fs::read_to_string(&activity).unwrap();
    let edited = text.replacen("\"target_status\":201", "\"target_status\":200", 1);
    assert_ne!(text, edited);
    std::fs::write(d.path().join("activity.jsonl"), edited).unwrap();
    let o = run(
        d.path(),
        &[
            "export",
            "--all",
            "--format",
            "markdown",
            "sessions.jsonl",
            "activity.jsonl",
        ],
    );
    let md = stdout(&o);
    let summary = &md[md.find("## Summary").unwrap()..md.find("**What happened:**").unwrap()];
    assert!(summary.contains("**Caveats:**"), "{summary}");
    assert!(
        summary.contains("`activity.jsonl` is broken") && summary.contains("unverified"),
        "{summary}"
    );
    // An intact journal has no caveat.
    let o = run(
        d.path(),
        &["export", "--all", "--format", "markdown", "sessions.jsonl"],
    );
    assert!(!stdout(&o).contains("**Caveats:**"), "{}", stdout(&o));
}

/// A native journal of one intent repeated `n` times, each execution
/// accepted, authorized, dispatched with a new key, answered and
/// delivered before the next: one group of `n` executions.
fn one_intent(dir: &Path, n: usize) -> std::path::PathBuf {
    let mut out = String::new();
    let mut seq = 0;
    let t0 = chrono::DateTime::parse_from_rfc3339("2026-07-22T00:00:00Z").unwrap();
    for i in 0..n {
        let x = format!("act_{i:04}");
        let at = |k: usize| (t0 + chrono::Duration::seconds((i * 10 + k) as i64)).to_rfc3339();
        let mut line = |mut v: Value| {
            seq += 1;
            v["kind"] = "event".into();
            v["seq"] = seq.into();
            v["execution_id"] = x.clone().into();
            out.push_str(&v.to_string());
            out.push('\n');
        };
        line(serde_json::json!({"event":"accepted","at":at(0),
            "call":{"call_id":format!("call_{i}"),"jsonrpc_id":i,"session_id":"ses_1"},
            "action":{"actor":"agent","tool":"deploy_release","channel":"http","target":"deploy-api/releases",
                      "intent_scope":"run:1","arguments":{"service":"svc","version":"2.4.1"}}}));
        line(serde_json::json!({"event":"authorized","at":at(1),"decision":"session_grant"}));
        line(
            serde_json::json!({"event":"dispatched","at":at(2),"idempotency_key":format!("key-{i}")}),
        );
        line(
            serde_json::json!({"event":"outcome","at":at(3),"outcome":"success","observed_via":"response","target_status":201}),
        );
        line(serde_json::json!({"event":"delivered","at":at(4)}));
    }
    let p = dir.join("one-intent.jsonl");
    std::fs::write(&p, out).unwrap();
    p
}

/// A group of 200,000 calls made a 325 MB postmortem whose sequence
/// diagram Mermaid refuses (more than its 50,000-character maxTextSize).
/// A large group is abridged in Markdown and in the diagram, says so and
/// keeps the executions the verdict names; the JSON timeline and the CSV
/// keep every event.
#[test]
fn a_large_group_is_abridged_in_the_postmortem_and_whole_in_the_data() {
    let d = tempfile::tempdir().unwrap();
    let n = 400;
    let j = one_intent(d.path(), n);
    let groups = json(
        &std::process::Command::new(BIN)
            .args(["groups", "--json"])
            .arg(&j)
            .output()
            .unwrap(),
    );
    assert_eq!(groups.as_array().map(Vec::len), Some(1), "{groups}");
    let id = groups[0]["group_id"].as_str().unwrap().to_string();
    let reason_ids: Vec<String> = (0..n)
        .map(|i| format!("act_{i:04}"))
        .filter(|x| {
            groups[0]["reason"]
                .as_str()
                .unwrap_or("")
                .contains(x.as_str())
        })
        .collect();
    let md = stdout(
        &std::process::Command::new(BIN)
            .args(["export", "--group", &id, "--format", "markdown", "-o", "-"])
            .arg(&j)
            .output()
            .unwrap(),
    );
    assert!(md.contains("Abridged: of 400 executions"), "{md}");
    let rows = md
        .lines()
        .filter(|l| l.starts_with("| 2026-07-22 "))
        .count();
    assert!(rows < 200, "{rows} timeline rows");
    // The gap says what it stands for, and the counts add up.
    let gaps: Vec<&str> = md.lines().filter(|l| l.starts_with("| … |")).collect();
    assert!(!gaps.is_empty(), "{md}");
    let left_out: usize = gaps
        .iter()
        .map(|l| {
            let n = l
                .split(" events of ")
                .next()
                .unwrap()
                .rsplit("| ")
                .next()
                .unwrap();
            n.replace(',', "").parse::<usize>().unwrap()
        })
        .sum();
    assert_eq!(rows + left_out, n * 5, "{gaps:?}");
    // The first and last executions, and those the verdict names, are shown.
    for x in ["act_0000", "act_0009", "act_0390", "act_0399"]
        .iter()
        .map(|s| s.to_string())
        .chain(reason_ids)
    {
        assert!(
            md.contains(&format!("| `{x}` |")),
            "{x} not in the timeline"
        );
    }
    assert!(!md.contains("| `act_0200` |"));
    // The diagram stays within what Mermaid draws by default.
    let diagram = md
        .split("```mermaid\n")
        .nth(1)
        .and_then(|s| s.split("```").next())
        .unwrap();
    assert!(diagram.len() < 50_000, "{} characters", diagram.len());
    assert!(diagram.contains("other executions not drawn"), "{diagram}");
    // The data exports keep every event.
    let v = json(
        &std::process::Command::new(BIN)
            .args(["export", "--group", &id, "--format", "json", "-o", "-"])
            .arg(&j)
            .output()
            .unwrap(),
    );
    assert_eq!(
        v["groups"][0]["timeline"].as_array().map(Vec::len),
        Some(n * 5)
    );
    assert_eq!(v["groups"][0]["abridged"], true);
    assert!(!md.contains("`, (") && md.contains("(400 in all)"), "{md}");
    let csv = stdout(
        &std::process::Command::new(BIN)
            .args(["export", "--group", &id, "--format", "csv", "-o", "-"])
            .arg(&j)
            .output()
            .unwrap(),
    );
    assert_eq!(parse_csv(&csv).len(), n * 5 + 1);
}

/// A group at the threshold is shown whole.
#[test]
fn a_group_of_sixty_executions_is_shown_whole() {
    let d = tempfile::tempdir().unwrap();
    let j = one_intent(d.path(), 60);
    let md = stdout(
        &std::process::Command::new(BIN)
            .args(["export", "--all", "--format", "markdown", "-o", "-"])
            .arg(&j)
            .output()
            .unwrap(),
    );
    assert!(!md.contains("Abridged"), "{md}");
    assert!(md.contains("|\n\n## Journals"), "{md}");
    assert_eq!(
        md.lines()
            .filter(|l| l.starts_with("| 2026-07-22 "))
            .count(),
        300
    );
}

/// Idempotency keys were written into answers and findings Debug-quoted
/// (`"K\"1"`), which the pseudonym search did not recognise: a key with a
/// quote, backslash or tab survived `--anonymize` in Markdown and JSON.
#[test]
fn anonymize_replaces_idempotency_keys_with_quotes_and_escapes() {
    let d = tempfile::tempdir().unwrap();
    let j = one_intent(d.path(), 3);
    let text = std::fs::read_to_string(&j).unwrap().replace(
        r#""idempotency_key":"key-"#,
        r#""idempotency_key":"SECRETKEY\"\\\tkey-"#,
    );
    std::fs::write(&j, text).unwrap();
    let journals = ["one-intent.jsonl"];
    // The keys are there to be replaced.
    let plain = stdout(&run(
        d.path(),
        &[&["export", "--all", "--format", "json"][..], &journals[..]].concat(),
    ));
    assert!(plain.contains("SECRETKEY"), "{plain}");
    for format in ["markdown", "json", "csv"] {
        let args = [
            &["export", "--all", "--anonymize", "--format", format][..],
            &journals[..],
        ]
        .concat();
        let out = stdout(&run(d.path(), &args));
        assert!(!out.is_empty(), "{format}");
        assert!(!out.contains("SECRETKEY"), "{format}:\n{out}");
    }
}

/// A group of three deploys: the second re-sent the first after its
/// result was lost (a duplicate side effect), the third came from another
/// process. The target acted three times, but the postmortem counts one
/// duplicate side effect, not two, and question 1 says where each call
/// came from instead of "both calls came from ses_A".
#[test]
fn a_repeat_from_another_process_is_not_counted_as_a_duplicate() {
    let (d, _) = copy_fixture("three-calls-two-processes.jsonl");
    let o = run(
        d.path(),
        &[
            "export",
            "three-calls-two-processes.jsonl",
            "--all",
            "--format",
            "markdown",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let md = stdout(&o);
    for part in [
        "**Impact:** **1 duplicate side effect(s)** on `api.internal.example/v1`",
        "One process: act\\_D1 and act\\_D2 came from session ses\\_A",
        "The group's other call: act\\_D3 came from session ses\\_B (pid 200, agent, started 2026-07-22 10:00:30), another process.",
    ] {
        assert!(md.contains(part), "missing {part:?} in\n{md}");
    }
    let o = run(
        d.path(),
        &[
            "export",
            "three-calls-two-processes.jsonl",
            "--all",
            "--format",
            "json",
        ],
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["groups"][0]["acted"], 3);
    assert_eq!(v["groups"][0]["duplicates"], 1);
}
