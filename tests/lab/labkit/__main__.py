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

# The packages truth.json reports, per virtualenv.
PACKAGES = {
    "otel-sdk": ["mcp", "mcp-types", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
    "openllmetry": [
        "mcp",
        "opentelemetry-instrumentation-mcp",
        "opentelemetry-sdk",
        "opentelemetry-exporter-otlp-proto-http",
    ],
    "contextforge": ["mcp-contextforge-gateway", "mcp", "psycopg", "psycopg-binary", "opentelemetry-sdk"],
    "mcp-audit-gateway": ["mcp-audit-gateway", "mcp"],
}
# name: (run, the virtualenvs it uses)
SYSTEMS = {
    "otel-sdk": (otel_sdk.run, ["otel-sdk"]),
    "openllmetry": (openllmetry.run, ["openllmetry"]),
    "contextforge": (contextforge.run_sqlite, ["contextforge"]),
    "contextforge-pg": (contextforge.run_postgres, ["contextforge"]),
    "mcp-audit-gateway": (audit_gateway.run, ["mcp-audit-gateway"]),
    "joined": (joined.run, ["otel-sdk", "contextforge"]),
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
    # Explicitly, also for SIGINT: started in the background by a script, we inherit it ignored.
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _terminate)
    started_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    systems = []
    current = "lab"
    try:
        selected = _selected()
        needed = sorted({venv for name in selected for venv in SYSTEMS[name][1]})
        current = "virtualenvs"
        lab.prepare_venvs(needed)
        packages = {venv: venvs.installed_versions(lab.python(venv), PACKAGES[venv]) for venv in needed}
        for name in selected:
            current = name
            run, used = SYSTEMS[name]
            shutil.rmtree(out / name, ignore_errors=True)
            (out / name / "lab").mkdir(parents=True)
            lab.log(f"== {name}")
            step_started = time.monotonic()
            entry = run(lab)
            systems.append(
                {"system": name, "journals": entry["journals"], "venvs": used, "scenarios": entry["scenarios"]}
            )
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
        # Nothing may interrupt the cleanup: a second Ctrl-C would leave processes behind.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
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
