//! A fuzz harness for every journal reader, on stable Rust: inputs are
//! mutations (driven by `arbitrary`) of the journals under
//! `sample-journals/` and `tests/fixtures/`, read as each format and by
//! detection, then analysed, listed and verified. Any panic is a crash, any
//! input that takes longer than [`HANG`] a hang; both fail the test and
//! leave the input under `target/fuzz-failures/` to replay.
//!
//! Bounded by default (about 20 s in a debug build, so it runs with the
//! suite); a longer run is documented in docs/design.md §9.7:
//! `RETRACE_FUZZ_SECS=600 cargo test --release --test fuzz_readers -- --nocapture`.

use arbitrary::Unstructured;
use retrace::journal::{Format, JournalSource, LoadOptions};
use retrace::query::{GroupFilter, Investigation};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// An input that takes longer than this is a hang.
const HANG: Duration = Duration::from_secs(10);

/// The seeds: every journal-like file of the repository's samples and
/// fixtures.
fn seeds() -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut stack = vec![root.join("sample-journals"), root.join("tests/fixtures")];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p
                .extension()
                .is_some_and(|e| e == "jsonl" || e == "json" || e == "ndjson")
                && let Ok(b) = std::fs::read(&p)
                && b.len() <= 512 * 1024
            {
                out.push((p.display().to_string(), b));
            }
        }
    }
    out
}

/// Tokens that readers treat specially.
const TOKENS: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b":",
    b"\\u0000",
    b"\\ud800",
    b"null",
    b"true",
    b"9007199254740993",
    b"1e309",
    b"-0",
    b"18446744073709551616",
    b"\"seq\":0",
    b"\"seq\":18446744073709551615",
    b"\"hash\":\"\"",
    b"\"prev_hash\":\"0000\"",
    b"\"at\":\"9999-12-31T23:59:59Z\"",
    b"\"at\":\"0000-01-01T00:00:00+25:00\"",
    b"\"event\":\"outcome\"",
    b"\"kind\":\"session\"",
    b"\"execution_id\":\"\"",
    b"\xff\xfe",
    b"\xef\xbb\xbf",
    b"\r\n",
    b"\n\n\n",
    b"\x1b[2J",
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
];

/// One mutation of `base` (with `other` to splice from), chosen by `u`.
fn mutate(u: &mut Unstructured<'_>, base: &[u8], other: &[u8]) -> Vec<u8> {
    let mut b = base.to_vec();
    let rounds = u.int_in_range(1..=8u8).unwrap_or(1);
    for _ in 0..rounds {
        let len = b.len().max(1);
        let at = u.choose_index(len).unwrap_or(0).min(b.len());
        match u.int_in_range(0..=9u8).unwrap_or(0) {
            0 => {
                if let Some(x) = b.get_mut(at) {
                    *x ^= 1 << u.int_in_range(0..=7u8).unwrap_or(0);
                }
            }
            1 => {
                let t = TOKENS[u.choose_index(TOKENS.len()).unwrap_or(0)];
                b.splice(at..at, t.iter().copied());
            }
            2 => {
                let n = u.int_in_range(1..=64usize).unwrap_or(1);
                let end = (at + n).min(b.len());
                b.drain(at..end);
            }
            3 => b.truncate(at),
            4 => {
                // Duplicate a line.
                let lines: Vec<&[u8]> = b.split(|&c| c == b'\n').collect();
                let i = u.choose_index(lines.len().max(1)).unwrap_or(0);
                let mut out: Vec<Vec<u8>> = lines.iter().map(|l| l.to_vec()).collect();
                if let Some(l) = out.get(i).cloned() {
                    out.insert(i, l);
                }
                b = out.join(&b'\n');
            }
            5 => {
                // Swap two lines.
                let mut lines: Vec<Vec<u8>> =
                    b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                if lines.len() > 1 {
                    let i = u.choose_index(lines.len()).unwrap_or(0);
                    let j = u.choose_index(lines.len()).unwrap_or(0);
                    lines.swap(i, j);
                }
                b = lines.join(&b'\n');
            }
            6 => {
                // Splice a piece of another seed.
                if !other.is_empty() {
                    let s = u.choose_index(other.len()).unwrap_or(0);
                    let n = u.int_in_range(1..=512usize).unwrap_or(1);
                    let e = (s + n).min(other.len());
                    b.splice(at..at, other[s..e].iter().copied());
                }
            }
            7 => {
                let n = u.int_in_range(1..=16usize).unwrap_or(1);
                let bytes: Vec<u8> = u.bytes(n).unwrap_or(&[]).to_vec();
                b.splice(at..at, bytes);
            }
            8 => {
                // Replace a digit run's digit, or a quote's content start.
                if let Some(x) = b.get_mut(at)
                    && x.is_ascii_digit()
                {
                    *x = b'0' + u.int_in_range(0..=9u8).unwrap_or(0);
                }
            }
            _ => {
                // A long line.
                let n = u.int_in_range(1..=200_000usize).unwrap_or(1);
                b.splice(at..at, std::iter::repeat_n(b'x', n));
            }
        }
    }
    b
}

