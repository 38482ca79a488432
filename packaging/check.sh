#!/bin/bash
# CI for packaging (issue 7): unit files, plist, install.sh, the .deb packages and the
# Windows/macOS cross checks. Run from anywhere: `bash packaging/check.sh`.
# Installs what it needs when missing: systemd (for systemd-analyze) with apt-get, cargo-deb
# with cargo install, the rustup targets. Builds release binaries (cargo deb).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target_dir=$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
step() { printf '\n== %s\n' "$*"; }
fail() { echo "packaging/check.sh: FAIL: $*" >&2; exit 1; }

step "tools"
if ! command -v systemd-analyze >/dev/null; then
    apt-get update && apt-get install -y --no-install-recommends systemd
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

step "cargo deb"
rm -f "$target_dir"/debian/jfgui-agent*.deb
cargo deb -p daemon --fast
cargo deb -p cli --fast
daemon_deb=$(ls "$target_dir"/debian/jfgui-agentd_*.deb)
cli_deb=$(ls "$target_dir"/debian/jfgui-agent_*.deb)
dpkg-deb -c "$daemon_deb" | tee "$work/daemon.list"
dpkg-deb -c "$cli_deb" | tee "$work/cli.list"
has() { # has LIST MODE PATH
    awk -v m="$2" -v p="$3" '$1 == m && $NF == p { found = 1 } END { exit !found }' "$1" \
        || fail "$(basename "$1") lacks $3 with mode $2"
}
has "$work/daemon.list" -rwxr-xr-x ./usr/bin/jfgui-agentd
for u in jfgui-agentd.socket jfgui-agentd-control.socket jfgui-agentd.service jfgui-agentd-plain.service; do
    has "$work/daemon.list" -rw-r--r-- "./usr/lib/systemd/user/$u"
done
has "$work/cli.list" -rwxr-xr-x ./usr/bin/jfgui-agent
dpkg-deb -f "$daemon_deb" Package | grep -qx jfgui-agentd || fail "package name"

step "systemd-analyze verify (user units, as packaged)"
dpkg-deb -x "$daemon_deb" "$work/root"
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

step "install.sh (into a temporary home, no start)"
fake_home="$work/home"
mkdir -p "$fake_home"
bins="$work/bins"
mkdir -p "$bins"
cp "$work/root/usr/bin/jfgui-agentd" "$bins/"
dpkg-deb -x "$cli_deb" "$work/cliroot"
cp "$work/cliroot/usr/bin/jfgui-agent" "$bins/"
HOME="$fake_home" XDG_CONFIG_HOME="$fake_home/.config" \
    sh packaging/install.sh --bin-from "$bins" --no-start
test -x "$fake_home/.local/bin/jfgui-agentd" || fail "install.sh: daemon binary"
test -x "$fake_home/.local/bin/jfgui-agent" || fail "install.sh: cli binary"
grep -qx "ExecStart=$fake_home/.local/bin/jfgui-agentd --runtime-dir=%t/jfgui-agent" \
    "$fake_home/.config/systemd/user/jfgui-agentd.service" || fail "install.sh: ExecStart not rewritten"
HOME="$fake_home" XDG_CONFIG_HOME="$fake_home/.config" sh packaging/install.sh --uninstall
test ! -e "$fake_home/.local/bin/jfgui-agentd" || fail "install.sh --uninstall left the daemon"
test -z "$(ls -A "$fake_home/.config/systemd/user")" || fail "install.sh --uninstall left units"

step "cross checks: Windows and macOS"
cargo check --target x86_64-pc-windows-gnu -p daemon -p host-sdk -p cli
cargo check --target x86_64-apple-darwin -p daemon -p host-sdk -p cli

printf '\npackaging/check.sh: all checks passed\n'
