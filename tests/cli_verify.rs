//! `retrace verify` exit codes and output, and the chain status as it shows
//! in `groups` and `investigate` (docs/design.md §6, §7).

use assert_cmd::Command;
use retrace::journal::NativeChainWriter;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/sample-journals/deploy-release-incident/activity.jsonl"
);

/// The bundled sample incident's activity, chained.
fn chained_sample(dir: &Path) -> (PathBuf, Vec<String>) {
    let text = std::fs::read_to_string(SAMPLE).unwrap();
    let mut w = NativeChainWriter::new(Vec::new());
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            w.append(serde_json::from_str::<Map<String, Value>>(l).unwrap())
                .unwrap()
        })
        .collect();
    let path = dir.join("activity.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    (path, lines)
}

fn retrace() -> Command {
    Command::cargo_bin("retrace").unwrap()
}

#[test]
fn verify_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut lines) = chained_sample(dir.path());
    let out = retrace().arg("verify").arg(&path).assert().code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("chain intact (native, 20 line(s))"), "{text}");

    lines[9] = lines[9].replace("stream closed", "stream ended");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = retrace().arg("verify").arg(&path).assert().code(1);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("BROKEN"), "{text}");
    assert!(text.contains("at line 10 seq 10: changed line"), "{text}");

    retrace()
        .arg("verify")
        .arg(&path)
        .arg(dir.path().join("missing.jsonl"))
        .assert()
        .code(2);
}

#[test]
fn verify_json_names_rule_and_failure() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut lines) = chained_sample(dir.path());
    lines.remove(4);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let out = retrace()
        .args(["verify", "--json"])
        .arg(&path)
        .assert()
        .code(1);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let c = &v[0]["chain"];
    assert_eq!(c["status"], "broken");
    assert_eq!(c["rule"], "native");
    assert_eq!(c["failure"]["kind"], "deleted_line");
    assert_eq!(c["failure"]["line"], 5);
    assert_eq!(c["failure"]["seq"], 6);
    assert_eq!(c["lines_checked"], 5);
}

#[test]
fn evidence_after_a_break_is_unverified() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut lines) = chained_sample(dir.path());
    // Break the chain at line 9: an edited link.
    let mut m: Map<String, Value> = serde_json::from_str(&lines[8]).unwrap();
    m.insert("prev_hash".into(), Value::String("ab".repeat(32)));
    lines[8] = serde_json::to_string(&m).unwrap();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();

    let out = retrace()
        .args(["groups", "--json"])
        .arg(&path)
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("chain BROKEN (native) at line 9"), "{err}");
    assert!(
        err.contains("evidence from line 8 on is unverified"),
        "{err}"
    );
    let groups: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let id = groups[0]["group_id"].as_str().unwrap().to_string();

    let out = retrace()
        .args(["investigate", "--json", "--group", &id])
        .arg(&path)
        .assert()
        .success();
    let d: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let mut seen = (0, 0);
    for q in d["questions"].as_array().unwrap() {
        for e in q["evidence"].as_array().unwrap() {
            let line = e["line"].as_u64().unwrap();
            let mark = e["chain"].as_str().unwrap();
            // A link that does not match puts both lines in doubt: line 8
            // may have been rewritten with a recomputed hash of its own.
            if line < 8 {
                assert_eq!(mark, "verified", "line {line}");
                seen.0 += 1;
            } else {
                assert_eq!(mark, "unverified", "line {line}");
                seen.1 += 1;
            }
        }
    }
    assert!(seen.0 > 0 && seen.1 > 0, "{seen:?}");

    let out = retrace()
        .args(["investigate", "--group", &id])
        .arg(&path)
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("[UNVERIFIED"), "{text}");
    assert!(text.contains("chain BROKEN"), "{text}");
}

#[test]
fn groups_text_starts_with_the_chain_header() {
    let dir = tempfile::tempdir().unwrap();
    let (path, _) = chained_sample(dir.path());
    let out = retrace().arg("groups").arg(&path).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let first = text.lines().next().unwrap();
    assert!(
        first.ends_with("chain intact (native, 20 line(s))"),
        "{text}"
    );
}

const SALLYPORT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sallyport");

