#!/usr/bin/env bash
# The daemon's code layout (docs/PERFORMANCE.md, "Code layout"): which functions the daemon runs
# at start-up, while idle with an app registered, and per call, in the order it first runs them.
# daemon/build.rs places the functions of daemon/link/hot.txt first in the optimized binary, so
# they share a few pages instead of dragging 64 KiB fault-around blocks of the whole binary in.
#
#   tests/benches/layout.sh           regenerates daemon/link/hot.txt
#   tests/benches/layout.sh --check   fails when hot.txt no longer fits the code (run by .ci/run)
#
# Both run the release daemon under valgrind's callgrind: start-up, one Notepad registering, a
# client asking for the status and the app list through the CLI and one as a script does,
# another connecting to the app's endpoint and leaving, 3 s idle (first dump), then calls through the CLI (reads and writes over JSON-1, status, list)
# and an MCP session through the stdio gateway (second dump). A function is named by its mangled
# symbol (v0, .cargo/config.toml) with the crate hashes in it replaced by `*` (and the back
# references, which are offsets that move with them), so the list holds across profiles
# (release and dist hash differently), toolchains and lock updates.
#
# --check fails when more than 2% of hot.txt matches no function of the binary (renamed or
# removed code), or when the functions the daemon ran until idle that hot.txt does not name
# exceed 16 KiB of code (new code on the idle path); either way, run the script without --check.
# Needs valgrind, python3 and nm.
set -euo pipefail
cd "$(dirname "$0")/../.."
mode=${1:-write}
case $mode in
    write | --check) ;;
    *) echo "usage: tests/benches/layout.sh [--check]" >&2; exit 2 ;;
esac
. tests/benches/setup.sh
needs valgrind callgrind_control python3 nm
binaries daemon notepad cli

mkdir -m 700 "$work/rt"
export JFGUI_RUNTIME_DIR=$work/rt JFGUI_AUDIT_DIR=$work/audit
valgrind --tool=callgrind --demangle=no --dump-instr=no --callgrind-out-file="$work/cg" \
    "$bin/jfgui-agentd" >"$work/daemon.log" 2>&1 &
daemon=$!
pids+=("$daemon")
for _ in $(seq 300); do [[ -S $work/rt/host.sock ]] && break; sleep 0.1; done
"$bin/jfgui-notepad" --agent-enable --name Pad --text hello >"$work/pad.log" 2>&1 &
pids+=($!)
for _ in $(seq 300); do [[ -S $work/rt/apps/pad.sock ]] && break; sleep 0.1; done
[[ -S $work/rt/apps/pad.sock ]] || { cat "$work/daemon.log" "$work/pad.log" >&2; exit 1; }
agent() { "$bin/jfgui-agent" "$@" >/dev/null; }
agent status
agent list
# A script's client: JSON-RPC lines on the control socket, no handshake (as the test suite's
# and the latency bench's readiness checks); then one that connects to the app's endpoint and
# leaves.
python3 - "$work/rt" <<'PY'
import json, socket, sys
control = socket.socket(socket.AF_UNIX)
control.connect(sys.argv[1] + "/agentd.sock")
lines = control.makefile("rw")
for id, method in enumerate(["daemon/status", "apps/list"], 1):
    lines.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}) + "\n")
    lines.flush()
    assert "result" in json.loads(lines.readline())
socket.socket(socket.AF_UNIX).connect(sys.argv[1] + "/apps/pad.sock")
PY
sleep 3
# dump NAME: callgrind writes what the daemon ran since the last dump (cg.1, cg.2) and goes on.
dump() {
    if ! callgrind_control --dump="$1" "$daemon" >"$work/dump.log" 2>&1; then
        cat "$work/dump.log" >&2
        exit 1
    fi
}
dump idle

for _ in 1 2 3; do
    agent call pad document.get
    agent call pad document.text.insert --input-json '{"text":"hi"}' --expected-revision auto
