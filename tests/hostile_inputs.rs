//! Inputs an adversarial tester used to break retrace; each test would have
//! caught the bug it names.

mod common;
use assert_cmd::Command;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

fn retrace() -> Command {
    Command::cargo_bin("retrace").unwrap()
}

fn scenario(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample-journals/scenarios")
        .join(name)
}

fn write(dir: &Path, name: &str, lines: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, lines.join("\n") + "\n").unwrap();
    p
}

fn lines_of(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn verify(p: &Path) -> (i32, String) {
    let out = retrace().arg("verify").arg(p).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

/// One unchained line before a chain once made retrace treat the whole
/// journal as unchained (and accept a tampered outcome after it).
#[test]
fn a_line_before_the_chain_does_not_switch_verification_off() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = lines_of(&scenario("possible-duplicate-ssh.jsonl"));
    l[4] = l[4].replace(r#""outcome":"unknown""#, r#""outcome":"not_executed""#);
    l.insert(0, r#"{"kind":"session","session_id":"ses_note"}"#.into());
    let p = write(dir.path(), "prepended.jsonl", &l);
    let (code, text) = verify(&p);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("BROKEN") && text.contains("at line 1"),
        "{text}"
    );

    // Stripping the first line's chain fields is a break too.
    let mut l = lines_of(&scenario("possible-duplicate-ssh.jsonl"));
    let mut m: Map<String, Value> = serde_json::from_str(&l[0]).unwrap();
    m.remove("hash");
    m.remove("prev_hash");
    l[0] = serde_json::to_string(&m).unwrap();
    let p = write(dir.path(), "stripped.jsonl", &l);
    let (code, text) = verify(&p);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("at line 1"), "{text}");
}

/// A rewritten line with a recomputed hash breaks the link of the next
/// line; the rewritten line itself must not be shown as verified.
#[test]
fn the_line_before_a_broken_link_is_unverified() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = lines_of(&scenario("possible-duplicate-ssh.jsonl"));
    let mut m: Map<String, Value> = serde_json::from_str(&l[4]).unwrap();
    m.insert("outcome".into(), Value::String("not_executed".into()));
    let prev = m.remove("prev_hash").unwrap();
    m.remove("hash");
    let hash = retrace::journal::native_chain_hash(prev.as_str().unwrap(), &m);
    m.insert("prev_hash".into(), prev);
    m.insert("hash".into(), Value::String(hash));
    l[4] = serde_json::to_string(&m).unwrap();
    let p = write(dir.path(), "rehashed.jsonl", &l);
    let (code, text) = verify(&p);
    assert_eq!(code, 1);
    assert!(
        text.contains("at line 6") && text.contains("evidence from line 5 on is unverified"),
        "{text}"
    );

    let g: Value = serde_json::from_slice(
        &retrace()
            .args(["groups", "--all", "--json"])
            .arg(&p)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let id = g[0]["group_id"].as_str().unwrap().to_string();
    let d: Value = serde_json::from_slice(
        &retrace()
            .args(["investigate", "--json", "--group", &id])
            .arg(&p)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let q3 = &d["questions"][2]["evidence"];
    let line5 = q3
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["line"] == 5)
        .unwrap();
    assert_eq!(line5["chain"], "unverified", "{d:#}");
}

/// Format detection once consumed the start of a pipe.
#[test]
fn a_piped_journal_is_read_whole() {
    let text = std::fs::read_to_string(scenario("safe-retry.jsonl")).unwrap();
    let out = retrace()
        .args(["groups", "--all", "--json", "/dev/stdin"])
        .write_stdin(text)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["calls"], 2, "{v:#}");
}

/// A few bad lines at the top once hid the journal's format.
#[test]
fn bad_lines_at_the_top_do_not_hide_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = lines_of(&scenario("safe-retry.jsonl"));
    for _ in 0..4 {
        l.insert(0, "garbage".into());
    }
    let p = write(dir.path(), "lead.jsonl", &l);
    let out = retrace()
        .args(["groups", "--all", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lead.jsonl:1: not valid JSON"), "{err}");
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["calls"], 2);
}

