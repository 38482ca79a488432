#!/usr/bin/env bash
# The jfgui-host wheel as an app author gets it: `pip wheel bindings/python` builds it (its
# build hook compiles libjfgui_host with Cargo), then a fresh venv in a temporary directory
# installs that file with no index, and the shipped counter example runs from there with no
# Rust on PATH, no checkout in sight (its working directory is elsewhere, its environment holds
# only PATH, HOME and the runtime dir) and no JFGUI_HOST_LIB, against the real daemon; the real
# CLI then drives it. Prints the wheel's name and size. Called by .ci/run; run from anywhere:
# `bash bindings/python/check-wheel.sh`. Installs python3-venv with apt-get when missing;
# pip fetches the build backend (hatchling) from PyPI.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
scratch=$(mktemp -d /tmp/jfgui-wheel.XXXXXX)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$scratch"
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
fail() {
    echo "bindings/python/check-wheel.sh: FAIL: $*" >&2
    for log in "$scratch"/*.log; do [[ -f $log ]] && { echo "--- $log" >&2; tail -n 30 "$log" >&2; }; done
    exit 1
}

step "tools"
python3 -c 'import venv, ensurepip' 2>/dev/null || {
    apt-get -o DPkg::Lock::Timeout=600 update
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends python3-venv
}
target=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')

step "the daemon and the CLI"
cargo build -q --locked -p jfgui-daemon -p jfgui-agent
bin="$target/debug"

step "pip wheel bindings/python"
bash tests/new-venv.sh "$scratch/build-venv"
"$scratch/build-venv/bin/pip" wheel -q --disable-pip-version-check --no-deps -w "$scratch/dist" ./bindings/python
wheels=("$scratch"/dist/*.whl)
[[ ${#wheels[@]} -eq 1 ]] || fail "expected one wheel, got: ${wheels[*]}"
wheel=${wheels[0]}
case $(basename "$wheel") in
    jfgui_host-*-py3-none-linux_x86_64.whl) ;;
    *) fail "$(basename "$wheel") is not tagged py3-none-linux_x86_64" ;;
esac
contents=$(python3 -m zipfile -l "$wheel")
grep -q '^jfgui_host/libjfgui_host\.so ' <<<"$contents" || fail "the wheel does not carry jfgui_host/libjfgui_host.so"
printf '%s: %d bytes\n' "$(basename "$wheel")" "$(stat -c %s "$wheel")"

step "a fresh venv installs the wheel, with no index and no Rust"
mkdir "$scratch/home" "$scratch/work"
# The Python of that venv and the system's directories, none of which holds Cargo.
bash tests/new-venv.sh "$scratch/app-venv"
app_path="$scratch/app-venv/bin:/usr/local/bin:/usr/bin:/bin"
for tool in cargo rustc rustup; do
    if PATH=$app_path command -v "$tool" >/dev/null; then fail "$tool is on the app's PATH ($app_path)"; fi
done
app_env=(env -i "PATH=$app_path" "HOME=$scratch/home" "JFGUI_RUNTIME_DIR=$scratch/rt")
(cd "$scratch/work" && "${app_env[@]}" pip install -q --disable-pip-version-check --no-index "$wheel")
site=$(cd "$scratch/work" && "${app_env[@]}" python -c 'import jfgui_host, os; print(os.path.dirname(jfgui_host.__file__))')
[[ $site == "$scratch/app-venv/"* ]] || fail "jfgui_host imported from $site, not the venv"

step "the counter example against the real daemon"
agent() { JFGUI_RUNTIME_DIR="$scratch/rt" "$bin/jfgui-agent" "$@"; }
JFGUI_RUNTIME_DIR="$scratch/rt" "$bin/jfgui-agentd" 2>"$scratch/jfgui-agentd.log" &
pids+=($!)
for _ in $(seq 300); do agent status >/dev/null 2>&1 && break; sleep 0.1; done
agent status >/dev/null || fail "the daemon does not answer"
(cd "$scratch/work" && exec "${app_env[@]}" python -m jfgui_host.examples.counter --agent-enable) 2>"$scratch/counter.log" &
counter=$!
pids+=("$counter")
enabled() { agent list --json | python3 -c 'import json, sys; sys.exit(not any(a["slug"] == "py-counter" and a["enabled"] for a in json.load(sys.stdin)["apps"]))'; }
for _ in $(seq 300); do enabled && break; sleep 0.1; done
enabled || fail "py-counter was not listed enabled"
# The library the running app loaded is the wheel's copy inside the venv.
grep -q " $site/libjfgui_host\.so$" "/proc/$counter/maps" || fail "the counter did not load $site/libjfgui_host.so"

# expect CODE JSON COMMAND...: the CLI's exit code and its stdout as a JSON value.
expect() {
    local code=$1 want=$2 status=0 got
    shift 2
    got=$(agent "$@" 2>"$scratch/cli.err") || status=$?
    [[ $status -eq $code ]] || fail "jfgui-agent $*: exit $status, expected $code: $got $(cat "$scratch/cli.err")"
    python3 -c 'import json, sys; sys.exit(json.loads(sys.argv[1]) != json.loads(sys.argv[2]))' "$got" "$want" \
        || fail "jfgui-agent $*: got $got, expected $want"
    echo "jfgui-agent $* -> $got"
}
expect 0 '{"protocolVersion":"1","output":{"value":40},"revision":2}' \
    call py-counter counter.add --input-json '{"by":40}' --expected-revision 1
expect 1 '{"error":{"code":1000,"message":"expectedRevision 1 does not match: the current revision is 2; re-read the state and retry","data":{"class":"not_executed","reason":"stale_revision","currentRevision":2}},"exitCode":1}' \
    call py-counter counter.add --input-json '{"by":40}' --expected-revision 1
expect 1 '{"error":{"code":1002,"message":"the counter stays within -1000..1000","data":{"class":"failed","reason":"host_error","code":"out_of_range"}},"exitCode":1}' \
    call py-counter counter.add --input-json '{"by":990}' --expected-revision 2
expect 0 '{"protocolVersion":"1","revision":2,"state":{"value":40}}' inspect py-counter
kill -0 "$counter" 2>/dev/null || fail "the counter exited"

echo "wheel: built, installed without Rust, and served the counter"
