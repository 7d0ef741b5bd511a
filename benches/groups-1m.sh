#!/usr/bin/env bash
# Times `retrace groups --json` on a generated journal of one million
# lifecycle events, beside `wc -l` on the same file, in the same run.
#
#   benches/groups-1m.sh [EVENTS] [RUNS]
#
# The journal is generated into target/bench-data/ (never committed) by
# `cargo run --release --example gen_journal`. Runs alternate between the
# two commands so that drift in machine speed hits both; the report gives
# each command's median wall time and the ratio of the medians. Peak memory
# comes from GNU time when it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-1000000}
runs=${2:-5}
data=target/bench-data
journal=$data/events-$events.jsonl
mkdir -p "$data"
cargo build --release --quiet --bin retrace --example gen_journal
if [ ! -s "$journal" ]; then
  echo "generating $journal ..." >&2
  ./target/release/examples/gen_journal "$events" > "$journal.tmp"
  mv "$journal.tmp" "$journal"
fi
bytes=$(stat -c %s "$journal")
lines=$(wc -l < "$journal")

# Bash's own `time` gives wall, user and system seconds of each run.
TIMEFORMAT='%R %U %S'
measure() { { time "$@" > /dev/null 2>&1; } 2>&1; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

: > "$data/t-retrace"; : > "$data/t-wc"
for _ in $(seq "$runs"); do
  measure ./target/release/retrace groups "$journal" --json >> "$data/t-retrace"
  measure wc -l "$journal" >> "$data/t-wc"
done
col() { awk -v c="$1" '{ if (c == "cpu") print $2 + $3; else print $1 }' "$2" | median; }
rw=$(col wall "$data/t-retrace"); rc=$(col cpu "$data/t-retrace")
ww=$(col wall "$data/t-wc"); wc_=$(col cpu "$data/t-wc")
printf 'journal: %s (%d lines, %.1f MB)\n' "$journal" "$lines" "$(echo "$bytes/1000000" | bc -l)"
printf '%-24s median wall %7.3f s   cpu %7.3f s   (%d runs)\n' "retrace groups --json" "$rw" "$rc" "$runs"
printf '%-24s median wall %7.3f s   cpu %7.3f s   (%d runs)\n' "wc -l" "$ww" "$wc_" "$runs"
printf 'ratio retrace / wc -l: wall %.0fx, cpu %.0fx\n' "$(echo "$rw / $ww" | bc -l)" "$(echo "$rc / ($wc_ + 0.001)" | bc -l)"
printf 'retrace throughput: %.0f events/s, %.1f MB/s (wall)\n' "$(echo "$lines / $rw" | bc -l)" "$(echo "$bytes / $rw / 1000000" | bc -l)"
if [ -x /usr/bin/time ]; then
  /usr/bin/time -f 'retrace peak memory: %M KB' ./target/release/retrace groups "$journal" --json 2>&1 >/dev/null | tail -1
fi
