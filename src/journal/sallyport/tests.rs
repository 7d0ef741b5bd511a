//! Sallyport journals written the way Sallyport writes them: chain,
//! signatures, sealed events and their pairing.

use super::seal::ecies_key;
use super::*;
use crate::journal::chain::{ChainStatus, FailureKind};
use crate::journal::{ChainKeys, JournalSource, LoadOptions, load_with, verify};
use crate::model::EventKind;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use p256::ecdsa::signature::Signer;
use p256::elliptic_curve::sec1::ToSec1Point;
use serde_json::json;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/sallyport");

/// Test keys (never real ones): fixed scalars.
fn signer() -> p256::ecdsa::SigningKey {
    p256::ecdsa::SigningKey::from_slice(&[0x11; 32]).unwrap()
}
fn identity() -> p256::SecretKey {
    p256::SecretKey::from_slice(&[0x22; 32]).unwrap()
}

/// Writes a Sallyport journal as the app does: each event sealed to the
/// identity's public key, chained and signed.
struct Writer {
    prev: String,
    seq: u64,
    sign: bool,
    lines: Vec<String>,
}

impl Writer {
    fn new(sign: bool) -> Self {
        Writer {
            prev: GENESIS.into(),
            seq: 0,
            sign,
            lines: Vec::new(),
        }
    }

    fn seal(seq: u64, plain: &[u8]) -> String {
        let eph = p256::SecretKey::from_slice(&[0x30 + seq as u8; 32]).unwrap();
        let epk = eph.public_key();
        let recipient = identity().public_key();
        let shared = p256::ecdh::diffie_hellman(eph.to_nonzero_scalar(), recipient.as_affine());
        let key = ecies_key(shared.raw_secret_bytes(), &epk).unwrap();
        let nonce = [seq as u8; 12];
        let ct = ChaCha20Poly1305::new_from_slice(&key)
            .unwrap()
            .encrypt(&Nonce::try_from(&nonce[..]).unwrap(), plain)
            .unwrap();
        let point = epk.to_sec1_point(false);
        let mut blob = (point.as_bytes().len() as u16).to_be_bytes().to_vec();
        blob.extend_from_slice(point.as_bytes());
        blob.extend_from_slice(&nonce);
        blob.extend_from_slice(&ct);
        base64::engine::general_purpose::STANDARD.encode(blob)
    }

    fn row(&mut self, mut event: Value) {
        self.seq += 1;
        event["seq"] = json!(self.seq);
        let sealed = Self::seal(self.seq, &serde_json::to_vec(&event).unwrap());
        let this = this_hash(&self.prev, &sealed, self.seq);
        let mut m = Map::new();
        m.insert("prev_hash".into(), json!(self.prev));
        m.insert("sealed".into(), json!(sealed));
        m.insert("seq".into(), json!(self.seq));
        if self.sign {
            let sig: p256::ecdsa::Signature = signer().sign(this.as_bytes());
            m.insert(
                "sig".into(),
                json!(base64::engine::general_purpose::STANDARD.encode(sig.to_der().as_bytes())),
            );
        }
        m.insert("this_hash".into(), json!(this));
        self.lines.push(serde_json::to_string(&m).unwrap());
        self.prev = this;
    }
}

const A: &str = "4242:1784728680000000000";
const B: &str = "5151:1784728740000000000";

fn event(ts: &str, session: &str, tool: &str, decision: &str) -> Value {
    json!({
        "ts": ts, "identity": "agent://mac.mcp", "session": session, "channel": "mcp",
        "tool": tool, "target": "github", "args_preview": "title: Nightly build failed",
        "decision": decision, "rule": "session.approved", "policy_hash": "", "grant_id": "",
        "is_error": false, "bytes_out": 0, "duration_ms": 0, "recording": ""
    })
}

/// The fixture incident: a call, the same call again from a new
/// process that never got its result, a refused SSH command, a vault
/// lock, and the first session's end.
fn incident(sign: bool) -> Vec<String> {
    let mut w = Writer::new(sign);
    w.row(event(
        "2026-07-22T14:00:00.000Z",
        A,
        "github.create_issue",
        "session-approved.start",
    ));
    let mut r = event(
        "2026-07-22T14:00:02.000Z",
        A,
        "github.create_issue",
        "session-approved",
    );
    r["bytes_out"] = json!(120);
    w.row(r);
    w.row(event(
        "2026-07-22T14:01:00.000Z",
        B,
        "github.create_issue",
        "session-approved.start",
    ));
    let mut d = event("2026-07-22T14:01:30.000Z", B, "ssh.exec", "ask→denied");
    d["channel"] = json!("ssh");
    d["target"] = json!("db1.internal");
    d["args_preview"] = json!("rm -rf /srv/cache");
    d["rule"] = json!("key.per-call");
    d["is_error"] = json!(true);
    w.row(d);
    w.row(
        json!({"ts": "2026-07-22T14:02:00.000Z", "identity": "", "session": "",
        "channel": "vault", "tool": "vault.locked", "target": "", "args_preview": "",
        "decision": "info", "rule": "vault.lifecycle", "policy_hash": "", "grant_id": "",
        "is_error": false, "bytes_out": 0, "duration_ms": 0, "recording": ""}),
    );
    w.row(
        json!({"ts": "2026-07-22T14:02:00.100Z", "identity": "", "session": "",
        "channel": "session", "tool": "session.ended", "target": A,
        "args_preview": "agent: 1 calls, vault locked", "decision": "info",
        "rule": "session.lifecycle", "policy_hash": "", "grant_id": "", "is_error": false,
        "bytes_out": 0, "duration_ms": 120100, "recording": "",
        "origin": {"name": "agent", "app": "com.example.agent", "pid": 4242,
                   "signed": true, "signedBy": "com.example.agent"}}),
    );
    w.lines
}

