#!/usr/bin/env bash
# Creates a Python venv with pip at DIR: `bash tests/new-venv.sh DIR [PYTHON]` (PYTHON defaults
# to python3). `python -m venv` hides why its ensurepip step failed, and ensurepip needs the
# interpreter's bundled wheels (Debian splits them into python3-venv and python3-pip-whl), so
# when that step fails this prints its output and the free disk, then installs pip into the
# venv with the interpreter's own pip instead. Used by tests/mcp-clients/python/venv.sh and
# bindings/python/check-wheel.sh.
set -euo pipefail
dir=${1:?usage: new-venv.sh DIR [PYTHON]}
python=${2:-python3}
rm -rf "$dir"
"$python" -m venv --without-pip "$dir"
if ! log=$("$dir/bin/python" -m ensurepip --upgrade --default-pip 2>&1); then
    {
        echo "new-venv.sh: ensurepip failed in $dir ($("$python" --version 2>&1), $(command -v "$python")):"
        echo "$log" | tail -n 20
        df -h "$dir" | tail -n 1
        echo "new-venv.sh: installing pip into the venv with $python's own pip"
    } >&2
    "$python" -m pip --python "$dir/bin/python" install -q --disable-pip-version-check pip >&2
fi
"$dir/bin/python" -m pip --version >/dev/null
