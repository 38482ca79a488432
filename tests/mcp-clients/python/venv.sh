#!/usr/bin/env bash
# `venv.sh DIR`: makes DIR a venv holding the pinned official Python MCP SDK
# (requirements.txt), rebuilt only when requirements.txt changes. Used by
# tests/mcp-clients/run.sh and tests/browser/run.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
venv=$1
stamp=$venv/.requirements.sha256
want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt"
    echo "$want" >"$stamp"
fi
