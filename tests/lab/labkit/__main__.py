"""Run the lab: every system x scenario, then truth.json (written last, atomically).

    python3 -m labkit OUT_DIR        (tests/lab/run.sh is the entry point)

LAB_SYSTEMS=otel-sdk,contextforge runs a subset; LAB_VENV_DIR puts the venvs elsewhere.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import sys
import time
import traceback
from datetime import datetime, timezone
from pathlib import Path

from labkit import venvs
from labkit.lab import Lab
from labkit.procs import LabError
from labkit.systems import audit_gateway, contextforge, joined, openllmetry, otel_sdk

OTEL = ["opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
CONTEXTFORGE = ["mcp-contextforge-gateway", "mcp"]
# name: (run, the venv whose versions to report, the packages to report)
SYSTEMS = {
    "otel-sdk": (otel_sdk.run, "otel-sdk", ["mcp", "mcp-types", *OTEL]),
    "openllmetry": (openllmetry.run, "openllmetry", ["mcp", "opentelemetry-instrumentation-mcp", *OTEL]),
    "contextforge": (contextforge.run_sqlite, "contextforge", CONTEXTFORGE),
    "contextforge-pg": (contextforge.run_postgres, "contextforge", [*CONTEXTFORGE, "psycopg", "psycopg-binary"]),
    "mcp-audit-gateway": (audit_gateway.run, "mcp-audit-gateway", ["mcp-audit-gateway", "mcp"]),
    "joined": (joined.run, "contextforge", [*CONTEXTFORGE, *OTEL]),
}


def _selected() -> list[str]:
    wanted = [s.strip() for s in os.environ.get("LAB_SYSTEMS", "").split(",") if s.strip()]
    unknown = [s for s in wanted if s not in SYSTEMS]
    if unknown:
        raise LabError(f"LAB_SYSTEMS: unknown system(s) {unknown}; known: {', '.join(SYSTEMS)}")
    return wanted or list(SYSTEMS)


def _terminate(signum, _frame):
    raise KeyboardInterrupt(f"signal {signum}")


def main() -> int:
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "target/lab").resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "truth.json").unlink(missing_ok=True)
    (out / "lab.log").unlink(missing_ok=True)
    venv_root = Path(os.environ.get("LAB_VENV_DIR", out)).resolve()
    lab = Lab(out, venv_root)
    signal.signal(signal.SIGTERM, _terminate)
    signal.signal(signal.SIGHUP, _terminate)
    started_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    systems, packages = [], {}
    current = "lab"
    try:
        for name in _selected():
            current = name
            run, venv, package_names = SYSTEMS[name]
            shutil.rmtree(out / name, ignore_errors=True)
            (out / name / "lab").mkdir(parents=True)
            lab.log(f"== {name}")
            step_started = time.monotonic()
            entry = run(lab)
            packages[name] = venvs.installed_versions(lab.python(venv), package_names)
            entry["packages"] = packages[name]
            systems.append(entry)
            lab.log(f"== {name} done in {time.monotonic() - step_started:.1f}s")
        current = "cleanup"
        lab.procs.stop_all()
        lab.procs.check_nothing_listens()
    except LabError as error:
        lab.log(f"FAILED in {current}: {error}")
        return 1
    except KeyboardInterrupt as interrupt:
        lab.log(f"interrupted in {current} ({interrupt or 'Ctrl-C'}); stopping everything")
        return 130
    except Exception:
        lab.log(f"FAILED in {current}: a bug in the lab\n{traceback.format_exc()}")
        return 1
    finally:
        lab.procs.stop_all()

    truth = {
        "lab": {
            "started_at": started_at,
            "seconds": round(time.monotonic() - lab.started, 1),
            "python": platform.python_version(),
            "packages": packages,
        },
        "systems": systems,
    }
    temporary = out / "truth.json.tmp"
    temporary.write_text(json.dumps(truth, indent=2) + "\n", encoding="utf-8")
    os.replace(temporary, out / "truth.json")
    lab.log(f"wrote {out / 'truth.json'} ({len(systems)} systems) in {truth['lab']['seconds']}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
