//! The fast verification path against the full read, journal by journal:
//! the repository's journals, the real ones when present, and generated
//! ones with breaks, forks, truncations, edits and lines of every shape.
//! Blocks and pieces are small in tests, so that these cross many.

use crate::journal::load::{VerifyPath, verify_by};
use crate::journal::{JournalSource, LoadOptions, NativeChainWriter};
use serde_json::{Value, json};

/// Everything `retrace verify` reports of a journal, read either way.
fn report(source: &JournalSource, path: VerifyPath) -> String {
    match verify_by(source.clone(), &LoadOptions::default(), path) {
        Ok(j) => format!(
            "{:?} detected={} lines={} records={} bad={} {:#?}\nnotes {:#?}\ncaps {:?}\nchain {:#?}\nleft out {}",
            j.format,
            j.detected,
            j.lines,
            j.records,
            j.bad_line_count,
            j.bad_lines,
            j.notes,
            j.capabilities,
            j.chain,
            j.left_out_executions
        ),
        Err(e) => format!("error: {e}"),
    }
}

/// Both paths give the same report; returns it.
fn same(what: &str, source: &JournalSource) -> String {
    let fast = report(source, VerifyPath::Fast);
    let reference = report(source, VerifyPath::Reference);
    assert_eq!(fast, reference, "{what}: the fast path differs");
    fast
}

fn same_bytes(what: &str, bytes: Vec<u8>) -> String {
    same(what, &JournalSource::memory(what, bytes))
}

fn joined(lines: &[Vec<u8>], newline: bool) -> Vec<u8> {
    let mut out = lines.join(&b"\n"[..]);
    if newline {
        out.push(b'\n');
    }
    out
}

