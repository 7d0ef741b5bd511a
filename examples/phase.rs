//! Times the two phases of opening a journal, loading and analysis, on their
//! own: `cargo run --release --example phase -- JOURNAL`. For profiling;
//! `benches/groups-1m.sh` times the whole command.

use std::time::Instant;

// The allocator of the retrace binary, so that time and memory are its.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Resident and peak resident memory of this process in MiB (Linux
/// `/proc/self/status`; zeros elsewhere).
fn rss() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
            / 1024
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .ok_or_else(|| anyhow::anyhow!("usage: phase JOURNAL"))?;
    let t = Instant::now();
    let (journals, model) = retrace::journal::load(
        vec![retrace::journal::JournalSource::file(&path)],
        None,
        &mut |_| {},
    )?;
    eprintln!(
        "load     {:>8.3} s  {} events, {} executions  rss {:?} MiB (now, peak)",
        t.elapsed().as_secs_f64(),
        model.event_count(),
        model.execution_count(),
        rss()
    );
    let t = Instant::now();
    let analysis = retrace::analysis::analyze(&model, &journals, &Default::default());
    eprintln!(
        "analyze  {:>8.3} s  {} groups  rss {:?} MiB (now, peak)",
        t.elapsed().as_secs_f64(),
        analysis.groups.len(),
        rss()
    );
    std::mem::forget((journals, model, analysis));
    Ok(())
}
