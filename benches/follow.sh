#!/usr/bin/env bash
# One refresh of the TUI's follow mode after a native journal gained ADD
# events, on journals of 100,000 and 1,000,000 events: opening the journal
# again (what every refresh did before) against adding what it gained to
# the last investigation, alternating, RUNS runs each (medians).
#
#   benches/follow.sh [ADD] [RUNS]      (default 1000 events, 3 runs)
#
# The events come from `cargo run --release --example gen_journal`,
# generated into target/bench-data/ (never committed); the timing is
# examples/follow_refresh.rs. Nothing here is a test.
set -euo pipefail
cd "$(dirname "$0")/.."
add=${1:-1000}
runs=${2:-3}
data=target/bench-data
mkdir -p "$data"
cargo build --release --quiet --example gen_journal --example follow_refresh
for base in 100000 1000000; do
  need=$((base + add * runs))
  src=$data/follow-src-$need.jsonl
  if [ ! -s "$src" ]; then
    echo "generating $src ..." >&2
    ./target/release/examples/gen_journal "$need" > "$src.tmp"
    mv "$src.tmp" "$src"
  fi
  ./target/release/examples/follow_refresh "$src" "$base" "$add" "$runs"
done
