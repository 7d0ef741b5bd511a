//! The native audit chain (docs/design.md §6) against every tampering kind: a
//! journal is written with `NativeChainWriter`, tampered with one way, and
//! `verify` must name the kind and the line where it shows.

use retrace::journal::chain::{ChainStatus, FailureKind};
use retrace::journal::{JournalSource, LoadOptions, NativeChainWriter, native_chain_hash, verify};
use serde_json::{Map, Value, json};
use std::io::Write;

/// A session line, then events seq 1..=n: 1 + n lines, all chained.
fn records(n: u64) -> Vec<Map<String, Value>> {
    let mut out = vec![obj(json!({
        "kind": "session", "session_id": "ses_1", "actor": "signed-process:a",
        "process": {"pid": 42, "started_at": "2026-07-22T13:58:00Z"}
    }))];
    for seq in 1..=n {
        out.push(obj(json!({
            "kind": "event", "seq": seq, "at": format!("2026-07-22T14:00:{:02}Z", seq),
            "execution_id": format!("act_{}", seq.div_ceil(2)),
            "event": if seq % 2 == 1 { "accepted" } else { "dispatched" },
            "call": {"call_id": format!("c{seq}"), "session_id": "ses_1"},
            "action": {"tool": "deploy_release", "actor": "signed-process:a",
                       "arguments": {"service": "catalog", "n": seq}, "intent_scope": "run:1"}
        })));
    }
    out
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

fn write_chain(recs: Vec<Map<String, Value>>) -> Vec<String> {
    let mut w = NativeChainWriter::new(Vec::new());
    recs.into_iter().map(|r| w.append(r).unwrap()).collect()
}

fn run(lines: &[String], newline_at_end: bool) -> ChainStatus {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activity.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    let body = lines.join("\n");
    f.write_all(body.as_bytes()).unwrap();
    if newline_at_end {
        f.write_all(b"\n").unwrap();
    }
    drop(f);
    verify(JournalSource::file(&path), &LoadOptions::default())
        .unwrap()
        .chain
}

fn broken(st: &ChainStatus) -> (FailureKind, u32, Option<u64>) {
    let f = st
        .failure()
        .unwrap_or_else(|| panic!("expected a broken chain, got {st:?}"));
    (f.kind, f.line, f.seq)
}

fn reparse(line: &str) -> Map<String, Value> {
    serde_json::from_str(line).unwrap()
}

/// Rewrites a line with a new hash over its (changed) content, keeping its
/// prev_hash: what someone who knows the rule but not the next line does.
fn rehash(m: &mut Map<String, Value>) {
    let prev = m.remove("prev_hash").unwrap();
    m.remove("hash");
    let h = native_chain_hash(prev.as_str().unwrap(), m);
    m.insert("prev_hash".into(), prev);
    m.insert("hash".into(), Value::String(h));
}

#[test]
fn intact_chain_verifies_every_line() {
    let lines = write_chain(records(8));
    match run(&lines, true) {
        ChainStatus::Intact { lines: n, .. } => assert_eq!(n, 9),
        other => panic!("{other:?}"),
    }
}

#[test]
fn genesis_and_hash_follow_the_design_formula() {
    // The first line's prev_hash is 64 zeros and its hash is
    // sha256("000…0" ‖ JCS(line without prev_hash and hash)), computed here
    // independently of the library.
    use sha2::{Digest, Sha256};
    let lines = write_chain(records(1));
    let mut m = reparse(&lines[0]);
    assert_eq!(m["prev_hash"], "0".repeat(64));
    let stored = m.remove("hash").unwrap();
    m.remove("prev_hash");
    let jcs = serde_json_canonicalizer::to_string(&m).unwrap();
    let want = hex::encode(Sha256::digest(format!("{}{jcs}", "0".repeat(64))));
    assert_eq!(stored, want);
}

#[test]
fn changed_line_is_found_at_that_line() {
    let mut lines = write_chain(records(8));
    lines[4] = lines[4].replace("\"catalog\"", "\"billing\"");
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::ChangedLine, 5, Some(4))
    );
}

#[test]
fn changed_session_line_is_found_too() {
    let mut lines = write_chain(records(4));
    lines[0] = lines[0].replace("\"pid\":42", "\"pid\":43");
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::ChangedLine, 1, None)
    );
}