/// Records of every shape the native reader knows, good and bad, each
/// with its own `seq` where it is an event.
fn records() -> Vec<Value> {
    let at = "2026-07-22T14:03:18Z";
    let call = json!({"call_id":"c1","session_id":"s1","jsonrpc_id":7,"mcp_session_id":"m","transport":"stdio"});
    let action = json!({"tool":"deploy","actor":"a","arguments":{"service":"catalog","n":[1,-2,{"é":"日本\n\"\\"}]}});
    let ev = |event: &str, extra: Value| {
        let mut m = json!({"kind":"event","at":at,"execution_id":"act_1","event":event});
        if let (Some(o), Value::Object(e)) = (m.as_object_mut(), extra) {
            o.extend(e);
        }
        m
    };
    let big = 9_007_199_254_740_992i64;
    vec![
        json!({"kind":"session","session_id":"s1","actor":"a","started_at":at,"process":{"pid":4,"name":"gw","started_at":at}}),
        ev(
            "accepted",
            json!({"call":call,"action":action,"fingerprint":"f","action_class":"x","idempotency_key":"k"}),
        ),
        ev(
            "accepted",
            json!({"call":call,"action":action,"fingerprint":12}),
        ),
        ev(
            "accepted",
            json!({"call":call,"action":action,"fingerprint":true}),
        ),
        ev("accepted", json!({"action":action})),
        ev("accepted", json!({"call":"c","action":action})),
        ev(
            "accepted",
            json!({"call":{"jsonrpc_id":true},"action":action}),
        ),
        ev(
            "accepted",
            json!({"call":{"jsonrpc_id":"x","call_id":3},"action":action}),
        ),
        ev("accepted", json!({"call":{"call_id":[1]},"action":action})),
        ev("accepted", json!({"call":call})),
        ev("accepted", json!({"call":call,"action":[1]})),
        ev("attached", json!({"call":call,"recovery":"continued"})),
        ev("attached", json!({"call":call,"recovery":"later"})),
        ev("authorized", json!({"decision":"grant","approver":"bob"})),
        ev("authorized", json!({"decision":5})),
        ev("authorized", json!({})),
        ev("authorized", json!({"decision":"d","approver":{}})),
        ev("rejected", json!({"reason":"no"})),
        ev("rejected", json!({})),
        ev("dispatched", json!({"idempotency_key":"k"})),
        ev("dispatched", json!({"idempotency_key":[]})),
        ev("dispatch_failed", json!({"error":3})),
        ev("dispatch_failed", json!({"error":{}})),
        ev(
            "outcome",
            json!({"outcome":"success","target_status":201,"observed_via":"response","exit_status":-3,"error":"e","result_reference":"r","replayed":true}),
        ),
        ev(
            "outcome",
            json!({"outcome":"failure","target_status":"201"}),
        ),
        ev("outcome", json!({"outcome":"maybe"})),
        ev(
            "outcome",
            json!({"outcome":"unknown","observed_via":"rumour"}),
        ),
        ev("outcome", json!({"outcome":"success","target_status":600})),
        ev("outcome", json!({"outcome":"success","target_status":-1})),
        ev("outcome", json!({"outcome":"success","exit_status":"x"})),
        ev("outcome", json!({"outcome":"success","exit_status":"4"})),
        ev("outcome", json!({"outcome":"success","replayed":"yes"})),
        ev(
            "outcome",
            json!({"outcome":"not_executed","observed_via":null,"target_status":null}),
        ),
        ev("outcome", json!({"outcome":"succ\u{e9}ss"})),
        ev("delivered", json!({})),
        ev("delivery_failed", json!({"error":"gone"})),
        ev("cancelled", json!({"by":"user"})),
        ev("cancelled", json!({"by":false})),
        ev("teleported", json!({})),
        ev("delivered", json!({"at":"noon"})),
        ev("delivered", json!({"at":17})),
        ev(
            "delivered",
            json!({"at":"2026-07-22T16:03:18.123456+02:00"}),
        ),
        ev("delivered", json!({"at":"2026-07-22 14:03:18Z"})),
        ev("delivered", json!({"at":"2026-02-30T14:03:18Z"})),
        ev("delivered", json!({"execution_id":12})),
        ev("delivered", json!({"execution_id":null})),
        ev("delivered", json!({"execution_id":"a\nb\u{1}"})),
        ev("delivered", json!({"arguments":{"n":big}})),
        ev("delivered", json!({"arguments":{"n":-big}})),
        ev("delivered", json!({"arguments":{"n":big - 1, "f":1.5}})),
        ev("delivered", json!({"unknown_field":{"\u{e000}":1}})),
        json!({"kind":"event","at":at,"execution_id":"act_1","event":"dispatched"}),
        json!({"kind":7,"at":at}),
        json!({"kind":"gossip"}),
        json!({"at":at,"event":"delivered"}),
        json!({"kind":"session"}),
        json!({"kind":"session","session_id":"s2","process":"gw"}),
        json!({"kind":"session","session_id":"s2","process":{"pid":"12"}}),
        json!({"kind":"session","session_id":"s2","process":{"pid":true}}),
        json!({"kind":"session","session_id":"s2","ended_at":"later","client":{}}),
        json!({"kind":"execution","execution_id":"act_2","state":"completed","accepted_at":at,"dispatched_at":at,"completed_at":at,"tool":"deploy"}),
        json!({"kind":"execution","execution_id":"act_3","state":"dreaming","accepted_at":at,"tool":"deploy"}),
        json!({"kind":"execution","execution_id":"act_4","state":"completed","accepted_at":at,"tool":"deploy"}),
        json!({"kind":"ev\u{0}ent"}),
    ]
}

/// `records()` chained, with `seq` counting the lines that have one
/// (every record but sessions, snapshots and the odd ones), `repeat`
/// times over.
fn chained(repeat: usize) -> Vec<Vec<u8>> {
    chained_by(&mut NativeChainWriter::new(Vec::new()), repeat)
}

/// [`chained`] by writer `w` (which may have written lines before).
fn chained_by(w: &mut NativeChainWriter<Vec<u8>>, repeat: usize) -> Vec<Vec<u8>> {
    let mut seq = 0u64;
    let mut out = Vec::new();
    for _ in 0..repeat {
        for mut r in records() {
            if let Some(o) = r.as_object_mut() {
                if o.get("kind").and_then(Value::as_str) == Some("event") {
                    seq += 1;
                    o.insert("seq".into(), json!(seq));
                }
                out.push(w.append(o.clone()).unwrap().into_bytes());
            }
        }
    }
    out
}

