//! Fills in `"fingerprint":"auto"` placeholders in native journals with the
//! intent fingerprint retrace computes, so that hand-written fixtures carry
//! the fingerprints a gateway would have written; with `--chain`, also
//! (re)writes the audit chain (docs/design.md §6) of every line.
//!
//! ```sh
//! cargo run --example stamp -- --chain --contracts sample-journals/contracts.toml \
//!     --key-file sample-journals/sample.key sample-journals/scenarios/*.jsonl
//! ```
//!
//! Files are rewritten in place (through a temporary file and a rename).
//! Line text is kept as written: the fingerprint replaces its placeholder,
//! and the chain fields are appended at the end of each object.

use anyhow::{Context, Result, bail};
use retrace::analysis::fingerprint::{canonical_record, fingerprint};
use retrace::analysis::{Contracts, FingerprintKey};
use retrace::model::ActionRecord;
use serde_json::Value;
use std::path::PathBuf;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut contracts = Contracts::none();
    let mut key = FingerprintKey::none();
    let mut files = Vec::new();
    let mut chain = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--chain" => chain = true,
            "--contracts" => {
                let p = PathBuf::from(args.next().context("--contracts needs a file")?);
                contracts = Contracts::load(&p)?;
            }
            "--key-file" => {
                let p = PathBuf::from(args.next().context("--key-file needs a file")?);
                key = FingerprintKey::load(&p)?;
            }
            _ => files.push(PathBuf::from(a)),
        }
    }
    if files.is_empty() {
        bail!("usage: stamp [--chain] [--contracts FILE] [--key-file FILE] JOURNAL...");
    }
    for f in files {
        let text = std::fs::read_to_string(&f).with_context(|| f.display().to_string())?;
        let mut out = String::with_capacity(text.len() + 1024);
        let mut changed = 0;
        for (i, line) in text.lines().enumerate() {
            let placeholder = "\"fingerprint\":\"auto\"";
            if line.contains(placeholder) {
                let v: Value = serde_json::from_str(line)
                    .with_context(|| format!("{}:{}", f.display(), i + 1))?;
                let action = match v.get("action") {
                    Some(Value::Object(m)) => m.clone(),
                    _ => {
                        // Snapshot records carry the action fields at top level.
                        let mut m = serde_json::Map::new();
                        for k in [
                            "actor",
                            "tool",
                            "channel",
                            "target",
                            "credential_ref",
                            "method",
                            "arguments",
                            "intent_scope",
                        ] {
                            if let Some(x) = v.get(k) {
                                m.insert(k.into(), x.clone());
                            }
                        }
                        m
                    }
                };
                let action = ActionRecord::from_map(action);
                let contract = contracts.get(action.tool().unwrap_or("?"));
                let mut unkeyed = false;
                let fp = fingerprint(
                    &canonical_record(&action, &contract, &key, &mut unkeyed),
                    &key,
                );
                out.push_str(&line.replace(placeholder, &format!("\"fingerprint\":\"{fp}\"")));
                changed += 1;
            } else {
                out.push_str(line);
            }
            out.push('\n');
        }
        if chain {
            out = rechain(&out).with_context(|| f.display().to_string())?;
        }
        let tmp = f.with_extension("jsonl.tmp");
        std::fs::write(&tmp, out)?;
        std::fs::rename(&tmp, &f)?;
        eprintln!("{}: {changed} fingerprint(s) stamped", f.display());
    }
    Ok(())
}

/// Removes any chain fields and appends fresh ones to every line.
fn rechain(text: &str) -> Result<String> {
    let mut prev = retrace::journal::GENESIS.to_string();
    let mut out = String::with_capacity(text.len() * 2);
    for (i, line) in text.lines().enumerate() {
        let mut record: serde_json::Map<String, Value> =
            serde_json::from_str(line).with_context(|| format!("line {}", i + 1))?;
        record.remove("prev_hash");
        record.remove("hash");
        let hash = retrace::journal::native_chain_hash(&prev, &record);
        // Keep the line as written, minus old chain fields, then append.
        let body = strip_chain_fields(line);
        let body = body.trim_end().strip_suffix('}').context("not an object")?;
        out.push_str(&format!(
            "{body},\"prev_hash\":\"{prev}\",\"hash\":\"{hash}\"}}\n"
        ));
        prev = hash;
    }
    Ok(out)
}

/// The line without `"prev_hash":"…"` and `"hash":"…"` members.
fn strip_chain_fields(line: &str) -> String {
    let mut s = line.to_string();
    for key in ["\"prev_hash\":\"", "\"hash\":\""] {
        while let Some(start) = s.find(&format!(",{key}")) {
            let value_start = start + key.len() + 1;
            let end = s[value_start..]
                .find('"')
                .map_or(s.len(), |e| value_start + e + 1);
            s.replace_range(start..end, "");
        }
    }
    s
}
