//! Case files: appending, the chain and every way of tampering with it,
//! access modes, concurrent writers.

use super::*;
use crate::journal::GENESIS;
use crate::journal::chain::FailureKind;

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().with_timezone(&Utc)
}

fn decision(x: &str, d: Decision) -> DecisionPayload {
    DecisionPayload {
        execution_id: x.into(),
        decision: d,
        reviewer: "alice".into(),
        note: "checked the deploy API".into(),
        group_id: None,
        verdict_before: None,
        fingerprint: None,
        journal_anchors: Vec::new(),
    }
}

fn new_case() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("case.sqlite");
    (dir, p)
}

#[test]
fn appends_chain_and_reopen() {
    let (_d, p) = new_case();
    {
        let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
        c.record_decision(
            at("2026-07-22T15:00:00Z"),
            &decision("act_1", Decision::Escalated),
        )
        .unwrap();
        c.add_note(
            at("2026-07-22T15:01:00Z"),
            &NotePayload {
                author: "bob".into(),
                text: "called the deploy team".into(),
                group_id: Some("g1".into()),
                execution_id: None,
            },
        )
        .unwrap();
        let r = c
            .record_decision(
                at("2026-07-22T15:02:00Z"),
                &decision("act_1", Decision::ConfirmedCompleted),
            )
            .unwrap();
        assert_eq!(r.seq, 3);
    }
    let c = CaseFile::open(&p, Access::ReadOnly).unwrap();
    let (entries, status) = c.load().unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(entries[0].prev_hash, GENESIS);
    assert_eq!(entries[1].prev_hash, entries[0].hash);
    let ChainStatus::Intact { lines: n, .. } = status.status else {
        panic!("{status:?}")
    };
    assert_eq!((n, status.head), (3, entries[2].hash.clone()));
    let (ds, _) = c.decisions().unwrap();
    assert_eq!(ds.len(), 2);
    assert_eq!(ds[1].payload.decision, Decision::ConfirmedCompleted);
    let r = ds[1].resolution("case.sqlite");
    assert_eq!(r.source, "case file case.sqlite entry 3");
    assert_eq!(r.at, at("2026-07-22T15:02:00Z"));
    assert!(c.verify().unwrap().append_only_guards);
}

#[test]
fn hash_follows_the_journal_rule() {
    use sha2::{Digest, Sha256};
    // sha256("000…0" ‖ JCS(body)) computed independently of entry_hash.
    let payload = serde_json::json!({"b": 1, "a": "x"});
    let body =
        r#"{"at":"2026-07-22T15:00:00.000000Z","kind":"note","payload":{"a":"x","b":1},"seq":1}"#;
    let mut h = Sha256::new();
    h.update(GENESIS.as_bytes());
    h.update(body.as_bytes());
    assert_eq!(
        entry_hash(GENESIS, 1, "2026-07-22T15:00:00.000000Z", "note", &payload),
        hex::encode(h.finalize())
    );
}

#[test]
fn triggers_refuse_update_and_delete() {
    let (_d, p) = new_case();
    let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
    c.record_decision(Utc::now(), &decision("act_1", Decision::Escalated))
        .unwrap();
    let e = c
        .conn
        .execute("UPDATE entries SET payload = '{}' WHERE seq = 1", [])
        .unwrap_err();
    assert!(e.to_string().contains("append-only"), "{e}");
    let e = c.conn.execute("DELETE FROM entries", []).unwrap_err();
    assert!(e.to_string().contains("append-only"), "{e}");
    let e = c.conn.execute("DELETE FROM meta", []).unwrap_err();
    assert!(e.to_string().contains("append-only"), "{e}");
}

/// Opens the file behind retrace's back, drops the guards and runs `sql`.
fn tamper(p: &Path, sql: &str) {
    let conn = Connection::open(p).unwrap();
    conn.execute_batch(
        "DROP TRIGGER entries_append_only_update; DROP TRIGGER entries_append_only_delete;",
    )
    .unwrap();
    conn.execute_batch(sql).unwrap();
}

fn three(p: &Path) {
    let mut c = CaseFile::open(p, Access::ReadWrite).unwrap();
    for x in ["act_1", "act_2", "act_3"] {
        c.record_decision(Utc::now(), &decision(x, Decision::Escalated))
            .unwrap();
    }
}