fn signer_hex() -> String {
    hex::encode(signer().verifying_key().to_sec1_point(false).as_bytes())
}

fn keys(sign: bool, ident: bool) -> LoadOptions {
    LoadOptions {
        forced: None,
        keys: ChainKeys {
            signer_key: sign
                .then(|| KeyFile::from_bytes("signer.pub.hex", signer_hex().as_bytes())),
            audit_identity: ident.then(|| {
                KeyFile::from_bytes("id.hex", hex::encode(identity().to_bytes()).as_bytes())
            }),
            attestation_key: None,
        },
        ..LoadOptions::default()
    }
}

fn src(lines: &[String], newline: bool) -> JournalSource {
    let mut t = lines.join("\n");
    if newline {
        t.push('\n');
    }
    JournalSource::embedded(
        "audit-000001.jsonl",
        Box::leak(t.into_bytes().into_boxed_slice()),
    )
}

fn status(lines: &[String], newline: bool, sign: bool) -> ChainStatus {
    verify(src(lines, newline), &keys(sign, false))
        .unwrap()
        .chain
}

fn failure(st: &ChainStatus) -> (FailureKind, u32) {
    let f = st.failure().unwrap_or_else(|| panic!("{st:?}"));
    (f.kind, f.line)
}

#[test]
fn derived_vector() {
    // docs/formats.md#sallyport-chain, verified locally from the formula.
    assert_eq!(
        this_hash(GENESIS, "AAEC", 1),
        "806b91b69947b51715b7fe77b9a85fd2155dfeea46b4fc766ebc7015cbe20c03"
    );
}

#[test]
fn fixture_is_what_the_writer_writes() {
    let text = incident(true).join("\n") + "\n";
    let path = format!("{DIR}/audit-000001.jsonl");
    if std::env::var_os("RETRACE_WRITE_FIXTURES").is_some() {
        std::fs::create_dir_all(DIR).unwrap();
        std::fs::write(&path, &text).unwrap();
        std::fs::write(format!("{DIR}/signer.pub.hex"), signer_hex() + "\n").unwrap();
        std::fs::write(
            format!("{DIR}/audit-identity.hex"),
            hex::encode(identity().to_bytes()) + "\n",
        )
        .unwrap();
    }
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "rerun with RETRACE_WRITE_FIXTURES=1"
    );
}

