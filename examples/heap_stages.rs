//! Live heap by stage: what the loaded model, the analysis and their
//! transient work hold, in bytes requested from the allocator (not the
//! resident memory, which `/usr/bin/time -v` and `benches/compare.sh`
//! report). For finding where memory goes; `benches/compare.sh` holds the
//! targets.
//!
//! Usage: `cargo run --release --example heap_stages -- JOURNAL...`
//!
//! Prints, in MB (10^6 bytes): the live heap and the peak while loading,
//! then while analysing, and the type sizes the model is made of.

use peak_alloc::PeakAlloc;
use retrace::analysis::{self, Lifecycle};
use retrace::journal::{JournalSource, LoadOptions, load_with};
use retrace::model::SourceRef;

#[global_allocator]
static HEAP: PeakAlloc = PeakAlloc;

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let sources: Vec<JournalSource> = std::env::args().skip(1).map(JournalSource::file).collect();
    if sources.is_empty() {
        eprintln!("usage: heap_stages JOURNAL...");
        std::process::exit(2);
    }
    println!(
        "sizes (bytes): SourceRef {} Lifecycle {} Group {}",
        size_of::<SourceRef>(),
        size_of::<Lifecycle>(),
        size_of::<analysis::Group>(),
    );
    let (journals, model) = load_with(sources, &LoadOptions::default(), &mut |_| {})?;
    let loaded = HEAP.current_usage();
    println!(
        "load:     live {:8.1} MB, peak {:8.1} MB ({} executions, {} events)",
        mb(loaded),
        mb(HEAP.peak_usage()),
        model.execution_count(),
        model.event_count()
    );
    let encoded = model.encoded_bytes();
    println!(
        "encoded:  {:8.1} MB of executions' bytes, {:.0} bytes an execution",
        mb(encoded),
        encoded as f64 / model.execution_count().max(1) as f64
    );
    HEAP.reset_peak_usage();
    let a = analysis::analyze(&model, &journals, &analysis::Config::default());
    println!(
        "analysis: live {:8.1} MB, peak {:8.1} MB over the model's ({} groups)",
        mb(HEAP.current_usage().saturating_sub(loaded)),
        mb(HEAP.peak_usage().saturating_sub(loaded)),
        a.groups.len()
    );
    Ok(())
}
