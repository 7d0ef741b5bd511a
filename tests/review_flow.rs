//! The review flow end to end, through the real binary: a pending
//! execution is listed with its original activity record, a decision is
//! recorded, the case file is reopened by later runs, the verdict changes
//! with its provenance, the chain stays intact; a tampered case file is
//! detected.

mod common;

use common::*;
use retrace::journal::chain::{ChainStatus, FailureKind};
use retrace::review::case;
use serde_json::Value;

const J: &str = "pending-retry.jsonl";

/// `retrace review decide act_R1` on the fixture journal in `dir`.
fn decide(
    dir: &std::path::Path,
    decision: &str,
    note: &str,
    reviewer: &str,
) -> std::process::Output {
    decide_execution(dir, "act_R1", decision, note, reviewer)
}

/// `retrace review decide EXECUTION` on the fixture journal in `dir`.
fn decide_execution(
    dir: &std::path::Path,
    execution: &str,
    decision: &str,
    note: &str,
    reviewer: &str,
) -> std::process::Output {
    run(
        dir,
        &[
            "review",
            "decide",
            execution,
            J,
            "--decision",
            decision,
            "--note",
            note,
            "--reviewer",
            reviewer,
        ],
    )
}

fn group_verdict(dir: &std::path::Path) -> String {
    let v = json(&run(dir, &["groups", J, "--json"]));
    v[0]["verdict"].as_str().unwrap().to_string()
}

#[test]
fn pending_execution_is_queued_with_its_activity_record() {
    let (d, _) = copy_fixture(J);
    assert_eq!(group_verdict(d.path()), "possible_duplicate");
    let q = json(&run(d.path(), &["review", "list", J, "--json"]));
    let items = q.as_array().unwrap();
    assert_eq!(items.len(), 1, "{q}");
    let it = &items[0];
    assert_eq!(it["execution_id"], "act_R1");
    assert_eq!(it["status"], "pending_verification");
    assert_eq!(it["group_verdict"], "possible_duplicate");
    assert_eq!(it["target"], "vault.acme.example/credentials");
    assert_eq!(it["first_dispatch_at"], "2026-08-03T09:02:05Z");
    assert!(it["known_outcome"].as_str().unwrap().starts_with("unknown"));
    assert_eq!(it["calls"][0]["call_id"], "call_7");
    assert_eq!(it["later_attempts"][0]["execution_id"], "act_R2");
    assert!(
        it["why_not_sent_again"]
            .as_str()
            .unwrap()
            .contains("act_R2")
    );
    assert_eq!(
        it["allowed"],
        serde_json::json!(["confirmed_completed", "confirmed_not_executed", "escalated"])
    );
    // Listing never creates a case file.
    assert!(!d.path().join(case::DEFAULT_FILE_NAME).exists());
}