/// A UTF-8 byte order mark once cost the first record.
#[test]
fn a_byte_order_mark_keeps_the_first_record() {
    let dir = tempfile::tempdir().unwrap();
    let l = lines_of(&scenario("safe-retry.jsonl"));
    let p = dir.path().join("bom.jsonl");
    std::fs::write(&p, format!("\u{feff}{}\n", l.join("\n"))).unwrap();
    let (code, text) = verify(&p);
    assert_eq!(code, 0, "{text}");
    let out = retrace()
        .args(["groups", "--all"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("bom.jsonl:1"));
}

/// `4.0` is the integer 4 to JSON and to RFC 8785; it once made a bad line.
#[test]
fn whole_numbers_with_a_fraction_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let l: Vec<String> = lines_of(&scenario("safe-retry.jsonl"))
        .into_iter()
        .map(|x| {
            x.replace(r#""seq":4,"#, r#""seq":4.0,"#)
                .replace(r#""target_status":200"#, r#""target_status":200.0"#)
        })
        .collect();
    let p = write(dir.path(), "floats.jsonl", &l);
    let (code, text) = verify(&p);
    assert_eq!(code, 0, "{text}");
}

/// A huge duration once panicked three readers (exit 101).
#[test]
fn an_absurd_duration_is_a_bad_line_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let good = r#"{"id":"a0","timestamp":"2026-07-22T14:00:00Z","previousHash":"genesis","method":"tools/call","toolName":"t","durationMs":5,"success":true}"#;
    let bad = r#"{"id":"a1","timestamp":"2026-07-22T14:00:00Z","previousHash":"x","method":"tools/call","toolName":"t","durationMs":9000000000000000,"success":true}"#;
    let p = write(dir.path(), "audit.jsonl", &[good.into(), bad.into()]);
    let out = retrace()
        .args(["groups", "--all"])
        .arg(&p)
        .output()
        .unwrap();
    assert_ne!(out.status.code(), Some(101));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("audit.jsonl:2: field `durationMs`"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// JSON output once passed C1 controls and bidirectional overrides raw.
#[test]
fn json_output_escapes_terminal_controls() {
    let dir = tempfile::tempdir().unwrap();
    let l: Vec<String> = lines_of(&scenario("clean.jsonl"))
        .into_iter()
        .map(|x| x.replace("list_releases", "list\u{9b}31m\u{202e}releases\u{200b}"))
        .collect();
    let p = write(dir.path(), "c1.jsonl", &l);
    let out = retrace()
        .args(["groups", "--all", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}') && !text.contains('\u{200b}'));
    assert!(
        text.contains(r"list\u009b31m\u202ereleases\u200b"),
        "{text}"
    );
}

/// A journal given twice once counted every event twice.
#[test]
fn a_journal_given_twice_is_read_once() {
    let p = scenario("safe-retry.jsonl");
    let out = retrace()
        .args(["groups", "--all", "--json"])
        .arg(&p)
        .arg(&p)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["calls"], 2);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is given more than once"));
}

/// File names are journal-controlled text too.
#[test]
fn file_names_in_errors_are_escaped() {
    let out = retrace()
        .arg("groups")
        .arg("nonexist\u{1b}]0;TITLE\u{7}.jsonl")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        !err.contains('\u{1b}') && err.contains(r"\x1b]0;TITLE\x07"),
        "{err:?}"
    );
}

/// The raw view must not show a line that changed after it was analysed.
#[test]
fn raw_lines_of_a_changed_file_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("j.jsonl");
    std::fs::copy(scenario("clean.jsonl"), &p).unwrap();
    let inv = retrace::query::Investigation::open(
        &retrace::query::Setup::new(vec![p.clone()]),
        &mut |_| {},
    )
    .unwrap();
    let x = inv
        .execution(inv.execution_id(retrace::query::ExecIdx::new(0)))
        .unwrap();
    let at = inv.events(x)[0].evidence.source;
    assert!(inv.raw_line(at).is_ok());
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut text = std::fs::read_to_string(&p).unwrap();
    text.push('\n');
    std::fs::write(&p, text).unwrap();
    let e = inv.raw_line(at).unwrap_err().to_string();
    assert!(e.contains("changed on disk"), "{e}");
}

/// The JSON postmortem once passed C1 controls and bidi overrides raw.
#[test]
fn json_export_escapes_terminal_controls() {
    let dir = tempfile::tempdir().unwrap();
    let l: Vec<String> = lines_of(&scenario("safe-retry.jsonl"))
        .into_iter()
        .map(|x| x.replace("post_message", "post\u{9b}31m\u{202e}message"))
        .collect();
    let p = write(dir.path(), "c1.jsonl", &l);
    let out = retrace()
        .args(["export", "--all", "--format", "json"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        !text.contains('\u{9b}') && !text.contains('\u{202e}'),
        "{text}"
    );
    serde_json::from_str::<Value>(&text).unwrap();
}

/// Lines are parsed on several threads in batches; the chain must still be
/// followed in journal order across batch and thread boundaries.
#[test]
fn a_break_deep_in_a_long_chained_journal_is_placed_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = retrace::journal::NativeChainWriter::new(Vec::new());
    let mut lines = Vec::new();
    for i in 0..20_000u32 {
        let x = format!("x{}", i / 4);
        let at = format!(
            "2026-09-01T10:{:02}:{:02}.{:03}Z",
            (i / 3600) % 60,
            (i / 60) % 60,
            i % 1000
        );
        let v = match i % 4 {
            0 => {
                serde_json::json!({"kind":"event","seq":i+1,"at":at,"execution_id":x,"event":"accepted",
                "call":{"session_id":"s1"},"action":{"actor":"a","tool":"t","arguments":{"n":i/4},"intent_scope":"run:1"}})
            }
            1 => {
                serde_json::json!({"kind":"event","seq":i+1,"at":at,"execution_id":x,"event":"dispatched"})
            }
            2 => {
                serde_json::json!({"kind":"event","seq":i+1,"at":at,"execution_id":x,"event":"outcome","outcome":"success"})
            }
            _ => {
                serde_json::json!({"kind":"event","seq":i+1,"at":at,"execution_id":x,"event":"delivered"})
            }
        };
        lines.push(w.append(v.as_object().cloned().unwrap()).unwrap());
    }
    let p = write(dir.path(), "long.jsonl", &lines);
    assert_eq!(verify(&p).0, 0);
    let out = retrace()
        .args(["groups", "--all", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 5000);

    lines[15_322] = lines[15_322].replace(r#""outcome":"success""#, r#""outcome":"failure""#);
    let p = write(dir.path(), "long.jsonl", &lines);
    let (code, text) = verify(&p);
    assert_eq!(code, 1);
    assert!(text.contains("at line 15323"), "{text}");
}

/// An empty journal (a gateway just started, a log just rotated) loads as an
/// empty journal and does not stop the others; it once failed the whole run
/// with "unknown journal format".
#[test]
fn an_empty_journal_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    let blank = dir.path().join("blank.jsonl");
    std::fs::write(&blank, "\n  \n\n").unwrap();
    let bom = dir.path().join("bom.jsonl");
    std::fs::write(&bom, "\u{feff}\n").unwrap();
    let o = retrace()
        .args(["groups", "--all", "--json"])
        .arg(&empty)
        .arg(&blank)
        .arg(&bom)
        .arg(scenario("pending-verification.jsonl"))
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        v.as_array()
            .unwrap()
            .iter()
            .any(|g| g["verdict"] == "pending_verification")
    );
    let o = retrace().arg("groups").arg(&empty).output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("No tool call in the journals"));
    let (code, out) = verify(&empty);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("the journal is empty"), "{out}");
}

