#!/usr/bin/env bash
# Checks that every Mermaid diagram in retrace's Markdown exports is
# accepted by Mermaid itself (its CLI, pinned in package.json, rendering in
# Debian's Chromium rather than a browser downloaded by Puppeteer).
#
# Usage: tests/mermaid/check.sh            (from anywhere; builds retrace)
#        RETRACE=/path/to/retrace tests/mermaid/check.sh
#
# Exports checked: the bundled sample incident, a fixture with a pending
# execution before and after a reviewer decision (plain and --anonymize),
# and a fixture whose tool names, targets, ids and arguments hold Mermaid
# and Markdown syntax, control characters and Unicode. A deliberately broken
# diagram must be rejected, so that the check itself can fail.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if ! command -v chromium >/dev/null 2>&1; then
    echo "mermaid check: installing Debian's chromium"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
if [ ! -x "$here/node_modules/.bin/mmdc" ]; then
    echo "mermaid check: installing @mermaid-js/mermaid-cli (pinned, no browser download)"
    (cd "$here" && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
fi
retrace=${RETRACE:-}
if [ -z "$retrace" ]; then
    (cd "$root" && cargo build --quiet)
    retrace="$root/target/debug/retrace"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The exports to check.
"$retrace" export --group gfc --format markdown -o "$work/sample.md"
"$retrace" export "$root/tests/fixtures/hostile.jsonl" --all --format markdown -o "$work/hostile.md"
# Calls recorded by two layers (client and server spans), no target.
"$retrace" export "$root/tests/fixtures/lab/otel-sdk/traces.jsonl" --all --format markdown -o "$work/otel-sdk.md"
cp "$root/tests/fixtures/pending-retry.jsonl" "$work/"
"$retrace" export "$work/pending-retry.jsonl" --all --format markdown -o "$work/pending.md"
"$retrace" review decide act_R1 "$work/pending-retry.jsonl" --reviewer "ci; end #35;" \
    --decision confirmed_completed --note 'audit log: rotated; "end" %% <b>' >/dev/null
"$retrace" export "$work/pending-retry.jsonl" --all --format markdown -o "$work/decided.md"
"$retrace" export "$work/pending-retry.jsonl" --all --format markdown --anonymize -o "$work/anonymized.md"

# Every ```mermaid block of every export becomes one .mmd file.
n=0
for md in "$work"/*.md; do
    base=$(basename "$md" .md)
    awk -v out="$work/$base" '
        /^```mermaid$/ { inside = 1; k++; file = out "-" k ".mmd"; next }
        /^```$/ && inside { inside = 0; close(file); next }
        inside { print > file }
    ' "$md"
done
printf 'sequenceDiagram\n    A->>B: fine\n    B-->>: broken\n' > "$work/control-broken.mmd"

passed=0
failed=0
for mmd in "$work"/*.mmd; do
    n=$((n + 1))
    name=$(basename "$mmd")
    if "$here/node_modules/.bin/mmdc" -q -p "$here/puppeteer.json" -i "$mmd" -o "$mmd.svg" >"$mmd.log" 2>&1; then
        ok=1
    else
        ok=0
    fi
    case "$name" in
        control-*)
            if [ "$ok" = 0 ]; then passed=$((passed + 1)); else
                echo "FAIL: Mermaid accepted the broken control diagram; the check cannot fail"
                failed=$((failed + 1))
            fi ;;
        *)
            if [ "$ok" = 1 ]; then passed=$((passed + 1)); else
                echo "FAIL: Mermaid rejected $name:"
                sed 's/^/    /' "$mmd"
                grep -m3 -i 'error' "$mmd.log" | sed 's/^/    /' || true
                failed=$((failed + 1))
            fi ;;
    esac
done
if [ "$n" -lt 6 ]; then
    echo "FAIL: expected at least 6 diagrams, found $n"
    failed=$((failed + 1))
fi
echo "mermaid: $passed passed, $failed failed"
[ "$failed" = 0 ]
