//! The native journal stored in SQLite: read through the same fields, and
//! its events table verified as a native chain.

use retrace::journal::chain::{ChainMark, ChainStatus, FailureKind};
use retrace::journal::{Format, JournalSource, LoadOptions, NativeChainWriter, load, verify};
use retrace::model::EventKind;
use rusqlite::Connection;
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

const EVENT_COLUMNS: &[(&str, &str)] = &[
    ("seq", "INTEGER"),
    ("at", "TEXT"),
    ("execution_id", "TEXT"),
    ("event", "TEXT"),
    ("call", "JSON"),
    ("action", "JSON"),
    ("decision", "TEXT"),
    ("outcome", "TEXT"),
    ("target_status", "INTEGER"),
    ("replayed", "BOOLEAN"),
    ("observed_via", "TEXT"),
    ("extra", "JSON"),
    ("prev_hash", "TEXT"),
    ("hash", "TEXT"),
];

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

/// Chained native event records: an execution accepted, authorized,
/// dispatched, answered 201, delivered; then a second one accepted.
fn chained_events() -> Vec<Map<String, Value>> {
    let call = json!({"call_id": "c1", "session_id": "ses_1", "jsonrpc_id": 7});
    let action = json!({"tool": "deploy_release", "actor": "signed-process:a",
        "arguments": {"service": "catalog"}, "intent_scope": "run:1"});
    let recs = vec![
        json!({"kind":"event","seq":1,"at":"2026-07-22T14:00:01Z","execution_id":"act_1","event":"accepted","call":call,"action":action,"gateway_build":"7.1"}),
        json!({"kind":"event","seq":2,"at":"2026-07-22T14:00:02Z","execution_id":"act_1","event":"authorized","decision":"session_grant"}),
        json!({"kind":"event","seq":3,"at":"2026-07-22T14:00:03Z","execution_id":"act_1","event":"dispatched"}),
        json!({"kind":"event","seq":4,"at":"2026-07-22T14:00:04Z","execution_id":"act_1","event":"outcome","outcome":"success","target_status":201,"replayed":false,"observed_via":"response"}),
        json!({"kind":"event","seq":5,"at":"2026-07-22T14:00:05Z","execution_id":"act_1","event":"delivered"}),
        json!({"kind":"event","seq":6,"at":"2026-07-22T14:01:00Z","execution_id":"act_2","event":"accepted","call":call,"action":action}),
    ];
    let mut w = NativeChainWriter::new(Vec::new());
    recs.into_iter()
        .map(|r| {
            let line = w.append(obj(r)).unwrap();
            serde_json::from_str(&line).unwrap()
        })
        .collect()
}

fn write_db(dir: &Path, events: &[Map<String, Value>]) -> PathBuf {
    let path = dir.join("gateway.db");
    let conn = Connection::open(&path).unwrap();
    let cols: Vec<String> = EVENT_COLUMNS
        .iter()
        .map(|(n, t)| format!("{n} {t}"))
        .collect();
    conn.execute_batch(&format!(
        "CREATE TABLE events ({});
         CREATE TABLE sessions (session_id TEXT PRIMARY KEY, actor TEXT, process JSON, started_at TEXT);
         INSERT INTO sessions VALUES ('ses_1', 'signed-process:a', '{{\"pid\":42,\"started_at\":\"2026-07-22T13:58:00Z\"}}', '2026-07-22T13:58:01Z');",
        cols.join(", ")
    ))
    .unwrap();
    for e in events {
        let mut e = e.clone();
        e.remove("kind");
        let mut extra = Map::new();
        let mut vals: Vec<rusqlite::types::Value> = Vec::new();
        for (name, ty) in EVENT_COLUMNS {
            let v = e.remove(*name);
            vals.push(match (v, *ty) {
                (None, _) => rusqlite::types::Value::Null,
                (Some(Value::Bool(b)), _) => rusqlite::types::Value::Integer(i64::from(b)),
                (Some(Value::Number(n)), _) => rusqlite::types::Value::Integer(n.as_i64().unwrap()),
                (Some(Value::String(s)), "TEXT") => rusqlite::types::Value::Text(s),
                (Some(v), _) => rusqlite::types::Value::Text(v.to_string()),
            });
        }
        extra.extend(e);
        let n = EVENT_COLUMNS.iter().position(|c| c.0 == "extra").unwrap();
        if !extra.is_empty() {
            vals[n] = rusqlite::types::Value::Text(Value::Object(extra).to_string());
        }
        let q = vec!["?"; vals.len()].join(",");
        conn.execute(
            &format!("INSERT INTO events VALUES ({q})"),
            rusqlite::params_from_iter(vals),
        )
        .unwrap();
    }
    path
}