/// The entry the break shows at, its kind, and how many entries verify.
fn broken(p: &Path) -> (u32, FailureKind, u64) {
    let chain = verify(p).unwrap().chain;
    match &chain.status {
        ChainStatus::Broken { failure, .. } => (failure.line, failure.kind, chain.entries()),
        s => panic!("not detected: {s:?}"),
    }
}

#[test]
fn detects_a_changed_entry() {
    let (_d, p) = new_case();
    three(&p);
    tamper(
        &p,
        "UPDATE entries SET payload = replace(payload, 'checked', 'ignored') WHERE seq = 2",
    );
    assert_eq!(broken(&p), (2, FailureKind::ChangedLine, 1));
    assert!(!verify(&p).unwrap().append_only_guards);
}

#[test]
fn detects_a_deleted_entry() {
    let (_d, p) = new_case();
    three(&p);
    tamper(&p, "DELETE FROM entries WHERE seq = 2");
    assert_eq!(broken(&p), (2, FailureKind::DeletedLine, 1));
    let (_d, p) = new_case();
    three(&p);
    tamper(&p, "DELETE FROM entries WHERE seq = 1");
    assert_eq!(broken(&p), (1, FailureKind::DeletedLine, 0));
}

#[test]
fn detects_a_deleted_and_renumbered_entry() {
    let (_d, p) = new_case();
    three(&p);
    tamper(
        &p,
        "DELETE FROM entries WHERE seq = 2; UPDATE entries SET seq = 2 WHERE seq = 3",
    );
    // Entry 1 may have been rewritten with a recomputed hash as well:
    // nothing verifies.
    assert_eq!(broken(&p), (2, FailureKind::BrokenLink, 0));
}

#[test]
fn detects_a_rewritten_hash_whose_successor_no_longer_links() {
    let (_d, p) = new_case();
    three(&p);
    // Rewrite entry 2 and recompute its own hash: entry 3 no longer links.
    let c = CaseFile::open(&p, Access::ReadOnly).unwrap();
    let (entries, _) = c.load().unwrap();
    drop(c);
    let mut payload = entries[1].payload.clone();
    payload["note"] = "rewritten".into();
    let h = entry_hash(
        &entries[1].prev_hash,
        2,
        &format_at(entries[1].at),
        "decision",
        &payload,
    );
    tamper(
        &p,
        &format!(
            "UPDATE entries SET payload = '{}', hash = '{h}' WHERE seq = 2",
            payload
        ),
    );
    // Entry 2 was rewritten: the break puts it in doubt too.
    assert_eq!(broken(&p), (3, FailureKind::BrokenLink, 1));
}

#[test]
fn detects_a_bad_entry() {
    let (_d, p) = new_case();
    three(&p);
    tamper(&p, "UPDATE entries SET at = 'yesterday' WHERE seq = 3");
    assert_eq!(broken(&p), (3, FailureKind::ChangedLine, 2));
}

#[test]
fn a_broken_chain_is_never_extended() {
    let (_d, p) = new_case();
    three(&p);
    tamper(&p, "UPDATE entries SET kind = 'note' WHERE seq = 1");
    let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
    let e = c
        .record_decision(Utc::now(), &decision("act_9", Decision::Escalated))
        .unwrap_err();
    assert!(matches!(e, CaseError::Broken { .. }), "{e}");
    let (entries, _) = c.load().unwrap();
    assert!(entries.is_empty());
    let n: i64 = c
        .conn
        .query_row("SELECT count(*) FROM entries", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 3);
}

#[test]
fn read_only_never_creates_or_writes() {
    let (_d, p) = new_case();
    assert!(matches!(
        CaseFile::open(&p, Access::ReadOnly),
        Err(CaseError::Missing(_))
    ));
    assert!(!p.exists());
    three(&p);
    let mut c = CaseFile::open(&p, Access::ReadOnly).unwrap();
    let e = c
        .record_decision(Utc::now(), &decision("act_9", Decision::Escalated))
        .unwrap_err();
    assert!(matches!(e, CaseError::ReadOnly(_)), "{e}");
    assert_eq!(c.load().unwrap().0.len(), 3);
}

