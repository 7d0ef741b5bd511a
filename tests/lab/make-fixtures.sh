#!/usr/bin/env bash
# Regenerate tests/fixtures/lab/ (small real journals and their truth, for fast unit tests)
# from a lab run; runs the systems it needs first unless LAB_OUT already has them.
#
#   tests/lab/make-fixtures.sh [LAB_OUT]          (default: target/lab)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="${1:-$root/target/lab}"
if [ ! -f "$out/truth.json" ]; then
  LAB_SYSTEMS=otel-sdk,openllmetry,contextforge,mcp-audit-gateway "$root/tests/lab/run.sh" "$out"
fi
PYTHONPATH="$root/tests/lab" "${LAB_PYTHON:-python3}" -m labkit.fixtures "$out" "$root/tests/fixtures/lab"
