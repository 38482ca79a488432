#!/bin/bash
# Named-pipe smoke test of the Windows daemon under wine (functional only: wine enforces
# neither the pipe DACL nor, as observed with wine 8.0, FILE_FLAG_FIRST_PIPE_INSTANCE across
# processes): a raw pipe client (smoke/), then the Windows jfgui-agent.exe against the
# daemon and jfgui-notepad.exe (and `headless` without it). Not part of packaging/check.sh:
# it installs mingw-w64 and wine (large).
#   bash packaging/windows/smoke.sh
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
here="$repo/packaging/windows"
if ! command -v x86_64-w64-mingw32-gcc >/dev/null || [ ! -x /usr/lib/wine/wine64 ]; then
    apt-get -o DPkg::Lock::Timeout=600 update && DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends gcc-mingw-w64-x86-64 wine64
fi
rustup target add x86_64-pc-windows-gnu
cd "$repo"
cargo build --target x86_64-pc-windows-gnu -p jfgui-daemon -p jfgui-agent -p jfgui-example-notepad
(cd "$here/smoke" && cargo build --target x86_64-pc-windows-gnu)
work=$(mktemp -d)
daemon_pid=""
notepad_pid=""
cleanup() {
    [ -n "$notepad_pid" ] && kill "$notepad_pid" 2>/dev/null
    [ -n "$daemon_pid" ] && kill "$daemon_pid" 2>/dev/null
    WINEPREFIX="$work/prefix" /usr/lib/wine/wineserver -k 2>/dev/null || true
    WINEPREFIX="$work/prefix" /usr/lib/wine/wineserver -w 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
for exe in jfgui-agentd jfgui-agent jfgui-notepad; do
    cp "$target_dir/x86_64-pc-windows-gnu/debug/$exe.exe" "$work/"
done
cp "$here/smoke/target/x86_64-pc-windows-gnu/debug/jfgui-pipe-smoke.exe" "$work/"
# The CLI's unit tests, including its named-pipe transport's (connect, busy retry).
cargo test --target x86_64-pc-windows-gnu -p jfgui-agent --no-run --message-format=json \
    | python3 -c 'import json,sys
for m in map(json.loads, sys.stdin):
    if m.get("reason") == "compiler-artifact" and m["profile"]["test"] and m.get("executable"):
        print(m["executable"])' | while read -r exe; do cp "$exe" "$work/jfgui-agent-tests.exe"; done
# Wine 8 has no bcryptprimitives.dll, which Rust's std imports (ProcessPrng): a shim.
x86_64-w64-mingw32-gcc -shared -o "$work/bcryptprimitives.dll" "$here/smoke/bcryptprimitives.c" -lbcrypt
export WINEPREFIX="$work/prefix" WINEDEBUG=-all
mkdir -p "$WINEPREFIX"
/usr/lib/wine/wine64 cmd /c exit >/dev/null 2>&1 || true   # first run creates the prefix
/usr/lib/wine/wine64 "$work/jfgui-agent-tests.exe"
/usr/lib/wine/wine64 "$work/jfgui-agentd.exe" --idle-exit 3 --request-deadline 1s > "$work/agentd.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 100); do grep -q 'listening' "$work/agentd.log" && break; sleep 0.2; done
prefix=$(grep -o 'control=[^ ]*' "$work/agentd.log" | head -1 | sed 's/^control=//; s/-control$//')
[ -n "$prefix" ] || { cat "$work/agentd.log"; echo "smoke: the daemon did not start" >&2; exit 1; }
/usr/lib/wine/wine64 "$work/jfgui-pipe-smoke.exe" "$prefix"

# The CLI: every subcommand reaches the daemon through its pipes, and `call`/`inspect` reach
# the app through the endpoint pipe `apps/list` names.
fail() { cat "$work/agentd.log" "$work/notepad.log" 2>/dev/null; echo "smoke: $*" >&2; exit 1; }
agent() {   # agent ARGS... → $out (stdout), $err (stderr), $rc
    set +e
    out=$(/usr/lib/wine/wine64 "$work/jfgui-agent.exe" "$@" 2>"$work/agent.err")
    rc=$?
    set -e
    err=$(cat "$work/agent.err")
    echo "\$ jfgui-agent $*  → exit $rc"
    [ -z "$out" ] || echo "$out"
    [ -z "$err" ] || echo "stderr: $err"
}
json() { python3 -c "import json,sys; d=json.loads(sys.argv[1]); print($1)" "$out"; }
/usr/lib/wine/wine64 "$work/jfgui-notepad.exe" --agent-enable > "$work/notepad.log" 2>&1 &
notepad_pid=$!
for _ in $(seq 50); do
    agent list --json
    [ "$rc" = 0 ] && [ "$(json "[a['slug'] for a in d['apps'] if a['enabled']]")" = "['notepad']" ] && break
    sleep 0.2
done
[ "$rc" = 0 ] || fail "list --json exit $rc"
endpoint=$(json "[a['endpoint'] for a in d['apps'] if a['slug']=='notepad'][0]")
[ "$endpoint" = "$prefix-app-notepad" ] || fail "notepad's endpoint is $endpoint, not $prefix-app-notepad"
agent status
[ "$rc" = 0 ] && grep -q '^apps: 1$' <<<"$out" && grep -q '^runtime dir: none$' <<<"$out" || fail "status"
agent actions notepad
[ "$rc" = 0 ] && grep -q document.text.insert <<<"$out" || fail "actions"
agent describe notepad document.text.insert
[ "$rc" = 0 ] && grep -q '(write)' <<<"$out" || fail "describe"
agent call notepad document.text.insert --input-json '{"text":"Hello from wine"}' --expected-revision auto --json
[ "$rc" = 0 ] && [ "$(json "d['revision']")" = 2 ] || fail "call"
agent call notepad document.text.insert --input-json '{"text":"!"}' --expected-revision 1 --json
[ "$rc" = 1 ] && grep -q stale_revision <<<"$out$err" || fail "a stale call must fail with exit 1"
agent inspect notepad --json
[ "$rc" = 0 ] && [ "$(json "d['state']['text']")" = "Hello from wine" ] || fail "inspect"
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":7,"method":"agent/info","params":{"protocolVersion":"1"}}' \
    | /usr/lib/wine/wine64 "$work/jfgui-agent.exe" stdio notepad --protocol json 2>"$work/agent.err") \
    || fail "stdio exit $? ($(cat "$work/agent.err"))"
echo "\$ jfgui-agent stdio notepad --protocol json  ← agent/info"
echo "$out"
[ "$(json "d['id']")" = 7 ] && [ "$(json "'result' in d")" = True ] || fail "stdio"
# headless: no daemon involved, the app's host channel on the child's stdin/stdout.
out=$(printf '%s\n' '{"jsonrpc":"2.0","id":8,"method":"agent/info","params":{"protocolVersion":"1"}}' \
    | /usr/lib/wine/wine64 "$work/jfgui-agent.exe" headless jfgui-notepad.exe --protocol json 2>"$work/agent.err") \
    || fail "headless exit $? ($(cat "$work/agent.err"))"
echo "\$ jfgui-agent headless jfgui-notepad.exe --protocol json  ← agent/info"
echo "$out"
[ "$(json "d['id']")" = 8 ] && [ "$(json "d['result']['app']['displayName']")" = Notepad ] || fail "headless"
agent call nosuchapp document.get
[ "$rc" = 3 ] || fail "an unknown endpoint must exit 3"
kill "$notepad_pid"; wait "$notepad_pid" 2>/dev/null || true; notepad_pid=""
# Idle exit: no app and no client for 3 s → status 0.
wait "$daemon_pid"; status=$?; daemon_pid=""
[ "$status" = 0 ] || { cat "$work/agentd.log"; echo "smoke: daemon exit status $status" >&2; exit 1; }
grep -q 'idle-exit; shutting down' "$work/agentd.log" || { cat "$work/agentd.log"; exit 1; }
# No daemon: the CLI says so with exit 4.
agent list
[ "$rc" = 4 ] && grep -q daemon_not_running <<<"$err" || fail "list without a daemon must exit 4"
cat "$work/agentd.log"
echo "packaging/windows/smoke.sh: ok"
