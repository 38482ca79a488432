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

# daemon_with_notepad NAME TEXT [WRAPPER...]: the daemon in the runtime dir $work/rt ($daemon;
# WRAPPER, a command or function given the daemon's path, runs it when given, e.g. under
# valgrind) and a Notepad called NAME holding TEXT ($app) registered with it at $endpoint.
daemon_with_notepad() {
    local name=$1 text=$2
    shift 2
    mkdir -m 700 "$work/rt"
    export JFGUI_RUNTIME_DIR=$work/rt
    "$@" "$bin/jfgui-agentd" >"$work/daemon.log" 2>&1 &
    daemon=$!
    pids+=("$daemon")
    for _ in $(seq 300); do [[ -S $work/rt/host.sock ]] && break; sleep 0.1; done
    "$bin/jfgui-notepad" --agent-enable --name "$name" --text "$text" >"$work/pad.log" 2>&1 &
    app=$!
    pids+=("$app")
    endpoint=$work/rt/apps/$(tr '[:upper:]' '[:lower:]' <<<"$name").sock
    for _ in $(seq 300); do [[ -S $endpoint ]] && break; sleep 0.1; done
    [[ -S $endpoint ]] || { cat "$work/daemon.log" "$work/pad.log" >&2; exit 1; }
}

# readiness_checks: what the latency bench does before it measures the idle daemon: a client
# asking for the daemon's status and app list as a script does (JSON-RPC lines on the control
# socket, no handshake), then one connecting to the app's endpoint and leaving.
readiness_checks() {
    python3 - "$work/rt/agentd.sock" "$endpoint" <<'EOF'
import json, socket, sys
control = socket.socket(socket.AF_UNIX)
control.connect(sys.argv[1])
lines = control.makefile("rw")
for id, method in enumerate(["daemon/status", "apps/list"], 1):
    lines.write(json.dumps({"jsonrpc": "2.0", "id": id, "method": method, "params": {}}) + "\n")
    lines.flush()
    assert "result" in json.loads(lines.readline())
socket.socket(socket.AF_UNIX).connect(sys.argv[2])
EOF
}

# document_gets SOCKET CALLS [BYTES [CLIENTS]]: CALLS JSON-1 `actions/execute` calls of Notepad's
# `document.get` on SOCKET, spread over CLIENTS concurrent clients (default 1; a process and a
# connection each, sending its next call when the last one's reply came); every reply is
# checked (its id, and an output of BYTES, default 64).
document_gets() {
    python3 - "$1" "$2" "${3:-64}" "${4:-1}" <<'EOF'
import json, os, socket, sys
path, n, size, clients = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
def client(calls):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    f = s.makefile("rb")
    for i in range(1, calls + 1):
        s.sendall(b'{"jsonrpc":"2.0","id":%d,"method":"actions/execute","params":{"action":"document.get"}}\n' % i)
        reply = json.loads(f.readline())
        assert reply["id"] == i and reply["result"]["output"]["length"] == size, reply
if clients == 1:
    client(n)
    sys.exit()
children = []
for _ in range(clients):
    pid = os.fork()
    if pid == 0:
        try:
            client(n // clients)
            os._exit(0)
        except BaseException as e:
            print(e, file=sys.stderr)
            os._exit(1)
    children.append(pid)
failed = sum(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in children)
sys.exit(f"{failed} of {clients} clients failed" if failed else 0)
EOF
}
