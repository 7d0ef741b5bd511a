//! Writes a synthetic native journal of N lifecycle events to stdout, for
//! benchmarks: `cargo run --release --example gen_journal -- 1000000 > big.jsonl`.
//!
//! The journal has many agent sessions and tools; most executions are
//! clean, and a few percent repeat an earlier intent with every kind of
//! outcome (lost delivery, unknown outcome, same-key replays, attached
//! retries), so that grouping and the verdict table do real work. Output is
//! deterministic for a given N.

use std::io::{self, BufWriter, Write};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const TOOLS: [(&str, &str, &str); 6] = [
    (
        "deploy_release",
        "deploy-api.internal.example/releases",
        "POST",
    ),
    (
        "create_ticket",
        "tickets.internal.example/api/issues",
        "POST",
    ),
    (
        "charge_payment",
        "payments.internal.example/v1/charges",
        "POST",
    ),
    (
        "list_releases",
        "deploy-api.internal.example/releases",
        "GET",
    ),
    ("post_message", "chat.internal.example/api/messages", "POST"),
    (
        "rotate_credential",
        "vault.internal.example/v1/rotate",
        "POST",
    ),
];

fn main() -> io::Result<()> {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let out = io::stdout();
    let mut w = BufWriter::with_capacity(1 << 20, out.lock());
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let start = 1_785_000_000i64; // 2026-07-25
    let sessions = (n / 500).max(1);
    for s in 0..sessions {
        writeln!(
            w,
            r#"{{"kind":"session","session_id":"ses_{s}","actor":"signed-process:com.example.agent{}","process":{{"pid":{},"name":"agent","started_at":"{}"}},"mcp_session_id":"mcp-{s}","client":"example-agent/1.4","authorization":"per_session","started_at":"{}"}}"#,
            s % 7,
            1000 + s,
            ts(start + s as i64 * 30, 0),
            ts(start + s as i64 * 30, 1)
        )?;
    }
    let mut seq = 0u64;
    let mut x = 0u64;
    let mut ev = |w: &mut BufWriter<_>, t: i64, ms: u32, id: &str, body: &str| -> io::Result<()> {
        seq += 1;
        writeln!(
            w,
            r#"{{"kind":"event","seq":{seq},"at":"{}","execution_id":"{id}","event":{body}}}"#,
            ts(t, ms)
        )
    };
    let mut t = start;
    let mut written = 0u64;
    while written < n {
        x += 1;
        t += 1;
        let s = rng.below(sessions);
        let (tool, target, method) = TOOLS[rng.below(TOOLS.len() as u64) as usize];
        let arg = rng.below(50_000);
        let id = format!("act_{x:08}");
        let action = format!(
            r#""call":{{"call_id":"c{x}","session_id":"ses_{s}","jsonrpc_id":{},"mcp_session_id":"mcp-{s}","transport":"streamable-http"}},"action":{{"actor":"signed-process:com.example.agent{}","tool":"{tool}","channel":"http","target":"{target}","credential_ref":"svc","method":"{method}","arguments":{{"ref":"{arg}","service":"svc-{}"}},"intent_scope":"run:{s}"}}"#,
            x % 1000,
            s % 7,
            arg % 97
        );
        let kind = rng.below(100);
        let key = if tool == "charge_payment" {
            format!(r#","idempotency_key":"ik_{x}""#)
        } else {
            String::new()
        };
        ev(&mut w, t, 0, &id, &format!(r#""accepted",{action}{key}"#))?;
        ev(
            &mut w,
            t,
            10,
            &id,
            r#""authorized","decision":"session_grant""#,
        )?;
        ev(&mut w, t, 20, &id, r#""dispatched""#)?;
        written += 3;
        match kind {
            // Outcome unknown, then a fresh retry.
            0..=1 => {
                ev(
                    &mut w,
                    t,
                    900,
                    &id,
                    r#""outcome","outcome":"unknown","error":"timeout""#,
                )?;
                written += 1;
            }
            // Delivered result lost.
            2..=3 => {
                ev(
                    &mut w,
                    t,
                    300,
                    &id,
                    r#""outcome","outcome":"success","target_status":201"#,
                )?;
                ev(
                    &mut w,
                    t,
                    310,
                    &id,
                    r#""delivery_failed","error":"stream closed""#,
                )?;
                written += 2;
            }
            // Attached retry.
            4 => {
                ev(
                    &mut w,
                    t,
                    300,
                    &id,
                    r#""outcome","outcome":"success","target_status":201"#,
                )?;
                ev(
                    &mut w,
                    t,
                    310,
                    &id,
                    r#""delivery_failed","error":"stream closed""#,
                )?;
                ev(
                    &mut w,
                    t + 1,
                    0,
                    &id,
                    &format!(
                        r#""attached","call":{{"call_id":"c{x}b","session_id":"ses_{s}","jsonrpc_id":{}}},"recovery":"returned_stored_result""#,
                        x % 1000 + 1
                    ),
                )?;
                ev(&mut w, t + 1, 10, &id, r#""delivered""#)?;
                written += 4;
            }
            _ => {
                ev(
                    &mut w,
                    t,
                    300,
                    &id,
                    r#""outcome","outcome":"success","target_status":200"#,
                )?;
                ev(&mut w, t, 310, &id, r#""delivered""#)?;
                written += 2;
            }
        }
        if kind <= 3 {
            // The client sends it again as a fresh execution.
            x += 1;
            let id2 = format!("act_{x:08}");
            let key2 = if tool == "charge_payment" {
                key.clone()
            } else {
                String::new()
            };
            ev(
                &mut w,
                t + 2,
                0,
                &id2,
                &format!(r#""accepted",{action}{key2}"#),
            )?;
            ev(
                &mut w,
                t + 2,
                10,
                &id2,
                r#""authorized","decision":"session_grant""#,
            )?;
            ev(&mut w, t + 2, 20, &id2, r#""dispatched""#)?;
            ev(
                &mut w,
                t + 2,
                300,
                &id2,
                r#""outcome","outcome":"success","target_status":201"#,
            )?;
            ev(&mut w, t + 2, 310, &id2, r#""delivered""#)?;
            written += 5;
        }
    }
    w.flush()
}

/// RFC 3339 UTC with milliseconds, without a date library.
fn ts(secs: i64, ms: u32) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{ms:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day), after H. Hinnant's algorithm.
fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}
