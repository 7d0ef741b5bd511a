#!/usr/bin/env bash
# Times `retrace verify` on a chained native journal of LINES lines (default
# 1,000,000) that it generates itself, beside `openssl dgst -sha256` (when
# installed) and `sha256sum` of the same file, in the same run. The runs
# alternate (retrace, the baseline binary if any, openssl, sha256sum; RUNS
# rounds, default 5) so that a change in the machine's load hits every
# command alike; each is reported by its median and its best, and retrace's
# ratios are taken from the medians. The file is read once first so that
# all start from the page cache. The journal lives in a temporary directory
# that is removed at exit.
#
# BASELINE=path/to/an/older/retrace adds that binary to every round (for
# example one built from the main branch in another checkout), so an old
# and a new build are compared under the same load.
#
# Usage: [BASELINE=OLD_RETRACE] benches/verify-1m.sh [LINES] [RUNS]
set -euo pipefail
LINES=${1:-1000000}
RUNS=${2:-5}
BASELINE=${BASELINE:-}
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin retrace --example chained_journal
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
journal="$dir/chained.jsonl"
./target/release/examples/chained_journal "$journal" "$LINES"
bytes=$(wc -c < "$journal")
cat "$journal" > /dev/null

./target/release/retrace verify "$journal" > "$dir/verify.txt" || {
    echo "verify did not report an intact chain:" >&2
    cat "$dir/verify.txt" >&2
    exit 1
}

# The commands of a round, by name.
names=(retrace)
[ -n "$BASELINE" ] && names+=(baseline)
command -v openssl > /dev/null 2>&1 && names+=(openssl)
names+=(sha256sum)
run() {
    case $1 in
        retrace) ./target/release/retrace verify "$journal" ;;
        baseline) "$BASELINE" verify "$journal" ;;
        openssl) openssl dgst -sha256 "$journal" ;;
        sha256sum) sha256sum "$journal" ;;
    esac
}

# Wall milliseconds of each run, one file per command.
for _ in $(seq "$RUNS"); do
    for n in "${names[@]}"; do
        s=$(date +%s%N)
        run "$n" > /dev/null
        e=$(date +%s%N)
        echo $(( (e - s) / 1000000 )) >> "$dir/$n.ms"
    done
done

# median FILE, best FILE: of the runs' milliseconds.
median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2)}'; }
best() { sort -n "$1" | head -1; }

printf 'journal:   %d lines, %d MB (chained native, generated)\n' "$LINES" $(( bytes / 1000000 ))
printf 'verdict:   %s\n' "$(sed -n 1p "$dir/verify.txt" | sed 's/  */ /g')"
printf 'load:      %s (1-minute load average at the end, %s cores)\n' \
    "$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?')" "$(nproc 2>/dev/null || echo '?')"
for n in "${names[@]}"; do
    printf '%-10s median %5d ms, best %5d ms (%d runs)\n' "$n:" "$(median "$dir/$n.ms")" "$(best "$dir/$n.ms")" "$RUNS"
done
v=$(median "$dir/retrace.ms")
for n in "${names[@]}"; do
    [ "$n" = retrace ] && continue
    awk -v v="$v" -v b="$(median "$dir/$n.ms")" -v n="$n" 'BEGIN {
        printf "ratio:     retrace / %s = %.2f (medians)\n", n, v / (b > 0 ? b : 1)
    }'
done
awk -v v="$v" -v n="$LINES" 'BEGIN { printf "rate:      %.0f lines/s\n", n / (v > 0 ? v / 1000 : 1) }'