#[test]
fn generated_journals_read_alike_either_way() {
    let lines = chained(3);
    let n = lines.len();
    let whole = same_bytes("whole", joined(&lines, true));
    assert!(whole.contains("Intact"), "{whole}");
    same_bytes("no final newline", joined(&lines, false));
    same_bytes(
        "crlf",
        joined(&lines, true)
            .split(|&b| b == b'\n')
            .collect::<Vec<_>>()
            .join(&b"\r\n"[..]),
    );
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend(joined(&lines, true));
    same_bytes("bom", bom);
    for cut in [0, 1, n / 2, n - 1] {
        let mut l = lines.clone();
        l.remove(cut);
        same_bytes(&format!("line {cut} deleted"), joined(&l, true));
        let mut l = lines.clone();
        l.insert(cut, lines[cut].clone());
        same_bytes(&format!("line {cut} repeated"), joined(&l, true));
        if cut + 1 < n {
            let mut l = lines.clone();
            l.swap(cut, cut + 1);
            same_bytes(&format!("lines {cut} swapped"), joined(&l, true));
        }
        let mut l = lines.clone();
        l.insert(cut, b"{not json".to_vec());
        same_bytes(&format!("bad JSON at {cut}"), joined(&l, true));
        let mut l = lines.clone();
        l.insert(cut, b"{\"kind\":\"event\",\"x\":\"\xff\xfe\"}".to_vec());
        same_bytes(&format!("bad UTF-8 at {cut}"), joined(&l, true));
        let mut l = lines.clone();
        l.insert(cut, b"   \t".to_vec());
        l.insert(cut, Vec::new());
        same_bytes(&format!("blank lines at {cut}"), joined(&l, true));
        let mut l = lines.clone();
        l.insert(
            cut,
            br#"{"at":"2026-07-22T14:03:18Z","event":"delivered","execution_id":"a","kind":"event"}"#
                .to_vec(),
        );
        same_bytes(&format!("unchained line at {cut}"), joined(&l, true));
        let mut l = lines.clone();
        let edited = String::from_utf8_lossy(&l[cut]).replacen("deploy", "deplox", 1);
        let edited = edited.replacen("\"at\":\"2026", "\"at\":\"2027", 1);
        l[cut] = edited.into_bytes();
        same_bytes(&format!("line {cut} edited"), joined(&l, true));
        let mut l = lines.clone();
        let spaced = String::from_utf8_lossy(&l[cut]).replacen("\":", "\": ", 2);
        l[cut] = spaced.into_bytes();
        same_bytes(&format!("line {cut} spaced"), joined(&l, true));
        let mut l = lines.clone();
        let stripped = String::from_utf8_lossy(&l[cut]);
        let v: Value = serde_json::from_str(&stripped).unwrap();
        let mut o = v.as_object().cloned().unwrap();
        o.remove("hash");
        o.remove("prev_hash");
        l[cut] = serde_json::to_vec(&o).unwrap();
        same_bytes(&format!("line {cut} stripped"), joined(&l, true));
    }
    // Cut anywhere: in a line, at its end, in a multi-byte character.
    let bytes = joined(&lines, true);
    for cut in [
        1,
        100,
        bytes.len() / 3,
        bytes.len() / 2 + 7,
        bytes.len() - 1,
    ] {
        same_bytes(&format!("cut at byte {cut}"), bytes[..cut].to_vec());
    }
    // A fork: a second line linking to the same line as the one before.
    let mut w = NativeChainWriter::new(Vec::new());
    let mut forked = Vec::new();
    for (i, r) in records().into_iter().take(6).enumerate() {
        let o = r.as_object().cloned().unwrap();
        if i == 4 {
            let mut alt = NativeChainWriter::new(Vec::new());
            let _ = alt.append(serde_json::Map::new());
            let mut o2 = o.clone();
            o2.insert("fork".into(), json!(true));
            forked.push(linked_to(w.head(), &o2));
        }
        forked.push(w.append(o).unwrap().into_bytes());
    }
    same_bytes("fork", joined(&forked, true));
}