/// A native journal of two executions of one intent: the first refused
/// with HTTP 400 (`extra` holds fields on the first outcome, on both
/// accepted lines), the second a success.
fn refused_then_done(first_outcome: &str, accepted: &str) -> Vec<String> {
    let action = r#""action":{"actor":"signed-process:com.example.agent","tool":"post_message","channel":"http","target":"chat.internal.example/api/messages","method":"POST","arguments":{"channel":"ops","text":"done"},"intent_scope":"run:r1"}"#;
    let mut l = Vec::new();
    for (x, n, t, outcome, extra) in [
        (
            "act_1",
            1,
            "10:00:00",
            r#""outcome":"failure","target_status":400"#,
            first_outcome,
        ),
        (
            "act_2",
            2,
            "10:00:05",
            r#""outcome":"success","target_status":200"#,
            "",
        ),
    ] {
        let ev = |s: u32, at: &str, rest: &str| {
            format!(
                r#"{{"kind":"event","seq":{s},"at":"2026-09-01T{at}Z","execution_id":"{x}",{rest}}}"#
            )
        };
        let s = (n - 1) * 4;
        l.push(ev(
            s + 1,
            &format!("{t}.000"),
            &format!(r#""event":"accepted","call":{{"call_id":"c{n}","jsonrpc_id":{n}}},{action}{accepted}"#),
        ));
        l.push(ev(s + 2, &format!("{t}.100"), r#""event":"dispatched""#));
        l.push(ev(
            s + 3,
            &format!("{t}.200"),
            &format!(r#""event":"outcome",{outcome}{extra}"#),
        ));
        l.push(ev(s + 4, &format!("{t}.300"), r#""event":"delivered""#));
    }
    l
}

/// Runs retrace in `dir` on `j.jsonl` there, so that two journals in two
/// folders give byte-identical output.
fn run_in(dir: &Path, args: &[&str]) -> Vec<u8> {
    let o = retrace().current_dir(dir).args(args).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// Reader facts (pairing, arguments logged, inferred events) are typed
/// fields only readers set. A native journal once chose its own verdict by
/// writing them as fields: `"pairing_uncertain": true` on a refusal and
/// `"arguments_logged": "no: x"` turned a `safe_retry` into a
/// `possible_duplicate` with `arguments_not_logged`. Now they are unknown
/// fields like any other: shown, never read.
#[test]
fn a_journal_cannot_forge_reader_facts() {
    let plain = tempfile::tempdir().unwrap();
    let forged = tempfile::tempdir().unwrap();
    write(plain.path(), "j.jsonl", &refused_then_done("", ""));
    write(
        forged.path(),
        "j.jsonl",
        &refused_then_done(
            r#","pairing_uncertain":true,"pairing":"3 requests were in flight","inferred":"placed at the answer's time""#,
            r#","arguments_logged":"no: x","inferred":"from the log""#,
        ),
    );
    let groups = ["groups", "--all", "--json", "j.jsonl"];
    let expected = run_in(plain.path(), &groups);
    let g: Value = serde_json::from_slice(&expected).unwrap();
    assert_eq!(g[0]["verdict"], "safe_retry", "{g:#}");
    assert_eq!(run_in(forged.path(), &groups), expected);

    let id = g[0]["group_id"].as_str().unwrap();
    let investigate = ["investigate", "j.jsonl", "--group", id, "--json"];
    let plain_detail: Value = serde_json::from_slice(&run_in(plain.path(), &investigate)).unwrap();
    let forged_detail: Value =
        serde_json::from_slice(&run_in(forged.path(), &investigate)).unwrap();
    for key in ["verdict", "findings", "questions", "reason"] {
        assert_eq!(forged_detail[key], plain_detail[key], "{key}");
    }
    assert!(
        !forged_detail["findings"]
            .to_string()
            .contains("arguments_not_logged"),
        "{forged_detail:#}"
    );
    // The forged fields are still shown, as unknown fields, and no reader
    // fact comes of them.
    let events: Vec<&Value> = forged_detail["event_log"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|v| v.as_array().unwrap())
        .collect();
    let refusal = events
        .iter()
        .find(|e| e["event"] == "outcome" && e["summary"].as_str().unwrap().contains("400"))
        .unwrap();
    assert_eq!(refusal["extra"]["pairing_uncertain"], true, "{refusal:#}");
    assert_eq!(refusal["extra"]["pairing"], "3 requests were in flight");
    assert!(
        !refusal["summary"].as_str().unwrap().contains("paired"),
        "{refusal:#}"
    );
    let accepted: Vec<&&Value> = events.iter().filter(|e| e["event"] == "accepted").collect();
    assert_eq!(accepted.len(), 2);
    for e in accepted {
        assert_eq!(e["extra"]["arguments_logged"], "no: x", "{e:#}");
        assert_eq!(e["extra"]["inferred"], "from the log");
    }
    assert!(
        events.iter().all(|e| e.get("facts").is_none()),
        "{events:#?}"
    );
}

/// Whether `text` holds nothing a terminal would run: no character that
/// `sanitize::is_unsafe` flags, but the newlines between lines.
fn assert_terminal_safe(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c != '\n' && retrace::sanitize::is_unsafe(c))
        .collect();
    assert!(bad.is_empty(), "{what} holds {bad:?} raw:\n{text}");
}

/// A scenario with its chain fields taken off, so that lines can be edited.
fn unchained(name: &str) -> Vec<String> {
    lines_of(&scenario(name))
        .into_iter()
        .map(|l| {
            let mut m: Map<String, Value> = serde_json::from_str(&l).unwrap();
            m.remove("hash");
            m.remove("prev_hash");
            serde_json::to_string(&m).unwrap()
        })
        .collect()
}

/// `review export` once printed C1, bidirectional and zero-width characters
/// from execution ids and reviewer notes raw, on stdout and with `-o`
/// (`review list --json` escaped the same data).
#[test]
fn review_export_escapes_ids_and_notes() {
    let dir = tempfile::tempdir().unwrap();
    let evil = "act_\u{9b}31m\u{202e}\u{200b}ROT";
    let l: Vec<String> = unchained("pending-verification.jsonl")
        .into_iter()
        .map(|x| x.replace("act_ROT1", evil))
        .collect();
    write(dir.path(), "j.jsonl", &l);
    let note = "looked\u{9b}2J\u{202e}\u{200b} at the vault";
    let o = retrace()
        .current_dir(dir.path())
        .args([
            "review",
            "decide",
            evil,
            "j.jsonl",
            "--decision",
            "escalated",
        ])
        .args(["--note", note, "--reviewer", "rev\u{202e}"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_terminal_safe("review decide", &String::from_utf8(o.stdout).unwrap());
    let check = |what: &str, text: &str| {
        assert_terminal_safe(what, text);
        let v: Value = serde_json::from_str(text.trim_end()).unwrap();
        assert_eq!(v["execution_id"], evil, "{what}: the same JSON");
        assert_eq!(v["note"], note);
    };
    let o = retrace()
        .current_dir(dir.path())
        .args(["review", "export", "j.jsonl"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check("review export", &String::from_utf8(o.stdout).unwrap());
    assert_terminal_safe(
        "review export (stderr)",
        &String::from_utf8(o.stderr).unwrap(),
    );
    let o = retrace()
        .current_dir(dir.path())
        .args(["review", "export", "j.jsonl", "-o", "decisions.jsonl"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    check(
        "review export -o",
        &std::fs::read_to_string(dir.path().join("decisions.jsonl")).unwrap(),
    );
}

/// `investigate` once printed an orphan's execution id raw in its
/// `fingerprint orphan:…` line: one `dispatched` event could set the
/// terminal title and clear the screen.
#[test]
fn an_orphan_execution_id_is_escaped_in_investigate() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"kind":"event","seq":1,"at":"2026-09-01T10:00:00Z","execution_id":"\u001b]0;PWNED\u0007\u001b[2J","event":"dispatched"}"#;
    let p = write(dir.path(), "orphan.jsonl", &[line.to_string()]);
    let g: Value = serde_json::from_slice(
        &retrace()
            .args(["groups", "--all", "--json"])
            .arg(&p)
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let id = g[0]["group_id"].as_str().unwrap();
    assert!(g[0]["fingerprint"].as_str().unwrap().starts_with("orphan:"));
    for args in [
        vec!["investigate", "--group", id],
        vec!["groups", "--all"],
        vec!["investigate", "--group", id, "--json"],
    ] {
        let o = retrace().args(&args).arg(&p).output().unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let out = String::from_utf8(o.stdout).unwrap();
        assert_terminal_safe(&format!("{args:?}"), &out);
        assert_terminal_safe(
            &format!("{args:?} (stderr)"),
            &String::from_utf8(o.stderr).unwrap(),
        );
        if args.len() == 3 {
            assert!(out.contains(r"orphan:\x1b]0;PWNED\x07\x1b[2J"), "{out}");
        }
    }
}

/// A journal read as a format it is not once gave `[]` and exit 0: no
/// usable line is bad input (exit 2) naming the file, on every command.
#[test]
fn a_journal_with_no_usable_line_is_an_error_naming_it() {
    let j = scenario("safe-retry.jsonl");
    for format in [
        "mcp-audit",
        "mcp-acp",
        "mcpproxy",
        "gh-aw-mcpg",
        "sallyport",
    ] {
        for cmd in [
            vec!["groups", "--json"],
            vec!["groups", "--all"],
            vec!["verify", "--json"],
            vec!["review", "list", "--json"],
        ] {
            let out = retrace()
                .args(&cmd)
                .args(["--input-format", format])
                .arg(&j)
                .output()
                .unwrap();
            // verify --json reports it in its answer, the others on stderr.
            let err = String::from_utf8_lossy(&out.stderr).into_owned()
                + &String::from_utf8_lossy(&out.stdout);
            assert_eq!(out.status.code(), Some(2), "{format} {cmd:?}: {err}");
            assert!(err.contains("safe-retry.jsonl"), "{format} {cmd:?}: {err}");
            assert_ne!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
        }
    }
}

/// Only the first ten bad lines were named, and `verify --json` gave only a
/// count: `--json` lists every bad line with file, line and reason, and
/// text names the first ones and says how to get all.
#[test]
fn every_bad_line_is_listed_in_verify_json() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = lines_of(&scenario("safe-retry.jsonl"));
    for i in 0..250 {
        l.push(format!("garbage {i}"));
    }
    let p = write(dir.path(), "bad.jsonl", &l);
    let out = retrace()
        .args(["verify", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["bad_lines"], 250, "{v:#}");
    let list = v[0]["bad_line_details"].as_array().unwrap();
    assert_eq!(list.len(), 250);
    let n = l.len() - 250;
    for (i, b) in list.iter().enumerate() {
        assert_eq!(b["line"], n + i + 1, "{b}");
        assert!(b["file"].as_str().unwrap().ends_with("bad.jsonl"));
        assert!(!b["reason"].as_str().unwrap().is_empty());
    }
    let text = verify(&p).1;
    assert!(text.contains(&format!("line {}:", n + 1)), "{text}");
    assert!(
        text.contains("240 more not shown; `retrace verify --json` lists every one"),
        "{text}"
    );
    let out = retrace()
        .args(["groups", "--all"])
        .arg(&p)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("240 more bad line(s) not shown; `retrace verify --json"),
        "{err}"
    );
}

/// `--case FIFO` once hung every command (SQLite waited to open it), and a
/// `--case` through a dangling link made the first decision create a file
/// where the link points: both are refused, exit 1, like `-o FIFO`.
#[cfg(unix)]
#[test]
fn a_case_file_that_is_not_a_regular_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("case.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let dangling = dir.path().join("dangling.sqlite");
    std::os::unix::fs::symlink(dir.path().join("elsewhere/case.sqlite"), &dangling).unwrap();
    let j = scenario("possible-duplicate-ssh.jsonl");
    for (case, what) in [(&fifo, "a FIFO"), (&dangling, "a symbolic link to nothing")] {
        for cmd in [
            vec!["groups"],
            vec!["verify"],
            vec!["review", "list"],
            vec!["review", "export"],
            vec!["export", "--all", "--format", "json", "-o", "-"],
            vec![
                "review",
                "decide",
                "act_MIG1",
                "--decision",
                "escalated",
                "--note",
                "n",
                "--reviewer",
                "r",
            ],
        ] {
            let out = retrace()
                .args(&cmd)
                .arg(&j)
                .arg("--case")
                .arg(case)
                .timeout(std::time::Duration::from_secs(20))
                .output()
                .unwrap();
            let all = String::from_utf8_lossy(&out.stdout).into_owned()
                + &String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what} {cmd:?}: {all}");
            assert!(all.contains(what), "{what} {cmd:?}: {all}");
        }
    }
    assert!(!dir.path().join("elsewhere").exists());
}

/// A case file on a read-only file system made every command fail, even
/// `--read-only`: it stays readable (its decisions apply), and only a new
/// decision fails, saying why. Needs a mount namespace (`unshare -rm`);
/// skipped, saying so, where there is none.
#[cfg(target_os = "linux")]
#[test]
fn a_case_file_on_a_read_only_file_system_stays_readable() {
    let dir = tempfile::tempdir().unwrap();
    let j = dir.path().join("j.jsonl");
    std::fs::copy(scenario("possible-duplicate-ssh.jsonl"), &j).unwrap();
    let case = dir.path().join("case.sqlite");
    let out = retrace()
        .args(["review", "decide", "act_MIG1", "--decision", "escalated"])
        .args(["--note", "ask the DBA", "--reviewer", "bob"])
        .arg(&j)
        .arg("--case")
        .arg(&case)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let ro = dir.path().join("ro");
    std::fs::create_dir(&ro).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("retrace");
    let script = format!(
        r#"set -e
mount -t tmpfs tmpfs "{ro}"
cp "{j}" "{case}" "{ro}/"
mount -o remount,ro "{ro}"
set +e
for cmd in "groups --all" "review list" "review export" "export --all --format json -o -" "verify"; do
  "{bin}" $cmd "{ro}/j.jsonl" --case "{ro}/case.sqlite" >"{dir}/out" 2>"{dir}/err"; echo "rc=$? $cmd: $(grep -c 'bob\|escalated' "{dir}/out")"
done
"{bin}" groups --read-only "{ro}/j.jsonl" --case "{ro}/case.sqlite" >/dev/null 2>"{dir}/err"; echo "rc=$? read-only"
"{bin}" review decide act_MIG1 --decision confirmed_completed --note x --reviewer bob "{ro}/j.jsonl" --case "{ro}/case.sqlite" >/dev/null 2>"{dir}/err"; echo "rc=$? decide: $(grep -o 'cannot be written' "{dir}/err")"
"#,
        ro = ro.display(),
        j = j.display(),
        case = case.display(),
        bin = bin.display(),
        dir = dir.path().display(),
    );
    let out = std::process::Command::new("unshare")
        .args(["-rm", "sh", "-c", &script])
        .output();
    let out = match out {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => o,
        other => {
            // CI has mount namespaces (as root in its container): there a
            // skip is a failure (tests/common/skip.rs).
            common::skip::skip(
                "a_case_file_on_a_read_only_file_system_stays_readable",
                &format!("no mount namespace for a read-only file system: {other:?}"),
            );
            return;
        }
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 7, "{text}");
    for l in &lines[..4] {
        assert!(l.starts_with("rc=0 ") && !l.ends_with(": 0"), "{l}\n{text}");
    }
    assert!(lines[4].starts_with("rc=0 verify"), "{text}");
    assert!(lines[5].starts_with("rc=0 read-only"), "{text}");
    assert!(
        lines[6].starts_with("rc=1 decide: cannot be written"),
        "{text}"
    );
}

/// A first line over 64 KiB (a large tool answer) once gave "unknown
/// journal format": detection reads the whole first line, up to the
/// readers' own limit.
#[test]
fn a_long_first_line_does_not_hide_the_format() {
    let dir = tempfile::tempdir().unwrap();
    let pad = "x".repeat(300 * 1024);
    let padded = |src: &str, field_in: Option<&str>| -> String {
        let mut lines: Vec<String> = src.lines().map(str::to_string).collect();
        let mut m: Map<String, Value> = serde_json::from_str(&lines[0]).unwrap();
        let target = match field_in {
            Some(f) => m.get_mut(f).and_then(Value::as_object_mut).unwrap(),
            None => &mut m,
        };
        target.insert("pad".into(), Value::String(pad.clone()));
        lines[0] = serde_json::to_string(&m).unwrap();
        lines.join("\n") + "\n"
    };
    let gh_aw = [
        r#"{"timestamp":"2026-03-02T09:00:00Z","direction":"OUT","type":"REQUEST","server_id":"github","method":"tools/call","payload":{"jsonrpc":"2.0","method":"tools/call","params":{"name":"get_file","arguments":{"path":"a"}}}}"#,
        r#"{"timestamp":"2026-03-02T09:00:01Z","direction":"IN","type":"RESPONSE","server_id":"github","method":"tools/call","payload":{"jsonrpc":"2.0","result":{"content":[]}}}"#,
    ]
    .join("\n");
    let cases = [
        (
            "native",
            padded(
                &std::fs::read_to_string(scenario("safe-retry.jsonl")).unwrap(),
                None,
            ),
        ),
        (
            "mcpproxy",
            padded(
                &std::fs::read_to_string("tests/fixtures/mcpproxy/activity-export.jsonl").unwrap(),
                Some("metadata"),
            ),
        ),
        ("gh-aw-mcpg", padded(&gh_aw, Some("payload"))),
    ];
    for (format, text) in cases {
        assert!(text.lines().next().unwrap().len() > 300 * 1024);
        let p = dir.path().join(format!("{format}.jsonl"));
        std::fs::write(&p, &text).unwrap();
        let out = retrace()
            .args(["verify", "--json"])
            .arg(&p)
            .output()
            .unwrap();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v[0]["format"], format, "{v:#}");
        let out = retrace()
            .args(["groups", "--all", "--json"])
            .arg(&p)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{format}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let g: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!g.as_array().unwrap().is_empty(), "{format}");
        // Through a pipe too.
        let out = retrace()
            .args(["groups", "--all", "--json", "/dev/stdin"])
            .write_stdin(text)
            .output()
            .unwrap();
        assert!(out.status.success(), "{format} piped");
    }
}

/// Re-chains lines (the native rule), as a forger who recomputes hashes.
fn rechain(lines: &[String]) -> Vec<String> {
    let mut prev = "0".repeat(64);
    lines
        .iter()
        .map(|l| {
            let mut m: Map<String, Value> = serde_json::from_str(l).unwrap();
            m.remove("prev_hash");
            m.remove("hash");
            let h = retrace::journal::native_chain_hash(&prev, &m);
            m.insert("prev_hash".into(), Value::String(prev.clone()));
            m.insert("hash".into(), Value::String(h.clone()));
            prev = h;
            serde_json::to_string(&m).unwrap()
        })
        .collect()
}

/// A line with `"outcome"` twice verified silently: which value counts
/// depends on the JSON reader. verify names the line and key, and every
/// view of the event says AMBIGUOUS.
#[test]
fn a_repeated_key_is_reported_in_verify_and_every_view() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = lines_of(&scenario("possible-duplicate-ssh.jsonl"));
    let before = l[4].clone();
    l[4] = l[4].replacen(
        r#""outcome":"unknown""#,
        r#""outcome":"not_executed","outcome":"unknown""#,
        1,
    );
    assert_ne!(before, l[4]);
    let p = write(dir.path(), "dup.jsonl", &l);
    let (code, text) = verify(&p);
    assert_eq!(code, 0, "the chain itself holds: {text}");
    assert!(
        text.contains("line 5: ambiguous: key `outcome` appears more than once"),
        "{text}"
    );
    let run = |args: &[&str]| {
        String::from_utf8_lossy(&retrace().args(args).arg(&p).output().unwrap().stdout).into_owned()
    };
    let g: Value = serde_json::from_str(&run(&["groups", "--json"])).unwrap();
    let id = g[0]["group_id"].as_str().unwrap().to_string();
    for args in [
        vec!["investigate", "--group", &id],
        vec!["investigate", "--group", &id, "--json"],
        vec!["export", "--group", &id, "--format", "markdown", "-o", "-"],
        vec!["export", "--group", &id, "--format", "json", "-o", "-"],
        vec!["export", "--group", &id, "--format", "csv", "-o", "-"],
    ] {
        let out = run(&args);
        assert!(
            out.contains("AMBIGUOUS") || out.contains("\"ambiguous\""),
            "{args:?}:\n{out}"
        );
    }
    // The TUI's execution screen lists the event with the mark.
    let inv = retrace::query::Investigation::open(
        &retrace::query::Setup::new(vec![p.clone()]),
        &mut |_| {},
    )
    .unwrap();
    let x = inv
        .groups(&retrace::query::GroupFilter::default())
        .first()
        .unwrap()
        .executions()
        .next()
        .unwrap();
    assert!(
        inv.events(x)
            .iter()
            .any(|e| e.summary.contains("AMBIGUOUS")),
        "{:?}",
        inv.events(x).iter().map(|e| &e.summary).collect::<Vec<_>>()
    );
}

/// Integers beyond ±2^53 hash alike with their neighbours (RFC 8785
/// numbers are IEEE doubles): `9007199254740993` can become `…992` without
/// breaking the chain. verify names such a line and the value says so.
#[test]
fn an_integer_beyond_2_53_is_reported_as_ambiguous() {
    let dir = tempfile::tempdir().unwrap();
    let mut l = lines_of(&scenario("possible-duplicate-ssh.jsonl"));
    // An unknown field on the outcome line (kept and shown as written).
    l[4] = l[4].replacen(
        r#""outcome":"unknown""#,
        r#""outcome":"unknown","rows_written":9007199254740993"#,
        1,
    );
    let l = rechain(&l);
    let changed: Vec<String> = l
        .iter()
        .map(|x| x.replace("9007199254740993", "9007199254740992"))
        .collect();
    assert_ne!(l, changed);
    let p = write(dir.path(), "big.jsonl", &changed);
    let (code, text) = verify(&p);
    // The edit does not break the chain: that is the problem reported.
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains("line 5: ambiguous: `rows_written` holds an integer beyond ±2^53"),
        "{text}"
    );
    let out = retrace()
        .args(["groups", "--all", "--json"])
        .arg(&p)
        .output()
        .unwrap();
    let g: Value = serde_json::from_slice(&out.stdout).unwrap();
    let id = g[0]["group_id"].as_str().unwrap().to_string();
    let out = retrace()
        .args(["investigate", "--group", &id])
        .arg(&p)
        .output()
        .unwrap();
    let t = String::from_utf8_lossy(&out.stdout);
    assert!(
        t.contains("[AMBIGUOUS: `rows_written` = 9007199254740992"),
        "{t}"
    );
}

/// A cut tail or a full re-chain said "chain intact" with no caveat.
/// Without an anchor verify says plainly what it cannot see; with one
/// (`--anchor FILE`, written atomically) both show, and an append does not.
#[test]
fn an_anchor_shows_a_cut_tail_and_a_rechained_journal() {
    let dir = tempfile::tempdir().unwrap();
    let original = lines_of(&scenario("possible-duplicate-ssh.jsonl"));
    let p = write(dir.path(), "j.jsonl", &original);
    let anchor = dir.path().join("anchor.json");
    let run = |extra: &[&str]| {
        let out = retrace()
            .arg("verify")
            .arg(&p)
            .args(extra)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let a = anchor.to_str().unwrap();
    // No anchor: the caveat.
    let (code, text) = run(&[]);
    assert_eq!(code, Some(0));
    assert!(
        text.contains(
            "lines cut from the end, or a journal re-chained after an edit, cannot be detected"
        ),
        "{text}"
    );
    // Cut tail, no anchor: still "intact" — but said with the caveat.
    write(dir.path(), "j.jsonl", &original[..8]);
    let (code, text) = run(&["--json"]);
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_str(&text).unwrap();
    assert!(
        v[0]["caveat"]
            .as_str()
            .unwrap()
            .contains("cannot be detected")
    );

    // Anchored: recorded, then consistent after an append.
    write(dir.path(), "j.jsonl", &original[..8]);
    let (code, text) = run(&["--anchor", a]);
    assert_eq!(code, Some(0), "{text}");
    assert!(
        text.contains("anchor recorded: 8 line(s), last seq 7"),
        "{text}"
    );
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&anchor).unwrap()).unwrap();
    assert_eq!(stored["format"], "retrace-anchor/1");
    for k in ["identity", "lines", "last_seq", "head_hash", "at", "digest"] {
        assert!(!stored["journals"][0][k].is_null(), "{k}: {stored:#}");
    }
    write(dir.path(), "j.jsonl", &original);
    let (code, text) = run(&["--anchor", a]);
    assert_eq!(code, Some(0), "{text}");
    assert!(text.contains("3 line(s) added since"), "{text}");

    // Cut tail against the anchor.
    write(dir.path(), "j.jsonl", &original[..9]);
    let (code, text) = run(&["--anchor", a]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("TAMPERED") && text.contains("CUT TAIL"),
        "{text}"
    );
    let (_, json) = run(&["--anchor", a, "--json"]);
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v[0]["anchor"]["status"], "cut_tail", "{v:#}");

    // An edit re-chained from there on: the chain verifies, the anchor
    // does not.
    let mut edited = original.clone();
    edited[4] = edited[4].replace(r#""outcome":"unknown""#, r#""outcome":"not_executed""#);
    let edited = rechain(&edited);
    write(dir.path(), "j.jsonl", &edited);
    let (code, text) = run(&[]);
    assert_eq!(code, Some(0), "the re-chained journal verifies: {text}");
    let (code, text) = run(&["--anchor", a]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("REWRITTEN HISTORY"), "{text}");
    // A contradicted anchor is kept as it was: it is the evidence.
    let again: Value = serde_json::from_str(&std::fs::read_to_string(&anchor).unwrap()).unwrap();
    assert_eq!(again["journals"][0]["lines"], 11);
    // Written atomically: no temporary file is left beside it.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// The case file keeps the anchors of the journals a decision was made on:
/// a later verify shows a cut tail or a re-chained journal against them,
/// with no anchor file.
#[test]
fn a_decision_anchors_its_journals() {
    let dir = tempfile::tempdir().unwrap();
    let original = lines_of(&scenario("possible-duplicate-ssh.jsonl"));
    let p = write(dir.path(), "j.jsonl", &original);
    let case = dir.path().join("retrace-case.sqlite");
    let out = retrace()
        .args(["review", "decide", "act_MIG1", "--decision", "escalated"])
        .args(["--note", "ask the DBA", "--reviewer", "bob"])
        .arg(&p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(case.exists());
    let (code, text) = verify(&p);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("anchored by case file"), "{text}");
    assert!(text.contains("consistent with the anchor"), "{text}");
    write(dir.path(), "j.jsonl", &original[..9]);
    let (code, text) = verify(&p);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("CUT TAIL"), "{text}");
    let mut edited = original.clone();
    edited[4] = edited[4].replace(r#""outcome":"unknown""#, r#""outcome":"not_executed""#);
    write(dir.path(), "j.jsonl", &rechain(&edited));
    let (code, text) = verify(&p);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("REWRITTEN HISTORY"), "{text}");
}
