#!/bin/bash
# Named-pipe smoke test of the Windows daemon under wine (functional only: wine enforces
# neither the pipe DACL nor, as observed with wine 8.0, FILE_FLAG_FIRST_PIPE_INSTANCE across
# processes). Not part of packaging/check.sh: it installs mingw-w64 and wine (large).
#   bash packaging/windows/smoke.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here="$repo/packaging/windows"
if ! command -v x86_64-w64-mingw32-gcc >/dev/null || [ ! -x /usr/lib/wine/wine64 ]; then
    apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends gcc-mingw-w64-x86-64 wine64
fi
rustup target add x86_64-pc-windows-gnu
cd "$repo"
cargo build --target x86_64-pc-windows-gnu -p daemon
(cd "$here/smoke" && cargo build --target x86_64-pc-windows-gnu)
work=$(mktemp -d)
daemon_pid=""
cleanup() {
    [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null
    WINEPREFIX="$work/prefix" wineserver -k 2>/dev/null || true
    WINEPREFIX="$work/prefix" wineserver -w 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cp "$target_dir/x86_64-pc-windows-gnu/debug/jfgui-agentd.exe" "$work/"
cp "$here/smoke/target/x86_64-pc-windows-gnu/debug/jfgui-pipe-smoke.exe" "$work/"
# Wine 8 has no bcryptprimitives.dll, which Rust's std imports (ProcessPrng): a shim.
x86_64-w64-mingw32-gcc -shared -o "$work/bcryptprimitives.dll" "$here/smoke/bcryptprimitives.c" -lbcrypt
export WINEPREFIX="$work/prefix" WINEDEBUG=-all
mkdir -p "$WINEPREFIX"
/usr/lib/wine/wine64 cmd /c exit >/dev/null 2>&1 || true   # first run creates the prefix
/usr/lib/wine/wine64 "$work/jfgui-agentd.exe" --idle-exit 3 --request-deadline 1s > "$work/agentd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do grep -q 'listening' "$work/agentd.log" && break; sleep 0.2; done
prefix=$(grep -o 'control=[^ ]*' "$work/agentd.log" | head -1 | sed 's/^control=//; s/-control$//')
[ -n "$prefix" ] || { cat "$work/agentd.log"; echo "smoke: the daemon did not start" >&2; exit 1; }
/usr/lib/wine/wine64 "$work/jfgui-pipe-smoke.exe" "$prefix"
# Idle exit: no app and no client for 3 s → status 0.
wait "$daemon_pid"; status=$?; daemon_pid=""
[ "$status" = 0 ] || { cat "$work/agentd.log"; echo "smoke: daemon exit status $status" >&2; exit 1; }
grep -q 'idle-exit; shutting down' "$work/agentd.log" || { cat "$work/agentd.log"; exit 1; }
cat "$work/agentd.log"
echo "packaging/windows/smoke.sh: ok"
