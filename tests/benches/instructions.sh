#!/usr/bin/env bash
# The daemon's user-space instructions per call (docs/PERFORMANCE.md, "Per call"):
# a count, not a time, so it holds on a loaded machine and tells two builds apart where
# their CPU times do not. Starts the release jfgui-agentd under valgrind's callgrind (counting
# off) and a Notepad holding a 64 B document, makes 500 JSON-1 `actions/execute` calls of
# `document.get` to warm up, then counts the daemon's instructions over CALLS more (every reply
# checked) and prints the total per call and the functions with the most instructions of their
# own. The kernel's side (the 6 syscalls of a call) is not in the count; profile.sh has it.
#
# Usage: tests/benches/instructions.sh [CALLS [TOP]]   (defaults 2000 calls, top 25)
# With JFGUI_TEST_BIN_DIR set, the binaries there are measured (e.g. a saved baseline) and
# nothing is built. Needs valgrind (callgrind_control, callgrind_annotate) and python3.
set -euo pipefail
cd "$(dirname "$0")/../.."
calls=${1:-2000}
top=${2:-25}
. tests/benches/setup.sh
needs valgrind callgrind_control callgrind_annotate python3
binaries jfgui-daemon jfgui-example-notepad

counted() {
    exec valgrind --tool=callgrind --instr-atstart=no --dump-instr=no \
        --callgrind-out-file="$work/cg" "$1"
}
daemon_with_notepad Count "$(python3 -c "print(''.join(chr(97 + i % 26) for i in range(64)))")" counted

drive() { document_gets "$endpoint" "$1"; }
control() { callgrind_control "$@" "$daemon" >"$work/control.log" 2>&1 || { cat "$work/control.log" >&2; exit 1; }; }

drive 500
control --instr=on
drive "$calls"
control --instr=off
control --dump=calls
for _ in $(seq 100); do [[ -s $work/cg.1 ]] && break; sleep 0.1; done
[[ -s $work/cg.1 ]] || { echo "callgrind wrote no dump" >&2; exit 1; }
total=$(awk '/^totals:/ {print $2; exit}' "$work/cg.1")
echo "jfgui-agentd: $((total / calls)) instructions per call (user space, $calls calls of document.get, 64 B)"
echo
callgrind_annotate "$work/cg.1" 2>/dev/null |
    awk -v top="$top" '/file:function$/ {list = 1; getline; next} list && NF && n++ < top' | cut -c1-150
