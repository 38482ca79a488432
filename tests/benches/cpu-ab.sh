#!/usr/bin/env bash
# Daemon CPU per call of two builds, interleaved (docs/PERFORMANCE.md, "The release profile"):
# for deciding a build setting on a noisy machine, where two profile.sh runs minutes apart
# differ more than the builds do. Starts the jfgui-agentd and Notepad of DIR_A and of DIR_B
# side by side (each in its own runtime dir, a 64 B document), then for ROUNDS rounds drives
# CALLS sequential JSON-1 `actions/execute` calls of `document.get` through A and then through
# B (every reply checked) and prints each daemon's CPU time per call (utime + stime from
# /proc) and the round's ratio B ÷ A; the last line is the median ratio over the rounds.
#
# Usage: tests/benches/cpu-ab.sh DIR_A DIR_B [CALLS [ROUNDS]]   (defaults 4000 calls, 7 rounds)
# e.g. a saved copy of target/release/{jfgui-agentd,jfgui-notepad} before a change as DIR_A
# and target/release as DIR_B. Needs python3.
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,12p' "$0" >&2; exit 2; }
dir_a=$1 dir_b=$2 calls=${3:-4000} rounds=${4:-7}
. "$(dirname "$0")/setup.sh"
needs python3
text=$(python3 -c "print('a' * 64)")

start() { # bin dir, tag: daemon pid in $work/TAG.pid, endpoint $work/TAG/apps/ab.sock
    mkdir -m 700 "$work/$2"
    JFGUI_RUNTIME_DIR=$work/$2 "$1/jfgui-agentd" >"$work/$2.log" 2>&1 &
    pids+=("$!")
    echo "$!" >"$work/$2.pid"
    for _ in $(seq 100); do [[ -S $work/$2/host.sock ]] && break; sleep 0.1; done
    JFGUI_RUNTIME_DIR=$work/$2 "$1/jfgui-notepad" --agent-enable --name ab --text "$text" \
        >"$work/$2-pad.log" 2>&1 &
    pids+=("$!")
    for _ in $(seq 100); do [[ -S $work/$2/apps/ab.sock ]] && break; sleep 0.1; done
    [[ -S $work/$2/apps/ab.sock ]] || { cat "$work/$2.log" "$work/$2-pad.log" >&2; exit 1; }
}
drive() { document_gets "$work/$1/apps/ab.sock" "$2"; } # tag, calls
ticks() { awk '{print $14 + $15}' "/proc/$(cat "$work/$1.pid")/stat"; }
per_call() { # tag, calls: runs them and prints the daemon's CPU µs per call
    local t0 t1
    t0=$(ticks "$1")
    drive "$1" "$2"
    t1=$(ticks "$1")
    python3 -c "print(f'{($t1 - $t0) * 1e6 / $(getconf CLK_TCK) / $2:.1f}')"
}

start "$dir_a" a
start "$dir_b" b
drive a 1000 # warm up
drive b 1000
echo "$(nproc) CPU(s), load average $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%FT%TZ)"
echo "A = $dir_a, B = $dir_b; daemon CPU µs per call, $calls calls per round"
echo
echo "| round | A | B | B ÷ A |"
echo "|---|---|---|---|"
ratios=()
for round in $(seq "$rounds"); do
    a=$(per_call a "$calls")
    b=$(per_call b "$calls")
    ratio=$(python3 -c "print(f'{$b / $a:.2f}' if $a else 'inf')")
    ratios+=("$ratio")
    echo "| $round | $a | $b | $ratio |"
done
echo
python3 -c "import statistics, sys; print(f'median B ÷ A: {statistics.median(map(float, sys.argv[1:])):.2f}')" "${ratios[@]}"
