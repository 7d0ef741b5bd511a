#!/usr/bin/env bash
# One retrace command, timed with two builds in alternating runs: an older
# build (BASELINE) and this tree's release build, so that drift in machine
# speed hits both alike. Prints each run, the medians of wall time, user
# time and peak memory (max RSS, from GNU time), and the ratios new/old.
#
#   BASELINE=old/retrace benches/two-builds.sh [RUNS] -- ARGS...
#
# e.g. with a build of the main branch copied to old/retrace:
#
#   BASELINE=old/retrace benches/two-builds.sh 5 -- groups --json target/bench-data/chained-1000000.jsonl
#
# The journals come from benches/compare.sh (generated under
# target/bench-data/, never committed). Output of each command goes to
# /dev/null; the script also checks that both builds printed the same
# bytes (the speed work must not change an answer).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=5
if [ $# -gt 0 ] && [ "$1" != "--" ]; then runs=$1; shift; fi
[ "${1:-}" = "--" ] && shift
old=${BASELINE:?set BASELINE to the older retrace binary}
new=${NEW:-target/release/retrace}
[ -x /usr/bin/time ] || { echo "GNU time (/usr/bin/time) is needed" >&2; exit 1; }
[ -x "$new" ] || cargo build --release --quiet --bin retrace
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$old" "$@" > "$tmp/out-old" 2>/dev/null || true
"$new" "$@" > "$tmp/out-new" 2>/dev/null || true
if cmp -s "$tmp/out-old" "$tmp/out-new"; then
  echo "output: identical ($(wc -c < "$tmp/out-new") bytes)"
else
  echo "output: DIFFERS between the builds" >&2
fi

one() { /usr/bin/time -f '%e %U %M' -o "$tmp/t" "$1" "${@:2}" > /dev/null 2>&1 || true; cat "$tmp/t"; }
: > "$tmp/old"; : > "$tmp/new"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for i in $(seq "$runs"); do
  o=$(one "$old" "$@"); n=$(one "$new" "$@")
  echo "$o" >> "$tmp/old"; echo "$n" >> "$tmp/new"
  printf 'run %d  old %s s wall %s s user %s KiB   new %s s wall %s s user %s KiB\n' "$i" $o $n
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { awk -v c="$1" '{print $c}' "$2" | median; }
for c in 1 2 3; do
  name=$(echo "wall user rss" | cut -d' ' -f$c)
  o=$(col $c "$tmp/old"); n=$(col $c "$tmp/new")
  printf '%-5s median old %10s  new %10s  new/old %.2f\n' "$name" "$o" "$n" "$(echo "$n / $o" | bc -l)"
done