#[test]
fn confirmed_completed_turns_possible_duplicate_into_duplicate_side_effect() {
    let (d, _) = copy_fixture(J);
    let o = decide(
        d.path(),
        "confirmed_completed",
        "vault audit log shows the rotation at 09:02:07",
        "alice",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("possible_duplicate → duplicate_side_effect"),
        "{out}"
    );
    assert!(out.contains("reviewer alice"), "{out}");

    // A later run reopens the case file beside the journal.
    let case_path = d.path().join(case::DEFAULT_FILE_NAME);
    assert!(case_path.exists());
    let v = json(&run(d.path(), &["groups", J, "--json"]));
    assert_eq!(v[0]["verdict"], "duplicate_side_effect");
    assert_eq!(v[0]["resolutions"][0]["reviewer"], "alice");
    assert!(
        v[0]["resolutions"][0]["source"]
            .as_str()
            .unwrap()
            .ends_with("retrace-case.sqlite entry 1")
    );
    let o = run(d.path(), &["groups", J]);
    assert!(stdout(&o).contains("reviewed:alice"), "{}", stdout(&o));
    let v = json(&run(
        d.path(),
        &["investigate", J, "--group", "g", "--json"],
    ));
    assert_eq!(v["executions_detail"][0]["resolution"]["reviewer"], "alice");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("reviewer alice decided confirmed_completed at"),
        "{reason}"
    );
    let q3 = v["questions"][2]["answer"].as_str().unwrap();
    assert!(
        q3.contains("Reviewer alice decided confirmed_completed"),
        "{q3}"
    );
    assert!(q3.contains("entry 1"), "{q3}");
    assert!(q3.contains("vault audit log"), "{q3}");

    // The queue is empty and a second decision is refused.
    let q = json(&run(d.path(), &["review", "list", J, "--json"]));
    assert_eq!(q.as_array().unwrap().len(), 0);
    let o = decide(d.path(), "escalated", "again", "bob");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("already decided confirmed_completed by alice"));
    // It says what the reviewer can do instead.
    assert!(
        stderr(&o).contains("use another case file (--case FILE)"),
        "{}",
        stderr(&o)
    );

    // The chain is intact and holds exactly one entry.
    let v = case::verify(&case_path).unwrap();
    assert!(v.append_only_guards);
    match v.chain.status {
        ChainStatus::Intact { lines, .. } => assert_eq!(lines, 1),
        s => panic!("{s:?}"),
    }

    // The Markdown export names the reviewer, the time and the entry.
    let o = run(d.path(), &["export", J, "--all", "--format", "markdown"]);
    let md = stdout(&o);
    assert!(md.contains("**Resolved by a reviewer:**"), "{md}");
    assert!(md.contains("`reviewer_decision`"), "{md}");
    assert!(md.contains("| case_file | **intact** |"), "{md}");
}

#[test]
fn confirmed_not_executed_makes_the_retry_safe() {
    let (d, _) = copy_fixture(J);
    let o = decide(
        d.path(),
        "confirmed_not_executed",
        "vault has no rotation before 09:04",
        "carol",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(group_verdict(d.path()), "safe_retry");
}

#[test]
fn escalation_keeps_the_item_queued_and_a_later_decision_settles_it() {
    let (d, _) = copy_fixture(J);
    let decide = |decision: &str, who: &str| decide(d.path(), decision, "looked at it", who);
    let o = decide("escalated", "bob");
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("possible_duplicate (unchanged)"));
    let q = json(&run(d.path(), &["review", "list", J, "--json"]));
    assert_eq!(q[0]["decisions"][0]["decision"], "escalated");
    assert_eq!(q[0]["decisions"][0]["reviewer"], "bob");
    let o = decide("confirmed_completed", "alice");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(group_verdict(d.path()), "duplicate_side_effect");

    // review export: one JSON line per decision, linked by hash.
    let o = run(d.path(), &["review", "export", J]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<Value> = stdout(&o)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["type"], "retrace.review_decision");
    assert_eq!(lines[0]["prev_hash"], retrace::journal::GENESIS);
    assert_eq!(lines[1]["prev_hash"], lines[0]["hash"]);
    assert_eq!(lines[1]["decision"], "confirmed_completed");
    assert_eq!(lines[1]["verdict_before"], "possible_duplicate");
}

#[test]
fn decision_needs_a_note_reviewer_and_known_execution() {
    let (d, _) = copy_fixture(J);
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R1",
            J,
            "--decision",
            "escalated",
            "--note",
            "  ",
        ],
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R1",
            J,
            "--decision",
            "escalated",
            "--note",
            "n",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--reviewer"), "{}", stderr(&o));
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_NOPE",
            J,
            "--decision",
            "escalated",
            "--note",
            "n",
            "--reviewer",
            "a",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    // A completed, delivered execution does not wait for review.
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R2",
            J,
            "--decision",
            "escalated",
            "--note",
            "n",
            "--reviewer",
            "a",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("does not wait for review"),
        "{}",
        stderr(&o)
    );
    assert!(!d.path().join(case::DEFAULT_FILE_NAME).exists());
}