#[test]
fn reading_leaves_no_side_files_and_never_appends() {
    let (d, p) = new_case();
    three(&p);
    let names = || {
        let mut v: Vec<String> = std::fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(), vec!["case.sqlite"]);
    {
        let mut c = CaseFile::open(&p, Access::Read).unwrap();
        assert_eq!(c.load().unwrap().0.len(), 3);
        assert!(matches!(
            c.record_decision(Utc::now(), &decision("act_9", Decision::Escalated)),
            Err(CaseError::ReadOnly(_))
        ));
    }
    assert_eq!(names(), vec!["case.sqlite"]);
}

#[test]
fn empty_note_is_refused() {
    let (_d, p) = new_case();
    let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
    let mut d = decision("act_1", Decision::Escalated);
    d.note = "  ".into();
    assert!(matches!(
        c.record_decision(Utc::now(), &d),
        Err(CaseError::Invalid { .. })
    ));
    assert!(c.load().unwrap().0.is_empty());
}

#[test]
fn another_database_is_not_taken_over() {
    let (_d, p) = new_case();
    Connection::open(&p)
        .unwrap()
        .execute_batch("CREATE TABLE t (x); INSERT INTO t VALUES (1);")
        .unwrap();
    assert!(matches!(
        CaseFile::open(&p, Access::ReadWrite),
        Err(CaseError::NotACaseFile(_))
    ));
    let conn = Connection::open(&p).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_database_being_created_reads_as_an_empty_case() {
    let (_d, p) = new_case();
    std::fs::write(&p, b"").unwrap();
    for access in [Access::ReadOnly, Access::Read] {
        let c = CaseFile::open(&p, access).unwrap();
        let (entries, chain) = c.load().unwrap();
        assert!(entries.is_empty());
        assert!(chain.is_intact());
    }
    // The first writer creates the schema in it.
    let mut c = CaseFile::open(&p, Access::ReadWrite).unwrap();
    c.record_decision(Utc::now(), &decision("act_1", Decision::Escalated))
        .unwrap();
    assert!(verify(&p).unwrap().append_only_guards);
}

#[test]
fn a_confirmed_decision_is_final_even_for_a_second_writer() {
    let (_d, p) = new_case();
    // Two reviewers who both read the case before either decided.
    let mut first = CaseFile::open(&p, Access::ReadWrite).unwrap();
    let mut second = CaseFile::open(&p, Access::ReadWrite).unwrap();
    first
        .record_decision(Utc::now(), &decision("act_1", Decision::Escalated))
        .unwrap();
    first
        .record_decision(Utc::now(), &decision("act_1", Decision::ConfirmedCompleted))
        .unwrap();
    for &d in Decision::ALL {
        let e = second
            .record_decision(Utc::now(), &decision("act_1", d))
            .unwrap_err();
        assert!(matches!(e, CaseError::AlreadyDecided { seq: 2, .. }), "{e}");
        assert!(e.to_string().contains(FINAL_DECISION), "{e}");
    }
    // Another execution is still open.
    second
        .record_decision(
            Utc::now(),
            &decision("act_2", Decision::ConfirmedNotExecuted),
        )
        .unwrap();
    assert_eq!(second.load().unwrap().0.len(), 3);
}

#[test]
fn a_text_file_is_a_clear_error() {
    let (_d, p) = new_case();
    std::fs::write(&p, "not sqlite at all, just some text that is long enough").unwrap();
    let e = CaseFile::open(&p, Access::ReadOnly).unwrap_err();
    assert!(e.to_string().contains("case.sqlite"), "{e}");
}

#[test]
fn default_path_is_beside_the_first_journal() {
    assert_eq!(
        default_path(Path::new("incident/activity.jsonl")),
        Path::new("incident/retrace-case.sqlite")
    );
    assert_eq!(
        default_path(Path::new("activity.jsonl")),
        Path::new("retrace-case.sqlite")
    );
    // A folder named is the case file's folder, whatever it holds.
    let d = tempfile::tempdir().unwrap();
    assert_eq!(default_path(d.path()), d.path().join("retrace-case.sqlite"));
    // A pipe or a device has no folder of its own: not /dev/retrace-case.sqlite.
    assert_eq!(
        default_path(Path::new("/dev/null")),
        Path::new("retrace-case.sqlite")
    );
}
