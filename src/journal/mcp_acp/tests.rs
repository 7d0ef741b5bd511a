//! mcp-acp logs written by mcp-acp's own rule: the chain and every way of
//! tampering with it, refusals.

use super::chain::entry_hash;
use super::records::rejection;
use crate::journal::chain::{ChainStatus, FailureKind};
use crate::journal::rawjson;
use crate::journal::{JournalSource, LoadOptions, verify};
use sha2::{Digest, Sha256};

/// Written by tests/fixtures/mcp-acp/generate.py with mcp-acp's own rule.
const OPS: &str = include_str!("../../../tests/fixtures/mcp-acp/operations.jsonl");

fn run(lines: &[String], newline: bool) -> ChainStatus {
    let mut text = lines.join("\n");
    if newline {
        text.push('\n');
    }
    let bytes: &'static [u8] = Box::leak(text.into_bytes().into_boxed_slice());
    verify(
        JournalSource::embedded("operations.jsonl", bytes),
        &LoadOptions::default(),
    )
    .unwrap()
    .chain
}

fn lines() -> Vec<String> {
    OPS.lines().map(str::to_string).collect()
}

fn failure(st: &ChainStatus) -> (FailureKind, u32, Option<u64>) {
    let f = st.failure().unwrap_or_else(|| panic!("{st:?}"));
    (f.kind, f.line, f.seq)
}

/// Re-chains line `i` (0-based) after an edit, as a forger who knows the
/// rule would: a new entry_hash over the edited content.
fn rehash(line: &str) -> String {
    let mut raw = rawjson::parse(line).unwrap();
    raw.remove("entry_hash");
    let h = entry_hash(&raw);
    if let rawjson::Raw::Obj(m) = &mut raw {
        m.push(("entry_hash".into(), rawjson::Raw::Str(h)));
    }
    let mut out = String::new();
    raw.write_python_sorted(&mut out);
    out
}

#[test]
fn python_written_chain_verifies() {
    match run(&lines(), true) {
        ChainStatus::Intact { lines, .. } => assert_eq!(lines, 5),
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_tampering_kind_at_its_line() {
    let mut l = lines();
    l[2] = l[2].replace("30300.25", "300.25");
    assert_eq!(
        failure(&run(&l, true)),
        (FailureKind::ChangedLine, 3, Some(3))
    );

    let mut l = lines();
    l.remove(2);
    assert_eq!(
        failure(&run(&l, true)),
        (FailureKind::DeletedLine, 3, Some(4))
    );

    let mut l = lines();
    l.swap(2, 3);
    assert_eq!(
        failure(&run(&l, true)),
        (FailureKind::ReorderedLines, 3, Some(4))
    );

    let mut l = lines();
    l[2] = rehash(&l[2].replace("update_file", "delete_file"));
    assert_eq!(
        failure(&run(&l, true)),
        (FailureKind::BrokenLink, 4, Some(4))
    );

    let mut l = lines();
    l[2] = l[2].replace("\"prev_hash\": \"", "\"prev_hash\": \"0");
    assert_eq!(
        failure(&run(&l, true)),
        (FailureKind::BrokenLink, 3, Some(3))
    );

    let mut l = lines();
    for (i, line) in l.iter_mut().enumerate().skip(3) {
        let edited = line.replace(
            &format!("\"sequence\": {}", i + 1),
            &format!("\"sequence\": {}", i + 2),
        );
        *line = edited;
    }
    // Renumbered without re-chaining: the line no longer matches its hash.
    assert_eq!(
        failure(&run(&l, true)),
        (FailureKind::ChangedLine, 4, Some(5))
    );

    let mut l = lines();
    let dup = l[1].clone();
    l.insert(2, dup);
    assert_eq!(
        failure(&run(&l, true)),
        (FailureKind::InsertedLine, 3, Some(2))
    );

    let mut l = lines();
    let last = l.pop().unwrap();
    l.push(last[..last.len() - 20].to_string());
    assert_eq!(
        failure(&run(&l, false)),
        (FailureKind::TruncatedLastLine, 5, None)
    );
}

#[test]
fn seq_gap_with_intact_links() {
    // A producer that skipped sequence 3 but chained every line.
    let mut l = lines();
    let mut prev = "GENESIS".to_string();
    for (i, line) in l.iter_mut().enumerate() {
        let mut raw = rawjson::parse(line).unwrap();
        raw.remove("entry_hash");
        if let rawjson::Raw::Obj(m) = &mut raw {
            for (k, v) in m.iter_mut() {
                if k == "prev_hash" {
                    *v = rawjson::Raw::Str(prev.clone());
                }
                if k == "sequence" && i >= 2 {
                    *v = rawjson::Raw::Num((i + 2).to_string());
                }
            }
        }
        let h = entry_hash(&raw);
        if let rawjson::Raw::Obj(m) = &mut raw {
            m.push(("entry_hash".into(), rawjson::Raw::Str(h.clone())));
        }
        let mut out = String::new();
        raw.write_python_sorted(&mut out);
        *line = out;
        prev = h;
    }
    assert_eq!(failure(&run(&l, true)), (FailureKind::SeqGap, 3, Some(4)));
}

#[test]
fn classifies_refusals() {
    assert_eq!(
        rejection("Policy denied: tools/call on /x", Some(-32001)),
        Some("policy_denied")
    );
    assert_eq!(
        rejection("User denied: tools/call on /x", Some(-32001)),
        Some("user_denied")
    );
    assert_eq!(
        rejection("Approval timeout: tools/call", Some(-32001)),
        Some("approval_timeout")
    );
    assert_eq!(
        rejection("Access denied: outside the base directory", None),
        None
    );
}

#[test]
fn entry_hash_is_pythons() {
    // sha256 of the bytes Python prints for
    // json.dumps({"a": "é", "b": 1.5}, sort_keys=True, separators=(",", ":")),
    // i.e. of `{"a":"\u00e9","b":1.5}`.
    let raw = rawjson::parse(r#"{"b": 1.5, "a": "é"}"#).unwrap();
    assert_eq!(
        entry_hash(&raw),
        hex::encode(Sha256::digest(br#"{"a":"\u00e9","b":1.5}"#))
    );
}
