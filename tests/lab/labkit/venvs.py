"""One virtualenv per system, installed from its pinned requirements and reused while they hold.

A venv is reused when its stamp (a hash of the requirements file and the Python version)
matches; otherwise it is made anew. Standard library only.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
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
    """The installed versions of the named distributions in a venv."""
    out = _run(
        [str(python), "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        f"{python}: pip list",
        120,
    )
    versions = {row["name"].lower(): row["version"] for row in json.loads(out)}
    return {name: versions[name.lower()] for name in names if name.lower() in versions}


def _run(argv: list[str], step: str, timeout_s: float) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise LabError(f"{step}: timed out after {timeout_s}s") from None
    if done.returncode != 0:
        raise LabError(f"{step}: exit {done.returncode}\n{done.stderr[-4000:]}")
    return done.stdout
