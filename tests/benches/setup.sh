# Sourced by the scripts under tests/benches/: the tools they need, the binaries they measure,
# and a private work dir with a daemon and one Notepad, all gone when the script exits.

# needs TOOL...: stops the calling script when a tool is missing.
needs() {
    local tool
    for tool in "$@"; do
        command -v "$tool" >/dev/null || { echo "$(basename "$0") needs $tool" >&2; exit 1; }
    done
}

# binaries PACKAGE...: $bin is JFGUI_TEST_BIN_DIR when set (a saved baseline, target/dist:
# nothing is built), else the release build of the packages.
binaries() {
    if [[ -n ${JFGUI_TEST_BIN_DIR:-} ]]; then
        bin=$JFGUI_TEST_BIN_DIR
    else
        local package args=()
        for package in "$@"; do args+=(-p "$package"); done
        cargo build -q --release "${args[@]}"
        bin=$PWD/target/release
    fi
}

# $work: a fresh dir, removed on exit; the processes in $pids are killed first, and
# `on_exit` runs too (a script that has more to undo defines its own after sourcing this).
work=$(mktemp -d)
pids=()
on_exit() { :; }
cleanup() {
    local pid
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    on_exit
    rm -rf "$work"
}
trap cleanup EXIT
unset JFGUI_LOG XDG_RUNTIME_DIR

# daemon_with_notepad NAME TEXT: the daemon in the runtime dir $work/rt ($daemon) and a
# Notepad called NAME holding TEXT ($app) registered with it at $endpoint.
daemon_with_notepad() {
    mkdir -m 700 "$work/rt"
    export JFGUI_RUNTIME_DIR=$work/rt
    "$bin/jfgui-agentd" >"$work/daemon.log" 2>&1 &
    daemon=$!
    pids+=("$daemon")
    for _ in $(seq 100); do [[ -S $work/rt/host.sock ]] && break; sleep 0.1; done
    "$bin/jfgui-notepad" --agent-enable --name "$1" --text "$2" >"$work/pad.log" 2>&1 &
    app=$!
    pids+=("$app")
    endpoint=$work/rt/apps/$(tr '[:upper:]' '[:lower:]' <<<"$1").sock
    for _ in $(seq 100); do [[ -S $endpoint ]] && break; sleep 0.1; done
    [[ -S $endpoint ]] || { cat "$work/daemon.log" "$work/pad.log" >&2; exit 1; }
}
