//! mcp-audit chains, attestations and their conformance vectors.

use super::attestation::{UnsafeNumber, ml_form, signing_form};
use super::*;
use crate::journal::chain::{ChainStatus, FailureKind};
use crate::journal::keys::KeyFile;
use crate::journal::{ChainKeys, JournalSource, LoadOptions, verify};
use ed25519_dalek::Signer;
use hmac::{Hmac, KeyInit, Mac};

fn sha(s: &str) -> String {
    hex::encode(Sha256::digest(s.as_bytes()))
}

fn ml(json: &str) -> Result<String, UnsafeNumber> {
    let mut s = String::new();
    ml_form(&rawjson::parse(json).unwrap(), &mut s)?;
    Ok(s)
}

// Conformance vectors by value from elang2/mcp-audit-gateway
// test/vectors/checkpoint.json @17721254 (`canonicalize_value`,
// `extensions_digest`, `checkpoint_canonicalization`).
#[test]
fn ml_form_matches_the_conformance_vectors() {
    let a = ml(r#"{ "z": 1, "a": { "y": 2, "b": 3 } }"#).unwrap();
    assert_eq!(a, r#"["M",[["a",["M",[["b",3],["y",2]]]],["z",1]]]"#);
    assert_eq!(
        sha(&a),
        "780dbde7596450dde10d8362bc4590826315109f85a55a2349f13539f023a07c"
    );
    assert_eq!(
        sha(&ml(r#"{"items": [3, 2, 1]}"#).unwrap()),
        "24ec68e95f9bb0b135d4a8dd89b5939ac05fd7d4d43b2a7c85d800151441f2e9"
    );
    let u = ml(r#"{ "ñ": 1, "a": 2, "z": 3, "à": 4 }"#).unwrap();
    assert_eq!(u, r#"["M",[["a",2],["z",3],["à",4],["ñ",1]]]"#);
    assert_eq!(
        sha(&u),
        "6f8e940801e3f524e3f0db529e705583a0ab57c5ad5966cb29d6808fd064bc49"
    );
    // UTF-16 code-unit order: U+10000 (0xD800…) sorts before U+FF61.
    let astral = ml("{ \"｡\": 1, \"𐀀\": 2 }").unwrap();
    assert_eq!(
        sha(&astral),
        "17e0391b630e2a8ba408b2d47f689fbb6c4fd4e63c606691d3eca219d1843495"
    );
    assert!(ml("0.1").unwrap_err().to_string().contains("unsafe number"));
    assert_eq!(
        sha(&ml(r#"{ "model": "gpt-4", "max_tokens": 1024 }"#).unwrap()),
        "bae5f878e0a23ed1918f2cb454e70d1306a862aa9bdc96117bbdc7d5b25b0d02"
    );
}

#[test]
fn signing_form_matches_the_conformance_vectors() {
    let rec = rawjson::parse(
        r#"{"id":"550e8400-e29b-41d4-a716-446655440099","timestamp":"2026-08-22T21:00:00.000Z","method":"tools/call","toolName":"query_db","namespace":"data","upstream":"data-server","principal":"user:alice@example.com","durationMs":150,"success":true,"errorCode":null,"previousHash":"genesis","extensionsDigest":"bae5f878e0a23ed1918f2cb454e70d1306a862aa9bdc96117bbdc7d5b25b0d02"}"#,
    )
    .unwrap();
    assert_eq!(
        sha(&signing_form(&rec).unwrap()),
        "f5aa5b0cfbfcfd141c3e70a5ad2b4bee51ec170bdc88391829d1c05230550967"
    );
    let ckpt = rawjson::parse(
        r#"{"id":"ckpt_990e8400-e29b-41d4-a716-446655440001","type":"checkpoint","timestamp":"2026-08-22T20:00:00.000Z","sequence":1,"recordCount":5,"previousHash":"4e9c29d6e22fc2ef1f931994997b01f48f054c1294a7c287bfeece79417e5d43"}"#,
    )
    .unwrap();
    assert_eq!(
        sha(&signing_form(&ckpt).unwrap()),
        "29fcb385d7306fe136b50eb46fd55731ff3c2aadbecb18554267890c3b625794"
    );
    let ckpt = rawjson::parse(
        r#"{"id":"ckpt_990e8400-e29b-41d4-a716-446655440002","type":"checkpoint","timestamp":"2026-08-22T20:01:00.000Z","sequence":2,"recordCount":10,"previousHash":"abc123def456789","parties":[{"party":"gateway","role":"witness","scope":["sequence","recordCount","previousHash"]}]}"#,
    )
    .unwrap();
    assert_eq!(
        sha(&signing_form(&ckpt).unwrap()),
        "0b23e3a13467b142f6baaa206450428c03c9757889753d91e496f02c4b1c9d0f"
    );
}

/// How a test journal is attested.
enum Att<'a> {
    Hmac(&'a [u8]),
    Ed(&'a ed25519_dalek::SigningKey),
}

/// Writes an mcp-audit chain the way the gateway does: each record
/// gets `previousHash` (sha256 of the previous line) and an
/// attestation over its signing form, and is written compact.
fn write(records: &[&str], att: &Att<'_>) -> Vec<String> {
    let mut prev = "genesis".to_string();
    let mut out = Vec::new();
    for r in records {
        let mut raw = rawjson::parse(r).unwrap();
        if let Raw::Obj(m) = &mut raw {
            m.push(("previousHash".into(), Raw::Str(prev.clone())));
        }
        let form = signing_form(&raw).unwrap();
        let sig = match att {
            Att::Hmac(k) => {
                let mut mac = Hmac::<Sha256>::new_from_slice(k).unwrap();
                mac.update(form.as_bytes());
                hex::encode(mac.finalize().into_bytes())
            }
            Att::Ed(k) => hex::encode(k.sign(form.as_bytes()).to_bytes()),
        };
        if let Raw::Obj(m) = &mut raw {
            m.push(("attestation".into(), Raw::Str(sig)));
        }
        let mut line = String::new();
        raw.write_js(&mut line);
        prev = sha(&line);
        out.push(line);
    }
    out
}

fn records() -> Vec<String> {
    (1..=5)
        .map(|i| {
            format!(
                r#"{{"id":"rec-{i}","timestamp":"2026-08-22T20:10:0{i}.000Z","method":"tools/call","toolName":"fs/write_file","namespace":"fs","upstream":"fs-server","principal":"user:bob@example.com","durationMs":{},"success":true,"errorCode":null,"args":{{"path":"/tmp/{i}.txt","content":"ü"}}}}"#,
                10 * i
            )
        })
        .collect()
}

fn run(lines: &[String], key: Option<&[u8]>, newline: bool) -> ChainStatus {
    let mut text = lines.join("\n");
    if newline {
        text.push('\n');
    }
    let bytes: &'static [u8] = Box::leak(text.into_bytes().into_boxed_slice());
    let keys = ChainKeys {
        attestation_key: key.map(|k| KeyFile::from_bytes("key.hex", k)),
        ..ChainKeys::default()
    };
    verify(
        JournalSource::embedded("audit.jsonl", bytes),
        &LoadOptions {
            keys,
            ..LoadOptions::default()
        },
    )
    .unwrap()
    .chain
}

fn failure(st: &ChainStatus) -> (FailureKind, u32) {
    let f = st.failure().unwrap_or_else(|| panic!("{st:?}"));
    (f.kind, f.line)
}

const KEY_HEX: &[u8] = b"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";

fn key() -> Vec<u8> {
    hex::decode(KEY_HEX).unwrap()
}

fn journal() -> Vec<String> {
    let r = records();
    let refs: Vec<&str> = r.iter().map(String::as_str).collect();
    write(&refs, &Att::Hmac(&key()))
}

#[test]
fn intact_with_and_without_the_key() {
    match run(&journal(), Some(KEY_HEX), true) {
        ChainStatus::Intact {
            lines, signatures, ..
        } => {
            assert_eq!(lines, 5);
            assert_eq!(signatures, SignatureCheck::Verified { count: 5 });
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        run(&journal(), None, true),
        ChainStatus::Intact {
            signatures: SignatureCheck::NotChecked { .. },
            ..
        }
    ));
}

#[test]
fn every_tampering_kind() {
    // An attested field changed: the attestation finds the line itself;
    // without the key the next link shows it.
    let mut l = journal();
    l[1] = l[1].replace("\"durationMs\":20", "\"durationMs\":21");
    assert_eq!(
        failure(&run(&l, Some(KEY_HEX), true)),
        (FailureKind::BadSignature, 2)
    );
    assert_eq!(failure(&run(&l, None, true)), (FailureKind::BrokenLink, 3));
    // Only `args` changed: not attested, so only the next link shows it.
    let mut l = journal();
    l[1] = l[1].replace("/tmp/2.txt", "/etc/passwd");
    assert_eq!(
        failure(&run(&l, Some(KEY_HEX), true)),
        (FailureKind::BrokenLink, 3)
    );
    // Deleted, reordered, duplicated.
    let mut l = journal();
    l.remove(2);
    let st = run(&l, Some(KEY_HEX), true);
    assert_eq!(failure(&st), (FailureKind::BrokenLink, 3));
    assert!(st.failure().unwrap().message.contains("deleted"));
    let mut l = journal();
    l.swap(1, 2);
    assert_eq!(
        failure(&run(&l, Some(KEY_HEX), true)),
        (FailureKind::ReorderedLines, 2)
    );
    let mut l = journal();
    let dup = l[1].clone();
    l.insert(2, dup);
    assert_eq!(
        failure(&run(&l, None, true)),
        (FailureKind::InsertedLine, 3)
    );
    // An edited link breaks at that line.
    let mut l = journal();
    l[2] = l[2].replace("\"previousHash\":\"", "\"previousHash\":\"f");
    assert_eq!(
        failure(&run(&l, Some(KEY_HEX), true)),
        (FailureKind::BrokenLink, 3)
    );
    // A second genesis.
    let mut l = journal();
    let r = records();
    let refs: Vec<&str> = r.iter().map(String::as_str).collect();
    l[3] = write(&refs[3..4], &Att::Hmac(&key())).remove(0);
    let st = run(&l, Some(KEY_HEX), true);
    assert_eq!(failure(&st), (FailureKind::BrokenLink, 4));
    // Unsigned and truncated.
    let mut l = journal();
    l[3] = l[3].replace("\"attestation\":\"", "\"attestation_removed\":\"");
    assert_eq!(
        failure(&run(&l, Some(KEY_HEX), true)),
        (FailureKind::Unsigned, 4)
    );
    let mut l = journal();
    let last = l.pop().unwrap();
    l.push(last[..last.len() - 30].to_string());
    assert_eq!(
        failure(&run(&l, None, false)),
        (FailureKind::TruncatedLastLine, 5)
    );
    // Signed by another key.
    assert_eq!(
        failure(&run(&journal(), Some(&[b'1'; 64]), true)),
        (FailureKind::BadSignature, 1)
    );
}

#[test]
fn ed25519_attestations_with_public_key_or_seed() {
    let seed = [7u8; 32];
    let sk = ed25519_dalek::SigningKey::from_bytes(&seed);
    let r = records();
    let refs: Vec<&str> = r.iter().map(String::as_str).collect();
    let l = write(&refs, &Att::Ed(&sk));
    let public = hex::encode(sk.verifying_key().to_bytes());
    assert!(run(&l, Some(public.as_bytes()), true).is_intact());
    assert!(
        run(&l, Some(&seed), true).is_intact(),
        "the signer's key file"
    );
    let mut t = l.clone();
    t[0] = t[0].replace("fs/write_file", "fs/delete_file");
    assert_eq!(
        failure(&run(&t, Some(public.as_bytes()), true)),
        (FailureKind::BadSignature, 1)
    );
    let other = hex::encode([9u8; 32]);
    assert_eq!(
        failure(&run(&l, Some(other.as_bytes()), true)),
        (FailureKind::BadSignature, 1)
    );
}