/// SplitMix64, for reproducible random bytes.
fn random_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            (z ^ (z >> 31)) as u8
        })
        .collect()
}

/// Reads one input as `format` (or detected), analyses it, lists and
/// explains its groups, and verifies it. Errors are fine; panics are not.
fn exercise(bytes: Vec<u8>, format: Option<Format>) {
    let opts = LoadOptions {
        forced: format,
        ..LoadOptions::default()
    };
    let src = JournalSource::memory("fuzz.jsonl", bytes.clone());
    if let Ok(inv) = Investigation::from_sources(vec![src], &opts, Default::default(), &mut |_| {})
    {
        for g in inv.groups(&GroupFilter {
            all: true,
            ..GroupFilter::default()
        }) {
            let _ = g.summary();
            let _ = g.reason();
            for x in g.executions() {
                for e in inv.events(x) {
                    let _ = inv.raw_line(e.evidence.source);
                }
            }
        }
        let _ = inv.review_queue();
    }
    let _ = retrace::journal::verify(JournalSource::memory("fuzz.jsonl", bytes), &opts);
}

#[test]
fn every_reader_survives_mutated_journals() {
    let budget = Duration::from_secs(
        std::env::var("RETRACE_FUZZ_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(20),
    );
    let seeds = seeds();
    assert!(seeds.len() >= 10, "only {} seeds", seeds.len());
    let mut formats: Vec<Option<Format>> = vec![None];
    formats.extend(Format::ALL.iter().copied().map(Some));
    let fail_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
    let start = Instant::now();
    let mut inputs = 0u64;
    let mut per_format = vec![0u64; formats.len()];
    let mut iteration = 0u64;
    // The seeds themselves first, as every format.
    let mut queue: Vec<(Vec<u8>, usize)> = Vec::new();
    for (_, s) in &seeds {
        for f in 0..formats.len() {
            queue.push((s.clone(), f));
        }
    }
    loop {
        let (input, fi) = match queue.pop() {
            Some(x) => x,
            None => {
                if start.elapsed() >= budget {
                    break;
                }
                iteration += 1;
                let r = random_bytes(iteration, 4096);
                let mut u = Unstructured::new(&r);
                let a = u.choose_index(seeds.len()).unwrap_or(0);
                let b = u.choose_index(seeds.len()).unwrap_or(0);
                let fi = u.choose_index(formats.len()).unwrap_or(0);
                (mutate(&mut u, &seeds[a].1, &seeds[b].1), fi)
            }
        };
        let format = formats[fi];
        let (tx, rx) = mpsc::channel();
        let copy = input.clone();
        let worker = std::thread::spawn(move || {
            exercise(copy, format);
            let _ = tx.send(());
        });
        let outcome = rx.recv_timeout(HANG);
        inputs += 1;
        per_format[fi] += 1;
        let save = |kind: &str| {
            let _ = std::fs::create_dir_all(&fail_dir);
            let p = fail_dir.join(format!(
                "{kind}-{}-{iteration}.jsonl",
                format.map_or("detected", Format::name)
            ));
            let _ = std::fs::write(&p, &input);
            p
        };
        match outcome {
            Ok(()) => {
                let _ = worker.join();
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let p = save("hang");
                panic!("hang: over {HANG:?} on an input saved at {}", p.display());
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let _ = worker.join();
                let p = save("crash");
                panic!("crash: a panic on an input saved at {}", p.display());
            }
        }
    }
    let names: Vec<String> = formats
        .iter()
        .zip(&per_format)
        .map(|(f, n)| format!("{} {n}", f.map_or("detected", Format::name)))
        .collect();
    eprintln!(
        "fuzzed {inputs} inputs in {:.1}s ({}): 0 crashes, 0 hangs",
        start.elapsed().as_secs_f64(),
        names.join(", ")
    );
    assert!(inputs > seeds.len() as u64 * formats.len() as u64);
}