#[test]
fn deleted_line_is_found_where_the_gap_shows() {
    let mut lines = write_chain(records(8));
    lines.remove(4); // seq 4
    let st = run(&lines, true);
    assert_eq!(broken(&st), (FailureKind::DeletedLine, 5, Some(5)));
    assert!(st.failure().unwrap().message.contains("seq 4 is missing"));
}

#[test]
fn deleted_lines_at_the_head_are_found_at_line_one() {
    let mut lines = write_chain(records(6));
    lines.drain(0..3); // the session and seq 1, 2
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::DeletedLine, 1, Some(3))
    );
}

#[test]
fn reordered_lines_are_told_from_deleted_ones() {
    let mut lines = write_chain(records(8));
    lines.swap(4, 5); // seq 4 and seq 5
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::ReorderedLines, 5, Some(5))
    );
    let mut lines = write_chain(records(8));
    let moved = lines.remove(2); // seq 2 moved to the end
    lines.push(moved);
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::ReorderedLines, 3, Some(3))
    );
}

#[test]
fn rewritten_line_with_recomputed_hash_breaks_the_next_link() {
    let mut lines = write_chain(records(8));
    let mut m = reparse(&lines[4]);
    m["action"]["arguments"]["service"] = json!("billing");
    rehash(&mut m);
    lines[4] = serde_json::to_string(&m).unwrap();
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::BrokenLink, 6, Some(5))
    );
}

#[test]
fn edited_link_is_a_broken_link_at_that_line() {
    let mut lines = write_chain(records(8));
    let mut m = reparse(&lines[4]);
    m.insert("prev_hash".into(), json!("ab".repeat(32)));
    lines[4] = serde_json::to_string(&m).unwrap();
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::BrokenLink, 5, Some(4))
    );
}

#[test]
fn seq_gap_with_intact_links() {
    // A producer that skipped a seq but chained correctly.
    let mut recs = records(6);
    for r in recs.iter_mut().skip(4) {
        let s = r["seq"].as_u64().unwrap();
        r.insert("seq".into(), json!(s + 1));
    }
    let lines = write_chain(recs);
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::SeqGap, 5, Some(5))
    );
}

#[test]
fn inserted_line_is_found_at_the_inserted_line() {
    let mut lines = write_chain(records(8));
    // A forged line that links to line 3 and hashes correctly.
    let prev = reparse(&lines[2])["hash"].as_str().unwrap().to_string();
    let mut forged = obj(json!({
        "kind": "event", "seq": 3, "at": "2026-07-22T14:00:03Z", "execution_id": "act_x",
        "event": "delivered"
    }));
    let h = native_chain_hash(&prev, &forged);
    forged.insert("prev_hash".into(), json!(prev));
    forged.insert("hash".into(), json!(h));
    lines.insert(3, serde_json::to_string(&forged).unwrap());
    assert_eq!(
        broken(&run(&lines, true)),
        (FailureKind::InsertedLine, 4, Some(3))
    );
}

/// The journal as `verify` reads it, with its notes.
fn verified(lines: &[String]) -> (ChainStatus, Vec<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("activity.jsonl");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let j = verify(JournalSource::file(&path), &LoadOptions::default()).unwrap();
    (j.chain, j.notes)
}

/// A line sent twice by a shipper that delivers at least once (docs/design.md
/// §6.9) was an inserted line: the chain broken, and every event after it
/// unverified. It repeats the line before it byte for byte: read once.
#[test]
fn a_line_sent_twice_is_read_once() {
    let mut lines = write_chain(records(8));
    let dup = lines[3].clone();
    lines.insert(4, dup);
    let (st, notes) = verified(&lines);
    assert!(matches!(st, ChainStatus::Intact { lines: 9, .. }), "{st:?}");
    assert!(
        notes.iter().any(|n| n.starts_with("line 5 (seq 3) repeat")),
        "{notes:?}"
    );
}

/// A batch re-sent after the lines that followed it, or the whole journal
/// twice: each copy ends on the line linked last, and is read once.
#[test]
fn a_run_of_lines_sent_again_is_read_once() {
    let lines = write_chain(records(8));
    let mut again = lines[..6].to_vec();
    again.extend_from_slice(&lines[2..6]);
    again.extend_from_slice(&lines[6..]);
    let (st, notes) = verified(&again);
    assert!(matches!(st, ChainStatus::Intact { lines: 9, .. }), "{st:?}");
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("lines 7–10 (seq 2–5) repeat")),
        "{notes:?}"
    );
    let twice = [lines.clone(), lines.clone()].concat();
    let (st, _) = verified(&twice);
    assert!(matches!(st, ChainStatus::Intact { lines: 9, .. }), "{st:?}");
}

