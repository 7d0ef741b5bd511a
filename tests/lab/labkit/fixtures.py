"""Copy a small, real subset of a lab run into tests/fixtures/lab/ for fast unit tests.

    python3 -m labkit.fixtures LAB_OUT FIXTURES_DIR       (tests/lab/make-fixtures.sh runs it)

Whole journals of the small systems, as the lab wrote them; of ContextForge's log only the
lines of three scenarios' requests (the log is 200 KB), and of its database (2 MB) the rows
of those scenarios' tools and requests, as SQL (`mcp-excerpt.sql`). The fixture truth.json is the
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


CONTEXTFORGE_TABLES = ("tools", "tool_metrics", "observability_traces", "observability_spans", "structured_log_entries")


def contextforge_db_excerpt(system_dir: Path, entry: dict) -> str:
    """The rows of ContextForge's database that belong to the chosen scenarios, as SQL.

    Their tools, tool_metrics rows and tool.invoke spans (by tool), the traces of those spans,
    and the structured log rows of the requests that called those tools (by correlation id);
    the five tables' CREATE TABLE statements as the database has them, without indexes. The
    rows keep their rowids, so a test cites them as the lab's database does.
    """
    import sqlite3

    tools = {s["tool"] for s in entry["scenarios"] if s["id"] in CONTEXTFORGE_SCENARIOS}
    src = sqlite3.connect(f"file:{system_dir / 'mcp.db'}?mode=ro", uri=True)
    ids = [r[0] for r in src.execute("SELECT id FROM tools WHERE original_name IN (%s)" % ",".join("?" * len(tools)), sorted(tools))]
    marks = ",".join("?" * len(ids))
    wanted = {
        "tools": ("id IN (%s)" % marks, ids),
        "tool_metrics": ("tool_id IN (%s)" % marks, ids),
        "observability_spans": (
            "name = 'tool.invoke' AND json_extract(attributes, '$.\"tool.id\"') IN (%s)" % marks,
            ids,
        ),
    }
    lines = ["-- ContextForge database rows of a lab run (tests/lab/labkit/fixtures.py)", "PRAGMA foreign_keys = OFF;", "BEGIN TRANSACTION;"]
    for (sql,) in src.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN (%s) ORDER BY name" % ",".join("?" * len(CONTEXTFORGE_TABLES)),
        CONTEXTFORGE_TABLES,
    ):
        lines.append(sql.strip() + ";")
    traces = [r[0] for r in src.execute("SELECT DISTINCT trace_id FROM observability_spans WHERE " + wanted["observability_spans"][0], ids)]
    wanted["observability_traces"] = ("trace_id IN (%s)" % ",".join("?" * len(traces)), traces)
    corr = [
        r[0]
        for r in src.execute(
            "SELECT DISTINCT correlation_id FROM structured_log_entries WHERE json_extract(context, '$.resource_id') IN (%s) "
            "OR json_extract(context, '$.metadata.tool_id') IN (%s)" % (marks, marks),
            ids + ids,
        )
    ]
    wanted["structured_log_entries"] = ("correlation_id IN (%s)" % ",".join("?" * len(corr)), corr)
    for table in CONTEXTFORGE_TABLES:
        where, args = wanted[table]
        cols = [r[1] for r in src.execute(f"PRAGMA table_info({table})")]
        rows = ["(" + ", ".join(_sql_literal(v) for v in row) + ")" for row in src.execute(f"SELECT rowid, * FROM {table} WHERE {where} ORDER BY rowid", args)]
        if rows:
            lines.append(f'INSERT INTO "{table}" (rowid, {", ".join(cols)}) VALUES\n' + ",\n".join(rows) + ";")
    lines.append("COMMIT;")
    return "\n".join(lines) + "\n"


def _sql_literal(v) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, (int, float)):
        return repr(v)
    return "'" + str(v).replace("'", "''") + "'"


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
    write(dest / "contextforge" / "mcp-excerpt.sql", contextforge_db_excerpt(out / "contextforge", entry))
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