done
agent inspect pad
mcp() { printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}\n' "$@"; }
hello='{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"l","version":"1"}}'
get='{"name":"jfgui_actions_execute","arguments":{"action":"document.get"}}'
{
    mcp 1 initialize "$hello"
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    mcp 2 tools/list '{}'
    for id in 3 4 5; do mcp "$id" tools/call "$get"; done
} | "$bin/jfgui-agent" stdio pad >"$work/mcp.out"
if [[ $(grep -c '"result"' "$work/mcp.out") != 5 ]] || grep -q '"isError":true' "$work/mcp.out"; then
    cat "$work/mcp.out" >&2
    exit 1
fi
dump calls

python3 - "$mode" "$bin/jfgui-agentd" "$work/cg.1" "$work/cg.2" <<'EOF'
import re, subprocess, sys

mode, exe, idle_dump, calls_dump = sys.argv[1:]
HOT = "daemon/link/hot.txt"

def functions():
    """Address, size and name of every function in the binary."""
    out = subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True,
                         check=True).stdout
    return {f[3]: (int(f[0], 16), int(f[1], 16))
            for f in (line.split() for line in out.splitlines())
            if len(f) == 4 and f[2] in "tTwW"}

def pattern(symbol):
    """The symbol without what changes between builds: the numbered suffix LTO gives a local
    copy; in a v0 name, the crate disambiguators and the back references (offsets that move
    with them; a `B` after a digit starts an identifier instead)."""
    symbol = re.sub(r"\.(llvm\.)?[0-9]+$", ".*", symbol)
    if not symbol.startswith("_R"):
        return symbol
    symbol = re.sub(r"Cs[0-9A-Za-z]+_", "Cs*_", symbol)
    return re.sub(r"(?<![0-9])B[0-9A-Za-z]*_", "B*_", symbol)

def glob(pat):
    return re.compile(re.escape(pat).replace(r"\*", ".*"))

def ran(dump):
    """The functions named in a callgrind dump, in the order they first appear."""
    names = []
    for line in open(dump):
        m = re.match(r"c?fn=\(\d+\) (\S+)", line)
        if m:
            names.append(re.sub(r"'\d+$", "", m.group(1)))  # callgrind's recursion marker
    return names

code = functions()
idle = [n for n in ran(idle_dump) if n in code]
calls = [n for n in ran(calls_dump) if n in code]

if mode == "write":
    seen, phases = set(), []
    for title, names in (("start-up and idle", idle), ("calls", calls)):
        pats = []
        for n in names:
            p = pattern(n)
            if p not in seen:
                seen.add(p)
                pats.append(p)
        phases.append((title, pats))
    with open(HOT, "w") as f:
        f.write("# Generated by tests/benches/layout.sh; read by daemon/build.rs. The daemon's\n"
                "# functions in the order it first runs them (mangled, build hashes as *).\n")
        for title, pats in phases:
            f.write(f"# {title}\n")
            f.writelines(p + "\n" for p in pats)
    print(f"{HOT}: {sum(len(p) for _, p in phases)} functions "
          f"({len(phases[0][1])} to idle, {len(phases[1][1])} more per call)")
    sys.exit(0)

pats = [l.strip() for l in open(HOT) if l.strip() and not l.startswith("#")]
names = list(code)
regexes = [glob(p) for p in pats]
stale = [p for p, r in zip(pats, regexes) if not any(r.fullmatch(n) for n in names)]
missing = sorted({n for n in idle if not any(r.fullmatch(n) for r in regexes)})
missing_bytes = sum(code[n][1] for n in missing)
print(f"{HOT}: {len(pats)} functions, {len(stale)} match nothing in the binary; the daemon ran "
      f"{len(missing)} functions ({missing_bytes} bytes) until idle that it does not name")
for p in stale[:20]:
    print(f"  stale: {p}")
for n in missing[:20]:
    print(f"  missing: {n} ({code[n][1]} bytes)")
if len(stale) > len(pats) // 50 or missing_bytes > 16 * 1024:
    print("the code layout is out of date: run tests/benches/layout.sh and commit "
          "daemon/link/hot.txt", file=sys.stderr)
    sys.exit(1)
EOF
