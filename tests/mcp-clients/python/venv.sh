#!/usr/bin/env bash
# Creates (or reuses) the venv of the official Python MCP SDK under the target dir, rebuilt when
# requirements.txt changes, and prints its python. Used by tests/mcp-clients/run.sh,
# tests/gui/run.sh and tests/browser/run.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
venv=$target/mcp-venv
stamp=$venv/.requirements.sha256
want=$(sha256sum "$here/requirements.txt" | cut -d' ' -f1)
if [[ ! -x $venv/bin/python || ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
    bash "$root/tests/new-venv.sh" "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check -r "$here/requirements.txt" >&2
    echo "$want" >"$stamp"
fi
echo "$venv/bin/python"
