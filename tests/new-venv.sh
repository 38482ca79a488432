#!/usr/bin/env bash
# Creates a venv of python3 with pip at DIR: `bash tests/new-venv.sh DIR`. `python3 -m venv`
# hides why its ensurepip step failed, and ensurepip needs the interpreter's bundled wheels
# (Debian splits them into python3-venv and python3-pip-whl), so when that step fails this
# prints its output and the free disk, then installs pip into the venv with python3's own pip.
# Used by tests/mcp-clients/python/venv.sh and bindings/python/check-wheel.sh.
set -euo pipefail
dir=${1:?usage: new-venv.sh DIR}
rm -rf "$dir"
python3 -m venv --without-pip "$dir"
if ! log=$("$dir/bin/python" -m ensurepip --upgrade --default-pip 2>&1); then
    {
        echo "new-venv.sh: ensurepip failed in $dir ($(python3 --version 2>&1), $(command -v python3)):"
        echo "$log" | tail -n 20
        df -h "$dir" | tail -n 1
        echo "new-venv.sh: installing pip into the venv with python3's own pip"
    } >&2
    python3 -m pip --python "$dir/bin/python" install -q --disable-pip-version-check pip >&2
fi
"$dir/bin/python" -m pip --version >/dev/null