#[test]
fn long_lines_and_odd_chain_fields_read_alike() {
    let mut w = NativeChainWriter::new(Vec::new());
    let mut lines = Vec::new();
    for (i, len) in [10usize, 20_000, 3, 70_000, 5].into_iter().enumerate() {
        let r = json!({"kind":"event","seq":i + 1,"at":"2026-07-22T14:03:18Z","execution_id":"a",
                       "event":"delivered","blob":"x".repeat(len)});
        lines.push(
            w.append(r.as_object().cloned().unwrap())
                .unwrap()
                .into_bytes(),
        );
    }
    same_bytes("long lines", joined(&lines, true));
    same_bytes("long last line cut", {
        let b = joined(&lines, true);
        b[..b.len() - 30_000].to_vec()
    });
    let odd = [
        r#"{"hash":"00","kind":"event","prev_hash":"\u0030"}"#,
        r#"{"hash":7,"kind":"event","prev_hash":"00"}"#,
        r#"{"hash":"00","kind":"event"}"#,
        r#"{"kind":"event","prev_hash":"00"}"#,
        r#"{"hash":"00","kind":"event","prev_hash":"0000000000000000000000000000000000000000000000000000000000000000"}"#,
        r#"[1,2]"#,
        r#""text""#,
        r#"{}"#,
    ];
    for l in odd {
        let mut ls = lines.clone();
        ls.insert(2, l.as_bytes().to_vec());
        same_bytes(l, joined(&ls, true));
        same_bytes(l, l.as_bytes().to_vec());
    }
}

#[test]
fn compressed_and_file_journals_read_alike() {
    use std::io::Write;
    let bytes = joined(&chained(2), true);
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("j.jsonl");
    std::fs::write(&plain, &bytes).unwrap();
    same("file", &JournalSource::file(&plain));
    let gz = dir.path().join("j.jsonl.gz");
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(&bytes).unwrap();
    let packed = e.finish().unwrap();
    std::fs::write(&gz, &packed).unwrap();
    let r = same("gzip", &JournalSource::file(&gz));
    assert!(r.contains("lines="), "{r}");
    // A gzip stream cut short is an error either way.
    std::fs::write(&gz, &packed[..packed.len() * 2 / 3]).unwrap();
    same("gzip cut short", &JournalSource::file(&gz));
    let zst = dir.path().join("j.jsonl.zst");
    std::fs::write(&zst, zstd::encode_all(&bytes[..], 1).unwrap()).unwrap();
    same("zstd", &JournalSource::file(&zst));
}

/// Every file under `root`, recursively.
fn files(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&p) else {
            continue;
        };
        for e in rd.flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_none_or(|x| x != "rs" && x != "snap") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn the_journals_here_read_alike() {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut n = 0;
    for dir in ["tests", "sample-journals", "examples"] {
        for f in files(&here.join(dir)) {
            if std::fs::metadata(&f).is_ok_and(|m| m.len() < (32 << 20)) {
                same(&f.display().to_string(), &JournalSource::file(&f));
                n += 1;
            }
        }
    }
    assert!(n > 20, "only {n} journals found");
    // The real journals beside the repository, when they are there.
    for f in files(&here.join("../shared/real-journals")) {
        same(&f.display().to_string(), &JournalSource::file(&f));
    }
}

#[test]
fn plain_times_are_times_to_chrono() {
    for t in [
        "2026-07-22T14:03:18Z",
        "2026-07-22T14:03:18.1Z",
        "2026-07-22T14:03:18.123456789+02:00",
        "2024-02-29T00:00:00-23:59",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59+00:00",
    ] {
        assert!(super::record::plain_time(t.as_bytes()), "{t}");
        assert!(chrono::DateTime::parse_from_rfc3339(t).is_ok(), "{t}");
    }
    for t in [
        "2026-02-29T00:00:00Z",
        "2026-07-22T14:03:60Z",
        "2026-07-22T24:00:00Z",
        "2026-07-22t14:03:18Z",
        "2026-07-22 14:03:18Z",
        "2026-07-22T14:03:18",
        "2026-07-22T14:03:18.Z",
        "2026-07-22T14:03:18.1234567890Z",
        "2026-07-22T14:03:18+0200",
        "2026-07-22T14:03:18+24:00",
        "2026-13-01T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "2026-07-22T14:03:18Zx",
        "２026-07-22T14:03:18Z",
    ] {
        assert!(!super::record::plain_time(t.as_bytes()), "{t}");
    }
}

