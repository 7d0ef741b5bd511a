//! mcp-audit logs against the public conformance vectors (values copied
//! into tests/fixtures/mcp-audit, sources in its SOURCE.md).

use retrace::journal::chain::{ChainStatus, FailureKind, SignatureCheck};
use retrace::journal::{ChainKeys, Format, JournalSource, KeyFile, LoadOptions, load, verify};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mcp-audit");
/// The worked example's HMAC key: 32 zero bytes, as hex.
const ZERO_KEY: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn with_key(key: Option<&str>) -> LoadOptions {
    LoadOptions {
        forced: None,
        keys: ChainKeys {
            attestation_key: key.map(|k| KeyFile::from_bytes("key.hex", k.as_bytes())),
            ..ChainKeys::default()
        },
        ..LoadOptions::default()
    }
}

fn first_lines(n: usize) -> JournalSource {
    let text = std::fs::read_to_string(format!("{DIR}/in-toto-worked-example.jsonl")).unwrap();
    let lines: Vec<&str> = text.lines().take(n).collect();
    let bytes: &'static [u8] = Box::leak((lines.join("\n") + "\n").into_bytes().into_boxed_slice());
    JournalSource::embedded("audit.jsonl", bytes)
}

#[test]
fn worked_example_verifies_with_its_key() {
    let j = verify(first_lines(2), &with_key(Some(ZERO_KEY))).unwrap();
    assert_eq!(j.format, Format::McpAudit);
    match j.chain {
        ChainStatus::Intact {
            lines, signatures, ..
        } => {
            assert_eq!(lines, 2);
            assert_eq!(signatures, SignatureCheck::Verified { count: 2 });
        }
        other => panic!("{other:?}"),
    }
    let j = verify(first_lines(2), &with_key(Some(&"11".repeat(32)))).unwrap();
    let f = j.chain.failure().unwrap();
    assert_eq!((f.kind, f.line), (FailureKind::BadSignature, 1));
}

#[test]
fn the_chain_break_record_is_a_declared_break() {
    let j = verify(
        JournalSource::file(format!("{DIR}/in-toto-worked-example.jsonl")),
        &with_key(Some(ZERO_KEY)),
    )
    .unwrap();
    let f = j.chain.failure().unwrap();
    assert_eq!((f.kind, f.line), (FailureKind::DeclaredBreak, 3));
    assert!(f.message.contains("crash_recovery"), "{}", f.message);
}

#[test]
fn checkpoint_chain_links_by_line_hash() {
    let src = || JournalSource::file(format!("{DIR}/checkpoint-chain.jsonl"));
    assert!(verify(src(), &with_key(None)).unwrap().chain.is_intact());
    // The vectors' attestations are placeholders: any key rejects them.
    let j = verify(src(), &with_key(Some(ZERO_KEY))).unwrap();
    assert_eq!(j.chain.failure().unwrap().kind, FailureKind::BadSignature);
    let (_, model) = load(vec![src()], None, &mut |_| {}).unwrap();
    assert_eq!(model.calls.len(), 2, "the checkpoint is not a call");
    let x = &model.to_executions()[0];
    assert_eq!(x.action().unwrap().tool(), Some("read_file"));
    assert_eq!(x.action().unwrap().actor(), Some("user:bob@example.com"));
}
