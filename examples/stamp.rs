//! Fills in `"fingerprint":"auto"` placeholders in native journals with the
//! intent fingerprint retrace computes, so that hand-written fixtures carry
//! the fingerprints a gateway would have written.
//!
//! ```sh
//! cargo run --example stamp -- --contracts sample-journals/contracts.toml \
//!     --key-file sample-journals/sample.key sample-journals/scenarios/*.jsonl
//! ```
//!
//! Files are rewritten in place (through a temporary file and a rename);
//! lines without the placeholder are left byte for byte as they were.

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
    while let Some(a) = args.next() {
        match a.as_str() {
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
        bail!("usage: stamp [--contracts FILE] [--key-file FILE] JOURNAL...");
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
                let action = ActionRecord(action);
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
        let tmp = f.with_extension("jsonl.tmp");
        std::fs::write(&tmp, out)?;
        std::fs::rename(&tmp, &f)?;
        eprintln!("{}: {changed} fingerprint(s) stamped", f.display());
    }
    Ok(())
}