#[test]
fn the_sample_has_no_case_file_unless_asked() {
    let d = tempfile::tempdir().unwrap();
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_01J4K8J7DX7V",
            "--decision",
            "confirmed_completed",
            "--note",
            "n",
            "--reviewer",
            "a",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--case FILE"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn read_only_mode_writes_nothing() {
    let (d, _) = copy_fixture(J);
    let o = run(
        d.path(),
        &[
            "--read-only",
            "review",
            "decide",
            "act_R1",
            J,
            "--decision",
            "escalated",
            "--note",
            "n",
            "--reviewer",
            "a",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("read-only"));
    let o = run(
        d.path(),
        &[
            "--read-only",
            "export",
            J,
            "--all",
            "--format",
            "json",
            "-o",
            "out.json",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    let o = run(
        d.path(),
        &[
            "--read-only",
            "review",
            "export",
            J,
            "-o",
            "decisions.jsonl",
        ],
    );
    assert_eq!(o.status.code(), Some(1));
    // Printing still works.
    let o = run(
        d.path(),
        &["--read-only", "export", J, "--all", "--format", "json"],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let names: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, vec![J.to_string()]);
}

#[test]
fn a_read_only_folder_is_said_clearly() {
    use std::os::unix::fs::PermissionsExt;
    let (d, _) = copy_fixture(J);
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o555)).unwrap();
    let o = decide(d.path(), "escalated", "n", "a");
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(e.contains("read-only") && e.contains("--case FILE"), "{e}");
    assert!(!d.path().join(case::DEFAULT_FILE_NAME).exists());
}

#[test]
fn a_tampered_case_file_is_detected() {
    let (d, _) = copy_fixture(J);
    for (decision, who) in [("escalated", "bob"), ("confirmed_completed", "alice")] {
        let o = decide(d.path(), decision, "audit log checked", who);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let case_path = d.path().join(case::DEFAULT_FILE_NAME);
    // `retrace verify` checks the case file beside the journal too.
    let o = run(d.path(), &["verify", J]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("OK          retrace-case.sqlite (case file)")
            && stdout(&o).contains("intact: 2 entries"),
        "{}",
        stdout(&o)
    );
    // Someone rewrites alice's decision around the triggers.
    let conn = rusqlite::Connection::open(&case_path).unwrap();
    conn.execute_batch(
        "DROP TRIGGER entries_append_only_update;
         UPDATE entries SET payload = replace(payload, 'confirmed_completed', 'confirmed_not_executed') WHERE seq = 2;",
    )
    .unwrap();
    drop(conn);

    let v = case::verify(&case_path).unwrap();
    assert!(!v.append_only_guards);
    match &v.chain.status {
        ChainStatus::Broken { failure, .. } => {
            assert_eq!(
                (failure.line, failure.kind, v.chain.entries()),
                (2, FailureKind::ChangedLine, 1)
            );
        }
        s => panic!("tampering not detected: {s:?}"),
    }
    let o = run(d.path(), &["verify", J]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("BROKEN      retrace-case.sqlite (case file)")
            && stdout(&o).contains("broken at entry 2 (changed_line)")
            && stdout(&o).contains("triggers that refuse UPDATE and DELETE are missing"),
        "{}",
        stdout(&o)
    );
    let o = run(d.path(), &["verify", J, "--json"]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[1]["case_file"]["chain"]["failure"]["line"], 2, "{v:#}");
    // Every run says so, and only the verified entries count: the forged
    // decision does not turn the group into safe_retry.
    let o = run(d.path(), &["groups", J, "--json"]);
    assert!(
        stderr(&o).contains("chain broken at entry 2"),
        "{}",
        stderr(&o)
    );
    assert_eq!(json(&o)[0]["verdict"], "possible_duplicate");
    // A broken chain is never extended, nor exported to a gateway.
    let o = decide(d.path(), "escalated", "n", "a");
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = run(d.path(), &["review", "export", J]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).is_empty());
}

/// Starts `n` `retrace review decide` processes at once in `dir` and
/// returns their outputs.
/// Deleting the latest decision leaves a valid chain (a cut tail), so the
/// append-only triggers are what guards the tail: a case file without them
/// does not verify. (It once verified "intact" with only a note, and the
/// verdict quietly went back to what it was before the decision.)
#[test]
fn a_case_file_whose_latest_decision_was_deleted_does_not_verify() {
    let (d, _) = copy_fixture(J);
    for (decision, who) in [("escalated", "bob"), ("confirmed_completed", "alice")] {
        let o = decide(d.path(), decision, "checked", who);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let case_path = d.path().join(case::DEFAULT_FILE_NAME);
    let conn = rusqlite::Connection::open(&case_path).unwrap();
    conn.execute_batch(
        "DROP TRIGGER entries_append_only_delete;
         DELETE FROM entries WHERE seq = 2;",
    )
    .unwrap();
    drop(conn);
    let v = case::verify(&case_path).unwrap();
    assert!(!v.chain.is_intact() && !v.append_only_guards && !v.is_intact());
    let o = run(d.path(), &["verify", J]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let out = stdout(&o);
    assert!(
        out.contains("BROKEN      retrace-case.sqlite (case file)")
            && out.contains("(guards_removed)")
            && out.contains("latest entries may have been deleted"),
        "{out}"
    );
    // Every view says so, and nothing extends the file.
    let o = run(d.path(), &["groups", J]);
    assert!(stderr(&o).contains("guards_removed"), "{}", stderr(&o));
    let o = decide(d.path(), "confirmed_completed", "n", "c");
    assert_ne!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = case::verify(&case_path).unwrap();
    assert!(
        !v.append_only_guards,
        "the refused decision recreated the triggers"
    );
}

/// Guards are checked by their definition, not only their names, and a case
/// file stays a case file with an extra table in it (both once slipped by:
/// a do-nothing trigger of the same name verified OK, and an added `events`
/// table made `verify` read the case file as an empty journal, exit 0).
#[test]
fn a_harmless_trigger_of_the_same_name_is_no_guard() {
    let (d, _) = copy_fixture(J);
    for who in ["bob", "alice"] {
        let o = decide(d.path(), "escalated", "n", who);
        assert!(o.status.success() || who == "alice", "{}", stderr(&o));
    }
    let case_path = d.path().join(case::DEFAULT_FILE_NAME);
    let conn = rusqlite::Connection::open(&case_path).unwrap();
    conn.execute_batch(
        "DROP TRIGGER entries_append_only_delete;
         CREATE TRIGGER entries_append_only_delete BEFORE DELETE ON entries WHEN 0 BEGIN SELECT 1; END;
         CREATE TABLE events (x);",
    )
    .unwrap();
    drop(conn);
    assert!(case::is_case_file(&case_path));
    let v = case::verify(&case_path).unwrap();
    assert!(!v.append_only_guards && !v.is_intact(), "{v:?}");
    for args in [vec!["verify", J], vec!["verify", case::DEFAULT_FILE_NAME]] {
        let o = run(d.path(), &args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stdout(&o));
        assert!(stdout(&o).contains("(guards_removed)"), "{}", stdout(&o));
    }
    // Nothing extends it, with the default path or with --case.
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R1",
            J,
            "--decision",
            "confirmed_completed",
            "--note",
            "n",
            "--reviewer",
            "c",
            "--case",
            case::DEFAULT_FILE_NAME,
        ],
    );
    assert_ne!(o.status.code(), Some(0), "{}", stdout(&o));
    let conn = rusqlite::Connection::open(&case_path).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
        .unwrap();
    assert!(n <= 2, "{n} entries");
}

/// A case file named among the journals is verified as a case file, once
/// (it was once read as a journal and reported unreadable, exit 2).
#[test]
fn a_case_file_given_to_verify_is_verified_as_one() {
    let (d, _) = copy_fixture(J);
    let o = decide(d.path(), "escalated", "n", "a");
    assert!(o.status.success(), "{}", stderr(&o));
    for args in [
        vec!["verify", J, case::DEFAULT_FILE_NAME],
        vec!["verify", case::DEFAULT_FILE_NAME],
    ] {
        let o = run(d.path(), &args);
        let out = stdout(&o);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {out}");
        assert_eq!(out.matches("(case file)").count(), 1, "{args:?}: {out}");
        assert!(!out.contains("UNREADABLE"), "{args:?}: {out}");
    }
}

fn decide_at_once(dir: &std::path::Path, n: usize, decision: &str) -> Vec<std::process::Output> {
    let children: Vec<_> = (0..n)
        .map(|i| {
            std::process::Command::new(BIN)
                .args([
                    "review",
                    "decide",
                    "act_R1",
                    "pending-retry.jsonl",
                    "--decision",
                    decision,
                    "--note",
                    &format!("reviewer {i} checked the vault"),
                    "--reviewer",
                    &format!("r{i}"),
                ])
                .current_dir(dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap())
        .collect()
}

/// Twenty first decisions at once, while no case file exists: the file is
/// created once, whole, and every escalation is recorded in one chain.
#[test]
fn concurrent_first_decisions_create_one_case_file() {
    for _ in 0..3 {
        let (d, _) = copy_fixture("pending-retry.jsonl");
        let outs = decide_at_once(d.path(), 20, "escalated");
        for o in &outs {
            assert!(o.status.success(), "{}", stderr(o));
        }
        let v = retrace::review::case::verify(&d.path().join("retrace-case.sqlite")).unwrap();
        assert!(
            matches!(v.chain.status, ChainStatus::Intact { lines: 20, .. }),
            "{:?}",
            v.chain
        );
        assert!(v.append_only_guards);
    }
}

/// Twenty confirmations at once: one is recorded, the others are refused
/// as already decided (exit 2), saying what the reviewer can do.
#[test]
fn concurrent_confirmations_record_exactly_one() {
    let (d, _) = copy_fixture("pending-retry.jsonl");
    let outs = decide_at_once(d.path(), 20, "confirmed_completed");
    let ok = outs.iter().filter(|o| o.status.success()).count();
    assert_eq!(ok, 1, "{:?}", outs.iter().map(stderr).collect::<Vec<_>>());
    for o in outs.iter().filter(|o| !o.status.success()) {
        assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
        let e = stderr(o);
        assert!(e.contains("was already decided confirmed_completed"), "{e}");
        assert!(e.contains("another case file (--case FILE)"), "{e}");
    }
    let c = retrace::review::CaseFile::open(
        &d.path().join("retrace-case.sqlite"),
        retrace::review::Access::ReadOnly,
    )
    .unwrap();
    let (decisions, chain) = c.decisions().unwrap();
    assert!(chain.is_intact());
    assert_eq!(decisions.len(), 1);
}

/// Before the first decision there is no case file: exporting decisions
/// exports none, and says so, with exit 0.
#[test]
fn review_export_without_a_case_file_exports_nothing() {
    let (d, _) = copy_fixture(J);
    let o = run(d.path(), &["review", "export", J]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(o.stdout.is_empty());
    assert!(
        stderr(&o).contains("0 decisions exported"),
        "{}",
        stderr(&o)
    );
    let o = run(d.path(), &["review", "export", J, "-o", "decisions.jsonl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read_to_string(d.path().join("decisions.jsonl")).unwrap(),
        ""
    );
    assert!(!d.path().join(case::DEFAULT_FILE_NAME).exists());
    // The bundled sample has none unless --case is given.
    let o = run(d.path(), &["review", "export"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("--case FILE"), "{}", stderr(&o));
}

/// A decision recorded on a folder read with `-r` goes in that folder's
/// case file, not in the subfolder of its first journal file (where the
/// next `review list` of the folder did not look), so that reading the
/// folder again the same way finds it.
#[test]
fn a_folder_read_recursively_keeps_its_case_file_in_the_folder_named() {
    let d = tempfile::tempdir().unwrap();
    let incident = d.path().join("incident");
    for sub in ["a-first", "b-second"] {
        std::fs::create_dir_all(incident.join(sub)).unwrap();
    }
    std::fs::copy(fixture(J), incident.join("b-second").join(J)).unwrap();
    std::fs::copy(
        fixture("mcp-acp/operations.jsonl"),
        incident.join("a-first/operations.jsonl"),
    )
    .unwrap();
    let o = run(
        d.path(),
        &[
            "review",
            "decide",
            "act_R1",
            "-r",
            "incident",
            "--decision",
            "confirmed_completed",
            "--note",
            "the vault shows the rotation",
            "--reviewer",
            "alice",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        incident.join(case::DEFAULT_FILE_NAME).exists(),
        "{}",
        stdout(&o)
    );
    assert!(
        !incident
            .join("a-first")
            .join(case::DEFAULT_FILE_NAME)
            .exists()
    );
    // Read again the same way, the decision applies.
    let q = json(&run(
        d.path(),
        &["review", "list", "-r", "incident", "--json"],
    ));
    assert!(
        q.as_array()
            .unwrap()
            .iter()
            .all(|it| it["execution_id"] != "act_R1"),
        "{q:#}"
    );
}

/// A reviewer who settled two executions of one group is named once among
/// the group's flags (`reviewed:alice,reviewed:alice` before).
#[test]
fn a_reviewer_is_flagged_once_per_group() {
    let d = tempfile::tempdir().unwrap();
    // The fixture without its chain, both executions' outcomes unknown.
    let text = std::fs::read_to_string(fixture(J)).unwrap();
    let lines: Vec<String> = text
        .lines()
        .filter_map(|l| {
            let mut v: serde_json::Map<String, Value> = serde_json::from_str(l).unwrap();
            v.remove("prev_hash");
            v.remove("hash");
            if v.get("execution_id").is_some_and(|x| x == "act_R2") {
                match v.get("event").and_then(Value::as_str) {
                    Some("delivered") => return None,
                    Some("outcome") => {
                        v.insert("outcome".into(), "unknown".into());
                        v.remove("target_status");
                        v.remove("result_reference");
                    }
                    _ => {}
                }
            }
            Some(Value::Object(v).to_string())
        })
        .collect();
    std::fs::write(d.path().join(J), lines.join("\n") + "\n").unwrap();
    for x in ["act_R1", "act_R2"] {
        let o = decide_execution(
            d.path(),
            x,
            "confirmed_not_executed",
            "no trace in the vault audit log",
            "alice",
        );
        assert!(o.status.success(), "{x}: {}", stderr(&o));
    }
    let out = stdout(&run(d.path(), &["groups", J, "--all"]));
    assert_eq!(out.matches("reviewed:alice").count(), 1, "{out}");
}

/// A case file an earlier version left beside the first journal file of a
/// folder read with `-r` is still used, with a warning saying where it
/// belongs: its decisions do not vanish.
#[test]
fn a_case_file_left_in_a_subfolder_by_an_earlier_version_is_still_read() {
    let d = tempfile::tempdir().unwrap();
    let sub = d.path().join("incident/sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::copy(fixture(J), sub.join(J)).unwrap();
    // Recorded where earlier versions put it: beside the journal file.
    let o = decide(
        &sub,
        "confirmed_not_executed",
        "no trace in the vault audit log",
        "alice",
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let o = run(d.path(), &["review", "list", "-r", "incident", "--json"]);
    let err = stderr(&o);
    let q: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(q.as_array().unwrap().len(), 0, "{q:#}\n{err}");
    assert!(
        err.contains("where earlier versions kept this folder's"),
        "{err}"
    );
    // verify checks it too.
    let o = run(d.path(), &["verify", "-r", "incident"]);
    let out = stdout(&o);
    assert!(
        out.contains(&format!("sub/{}", case::DEFAULT_FILE_NAME)),
        "{out}"
    );
}
