#!/usr/bin/env bash
# Where an MCP call through the stdio gateway goes (docs/PERFORMANCE.md): starts the release
# jfgui-agentd and a Notepad holding a 64 B document in a private runtime dir, runs
# `jfgui-agent stdio profile --protocol mcp` on pipes as MCP clients do, completes the
# 2025-11-25 handshake and drives N sequential `tools/call`s of `jfgui_actions_execute`
# (`document.get`, every reply checked), then reports per call: the client's round trip,
# CPU time of the gateway, the daemon and the app (/proc), and the syscalls of the gateway and
# of the daemon (strace -c -f, a second run of N calls).
#
# Needs root (strace on another process), strace, python3.
# Usage: tests/benches/profile-mcp.sh [CALLS]   (default 3000)
# With JFGUI_TEST_BIN_DIR set, the binaries there are profiled (e.g. a saved baseline) and
# nothing is built.
set -euo pipefail
cd "$(dirname "$0")/../.."
calls=${1:-3000}
for tool in strace python3; do
    command -v "$tool" >/dev/null || { echo "profile-mcp.sh needs $tool" >&2; exit 1; }
done
if [[ -n ${JFGUI_TEST_BIN_DIR:-} ]]; then
    bin=$JFGUI_TEST_BIN_DIR
else
    cargo build -q --release -p daemon -p notepad -p cli
    bin=$PWD/target/release
fi
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT
mkdir -m 700 "$work/rt"
export JFGUI_RUNTIME_DIR=$work/rt JFGUI_AUDIT_DIR=$work/audit
unset JFGUI_LOG XDG_RUNTIME_DIR
"$bin/jfgui-agentd" >"$work/daemon.log" 2>&1 & daemon=$!; pids+=("$daemon")
for _ in $(seq 100); do [[ -S $work/rt/host.sock ]] && break; sleep 0.1; done
"$bin/jfgui-notepad" --agent-enable --name "Profile" --text "$(python3 -c 'print("a"*64)')" >"$work/pad.log" 2>&1 & app=$!; pids+=("$app")
for _ in $(seq 100); do [[ -S $work/rt/apps/profile.sock ]] && break; sleep 0.1; done
mkfifo "$work/go"
python3 - "$bin/jfgui-agent" "$calls" "$work" <<'PY' &
import json, subprocess, sys, os, time
agent, n, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
p = subprocess.Popen([agent, "stdio", "profile", "--protocol", "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
open(work + "/gw.pid", "w").write(str(p.pid))
def ask(line):
    p.stdin.write(line.encode() + b"\n"); p.stdin.flush()
    return json.loads(p.stdout.readline())
r = ask('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"p","version":"1"}}}')
assert "result" in r, r
p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n'); p.stdin.flush()
def run(k):
    for i in range(1, k + 1):
        r = ask('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"jfgui_actions_execute","arguments":{"action":"document.get"}}}' % i)
        assert r["id"] == i and r["result"]["isError"] is False, r
run(500)
for phase in ("cpu", "strace"):
    open(work + "/ready", "w").write(phase); 
    with open(work + "/go") as g: g.read()
    t = time.time(); run(n); 
    open(work + "/done-" + phase, "w").write(str(time.time() - t))
p.stdin.close(); p.wait()
PY
drv=$!
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
while [[ ! -f $work/ready ]]; do sleep 0.1; done
gw=$(cat "$work/gw.pid")
d0=$(ticks $daemon) g0=$(ticks $gw) a0=$(ticks $app)
echo > "$work/go"
while [[ ! -f $work/done-cpu ]]; do sleep 0.1; done
d1=$(ticks $daemon) g1=$(ticks $gw) a1=$(ticks $app)
echo "wall per call (µs): $(python3 -c "print(round($(cat $work/done-cpu)*1e6/$calls,1))")"
echo "CPU per call µs: gateway $(( (g1-g0)*10000000/calls/1000 )) daemon $(( (d1-d0)*10000000/calls/1000 )) app $(( (a1-a0)*10000000/calls/1000 ))"
strace -q -c -f -p "$gw" -o "$work/st-gw" & s1=$!
strace -q -c -f -p "$daemon" -o "$work/st-d" & s2=$!
sleep 0.5
echo > "$work/go"
while [[ ! -f $work/done-strace ]]; do sleep 0.1; done
kill -INT "$s1" "$s2" 2>/dev/null || true
wait "$s1" "$s2" || true
for f in gw d; do
python3 - "$work/st-$f" "$calls" "$f" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) >= 5 and f[-1].isidentifier() and f[3].isdigit() and f[-1] != "total":
        rows.append((f[-1], int(f[3])))
n = int(sys.argv[2]); total = sum(c for _, c in rows)
print(f"{sys.argv[3]} syscalls/call {total / n:.2f} ({', '.join(f'{name} {c / n:.2f}' for name, c in sorted(rows, key=lambda r: -r[1]) if c / n >= 0.01)})")
PY
done
wait $drv