#[test]
fn sallyport_keys_from_the_command_line() {
    let journal = format!("{SALLYPORT}/audit-000001.jsonl");
    let out = retrace()
        .args([
            "verify",
            "--signer-key",
            &format!("{SALLYPORT}/signer.pub.hex"),
        ])
        .arg(&journal)
        .assert()
        .code(0);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("6 signature(s) verified"), "{text}");

    let out = retrace()
        .args(["groups", "--all", "--json", "--audit-identity"])
        .arg(format!("{SALLYPORT}/audit-identity.hex"))
        .arg(&journal)
        .assert()
        .success();
    let groups: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let tools: Vec<&str> = groups
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["tool"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"github.create_issue"), "{tools:?}");

    // A key file that holds no P-256 point is unreadable input.
    retrace()
        .args([
            "verify",
            "--signer-key",
            &format!("{SALLYPORT}/audit-identity.hex"),
        ])
        .arg(&journal)
        .assert()
        .code(2);
}

#[test]
fn unknown_format_lists_the_formats_and_input_format_overrides() {
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join("odd.jsonl");
    std::fs::write(&odd, "{\"hello\":1}\n").unwrap();
    let out = retrace().arg("verify").arg(&odd).assert().code(2);
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    for f in retrace::journal::Format::ALL {
        assert!(text.contains(f.name()), "{f}: {text}");
    }
    // Forced to a format its lines are not: nothing readable.
    let ops = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/mcp-acp/operations.jsonl"
    );
    retrace()
        .args(["verify", "--input-format", "native", ops])
        .assert()
        .code(2);
    let out = retrace()
        .args(["verify", "--json", "--input-format", "mcp-acp", ops])
        .assert()
        .code(0);
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(v[0]["format"], "mcp-acp");
    retrace()
        .args(["verify", "--input-format", "csv", ops])
        .assert()
        .code(2);
}

#[test]
fn export_reports_the_verified_chain_of_its_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let (path, mut lines) = chained_sample(dir.path());
    let export = |path: &std::path::Path| -> Value {
        let out = retrace()
            .args(["export", "--all", "--format", "json"])
            .arg(path)
            .assert()
            .success();
        serde_json::from_slice(&out.get_output().stdout).unwrap()
    };
    let statuses = |v: &Value| -> Vec<String> {
        v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["chain"].as_array().unwrap().clone())
            .filter(|c| c["kind"] == "journal")
            .map(|c| c["status"].as_str().unwrap().to_string())
            .collect()
    };
    let intact = statuses(&export(&path));
    assert!(
        !intact.is_empty() && intact.iter().all(|s| s == "intact"),
        "{intact:?}"
    );
    let mut m: Map<String, Value> = serde_json::from_str(&lines[8]).unwrap();
    m.insert("prev_hash".into(), Value::String("ab".repeat(32)));
    lines[8] = serde_json::to_string(&m).unwrap();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let broken = statuses(&export(&path));
    assert!(broken.iter().any(|s| s == "broken"), "{broken:?}");
}

/// A journal piped in (`zcat audit.gz | retrace verify /dev/stdin`) was
/// consumed by format detection before the chain check read it: "empty, no
/// chain", exit 0, for a tampered journal. The pipe is read whole first.
#[test]
fn a_piped_journal_is_verified_like_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let (_, mut lines) = chained_sample(dir.path());
    let piped = |lines: &[String]| {
        retrace()
            .args(["verify", "/dev/stdin"])
            .write_stdin(lines.join("\n") + "\n")
            .output()
            .unwrap()
    };
    let out = piped(&lines);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("chain intact"),
        "{out:?}"
    );
    lines[8] = lines[8].replace("\"target_status\":201", "\"target_status\":200");
    let out = piped(&lines);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("BROKEN") && text.contains("changed line"),
        "{text}"
    );
}

/// `verify` reads the case file beside the journals for their anchors.
/// It read it through a read-only connection, which in WAL mode makes the
/// `-wal` and `-shm` files and cannot remove them: a folder verified was
/// left with two new files. Reading leaves the folder as it was.
#[test]
fn verify_leaves_no_file_beside_the_case_file() {
    let dir = tempfile::tempdir().unwrap();
    let src = Path::new(SAMPLE).parent().unwrap();
    for f in ["activity.jsonl", "sessions.jsonl"] {
        std::fs::copy(src.join(f), dir.path().join(f)).unwrap();
    }
    retrace()
        .args([
            "review",
            "decide",
            "--decision",
            "escalated",
            "--note",
            "checked",
            "--reviewer",
            "alice",
            "act_01J4K8J7DX7V",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let names = || {
        let mut n: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    };
    let before = names();
    assert!(
        before.contains(&"retrace-case.sqlite".to_string()),
        "{before:?}"
    );
    retrace().arg("verify").arg(dir.path()).assert().code(0);
    assert_eq!(names(), before);
}
