#!/usr/bin/env bash
# Where a call's time goes in the daemon and in the app (docs/PERFORMANCE.md): starts the
# release jfgui-agentd and a Notepad holding a document of BYTES (default 64) in a private
# runtime dir, drives CALLS JSON-1 `actions/execute` calls of `document.get` from CLIENTS
# concurrent clients (default 1; each its own process and connection, sending its next call
# when the last one's reply came, every reply checked), and reports per call, for the daemon
# and for the app:
#
#   - CPU time (utime + stime from /proc, nothing attached), and the calls/s of that run;
#   - syscalls (perf's syscalls:sys_enter_* tracepoints: counts, slowing the calls far less
#     than strace would, which matters when clients overlap and readiness events would
#     merge);
#   - malloc/realloc calls (perf uprobes on libc; the bench's own middles count theirs with
#     count_alloc.rs, the product carries no counter);
#   - the perf profile (cpu-clock, DWARF call graphs), as self time per symbol and as the
#     inclusive share of the parts of the call path.
#
# With more than one client the calls overlap, and what the daemon and the app batch (several
# requests per read, several frames per write) shows in the syscalls per call.
#
# Needs root (uprobes, perf on another process), perf (Debian linux-perf), python3.
# Usage: tests/benches/profile.sh [CALLS [BYTES [CLIENTS]]]   (defaults 20000 calls, 64 B, 1)
# With JFGUI_TEST_BIN_DIR set, the binaries there are profiled (e.g. a saved baseline) and
# nothing is built.
set -euo pipefail
cd "$(dirname "$0")/../.."
calls=${1:-20000}
size=${2:-64}
clients=${3:-1}
calls=$((calls / clients * clients)) # every client makes the same number of calls
. tests/benches/setup.sh
needs perf python3
binaries jfgui-daemon jfgui-example-notepad
on_exit() { perf probe -q -d 'probe_libc:jfgui_*' 2>/dev/null || true; }
daemon_with_notepad Profile "$(python3 -c "print(''.join(chr(97 + i % 26) for i in range($size)))")"

drive() { document_gets "$endpoint" "$1" "$size" "$clients"; } # calls in all
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)
per_call() { python3 -c "print(f'{$1 / $calls:.2f}')"; }

drive 2000 # warm up
echo "## jfgui-agentd call profile: $calls JSON-1 calls of document.get ($size B), $clients client(s)"
echo
echo "$(nproc) CPU(s), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo
d0=$(ticks "$daemon") a0=$(ticks "$app") t0=$(date +%s.%N)
drive "$calls"
d1=$(ticks "$daemon") a1=$(ticks "$app") t1=$(date +%s.%N)
echo "| per call | daemon | app |"
echo "|---|---|---|"
echo "| CPU (µs) | $(per_call "($d1 - $d0) * 1e6 / $hz") | $(per_call "($a1 - $a0) * 1e6 / $hz") |"
echo "| calls/s (nothing attached) | $(python3 -c "print(f'{$calls / ($t1 - $t0):.0f}')") | |"

perf stat -x, -e 'syscalls:sys_enter_*' -p "$daemon" -o "$work/sys-daemon" </dev/null >/dev/null 2>&1 &
sd=$!
perf stat -x, -e 'syscalls:sys_enter_*' -p "$app" -o "$work/sys-app" </dev/null >/dev/null 2>&1 &
sa=$!
sleep 1 # attaching to every syscall tracepoint takes a moment
drive "$calls"
kill -INT "$sd" "$sa"
wait "$sd" "$sa" || true
summary() {
    python3 - "$1" "$calls" <<'EOF'
import sys
rows = []
for line in open(sys.argv[1]):
    f = line.strip().split(",")
    if len(f) > 2 and f[2].startswith("syscalls:sys_enter_") and f[0].isdigit():
        rows.append((f[2].removeprefix("syscalls:sys_enter_"), int(f[0])))
n = int(sys.argv[2])
total = sum(c for _, c in rows)
print(f"{total / n:.2f} ({', '.join(f'{name} {c / n:.2f}' for name, c in sorted(rows, key=lambda r: -r[1]) if c / n >= 0.01)})")
EOF
}
echo "| syscalls | $(summary "$work/sys-daemon") | $(summary "$work/sys-app") |"

libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')
perf probe -q -x "$libc" --add 'jfgui_malloc=malloc' --add 'jfgui_realloc=realloc' >/dev/null
events=probe_libc:jfgui_malloc,probe_libc:jfgui_realloc
perf stat -x, -e "$events" -p "$daemon" -o "$work/allocs-$daemon" </dev/null >/dev/null 2>&1 &
ad=$!
perf stat -x, -e "$events" -p "$app" -o "$work/allocs-$app" </dev/null >/dev/null 2>&1 &
aa=$!
sleep 0.5
drive "$calls"
kill -INT "$ad" "$aa"
wait "$ad" "$aa" || true
allocs() { awk -F, '/probe_libc/ {n += $1} END {printf "%.2f", n / '"$calls"'}' "$work/allocs-$1"; }
echo "| malloc + realloc | $(allocs "$daemon") | $(allocs "$app") |"

perf record -q -F 2999 --call-graph dwarf,16384 -p "$daemon" -o "$work/perf.data" 2>/dev/null &
pr=$!
sleep 0.5
drive "$calls"
kill -INT "$pr"
wait "$pr" || true
echo
echo "### Daemon: inclusive share of the call path's parts (perf, cpu-clock)"
echo
perf report -i "$work/perf.data" --children --sort sym --stdio -g none 2>/dev/null >"$work/children"
part() { # label, pattern: the largest inclusive share among symbols matching pattern
    local share
    share=$(grep -E "$2" "$work/children" | awk '{print $1}' | sort -rn | head -1 || true)
    echo "| $1 | ${share:-0%} |"
}
echo "| part | share of daemon CPU |"
echo "|---|---|"
part "kernel (syscalls, wake-ups)" "entry_SYSCALL_64_after_hwframe"
part "  send/sendto" "__libc_send"
part "  recv/recvfrom" "__libc_recv"
part "  epoll_wait" "\] epoll_wait"
part "JSON parse (strict)" "jfgui_proto::json::parse::parse(_splicing)?$"
part "typed decode (Value → message)" "from_value<|per_call::decode_app_message"
part "frame encode (message → Value → bytes)" "channel::frame::encode_(value_)?frame|per_call::encode_request_frame"
part "JSON encode" "jfgui_proto::json::encode::encode_(into|shaped|placed)"
part "tracing spans" "tracing::span::Span>?::new"
part "task spawn" "tokio::task::spawn::spawn(::<.*>)?$"
part "malloc/free" "__GI___libc_(malloc|free) "
part "memset (zeroed read buffers)" "__memset_avx2_unaligned_erms"
echo
echo "### Daemon: self time, top symbols"
echo
perf report -i "$work/perf.data" --no-children --sort dso,sym --stdio -g none --percent-limit 1 2>/dev/null |
    grep '%' | sed 's/  */ /g' | cut -c1-120
