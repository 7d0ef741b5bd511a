"""One virtualenv per system, installed from its pinned requirements and reused while they hold.

A venv is reused when its stamp (a hash of the requirements file and the Python version)
matches; otherwise it is made anew. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from labkit.procs import LabError

REQUIREMENTS_DIR = Path(__file__).resolve().parent.parent / "requirements"
INSTALL_TIMEOUT_S = 600


def _stamp(requirements: Path) -> str:
    digest = hashlib.sha256(requirements.read_bytes())
    digest.update(sys.version.encode())
    return digest.hexdigest()


def ensure_venv(name: str, venv_root: Path, log) -> Path:
    """The python of the venv `venv_root/venv-NAME`, made from requirements/NAME.txt if needed."""
    requirements = REQUIREMENTS_DIR / f"{name}.txt"
    venv = venv_root / f"venv-{name}"
    python = venv / "bin" / "python"
    stamp_file = venv / "lab-stamp"
    stamp = _stamp(requirements)
    if python.exists() and stamp_file.exists() and stamp_file.read_text().strip() == stamp:
        log(f"venv-{name}: reused ({requirements.name} unchanged)")
        return python
    log(f"venv-{name}: installing from {requirements.name}")
    started = time.monotonic()
    if venv.exists():
        shutil.rmtree(venv)
    venv_root.mkdir(parents=True, exist_ok=True)
    _run([sys.executable, "-m", "venv", str(venv)], f"{name}: create venv", 120)
    _run(
        [
            str(python),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            "--requirement",
            str(requirements),
        ],
        f"{name}: pip install -r {requirements.name}",
        INSTALL_TIMEOUT_S,
    )
    stamp_file.write_text(stamp + "\n")
    log(f"venv-{name}: installed from {requirements.name} in {time.monotonic() - started:.1f}s")
    return python


def installed_versions(python: Path, names: list[str]) -> dict[str, str]:
    """The installed versions of the named distributions in a venv (those not installed left out)."""
    script = (
        "import importlib.metadata as m, json, sys\n"
        "found = {}\n"
        "for name in sys.argv[1:]:\n"
        "    try:\n"
        "        found[name] = m.version(name)\n"
        "    except m.PackageNotFoundError:\n"
        "        pass\n"
        "print(json.dumps(found))\n"
    )
    return json.loads(_run([str(python), "-c", script, *names], f"{python}: read versions", 60))


_running: set[subprocess.Popen] = set()
_running_lock = threading.Lock()


def stop_installs() -> None:
    """Kill every install still running (their process groups), e.g. on Ctrl-C."""
    with _running_lock:
        for popen in _running:
            try:
                os.killpg(popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def _run(argv: list[str], step: str, timeout_s: float) -> str:
    """Run a command in its own process group; its stdout, or LabError naming `step`."""
    popen = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    with _running_lock:
        _running.add(popen)
    try:
        out, err = popen.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(popen.pid, signal.SIGKILL)
        popen.communicate()
        raise LabError(f"{step}: timed out after {timeout_s}s") from None
    finally:
        with _running_lock:
            _running.discard(popen)
    if popen.returncode != 0:
        raise LabError(f"{step}: exit {popen.returncode}\n{err[-4000:]}")
    return out
