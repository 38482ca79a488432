#!/usr/bin/env bash
# The daemon's code layout (docs/PERFORMANCE.md, "Code layout"): which functions the daemon runs
# at start-up, while idle with an app registered, and per call.
# daemon/build.rs places the functions of daemon/link/hot.txt first in the optimized binary, so
# they share a few pages instead of dragging 64 KiB fault-around blocks of the whole binary in.
#
#   tests/benches/layout.sh           regenerates daemon/link/hot.txt
#   tests/benches/layout.sh --check   fails when hot.txt no longer fits the code (run by .ci/run)
#
# Both run the release daemon under valgrind's callgrind: start-up, one Notepad registering, a
# client asking for the status and the app list through the CLI, the latency bench's readiness
# checks (tests/benches/setup.sh), 3 s idle (first dump), then calls through the CLI (reads and
# writes over JSON-1, inspect, six clients at once) and an MCP session through the stdio
# gateway (second dump). A function is named by its mangled symbol (v0, .cargo/config.toml)
# with the crate hashes in it replaced by `*` (and the back references, which are offsets that
# move with them), so the list holds across profiles (release and dist hash differently),
# toolchains and lock updates.
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
binaries jfgui-daemon jfgui-example-notepad jfgui-agent

export JFGUI_AUDIT_DIR=$work/audit
# The daemon under callgrind, given an option with a value as the latency bench does (and the
# systemd units: --runtime-dir), so start-up parses one.
callgrind() {
    exec valgrind --tool=callgrind --demangle=no --dump-instr=no --callgrind-out-file="$work/cg" \
        "$1" --max-clients 4096
}
daemon_with_notepad Pad hello callgrind
agent() { "$bin/jfgui-agent" "$@" >/dev/null; }
agent status
agent list
readiness_checks
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
# Concurrent clients: calls made while others are outstanding go out through the link's writer.
calls=()
for _ in 1 2 3 4 5 6; do
    agent call pad document.get &
    calls+=($!)
done
for call in "${calls[@]}"; do wait "$call"; done
mcp() { printf '{"jsonrpc":"2.0","id":%s,"method":"%s","params":%s}\n' "$@"; }
hello='{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"l","version":"1"}}'
get='{"name":"jfgui_actions_execute","arguments":{"action":"document.get"}}'
{
    mcp 1 initialize "$hello"
    echo '{"jsonrpc":"2.0","method":"notifications/initialized"}'
    mcp 2 tools/list '{}'
    for id in 3 4 5; do mcp "$id" tools/call "$get"; done
} | "$bin/jfgui-agent" stdio pad >"$work/mcp.out"
answered=$(grep -c '"result"' "$work/mcp.out")
if [[ $answered != 5 ]] || grep -q '"isError":true' "$work/mcp.out"; then
    cat "$work/mcp.out" >&2
    exit 1
fi
dump calls

python3 - "$mode" "$bin/jfgui-agentd" "$work/cg.1" "$work/cg.2" <<'EOF'
import re, subprocess, sys

mode, exe, idle_dump, calls_dump = sys.argv[1:]
HOT = "daemon/link/hot.txt"

def functions():
    """The size of every function in the binary, by name."""
    out = subprocess.run(["nm", "-S", "--defined-only", exe], capture_output=True, text=True,
                         check=True).stdout
    return {f[3]: int(f[1], 16)
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
    """The functions of the binary named in a callgrind dump."""
    names = set()
    for line in open(dump):
        m = re.match(r"c?fn=\(\d+\) (\S+)", line)
        if m:
            names.add(re.sub(r"'\d+$", "", m.group(1)))  # callgrind's recursion marker
    return names & code.keys()

code = functions()
idle, calls = ran(idle_dump), ran(calls_dump)

if mode == "write":
    # Sorted within a phase: the order callgrind lists them in changes from run to run, and
    # sorted names keep a module's functions together.
    first = sorted({pattern(n) for n in idle})
    then = sorted({pattern(n) for n in calls} - set(first))
    phases = [("start-up and idle", first), ("calls", then)]
    with open(HOT, "w") as f:
        f.write("# Generated by tests/benches/layout.sh; read by daemon/build.rs. The functions\n"
                "# the daemon runs until idle, then per call (mangled, build hashes as *).\n")
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
missing_bytes = sum(code[n] for n in missing)
print(f"{HOT}: {len(pats)} functions, {len(stale)} match nothing in the binary; the daemon ran "
      f"{len(missing)} functions ({missing_bytes} bytes) until idle that it does not name")
for p in stale[:20]:
    print(f"  stale: {p}")
for n in missing[:20]:
    print(f"  missing: {n} ({code[n]} bytes)")
if len(stale) > len(pats) // 50 or missing_bytes > 16 * 1024:
    print("the code layout is out of date: run tests/benches/layout.sh and commit "
          "daemon/link/hot.txt", file=sys.stderr)
    sys.exit(1)
EOF
