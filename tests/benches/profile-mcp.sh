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
. tests/benches/setup.sh
needs strace python3
binaries jfgui-daemon jfgui-example-notepad jfgui-agent
export JFGUI_AUDIT_DIR=$work/audit
daemon_with_notepad Profile "$(python3 -c 'print("a"*64)')"
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
