#!/bin/bash
# CI for packaging: unit files (verified, sandbox scored, and the daemon run under that
# sandbox), plist, the dist build (stripped binaries, man pages, completions), the .deb
# packages, install.sh into a scratch home (file list, `jfgui-agentd --demo` from there,
# uninstall), and the Windows/macOS cross checks. Run from anywhere: `bash packaging/check.sh`.
# Installs what it needs when missing: systemd (systemd-analyze), man-db, python3-seccomp with
# apt-get; cargo-deb with cargo install; the rustup targets.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target_dir=$(cargo metadata --format-version 1 --no-deps \
    | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
dist="$target_dir/dist"
work=$(mktemp -d)
pids=()
sandbox=""
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$work"
    if [ -n "$sandbox" ]; then rm -rf "$sandbox"; fi
}
trap cleanup EXIT
step() { printf '\n== %s\n' "$*"; }
fail() { echo "packaging/check.sh: FAIL: $*" >&2; exit 1; }
# Security exposure (systemd-analyze's 0-10 scale) a service unit may have at most: "OK".
max_exposure=3.0

step "tools"
missing=()
command -v systemd-analyze >/dev/null || missing+=(systemd)
command -v man >/dev/null || missing+=(man-db)
/usr/bin/python3 -c 'import seccomp' 2>/dev/null || missing+=(python3-seccomp)
if [ ${#missing[@]} -gt 0 ]; then
    apt-get -o DPkg::Lock::Timeout=600 update && apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
fi
command -v cargo-deb >/dev/null || cargo install cargo-deb --locked
rustup target add x86_64-pc-windows-gnu x86_64-apple-darwin

step "socket units: private modes, names the daemon maps"
for u in jfgui-agentd.socket jfgui-agentd-control.socket; do
    for line in SocketMode=0600 DirectoryMode=0700 Service=jfgui-agentd.service; do
        grep -qx "$line" "packaging/systemd/$u" || fail "$u lacks $line"
    done
done
grep -qx "FileDescriptorName=host" packaging/systemd/jfgui-agentd.socket || fail "host socket name"
grep -qx "FileDescriptorName=control" packaging/systemd/jfgui-agentd-control.socket || fail "control socket name"

step "service units: the same sandbox in both"
sandbox_of() { sed -n '/^# Sandbox/,/^UMask=/p' "$1" | grep -v '^#'; }
diff <(sandbox_of packaging/systemd/jfgui-agentd.service) \
    <(sandbox_of packaging/systemd/jfgui-agentd-plain.service) || fail "the two services' sandboxes differ"
for line in LockPersonality=yes MemoryDenyWriteExecute=yes RestrictNamespaces=yes \
    SystemCallArchitectures=native SystemCallFilter=@system-service \
    "RestrictAddressFamilies=AF_UNIX AF_INET" IPAddressDeny=any IPAddressAllow=localhost \
    ProtectSystem=strict ProtectHome=read-only PrivateTmp=yes PrivateUsers=yes \
    NoNewPrivileges=yes; do
    grep -qx "$line" packaging/systemd/jfgui-agentd.service || fail "jfgui-agentd.service lacks $line"
done
grep -q '^ReadWritePaths=%t/jfgui-agent ' packaging/systemd/jfgui-agentd.service || fail "ReadWritePaths"

step "launchd plist"
python3 - packaging/launchd/io.github.jfgui.agentd.plist <<'PY'
import plistlib, sys
with open(sys.argv[1], "rb") as f:
    p = plistlib.load(f)
assert p["Label"] == "io.github.jfgui.agentd", p
assert p["ProgramArguments"][0].endswith("/jfgui-agentd"), p
assert p["RunAtLoad"] is True, p
assert p["KeepAlive"] == {"SuccessfulExit": False}, p
assert p["StandardErrorPath"].endswith(".log") and p["StandardOutPath"].endswith(".log"), p
print("plist ok:", sys.argv[1])
PY

step "dist build and .deb packages"
bash packaging/dist.sh --deb
daemon_deb=$(ls "$target_dir"/debian/jfgui-agentd_*.deb)
cli_deb=$(ls "$target_dir"/debian/jfgui-agent_*.deb)
dpkg-deb -c "$daemon_deb" | tee "$work/daemon.list"
dpkg-deb -c "$cli_deb" | tee "$work/cli.list"
has() { # has LIST MODE PATH
    awk -v m="$2" -v p="$3" '$1 == m && $NF == p { found = 1 } END { exit !found }' "$1" \
        || fail "$(basename "$1") lacks $3 with mode $2"
}
has "$work/daemon.list" -rwxr-xr-x ./usr/bin/jfgui-agentd
has "$work/daemon.list" -rwxr-xr-x ./usr/bin/jfgui-notepad
has "$work/daemon.list" -rw-r--r-- ./usr/share/man/man1/jfgui-agentd.1.gz
for u in jfgui-agentd.socket jfgui-agentd-control.socket jfgui-agentd.service jfgui-agentd-plain.service; do
    has "$work/daemon.list" -rw-r--r-- "./usr/lib/systemd/user/$u"
done
has "$work/cli.list" -rwxr-xr-x ./usr/bin/jfgui-agent
has "$work/cli.list" -rw-r--r-- ./usr/share/man/man1/jfgui-agent.1.gz
has "$work/cli.list" -rw-r--r-- ./usr/share/bash-completion/completions/jfgui-agent
has "$work/cli.list" -rw-r--r-- ./usr/share/zsh/vendor-completions/_jfgui-agent
has "$work/cli.list" -rw-r--r-- ./usr/share/fish/vendor_completions.d/jfgui-agent.fish
dpkg-deb -f "$daemon_deb" Package | grep -qx jfgui-agentd || fail "package name"
dpkg-deb -x "$daemon_deb" "$work/root"
dpkg-deb -x "$cli_deb" "$work/root"
for pkg in jfgui-agentd jfgui-agent; do
    grep -qx "Upstream-Name: jfgui-agentd" "$work/root/usr/share/doc/$pkg/copyright" \
        || fail "$pkg: copyright does not name jfgui-agentd"
done
test -s LICENSE-MIT && test -s LICENSE-APACHE || fail "LICENSE-MIT and LICENSE-APACHE"

step "stripped binaries"
for b in "$dist/jfgui-agentd" "$dist/jfgui-agent" "$dist/jfgui-notepad" \
    "$work/root/usr/bin/jfgui-agentd" "$work/root/usr/bin/jfgui-agent" "$work/root/usr/bin/jfgui-notepad"; do
    if readelf -S -W "$b" | grep -E '\.symtab|\.debug_' >/dev/null; then fail "$b is not stripped"; fi
    printf '%-60s %8d bytes, stripped\n' "$b" "$(stat -c %s "$b")"
done

step "man pages: render without warnings, match the code"
agent="$dist/jfgui-agent"
daemon="$dist/jfgui-agentd"
for page in jfgui-agent jfgui-agentd; do
    file="$work/root/usr/share/man/man1/$page.1.gz"
    MANWIDTH=80 LC_ALL=C man --warnings -l "$file" > "$work/$page.txt" 2> "$work/$page.warn" \
        || { cat "$work/$page.warn"; fail "man -l $page"; }
    if [ -s "$work/$page.warn" ]; then cat "$work/$page.warn"; fail "man -l $page warned"; fi
    for section in NAME SYNOPSIS DESCRIPTION OPTIONS ENVIRONMENT FILES "EXIT STATUS" "SEE ALSO"; do
        grep -qx "$section" "$work/$page.txt" || fail "$page(1) has no $section section"
    done
    if grep -q "$page-[a-z]*(1)" "$work/$page.txt"; then fail "$page(1) refers to per-subcommand pages"; fi
    # The page is what the binary generates now.
    "$agent" man "$page" | gzip -9n | cmp -s - "$file" || fail "$page(1) in the package is not the code's"
done
# Every subcommand of --help has its section, every daemon flag its entry.
"$agent" --help | sed -n '/^Commands:/,/^$/p' | awk 'NR > 1 && $1 != "help" && NF { print $1 }' > "$work/subs"
test -s "$work/subs" || fail "no subcommands in --help"
while read -r sub; do
    grep -q "^   jfgui-agent $sub\$" "$work/jfgui-agent.txt" || fail "jfgui-agent(1) lacks the subcommand $sub"
done < "$work/subs"
"$daemon" --help | grep -o -- '--[a-z][a-z-]*' | sort -u > "$work/flags"
while read -r flag; do
    grep -q -- "$flag" "$work/jfgui-agentd.txt" || fail "jfgui-agentd(1) lacks $flag"
done < "$work/flags"
echo "man pages: $(wc -l < "$work/subs") subcommands, $(wc -l < "$work/flags") daemon flags documented"

step "systemd-analyze verify (user units, as packaged)"
units="$work/units"
mkdir -p "$units"
for u in "$work"/root/usr/lib/systemd/user/*; do
    # The packaged binary, at its extracted path instead of /usr/bin.
    sed "s#/usr/bin/jfgui-agentd#$work/root/usr/bin/jfgui-agentd#" "$u" > "$units/$(basename "$u")"
done
export XDG_RUNTIME_DIR="$work/xdg"
mkdir -m 0700 "$XDG_RUNTIME_DIR"
(cd "$units" && systemd-analyze verify --user --man=no ./*.socket ./*.service) > "$work/verify.log" 2>&1 \
    || { cat "$work/verify.log"; fail "systemd-analyze verify"; }
# Unknown keys and other complaints are only warnings there: any output fails.
if [ -s "$work/verify.log" ]; then cat "$work/verify.log"; fail "systemd-analyze verify printed warnings"; fi
echo "units verified: $(cd "$units" && echo ./*)"

step "systemd-analyze security (user services, as packaged)"
for s in jfgui-agentd.service jfgui-agentd-plain.service; do
    (cd "$units" && systemd-analyze security --offline=true --user --no-pager "./$s") > "$work/security.log" 2>&1 || true
    grep -v '^✓' "$work/security.log" | tail -n 15
    exposure=$(sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\) .*/\1/p' "$work/security.log")
    [ -n "$exposure" ] || { cat "$work/security.log"; fail "$s: no exposure level"; }
    awk -v e="$exposure" -v m="$max_exposure" 'BEGIN { exit !(e <= m) }' \
        || fail "$s: exposure $exposure is above $max_exposure"
    echo "$s: exposure $exposure (at most $max_exposure)"
done

step "the daemon under its unit's sandbox (packaging/sandbox.sh)"
# What runs inside the sandbox (the daemon's binary, its runtime and state dirs) must lie
# outside /tmp and /var/tmp, which the sandbox replaces (PrivateTmp=), wherever the checkout is.
outside_tmp() {
    local base real
    for base in "${XDG_CACHE_HOME:-$HOME/.cache}" /var/lib; do
        real=$(mkdir -p "$base" 2>/dev/null && cd "$base" && pwd -P) || continue
        case "$real/" in /tmp/*|/var/tmp/*) continue ;; esac
        mktemp -d "$real/jfgui-sandbox-check.XXXXXX" && return 0
    done
    return 1
}
sandbox=$(outside_tmp) || fail "no writable directory outside /tmp and /var/tmp for the sandbox check"
mkdir -p "$sandbox/state" "$sandbox/bin"
mkdir -m 0700 "$sandbox/rt"
install -m 0755 "$dist/jfgui-agentd" "$sandbox/bin/jfgui-agentd"
# A forbidden address family and a writable+executable mapping are refused in there.
bash packaging/sandbox.sh packaging/systemd/jfgui-agentd-plain.service "$sandbox/rt" -- \
    /usr/bin/python3 -c '
import mmap, socket
for what, attempt in (("AF_INET6", lambda: socket.socket(socket.AF_INET6)),
                      ("W+X memory", lambda: mmap.mmap(-1, 4096, prot=mmap.PROT_WRITE | mmap.PROT_EXEC))):
    try:
        attempt()
    except OSError:
        continue
    raise SystemExit(what + " was allowed")
open("/usr/.sandbox-probe", "w")' 2> "$work/probe.err" && fail "the sandbox lets /usr be written"
grep -q "Read-only file system" "$work/probe.err" || { cat "$work/probe.err"; fail "the sandbox probe"; }
# stop_cleanly PID LOG WHAT: SIGTERM the daemon PID, which must exit 0 (LOG shown if not).
stop_cleanly() {
    local status=0
    kill -TERM "$1"
    wait "$1" || status=$?
    [ "$status" = 0 ] || { cat "$2"; fail "$3 exited $status"; }
}
bash packaging/sandbox.sh packaging/systemd/jfgui-agentd-plain.service "$sandbox/rt" "$sandbox/state" -- \
    "$sandbox/bin/jfgui-agentd" --runtime-dir "$sandbox/rt" > "$work/sandboxed.log" 2>&1 &
sandboxed=$!
pids+=("$sandboxed")
export JFGUI_RUNTIME_DIR="$sandbox/rt"
for _ in $(seq 100); do [ -S "$sandbox/rt/agentd.sock" ] && break; sleep 0.1; done
"$dist/jfgui-notepad" --agent-enable --export-ms 200 > "$work/notepad.log" 2>&1 &
notepad=$!
pids+=("$notepad")
for _ in $(seq 100); do [ -S "$sandbox/rt/apps/notepad.sock" ] && break; sleep 0.1; done
"$agent" list | tee "$work/list.txt"
grep -q '^notepad ' "$work/list.txt" || { cat "$work/sandboxed.log"; fail "sandboxed daemon: no notepad"; }
"$agent" call notepad document.text.insert --input-json '{"text":"sandboxed"}' --expected-revision auto >/dev/null
"$agent" call notepad document.export --expected-revision auto --wait >/dev/null
test "$("$agent" read notepad export://document.txt)" = sandboxed || fail "sandboxed daemon: export"
"$agent" render notepad -o "$work/view.png" >/dev/null
stop_cleanly "$sandboxed" "$work/sandboxed.log" "sandboxed daemon"
echo "the daemon served list, call, a task, read and render under the sandbox, and stopped cleanly"

# Socket activation as the socket units set it up: systemd binds, the first connection starts
# the sandboxed daemon (systemd-socket-activate execs it in its own process) and is served.
# socket_activated LOG: the sockets in a fresh runtime dir, their daemon's pid in $activated.
socket_activated() {
    rm -rf "$sandbox/rt"
    mkdir -m 0700 "$sandbox/rt"
    systemd-socket-activate -l "$sandbox/rt/host.sock" -l "$sandbox/rt/agentd.sock" \
        --fdname=host:control -E XDG_DATA_HOME -- \
        bash packaging/sandbox.sh packaging/systemd/jfgui-agentd.service "$sandbox/rt" "$sandbox/state" -- \
        "$sandbox/bin/jfgui-agentd" --runtime-dir "$sandbox/rt" >> "$1" 2>&1 &
    activated=$!
    pids+=("$activated")
    for _ in $(seq 100); do [ -S "$sandbox/rt/agentd.sock" ] && break; sleep 0.1; done
}
socket_activated "$work/activated.log"
"$agent" status | grep -qx "apps: 0" || { cat "$work/activated.log"; fail "activated sandboxed daemon: status"; }
grep -q "activated=true" "$work/activated.log" || { cat "$work/activated.log"; fail "not socket-activated"; }
stop_cleanly "$activated" "$work/activated.log" "activated sandboxed daemon"
echo "socket-activated under the same sandbox: the first connection was served"

# An app the daemon started for an agent is the user's: the socket-activated, sandboxed daemon
# starts Notepad from its launch file for a CLI call, stops (as at its unit's stop or restart:
# idle exit cannot come while an app is connected), and Notepad keeps running and registers
# with the next daemon the sockets start.
first_app_pid() { "$agent" list --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["apps"][0]["pid"])'; }
# The Notepad above would register with these sockets' daemon first.
kill "$notepad"
wait "$notepad" || true
export XDG_DATA_HOME="$sandbox/data"
install -m 0755 "$dist/jfgui-notepad" "$sandbox/bin/jfgui-notepad"
"$sandbox/bin/jfgui-notepad" --let-agents-start on --text "started for an agent"
socket_activated "$work/activating.log"
test "$("$agent" call notepad document.get | python3 -c 'import json, sys; print(json.load(sys.stdin)["output"]["text"])')" \
    = "started for an agent" || { cat "$work/activating.log"; fail "activation under the sandbox: the call"; }
notepad_pid=$(first_app_pid)
stop_cleanly "$activated" "$work/activating.log" "activating sandboxed daemon"
kill -0 "$notepad_pid" 2>/dev/null || { cat "$work/activating.log"; fail "the activated Notepad stopped with the daemon"; }
socket_activated "$work/activating.log"
for _ in $(seq 100); do [ -S "$sandbox/rt/apps/notepad.sock" ] && break; sleep 0.1; done
[ "$(first_app_pid)" = "$notepad_pid" ] \
    || { cat "$work/activating.log"; fail "the activated Notepad did not register with the next daemon"; }
kill -TERM "$activated" "$notepad_pid"
wait "$activated" || true
unset JFGUI_RUNTIME_DIR XDG_DATA_HOME
echo "an app started for an agent under the sandbox outlived the daemon and registered with the next one"

step "install.sh into a scratch home, then jfgui-agentd --demo from there"
fake_home="$work/home"
mkdir -p "$fake_home"
# `env`, not a shell function, so that a background job's pid is the program's own.
run_home() { env HOME="$fake_home" XDG_CONFIG_HOME="$fake_home/.config" "$@"; }
run_home sh packaging/install.sh --bin-from "$dist" --no-start
(cd "$fake_home" && find . -type f | sort) > "$work/installed"
cat > "$work/expected" <<'LIST'
./.config/fish/completions/jfgui-agent.fish
./.local/bin/jfgui-agent
./.local/bin/jfgui-agentd
./.local/bin/jfgui-notepad
./.local/share/bash-completion/completions/jfgui-agent
./.local/share/man/man1/jfgui-agent.1
./.local/share/man/man1/jfgui-agentd.1
./.local/share/systemd/user/jfgui-agentd-control.socket
./.local/share/systemd/user/jfgui-agentd-plain.service
./.local/share/systemd/user/jfgui-agentd.service
./.local/share/systemd/user/jfgui-agentd.socket
./.local/share/zsh/site-functions/_jfgui-agent
LIST
diff "$work/expected" "$work/installed" || fail "install.sh installed another file list"
grep -qx "ExecStart=$fake_home/.local/bin/jfgui-agentd --runtime-dir=%t/jfgui-agent" \
    "$fake_home/.local/share/systemd/user/jfgui-agentd.service" || fail "install.sh: ExecStart not rewritten"
for page in jfgui-agent jfgui-agentd; do
    LC_ALL=C man --warnings -l "$fake_home/.local/share/man/man1/$page.1" >/dev/null 2>"$work/warn" && [ ! -s "$work/warn" ] \
        || fail "installed $page.1 does not render cleanly"
done
demo_rt="$work/demo-rt"
env HOME="$fake_home" JFGUI_RUNTIME_DIR="$demo_rt" "$fake_home/.local/bin/jfgui-agentd" --demo \
    > "$work/demo.log" 2>&1 &
demo=$!
pids+=("$demo")
for _ in $(seq 150); do [ -S "$demo_rt/apps/notepad.sock" ] && break; sleep 0.1; done
JFGUI_RUNTIME_DIR="$demo_rt" "$fake_home/.local/bin/jfgui-agent" call notepad document.get \
    || { cat "$work/demo.log"; fail "installed jfgui-agentd --demo: no notepad"; }
kill -TERM "$demo"
wait "$demo" || fail "installed jfgui-agentd --demo did not stop cleanly"
echo "installed jfgui-agentd --demo served notepad"
run_home sh packaging/install.sh --uninstall
left=$(cd "$fake_home" && find . -type f)
test -z "$left" || fail "install.sh --uninstall left: $left"

step "install.sh --prefix: everything under the prefix, nothing in the home"
prefix="$work/prefix"
run_home sh packaging/install.sh --prefix "$prefix" --bin-from "$dist" --no-start
left=$(cd "$fake_home" && find . -type f)
test -z "$left" || fail "install.sh --prefix wrote into the home: $left"
(cd "$prefix" && find . -type f | sort) > "$work/installed"
cat > "$work/expected" <<'LIST'
./bin/jfgui-agent
./bin/jfgui-agentd
./bin/jfgui-notepad
./share/bash-completion/completions/jfgui-agent
./share/fish/vendor_completions.d/jfgui-agent.fish
./share/man/man1/jfgui-agent.1
./share/man/man1/jfgui-agentd.1
./share/systemd/user/jfgui-agentd-control.socket
./share/systemd/user/jfgui-agentd-plain.service
./share/systemd/user/jfgui-agentd.service
./share/systemd/user/jfgui-agentd.socket
./share/zsh/site-functions/_jfgui-agent
LIST
diff "$work/expected" "$work/installed" || fail "install.sh --prefix installed another file list"
grep -qx "ExecStart=$prefix/bin/jfgui-agentd --runtime-dir=%t/jfgui-agent" \
    "$prefix/share/systemd/user/jfgui-agentd.service" || fail "install.sh --prefix: ExecStart not rewritten"
run_home sh packaging/install.sh --prefix "$prefix" --uninstall
left=$(cd "$prefix" && find . -type f)
test -z "$left" || fail "install.sh --prefix --uninstall left: $left"
echo "install.sh --prefix installed and uninstalled under $prefix only"

step "cross checks: Windows and macOS"
cargo check --target x86_64-pc-windows-gnu -p jfgui-daemon -p jfgui-host-sdk -p jfgui-agent
cargo check --target x86_64-apple-darwin -p jfgui-daemon -p jfgui-host-sdk -p jfgui-agent

printf '\npackaging/check.sh: all checks passed\n'
