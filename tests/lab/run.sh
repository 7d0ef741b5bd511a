#!/usr/bin/env bash
# The lab: real MCP journals from real third-party software, with their ground truth.
#
#   tests/lab/run.sh [OUT_DIR]            (default: target/lab)
#   LAB_SYSTEMS=otel-sdk,contextforge tests/lab/run.sh
#
# Exits non-zero, naming the system and the step, when anything cannot be installed or run.
# Every process it starts is stopped again, also on failure and on Ctrl-C.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-target/lab}"
python="${LAB_PYTHON:-python3}"

if ! "$python" -c 'import sys, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
  echo "lab: needs Python >= 3.11 with venv; $python is $("$python" --version 2>/dev/null || echo "not there")" >&2
  exit 2
fi

# The whole lab is bounded; the orchestrator bounds each step itself and stops what it started.
PYTHONPATH="$here" timeout --signal=TERM --kill-after=30 "${LAB_TIMEOUT:-1500}" \
  "$python" -m labkit "$out" &
lab=$!
trap 'kill -TERM "$lab" 2>/dev/null || true; wait "$lab" 2>/dev/null || true; exit 130' INT TERM HUP
wait "$lab"