fn status(path: &Path) -> ChainStatus {
    verify(JournalSource::file(path), &LoadOptions::default())
        .unwrap()
        .chain
}

#[test]
fn reads_sessions_and_events_with_their_fields() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_db(dir.path(), &chained_events());
    let (journals, model) = load(vec![JournalSource::file(&path)], None, &mut |_| {}).unwrap();
    assert_eq!(journals[0].format, Format::NativeSqlite);
    assert_eq!(model.sessions.len(), 1);
    assert_eq!(model.sessions[0].process.as_ref().unwrap().pid, Some(42));
    assert_eq!(model.execution_count(), 2);
    let x = &model.to_executions()[0];
    assert_eq!(x.events.len(), 5);
    match &x.events[3].kind {
        EventKind::Outcome {
            target_status,
            replayed,
            ..
        } => assert_eq!((*target_status, *replayed), (Some(201), false)),
        other => panic!("{other:?}"),
    }
    // The unknown field went through `extra` and is kept.
    assert_eq!(
        x.events[0].extra().get("gateway_build"),
        Some(&json!("7.1"))
    );
    // Positions are row ids; the sessions table is outside the chain.
    assert_eq!(x.events[3].source.position(), 4);
    assert_eq!(
        journals[0].chain_mark(model.sessions[0].source),
        ChainMark::NoChain
    );
    assert_eq!(
        journals[0].chain_mark(x.events[3].source),
        ChainMark::Verified
    );
    // The raw view reads the row back.
    let raw = journals[0].read_raw(x.events[3].source).unwrap();
    assert!(raw.contains("\"target_status\":201"), "{raw}");
}

#[test]
fn a_chained_jsonl_journal_verifies_unchanged_in_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_db(dir.path(), &chained_events());
    match status(&path) {
        ChainStatus::Intact { lines, .. } => assert_eq!(lines, 6),
        other => panic!("{other:?}"),
    }
}

#[test]
fn tampered_rows_are_found_by_row_id() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_db(dir.path(), &chained_events());
    let conn = Connection::open(&path).unwrap();
    conn.execute("UPDATE events SET target_status = 500 WHERE rowid = 4", [])
        .unwrap();
    let f = status(&path).failure().cloned().unwrap();
    assert_eq!(
        (f.kind, f.line, f.seq),
        (FailureKind::ChangedLine, 4, Some(4))
    );

    conn.execute("UPDATE events SET target_status = 201 WHERE rowid = 4", [])
        .unwrap();
    assert!(status(&path).is_intact());
    conn.execute("DELETE FROM events WHERE rowid = 3", [])
        .unwrap();
    let f = status(&path).failure().cloned().unwrap();
    assert_eq!(
        (f.kind, f.line, f.seq),
        (FailureKind::DeletedLine, 4, Some(4))
    );
}

#[test]
fn an_unchained_database_has_no_chain() {
    let dir = tempfile::tempdir().unwrap();
    let mut events = chained_events();
    for e in &mut events {
        e.remove("hash");
        e.remove("prev_hash");
    }
    let path = write_db(dir.path(), &events);
    assert!(matches!(status(&path), ChainStatus::NoChain { .. }));
}

#[test]
fn a_database_without_journal_tables_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("other.db");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);")
        .unwrap();
    let e = verify(JournalSource::file(&path), &LoadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("without `events` or `sessions` table"), "{e}");
}
