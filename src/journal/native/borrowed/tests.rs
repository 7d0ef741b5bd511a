//! Both ways of reading a native line give the same answer: every
//! generated line is read from its bytes ([`super::super::read_canonical`])
//! and by the full parse ([`super::super::parse_line_fully`]); where the
//! first answers, its records and link must be the parse's, and
//! [`super::super::parse_line`] must give the parse's records or error for
//! every line.

use super::super::{LinkRef, ParsedLine, Records, parse_line, parse_line_fully, read_canonical};
use crate::journal::LineMeta;
use crate::journal::fields::FieldResult;
use crate::journal::native::NativeChainWriter;
use crate::model::{Record, SourceRef};
use serde_json::{Map, Value, json};

fn meta() -> LineMeta {
    LineMeta {
        source: SourceRef::Line {
            journal: 0,
            line: 3,
            offset: crate::model::LineOffset::new(120),
            len: 77,
        },
        terminated: true,
    }
}

/// What a parsed line comes to, in a form that compares.
type Seen = (
    bool,
    Option<(Vec<u8>, Vec<u8>, Vec<u8>, Option<u64>)>,
    Option<String>,
    Result<Vec<Record>, crate::journal::BadLine>,
    usize,
);

/// `p`, parsed from `bytes`, in a form that compares.
fn seen(bytes: &[u8], p: FieldResult<ParsedLine>) -> Result<Seen, crate::journal::BadLine> {
    let p = p?;
    let mut hex = [0u8; 64];
    let (link, unreadable) = match p.link.resolve(bytes, &mut hex) {
        LinkRef::Unchained => (None, None),
        LinkRef::Unreadable(e) => (None, Some(e.to_owned())),
        LinkRef::Hashed {
            prev,
            stored,
            computed,
            seq,
        } => (
            Some((prev.to_owned(), stored.to_owned(), computed.to_owned(), seq)),
            None,
        ),
    };
    let records = p.records.map(|r| match r {
        Records::One(r) => vec![r],
        Records::Many(v) => v,
    });
    Ok((p.has_hash, link, unreadable, records, p.ambiguous.len()))
}

/// Compares both ways on one line; true when the line was read from its
/// bytes.
fn check(line: &str) -> bool {
    let bytes = line.as_bytes();
    let full = seen(bytes, parse_line_fully(bytes, meta()));
    let both = seen(bytes, parse_line(bytes, meta()));
    assert_eq!(both, full, "{line}");
    match read_canonical(bytes, meta()) {
        Some(p) => {
            let fast = seen(bytes, Ok(p));
            assert_eq!(fast, full, "{line}");
            assert!(matches!(full, Ok((_, _, _, Ok(_), _))), "{line}");
            true
        }
        None => false,
    }
}

fn chained(records: impl IntoIterator<Item = Value>) -> Vec<String> {
    let mut w = NativeChainWriter::new(Vec::new());
    records
        .into_iter()
        .filter_map(|r| w.append(r.as_object()?.clone()).ok())
        .collect()
}

const TIMES: &[&str] = &[
    "2026-07-22T14:03:18Z",
    "2026-07-22T14:03:18.1Z",
    "2026-07-22T14:03:18.007+00:00",
    "2026-07-22T14:03:18.123456789Z",
    "2026-07-22T14:03:18.1234567891Z",
    "2026-07-22T14:03:18.Z",
    "2026-07-22T14:03:18+05:30",
    "2026-07-22T00:03:18-23:59",
    "2026-07-22T14:03:18-00:00",
    "2026-07-22T14:03:18+24:00",
    "2026-07-22T14:03:18+05:60",
    "2024-02-29T12:00:00Z",
    "2026-02-29T12:00:00Z",
    "2100-02-29T12:00:00Z",
    "2000-02-29T12:00:00Z",
    "2026-04-31T12:00:00Z",
    "2026-13-01T12:00:00Z",
    "2026-00-10T12:00:00Z",
    "2026-12-31T23:59:60Z",
    "2016-12-31T23:59:60.5Z",
    "2026-07-22T24:00:00Z",
    "2026-07-22T14:60:00Z",
    "2026-07-22 14:03:18Z",
    "2026-07-22t14:03:18z",
    "2026-07-22T14:03:18",
    "0000-01-01T00:00:00Z",
    "0001-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-23:59",
    "2026-7-22T14:03:18Z",
    "noon",
    "",
];

