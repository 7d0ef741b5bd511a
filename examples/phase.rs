//! Times the two phases of opening a journal, loading and analysis, on their
//! own: `cargo run --release --example phase -- JOURNAL`. For profiling;
//! `benches/groups-1m.sh` times the whole command.

use std::time::Instant;

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
        "load     {:>8.3} s  {} events, {} executions",
        t.elapsed().as_secs_f64(),
        model.event_count(),
        model.executions.len()
    );
    let t = Instant::now();
    let analysis = retrace::analysis::analyze(&model, &journals, &Default::default());
    eprintln!(
        "analyze  {:>8.3} s  {} groups",
        t.elapsed().as_secs_f64(),
        analysis.groups.len()
    );
    std::mem::forget((journals, model, analysis));
    Ok(())
}
