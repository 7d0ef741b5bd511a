#!/usr/bin/env bash
# Times `retrace verify` on a chained native journal of LINES lines (default
# 1,000,000) that it generates itself, beside `sha256sum` of the same file,
# in the same run (best of RUNS, default 3; the file is read once first so
# both start from the page cache). The journal lives in a temporary directory
# that is removed at exit.
#
# Usage: benches/verify-1m.sh [LINES] [RUNS]
set -euo pipefail
LINES=${1:-1000000}
RUNS=${2:-3}
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin retrace --example chained_journal
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
journal="$dir/chained.jsonl"
./target/release/examples/chained_journal "$journal" "$LINES"
bytes=$(wc -c < "$journal")
cat "$journal" > /dev/null

# best_ms CMD…: the fastest of RUNS runs, in milliseconds.
best_ms() {
    local best="" s e ms
    for _ in $(seq "$RUNS"); do
        s=$(date +%s%N)
        "$@" > /dev/null
        e=$(date +%s%N)
        ms=$(( (e - s) / 1000000 ))
        if [ -z "$best" ] || [ "$ms" -lt "$best" ]; then best=$ms; fi
    done
    echo "$best"
}

./target/release/retrace verify "$journal" > "$dir/verify.txt" || {
    echo "verify did not report an intact chain:" >&2
    cat "$dir/verify.txt" >&2
    exit 1
}
verify_ms=$(best_ms ./target/release/retrace verify "$journal")
sha_ms=$(best_ms sha256sum "$journal")
printf 'journal:        %d lines, %d MB (chained native, generated)\n' "$LINES" $(( bytes / 1000000 ))
printf 'retrace verify: %d ms (best of %d): %s\n' "$verify_ms" "$RUNS" "$(sed -n 2p "$dir/verify.txt" | sed 's/^ *//')"
printf 'sha256sum:      %d ms (best of %d)\n' "$sha_ms" "$RUNS"
awk -v v="$verify_ms" -v s="$sha_ms" -v n="$LINES" 'BEGIN {
    printf "ratio:          %.1f x sha256sum; %.0f lines/s\n", v / (s > 0 ? s : 1), n / (v > 0 ? v / 1000 : 1)
}'