/// Values a field is replaced with: every JSON type, escapes, unicode,
/// large and negative integers, and strings that read as numbers.
fn values() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(false),
        json!(0),
        json!(7),
        json!(-3),
        json!(200),
        json!(599),
        json!(600),
        json!(9_007_199_254_740_991i64),
        json!(9_007_199_254_740_993u64),
        json!(1.5),
        json!(4.0),
        json!(""),
        json!("plain"),
        json!("12"),
        json!("-4"),
        json!("quote\" back\\ nl\n tab\t ctl\u{1} del\u{7f}"),
        json!("日本語 é 😀 \u{e000}"),
        json!("success"),
        json!("failure"),
        json!("response"),
        json!("status_query"),
        json!("continued"),
        json!("returned_stored_result"),
        json!("2026-07-22T14:03:18Z"),
        json!([]),
        json!([1, "a", null]),
        json!({}),
        json!({"tool": "deploy", "arguments": {"b": 1, "a": [true]}}),
    ]
}

fn call() -> Value {
    json!({"call_id":"call_1","jsonrpc_id":41,"mcp_session_id":"m-1","session_id":"ses_1","transport":"stdio"})
}

fn action() -> Value {
    json!({"actor":"signed:a","arguments":{"service":"svc-0","n":3,"deep":{"x":[1,{"y":null}]}},
           "channel":"http","intent_scope":"run:0","method":"POST","target":"api/x","tool":"deploy_release"})
}

/// One well-formed record of every kind and event of docs/design.md §3,
/// with every field it takes.
fn bases() -> Vec<Value> {
    let ev = |name: &str, more: Value| {
        let mut m = json!({"kind":"event","seq":5,"at":"2026-07-22T14:03:18.5Z","execution_id":"act_1","event":name});
        if let (Some(m), Some(more)) = (m.as_object_mut(), more.as_object()) {
            m.extend(more.clone());
        }
        m
    };
    vec![
        ev(
            "accepted",
            json!({"call":call(),"action":action(),"fingerprint":"sha256:ab","action_class":"recoverable_by_status","idempotency_key":"k-1"}),
        ),
        ev(
            "attached",
            json!({"call":call(),"recovery":"queried_status"}),
        ),
        ev(
            "authorized",
            json!({"decision":"session_grant","approver":"ops"}),
        ),
        ev("rejected", json!({"reason":"policy"})),
        ev("dispatched", json!({"idempotency_key":"k-1"})),
        ev("dispatch_failed", json!({"error":"refused"})),
        ev(
            "outcome",
            json!({"outcome":"success","observed_via":"late_response","target_status":201,"exit_status":-1,
                   "error":"e","result_reference":"r-1","replayed":true}),
        ),
        ev("delivered", json!({})),
        ev("delivery_failed", json!({"error":"gone"})),
        ev("cancelled", json!({"by":"operator"})),
        json!({"kind":"session","session_id":"ses_1","actor":"a","process":{"pid":41,"name":"agent","started_at":"2026-07-22T14:00:00Z","extra":1},
               "mcp_session_id":"m-1","client":"example/1.4","authorization":"per_session",
               "started_at":"2026-07-22T14:00:00Z","ended_at":"2026-07-22T15:00:00+01:00","end_reason":"disconnected"}),
        json!({"kind":"execution","execution_id":"act_2","state":"completed","accepted_at":"2026-07-22T14:03:18Z",
               "dispatched_at":"2026-07-22T14:03:19Z","completed_at":"2026-07-22T14:03:20Z","tool":"deploy","actor":"a"}),
    ]
}

