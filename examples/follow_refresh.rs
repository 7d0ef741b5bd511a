//! Times one follow-mode refresh of the TUI (docs/design.md §7.7 "Follow
//! mode") after a journal of BASE events gained ADD more: opening the
//! journal again (what a refresh did before) against adding what it gained
//! to the last investigation (`Follow::investigation`), alternating, RUNS
//! times each. `benches/follow.sh` runs it on generated journals:
//!
//!     cargo run --release --example follow_refresh -- SOURCE BASE ADD RUNS
//!
//! SOURCE is a native journal of at least BASE + ADD × RUNS lines (from
//! `cargo run --release --example gen_journal`); its first BASE lines are
//! copied to a temporary file, which then grows by ADD lines before each
//! refresh.

use retrace::query::{Follow, Investigation, Setup};
use std::io::{BufRead, Write};
use std::time::Instant;

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, source, base, add, runs] = args.as_slice() else {
        anyhow::bail!("usage: follow_refresh SOURCE BASE ADD RUNS");
    };
    let (base, add, runs): (usize, usize, usize) = (base.parse()?, add.parse()?, runs.parse()?);
    let mut lines = std::io::BufReader::new(std::fs::File::open(source)?).lines();
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("live.jsonl");
    let mut out = std::fs::File::create(&path)?;
    let mut copy = |n: usize, out: &mut std::fs::File| -> anyhow::Result<()> {
        let mut w = std::io::BufWriter::new(out);
        for _ in 0..n {
            let l = lines
                .next()
                .ok_or_else(|| anyhow::anyhow!("the source is too short"))??;
            writeln!(w, "{l}")?;
        }
        w.flush()?;
        Ok(())
    };
    copy(base, &mut out)?;
    let mut setup = Setup::new(vec![path.clone()]);
    setup.case = Some(dir.path().join("none.sqlite"));
    setup.read_only = true;
    let mut follow = Follow::start(&setup)?;
    follow.poll();
    follow.investigation()?; // the first one opens the journal
    let (mut old, mut new) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        copy(add, &mut out)?;
        let t = Instant::now();
        let inv = Investigation::open(&setup, &mut |_| {})?;
        old.push(t.elapsed().as_secs_f64());
        let groups = inv.group_count();
        drop(inv);
        follow.poll();
        let t = Instant::now();
        let inv = follow.investigation()?;
        new.push(t.elapsed().as_secs_f64());
        anyhow::ensure!(inv.group_count() == groups, "a refresh gave other groups");
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (o, n) = (median(&mut old), median(&mut new));
    let r = follow.refreshes();
    println!(
        "base {base} events, +{add} a refresh, {runs} runs: open again {o:.3} s, add {n:.3} s (median), ratio {:.2}x ({} added, {} opened again)",
        o / n,
        r.grown,
        r.reopened - 1
    );
    Ok(())
}
