//! Writes a chained native journal (docs/design.md §6) of N lines, for the
//! verification benchmark (`benches/verify-1m.sh`): executions of five
//! lifecycle events each (accepted, authorized, dispatched, outcome,
//! delivered), chained with `NativeChainWriter`. Output is deterministic
//! for given arguments.
//!
//! Executions cycle through 97 services and 1,000 intent scopes, so calls
//! fall into at most 97,000 groups (a million lines: 97,000 groups of two
//! or three calls). With `--one-intent`, every execution repeats one
//! intent (the same service and scope): a single group of LINES / 5 calls,
//! for the one-large-group benchmark (`benches/compare.sh`).
//!
//! Usage: `cargo run --release --example chained_journal -- OUT.jsonl [LINES] [--one-intent]`

use retrace::journal::NativeChainWriter;
use serde_json::{Map, Value, json};
use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let one_intent = args.iter().any(|a| a == "--one-intent");
    args.retain(|a| a != "--one-intent");
    let mut args = args.into_iter();
    let Some(path) = args.next() else {
        eprintln!("usage: chained_journal OUT.jsonl [LINES] [--one-intent]");
        std::process::exit(2);
    };
    let lines: u64 = args
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    // The intent of execution x: (service, scope) indices.
    let intent = |x: u64| {
        if one_intent {
            (0, 0)
        } else {
            (x % 97, x % 1000)
        }
    };
    let file = std::fs::File::create(&path)?;
    let mut w = NativeChainWriter::new(BufWriter::with_capacity(1 << 20, file));
    let base = chrono::DateTime::parse_from_rfc3339("2026-07-22T00:00:00Z")
        .map_err(std::io::Error::other)?;
    for seq in 1..=lines {
        let x = (seq - 1) / 5;
        let at = (base + chrono::Duration::milliseconds(seq as i64 * 7)).to_rfc3339();
        let id = format!("act_{x:010}");
        let (service, scope) = intent(x);
        let rec = match (seq - 1) % 5 {
            0 => json!({
                "kind": "event", "seq": seq, "at": at, "execution_id": id, "event": "accepted",
                "call": {"call_id": format!("call_{x}"), "session_id": "ses_1",
                         "jsonrpc_id": x, "mcp_session_id": "mcp-1", "transport": "streamable-http"},
                "action": {"actor": "signed-process:com.example.agent", "tool": "deploy_release",
                           "channel": "http", "target": "deploy-api.internal.example/releases",
                           "credential_ref": "deploy-service", "method": "POST",
                           "arguments": {"service": format!("svc-{service}"), "version": "2.4.1",
                                         "region": "eu-west-1"},
                           "intent_scope": format!("run:{scope}")},
                "action_class": "recoverable_by_status"
            }),
            1 => json!({"kind": "event", "seq": seq, "at": at, "execution_id": id,
                        "event": "authorized", "decision": "session_grant"}),
            2 => json!({"kind": "event", "seq": seq, "at": at, "execution_id": id,
                        "event": "dispatched", "idempotency_key": format!("key-{x}")}),
            3 => json!({"kind": "event", "seq": seq, "at": at, "execution_id": id,
                        "event": "outcome", "outcome": "success", "target_status": 201,
                        "result_reference": format!("result_{x}"), "observed_via": "response"}),
            _ => json!({"kind": "event", "seq": seq, "at": at, "execution_id": id,
                        "event": "delivered"}),
        };
        let Value::Object(m) = rec else {
            unreachable!("json! of an object literal is an object")
        };
        let m: Map<String, Value> = m;
        w.append(m)?;
    }
    w.into_inner().flush()
}