/// Lines with bad UTF-8 (in a chained line's string, in a name, at its
/// end) read alike, wherever they fall in a block or a piece: a first
/// line of varying length moves every line after it across the edges.
#[test]
fn bad_utf8_anywhere_reads_alike() {
    let n = chained(2).len();
    let bad: [&[u8]; 5] = [
        b"\xff",
        b"\xed\xa0\x80",
        b"\xc0\xaf",
        b"\xe6\x97",
        b"\xf4\x90\x80\x80",
    ];
    for (k, b) in bad.iter().enumerate() {
        for pad in [0usize, 300, 700, 1000, 1023, 5000, 8100] {
            let mut w = NativeChainWriter::new(Vec::new());
            let first = json!({"kind":"session","session_id":"s","actor":"x".repeat(pad)});
            let mut l = vec![
                w.append(first.as_object().cloned().unwrap())
                    .unwrap()
                    .into_bytes(),
            ];
            l.extend(chained_by(&mut w, 2));
            let at = 1 + (k * 7 + pad) % n;
            let line = &mut l[at];
            match line.windows(7).position(|x| x == b"deploy\"") {
                Some(i) => line.splice(i + 3..i + 3, b.iter().copied()).for_each(drop),
                None => line.splice(2..2, b.iter().copied()).for_each(drop),
            };
            same_bytes(
                &format!("bad UTF-8 {b:x?} at line {at}, pad {pad}"),
                joined(&l, true),
            );
            let mut cut = joined(&l, true);
            cut.extend_from_slice(b);
            same_bytes(&format!("bad UTF-8 {b:x?} at the end, pad {pad}"), cut);
        }
    }
}

/// The lines a gateway writes are checked from their bytes, found from
/// their start whatever ends them (`\n`, `\r\n`, the end of the journal),
/// not left to the full parse.
#[test]
fn written_lines_take_the_fast_way() {
    let lines: Vec<Vec<u8>> = chained(1).into_iter().take(2).collect();
    for (what, data) in [
        ("lf", joined(&lines, true)),
        ("crlf", lines.join(&b"\r\n"[..])),
        ("no final newline", joined(&lines, false)),
    ] {
        let mut items = Vec::new();
        super::check_piece(&data, (0, data.len()), false, 0, &mut items);
        assert_eq!(items.len(), 2, "{what}");
        for item in &items {
            assert!(matches!(item, super::Item::Raw { .. }), "{what}");
        }
    }
}

/// The line of `record` linked to `head` with its hash computed, as a
/// writer would write it after the line whose hash is `head`; the writer
/// itself is not moved on (a fork, or a line rewritten in place).
fn linked_to(head: &str, record: &serde_json::Map<String, Value>) -> Vec<u8> {
    let mut line = record.clone();
    line.insert(
        "hash".into(),
        json!(crate::journal::native_chain_hash(head, record)),
    );
    line.insert("prev_hash".into(), json!(head));
    serde_json::to_vec(&line).unwrap()
}

/// Short chained lines, many to a piece, so that the tracker takes most of
/// them as runs: `seqs[i]` is line i's `seq` (`None`: the line has none),
/// `fork_at` inserts, before line i, a second line linked to the same line
/// as line i, and `rewrite_at` rewrites line i with a hash recomputed for
/// what it then says (the line after it links to the hash it had).
fn short_lines(seqs: &[Option<u64>], fork_at: Option<usize>, rewrite_at: Option<usize>) -> Vec<u8> {
    let mut w = NativeChainWriter::new(Vec::new());
    let mut out = Vec::new();
    for (i, seq) in seqs.iter().enumerate() {
        let mut o = serde_json::Map::new();
        o.insert("kind".into(), json!("event"));
        o.insert("at".into(), json!("2026-07-22T14:03:18Z"));
        o.insert("execution_id".into(), json!(format!("act_{i}")));
        o.insert("event".into(), json!("delivered"));
        if let Some(s) = seq {
            o.insert("seq".into(), json!(s));
        }
        if fork_at == Some(i) {
            let mut fork = o.clone();
            fork.insert("fork".into(), json!(true));
            out.push(linked_to(w.head(), &fork));
        }
        if rewrite_at == Some(i) {
            let head = w.head().to_string();
            let _ = w.append(o.clone()).unwrap();
            o.insert("execution_id".into(), json!("act_rewritten"));
            out.push(linked_to(&head, &o));
            continue;
        }
        out.push(w.append(o).unwrap().into_bytes());
    }
    joined(&out, true)
}