/// Every base record, then each of its fields (and each field of its
/// `call` and `process`) taken out or replaced with each of [`values`]
/// and each of [`TIMES`], then unknown fields added.
fn generated() -> Vec<Value> {
    let mut out = Vec::new();
    let vals = values();
    for base in bases() {
        out.push(base.clone());
        let Some(m) = base.as_object() else { continue };
        for key in m.keys() {
            let mut gone = m.clone();
            gone.remove(key);
            out.push(Value::Object(gone));
            let times = TIMES.iter().map(|t| json!(t));
            for v in vals.iter().cloned().chain(times) {
                let mut r = m.clone();
                r.insert(key.clone(), v.clone());
                out.push(Value::Object(r));
            }
            for nested in ["call", "process"] {
                if key != nested {
                    continue;
                }
                let Some(inner) = m.get(nested).and_then(Value::as_object) else {
                    continue;
                };
                for k in inner.keys() {
                    for v in vals.iter().cloned().chain(TIMES.iter().map(|t| json!(t))) {
                        let mut i = inner.clone();
                        i.insert(k.clone(), v);
                        let mut r = m.clone();
                        r.insert(nested.into(), Value::Object(i));
                        out.push(Value::Object(r));
                    }
                }
            }
        }
        for (k, v) in [
            ("gateway_build", json!("7.1")),
            ("zz_unknown", json!({"b": [1, 2], "a": "é"})),
            ("state", json!("completed")),
            ("tool", json!("deploy")),
            ("action", json!({"tool": "t"})),
            ("seq", json!(9)),
        ] {
            let mut r: Map<String, Value> = m.clone();
            r.entry(k).or_insert(v);
            out.push(Value::Object(r));
        }
    }
    out
}

#[test]
fn lines_read_from_their_bytes_are_the_parsed_ones() {
    let lines = chained(generated());
    let fast = lines.iter().filter(|l| check(l)).count();
    // Most generated lines are well-formed and in RFC 8785 form: the
    // comparison is not vacuous.
    assert!(fast * 3 > lines.len(), "{fast} of {}", lines.len());
    // Every base line but the snapshot is read from its bytes.
    let bases = chained(bases());
    for l in &bases[..bases.len() - 1] {
        assert!(check(l), "{l}");
    }
}

#[test]
fn lines_not_in_canonical_form_are_parsed() {
    let mut lines = Vec::new();
    for l in chained(bases()) {
        // A space, a float, keys out of order, a hash that does not match,
        // a short hash, an escape RFC 8785 would not write.
        lines.push(l.replacen("\"kind\":", "\"kind\": ", 1));
        lines.push(l.replacen("\"seq\":5", "\"seq\":5.0", 1));
        lines.push(l.replacen("{", "{\"zz\":1,", 1));
        lines.push(l.replacen("\"hash\":\"", "\"hash\":\"0", 1));
        lines.push(l.replacen("\"hash\":\"", "\"hash\":\"0\",\"hasi\":\"", 1));
        lines.push(l.replacen("act_1", "act\\u005f1", 1));
        lines.push(l.replacen("act_1", "act\\n1", 1));
        lines.push(format!("{l} "));
        lines.push(l.clone());
    }
    let mut mismatched = 0;
    for l in &lines {
        check(l);
        if let Ok((_, Some((_, stored, computed, _)), ..)) =
            seen(l.as_bytes(), parse_line(l.as_bytes(), meta()))
            && stored != computed
        {
            mismatched += 1;
        }
    }
    assert!(mismatched > 0);
}

/// The plain RFC 3339 shape is read as chrono reads it, and every other
/// shape is left to chrono.
#[test]
fn times_are_read_as_chrono_reads_them() {
    let mut more: Vec<String> = TIMES.iter().map(|t| t.to_string()).collect();
    for (y, mo, d) in [(2026, 1, 31), (2026, 6, 30), (1970, 1, 1), (1969, 12, 31)] {
        for frac in ["", ".0", ".05", ".999999999", ".12345"] {
            for off in ["Z", "+00:00", "+13:45", "-09:30", "+23:59"] {
                more.push(format!("{y:04}-{mo:02}-{d:02}T23:59:59{frac}{off}"));
            }
        }
    }
    for t in &more {
        let chrono = chrono::DateTime::parse_from_rfc3339(t)
            .ok()
            .map(|t| t.with_timezone(&chrono::Utc));
        assert_eq!(super::time(t), chrono, "{t}");
    }
}
