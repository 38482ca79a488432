#!/usr/bin/env bash
# Drives the real daemon, gateway and Notepad with the official MCP clients: Python `mcp`
# (PyPI) and the TypeScript `@modelcontextprotocol/client` and `@modelcontextprotocol/sdk`
# (npm), each pinned, plus raw lines no SDK sends (wire_check.py). Builds the binaries, installs
# the clients (venv under the target dir, `npm ci` from the committed lockfile), runs every
# client/revision pair through driver.py and exits non-zero if any fails. driver.py puts the
# daemon in /run/user/UID/jfgui-agent (XDG_RUNTIME_DIR, as a login session has it), the
# clients start the gateway without an `env`, as users configure them, and every line the
# gateway writes is validated against the official schema of its revision. Needs write access
# to /run (it creates /run/user/UID when missing); .ci/run runs as root. Called by .ci/run.
# The "all-apps" runs start two Notepads with different display names (and a third with agent
# access off) and drive them through `jfgui-agent mcp` under one client session, restarting one
# app and then the daemon midway.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}

cd "$root"
cargo build -q -p jfgui-daemon -p jfgui-agent -p jfgui-example-notepad

# Python: a venv under the build dir (shared with tests/gui/run.sh).
python=$(bash "$here/python/venv.sh")

# Node: exactly the lockfile.
(cd "$here/node" && npm ci --no-audit --no-fund --loglevel=error)

# Display names of the all-apps runs (slugs notes-a, notes-b).
apps="Notes A,Notes B"
runs=(
    "raw wire lines|$python $here/wire_check.py"
    "raw wire lines, jfgui-agent mcp|$python $here/wire_check.py --all-apps"
    "python-mcp 2026-07-28|$python $here/python/client_check.py --mode auto"
    "python-mcp 2025-11-25|$python $here/python/client_check.py --mode legacy"
    "ts-client 2026-07-28|node $here/node/client_check.mjs --sdk client --mode auto"
    "ts-client 2025-11-25|node $here/node/client_check.mjs --sdk client --mode legacy"
    "ts-sdk-v1 2025-11-25|node $here/node/client_check.mjs --sdk sdk --mode legacy"
    "all-apps python-mcp 2026-07-28|$python $here/python/client_check.py --mode auto"
    "all-apps python-mcp 2025-11-25|$python $here/python/client_check.py --mode legacy"
    "all-apps ts-client 2026-07-28|node $here/node/client_check.mjs --sdk client --mode auto"
    "all-apps ts-client 2025-11-25|node $here/node/client_check.mjs --sdk client --mode legacy"
    "all-apps ts-sdk-v1 2025-11-25|node $here/node/client_check.mjs --sdk sdk --mode legacy"
)
passed=0
failed=0
failures=()
for run in "${runs[@]}"; do
    name=${run%%|*}
    read -r -a command <<<"${run#*|}"
    driver_args=()
    if [[ $name == all-apps* ]]; then
        driver_args=(--apps "$apps" --disabled "Locked Notes")
        command+=(--all-apps "$apps")
    fi
    echo "== $name"
    if "$python" "$here/driver.py" --bin-dir "$target/debug" "${driver_args[@]}" -- "${command[@]}"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failures+=("$name")
    fi
done
if ((failed > 0)); then
    echo "failed client runs: ${failures[*]}" >&2
fi
echo "mcp-clients: $passed passed, $failed failed"
((failed == 0))