#[test]
fn chain_verifies_offline_and_signatures_with_the_key() {
    let l = incident(true);
    match status(&l, true, false) {
        ChainStatus::Intact {
            lines, signatures, ..
        } => {
            assert_eq!(lines, 6);
            assert!(matches!(signatures, SignatureCheck::NotChecked { .. }));
        }
        other => panic!("{other:?}"),
    }
    match status(&l, true, true) {
        ChainStatus::Intact { signatures, .. } => {
            assert_eq!(signatures, SignatureCheck::Verified { count: 6 })
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn every_tampering_kind() {
    let l = incident(true);
    let edit = |i: usize, f: &dyn Fn(&mut Map<String, Value>)| {
        let mut l = l.clone();
        let mut m: Map<String, Value> = serde_json::from_str(&l[i]).unwrap();
        f(&mut m);
        l[i] = serde_json::to_string(&m).unwrap();
        l
    };
    // Changed ciphertext.
    let t = edit(2, &|m| {
        let s = m["sealed"].as_str().unwrap().replacen('A', "B", 1);
        m.insert("sealed".into(), json!(s));
    });
    assert_eq!(
        failure(&status(&t, true, false)),
        (FailureKind::ChangedLine, 3)
    );
    // Re-hashed by a forger: the signature catches the row itself; with
    // no key, the next link does.
    let t = edit(2, &|m| {
        let s = m["sealed"].as_str().unwrap().replacen('A', "B", 1);
        let h = this_hash(m["prev_hash"].as_str().unwrap(), &s, 3);
        m.insert("sealed".into(), json!(s));
        m.insert("this_hash".into(), json!(h));
    });
    assert_eq!(
        failure(&status(&t, true, true)),
        (FailureKind::BadSignature, 3)
    );
    assert_eq!(
        failure(&status(&t, true, false)),
        (FailureKind::BrokenLink, 4)
    );
    // Edited link.
    let t = edit(3, &|m| {
        m.insert("prev_hash".into(), json!("1".repeat(64)));
    });
    assert_eq!(
        failure(&status(&t, true, false)),
        (FailureKind::BrokenLink, 4)
    );
    // Deleted, reordered.
    let mut t = l.clone();
    t.remove(1);
    assert_eq!(
        failure(&status(&t, true, false)),
        (FailureKind::DeletedLine, 2)
    );
    let mut t = l.clone();
    t.swap(3, 4);
    assert_eq!(
        failure(&status(&t, true, false)),
        (FailureKind::ReorderedLines, 4)
    );
    // Unsigned row with a key given; wrong signer.
    let t = edit(4, &|m| {
        m.remove("sig");
    });
    assert_eq!(failure(&status(&t, true, true)), (FailureKind::Unsigned, 5));
    let unsigned = incident(false);
    assert_eq!(
        failure(&status(&unsigned, true, true)),
        (FailureKind::Unsigned, 1)
    );
    // An unterminated last row is an error even when it verifies.
    assert_eq!(
        failure(&status(&l, false, false)),
        (FailureKind::TruncatedLastLine, 6)
    );
    let mut t = l.clone();
    let last = t.pop().unwrap();
    t.push(last[..40].to_string());
    assert_eq!(
        failure(&status(&t, false, false)),
        (FailureKind::TruncatedLastLine, 6)
    );
}

#[test]
fn seq_gap_with_intact_links() {
    let mut w = Writer::new(true);
    w.row(event("2026-07-22T14:00:00Z", A, "t", "allow.start"));
    w.seq += 1;
    w.row(event("2026-07-22T14:00:01Z", A, "t", "allow"));
    assert_eq!(
        failure(&status(&w.lines, true, true)),
        (FailureKind::SeqGap, 2)
    );
}

#[test]
fn events_decrypt_pair_and_become_sessions() {
    let (j, model) = load_with(
        vec![src(&incident(true), true)],
        &keys(true, true),
        &mut |_| {},
    )
    .unwrap();
    assert!(j[0].chain.is_intact());
    assert_eq!(j[0].bad_line_count, 0, "{:?}", j[0].bad_lines);
    // Two intents and one refusal: three calls, not five rows.
    assert_eq!(model.calls.len(), 3);
    let names = |x: &crate::model::Execution| -> Vec<&'static str> {
        x.events.iter().map(|e| e.kind.name()).collect()
    };
    // Ids are the journal's content identity and the inner seq.
    let by_seq = |n: u32| {
        let ids: Vec<usize> = (0..model.execution_count())
            .filter(|&i| {
                let id = &model.to_executions()[i].id;
                id.starts_with("sallyport:") && id.ends_with(&format!(":{n}"))
            })
            .collect();
        assert_eq!(ids.len(), 1, "{n}");
        ids[0]
    };
    let first = &model.to_executions()[by_seq(1)];
    assert_eq!(
        names(first),
        ["accepted", "authorized", "dispatched", "outcome"]
    );
    assert_eq!(
        first.events[3].source.position(),
        2,
        "the outcome is the result row"
    );
    // The second intent never got its result row: no outcome.
    let second = &model.to_executions()[by_seq(3)];
    assert_eq!(names(second), ["accepted", "authorized", "dispatched"]);
    assert!(
        j[0].notes
            .iter()
            .any(|n| n.contains("1 intent row(s) without a result row (lines 3)"))
    );
    let refused = &model.to_executions()[by_seq(4)];
    assert!(
        matches!(&refused.events[1].kind, EventKind::Rejected { reason } if reason == "denied")
    );
    // Sessions with the process behind each key.
    let a = model.session(A).unwrap();
    let p = a.process.as_ref().unwrap();
    assert_eq!(p.pid, Some(4242));
    assert_eq!(p.name.as_deref(), Some("agent"));
    assert_eq!(
        p.started_at.unwrap().to_rfc3339(),
        "2026-07-22T13:58:00+00:00"
    );
    assert_eq!(a.end_reason.as_deref(), Some("vault locked"));
    assert_eq!(a.actor.as_deref(), Some("signed-process:com.example.agent"));
    assert_eq!(
        model.session(B).unwrap().process.as_ref().unwrap().pid,
        Some(5151)
    );
    assert_eq!(first.accepted().unwrap().1.session_id.as_deref(), Some(A));
}

#[test]
fn without_the_identity_the_chain_still_verifies() {
    let (j, model) = load_with(
        vec![src(&incident(true), true)],
        &keys(false, false),
        &mut |_| {},
    )
    .unwrap();
    assert!(j[0].chain.is_intact());
    assert_eq!(model.execution_count(), 0);
    assert!(j[0].notes.iter().any(|n| n.contains("--audit-identity")));
    // A wrong identity: every row is unreadable, the chain is reported.
    let mut o = keys(false, false);
    o.keys.audit_identity = Some(KeyFile::from_bytes(
        "x",
        hex::encode([0x33u8; 32]).as_bytes(),
    ));
    let j = verify(src(&incident(true), true), &o).unwrap();
    assert!(j.chain.is_intact());
    assert_eq!(j.bad_line_count, 6);
    assert!(
        j.bad_lines[0].message.contains("does not decrypt"),
        "{:?}",
        j.bad_lines[0]
    );
}