/// Lines sent again that do not end on the line linked last are not told
/// apart from lines moved: the break is what it was before.
#[test]
fn lines_sent_again_out_of_place_stay_a_break() {
    let lines = write_chain(records(8));
    let mut again = lines[..6].to_vec();
    again.extend_from_slice(&lines[2..4]);
    again.extend_from_slice(&lines[6..]);
    assert_eq!(broken(&verified(&again).0).0, FailureKind::ReorderedLines);
    // A changed copy is no copy.
    let mut changed = lines.clone();
    let mut m = reparse(&lines[3]);
    m.insert("at".into(), json!("2026-07-22T14:09:59Z"));
    rehash(&mut m);
    changed.insert(4, serde_json::to_string(&m).unwrap());
    assert!(verified(&changed).0.failure().is_some());
}

#[test]
fn unchained_line_inside_the_chain_is_an_inserted_line() {
    let mut lines = write_chain(records(4));
    lines.insert(
        2,
        r#"{"kind":"event","seq":2,"at":"2026-07-22T14:00:02Z","execution_id":"x","event":"delivered"}"#
            .into(),
    );
    assert_eq!(broken(&run(&lines, true)).0, FailureKind::InsertedLine);
    assert_eq!(broken(&run(&lines, true)).1, 3);
}

#[test]
fn truncated_last_line() {
    let mut lines = write_chain(records(8));
    let last = lines.pop().unwrap();
    lines.push(last[..last.len() / 2].to_string());
    assert_eq!(
        broken(&run(&lines, false)),
        (FailureKind::TruncatedLastLine, 9, None)
    );
}

#[test]
fn complete_last_line_without_newline_still_verifies() {
    let lines = write_chain(records(3));
    assert!(run(&lines, false).is_intact());
}

#[test]
fn a_journal_without_chain_fields_has_no_chain() {
    let st = run(
        &[r#"{"kind":"session","session_id":"s"}"#.to_string()],
        true,
    );
    assert!(matches!(st, ChainStatus::NoChain { .. }), "{st:?}");
}

#[test]
fn deleted_unsequenced_lines_break_the_link() {
    // Session lines carry no seq: deleting one leaves seq contiguous, and
    // the link names the deletion as a possibility.
    let mut recs = records(4);
    let extra = obj(json!({"kind": "session", "session_id": "ses_2"}));
    recs.insert(3, extra);
    let mut lines = write_chain(recs);
    assert!(run(&lines, true).is_intact());
    lines.remove(3);
    let st = run(&lines, true);
    assert_eq!(broken(&st), (FailureKind::BrokenLink, 4, Some(3)));
    assert!(
        st.failure()
            .unwrap()
            .message
            .contains("a line without seq was deleted")
    );
    let mut lines = write_chain(records(2));
    lines.remove(0);
    let st = run(&lines, true);
    assert_eq!(broken(&st), (FailureKind::BrokenLink, 1, Some(1)));
    assert!(
        st.failure()
            .unwrap()
            .message
            .contains("lines before it were deleted")
    );
}

/// Forged lines that go back in `seq` and link among themselves are held
/// while they may be a copy; a bad line after them broke the chain first,
/// there, and the forged lines read as verified. They are judged first.
#[test]
fn a_bad_line_after_forged_lines_does_not_hide_them() {
    let lines = write_chain(records(8));
    let mut forged = Vec::new();
    let mut prev = reparse(&lines[2])["hash"].clone();
    for i in [3, 4] {
        let mut m = reparse(&lines[i]);
        m.insert("at".into(), json!("2026-07-22T14:09:59Z"));
        m.insert("prev_hash".into(), prev.clone());
        rehash(&mut m);
        prev = m["hash"].clone();
        forged.push(serde_json::to_string(&m).unwrap());
    }
    let mut alone = lines.clone();
    alone.extend(forged.iter().cloned());
    let without = broken(&verified(&alone).0);
    assert_eq!(without.1, 10, "{without:?}");
    for bad in ["xxx not json", r#"{"kind":"event","seq":2"#] {
        let mut with = alone.clone();
        with.push(bad.into());
        assert_eq!(broken(&verified(&with).0), without, "after {bad:?}");
    }
}