/// Lines the tracker takes as runs (linked to the line before, with the
/// next `seq`) report as the full read reports them, whatever breaks the
/// chain at any place in a piece: a fork, a line edited, a line rewritten
/// with its hash recomputed, a `seq` that skips, repeats or goes missing while the
/// hashes link.
#[test]
fn runs_of_linked_lines_read_alike() {
    let n = 40u64;
    let counted: Vec<Option<u64>> = (1..=n).map(Some).collect();
    let whole = same_bytes("short lines", short_lines(&counted, None, None));
    assert!(whole.contains("Intact"), "{whole}");
    // Line 0 is the genesis line; every later place, across pieces.
    for at in 1..n as usize - 1 {
        let forked = same_bytes(
            &format!("fork at {at}"),
            short_lines(&counted, Some(at), None),
        );
        assert!(forked.contains("InsertedLine"), "{forked}");
        let rewritten = same_bytes(
            &format!("rewritten at {at}"),
            short_lines(&counted, None, Some(at)),
        );
        assert!(rewritten.contains("BrokenLink"), "{rewritten}");
        let edited: Vec<u8> = String::from_utf8_lossy(&short_lines(&counted, None, None))
            .replacen(&format!("act_{at}\""), &format!("act_{at}x\""), 1)
            .into_bytes();
        let edited = same_bytes(&format!("edited at {at}"), edited);
        assert!(edited.contains("ChangedLine"), "{edited}");
        let mut skips = counted.clone();
        for s in &mut skips[at..] {
            *s = s.map(|s| s + 1);
        }
        let gap = same_bytes(
            &format!("seq skips at {at}"),
            short_lines(&skips, None, None),
        );
        assert!(gap.contains("SeqGap"), "{gap}");
        let mut repeats = counted.clone();
        for s in &mut repeats[at..] {
            *s = s.map(|s| s - 1);
        }
        same_bytes(
            &format!("seq repeats at {at}"),
            short_lines(&repeats, None, None),
        );
        let mut none = counted.clone();
        none[at] = None;
        same_bytes(&format!("no seq at {at}"), short_lines(&none, None, None));
        // Lines without seq, then a line deleted after them: the message
        // says one without seq may have been.
        let mut unsequenced = counted.clone();
        for s in &mut unsequenced[at..(at + 3).min(n as usize)] {
            *s = None;
        }
        let mut lines: Vec<Vec<u8>> = short_lines(&unsequenced, None, None)
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
            .map(<[u8]>::to_vec)
            .collect();
        lines.remove((at + 4).min(n as usize - 1));
        same_bytes(
            &format!("deleted after unsequenced at {at}"),
            joined(&lines, true),
        );
    }
}

/// A run the tracker refuses is not lost: its lines are linked one by one.
/// (A run is gathered only while the chain is intact, so the tracker never
/// refuses one on the way through [`super::apply_block`]; a chain not
/// started yet refuses any.)
#[test]
fn a_refused_run_is_linked_line_by_line() {
    let counted: Vec<Option<u64>> = (1..=4).map(Some).collect();
    let data = short_lines(&counted, None, None);
    let mut items = Vec::new();
    super::check_piece(&data, (0, data.len()), false, 0, &mut items);
    let follows: Vec<bool> = items
        .iter()
        .map(|i| matches!(i, super::Item::Raw { follows: true, .. }))
        .collect();
    assert_eq!(follows, [false, true, true, true]);
    let mut ap = super::Applier::default();
    // Lines 1 to 4 as one run, before any line was linked.
    let stored = |i: usize| match items[i] {
        super::Item::Raw { stored, .. } => stored,
        _ => (0, 0),
    };
    let mut run = super::RunSoFar {
        lines: 4,
        first: (0, 1),
        last: (4, Some(4), stored(3)),
        before_last: stored(2),
    };
    crate::journal::read::with_test_ctx(|ctx| run.flush(ctx, &mut ap, &data, &items));
    assert_eq!(run.lines, 0);
    let chain = ap.chain.take().expect("the lines were linked");
    assert_eq!(chain.lines(), 4);
    assert!(chain.finish().is_intact());
}
