#!/usr/bin/env bash
# Re-lock the lab's requirements: for each requirements/NAME.in (the packages the lab uses,
# pinned by hand), install it into a fresh virtualenv and write every installed
# distribution, pinned, to requirements/NAME.txt, which is what the lab installs.
#
#   tests/lab/lock.sh [NAME...]        (default: every .in file)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${LAB_PYTHON:-python3}"
cd "$here/requirements"
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  for f in *.in; do names+=("${f%.in}"); done
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for name in "${names[@]}"; do
  "$python" -m venv "$work/$name"
  timeout 900 "$work/$name/bin/python" -m pip install --disable-pip-version-check --no-input --quiet \
    --requirement "$name.in"
  {
    echo "# Locked from $name.in by tests/lab/lock.sh on Python $("$python" -c 'import platform; print(platform.python_version())'); do not edit by hand."
    "$work/$name/bin/python" -m pip freeze --disable-pip-version-check
  } > "$name.txt"
  echo "locked $name.txt ($(grep -vc '^#' "$name.txt") packages)"
done
