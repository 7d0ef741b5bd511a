"""Copy a small, real subset of a lab run into tests/fixtures/lab/ for fast unit tests.

    python3 -m labkit.fixtures LAB_OUT FIXTURES_DIR       (tests/lab/make-fixtures.sh runs it)

Whole journals of the small systems, as the lab wrote them; of ContextForge's log only the
lines of three scenarios' requests (the log is 200 KB). The fixture truth.json is the
run's, with ContextForge narrowed to those scenarios. The file paths in stack traces are
made machine-neutral (`/python/lib/python3.11/…`, `tests/lab/labkit/…`); nothing else is
changed. Standard library only.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

WHOLE = {
    "otel-sdk": ["traces.jsonl", "effects.jsonl"],
    "openllmetry": ["traces.jsonl", "effects.jsonl"],
    "mcp-audit-gateway": ["audit-log.jsonl", "effects.jsonl"],
}
_PYTHON_PATH = re.compile(r'(?:/[^"\s/\\]+)+?/lib/python3\.(\d+)/')
_LAB_PATH = re.compile(r'(?:/[^"\s/\\]+)+?/tests/lab/labkit/')


def scrub(text: str) -> str:
    """Stack-trace paths without this machine's folders."""
    return _LAB_PATH.sub("tests/lab/labkit/", _PYTHON_PATH.sub(r"/python/lib/python3.\1/", text))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(scrub(text), encoding="utf-8")


CONTEXTFORGE_SCENARIOS = ("drop_then_retry", "target_down_then_retry", "gateway_timeout_then_retry")


def contextforge_excerpt(system_dir: Path, entry: dict) -> tuple[list[str], list[str]]:
    """The gateway.log lines and effect lines of the chosen scenarios' /rpc requests."""
    wanted = {c["jsonrpc_id"] for s in entry["scenarios"] if s["id"] in CONTEXTFORGE_SCENARIOS for c in s["calls"]}
    lines = (system_dir / "gateway.log").read_text(encoding="utf-8").splitlines()
    correlation_ids = set()
    for line in lines:
        record = json.loads(line)
        message = record.get("message", "")
        if "Incoming request: POST /rpc" in message:
            body = json.loads(message.split("Body: ", 1)[1])
            if body.get("id") in wanted:
                correlation_ids.add(record["request_id"])
    kept = [line for line in lines if json.loads(line).get("request_id") in correlation_ids]
    effects = [
        line
        for line in (system_dir / "effects.jsonl").read_text(encoding="utf-8").splitlines()
        if json.loads(line)["scenario"] in CONTEXTFORGE_SCENARIOS
    ]
    return kept, effects


def main() -> None:
    out, dest = Path(sys.argv[1]), Path(sys.argv[2])
    truth = json.loads((out / "truth.json").read_text(encoding="utf-8"))
    systems = {entry["system"]: entry for entry in truth["systems"]}
    missing = sorted((set(WHOLE) | {"contextforge"}) - set(systems))
    if missing:
        sys.exit(f"make-fixtures: the lab run in {out} lacks {missing}")
    if dest.exists():
        shutil.rmtree(dest)
    for system, files in WHOLE.items():
        for name in files:
            write(dest / system / name, (out / system / name).read_text(encoding="utf-8"))

    entry = systems["contextforge"]
    log_lines, effect_lines = contextforge_excerpt(out / "contextforge", entry)
    write(dest / "contextforge" / "gateway.log", "\n".join(log_lines) + "\n")
    write(dest / "contextforge" / "effects.jsonl", "\n".join(effect_lines) + "\n")
    narrowed = dict(
        entry,
        journals=["gateway.log"],
        scenarios=[s for s in entry["scenarios"] if s["id"] in CONTEXTFORGE_SCENARIOS],
        excerpt="gateway.log holds only the lines of these scenarios' /rpc requests",
    )

    fixture_truth = dict(truth, systems=[systems[name] for name in WHOLE] + [narrowed])
    write(dest / "truth.json", json.dumps(fixture_truth, separators=(",", ":")) + "\n")
    total = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    print(f"wrote {dest} ({total // 1024} KB)")


if __name__ == "__main__":
    main()
