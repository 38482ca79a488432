#!/bin/sh
# Installs jfgui-agentd and jfgui-agent for the current user (no root) and starts the daemon
# at login: systemd user units with socket activation on Linux, a LaunchAgent on macOS.
# Windows: see packaging/windows/install.ps1.
#
#   packaging/install.sh [--prefix DIR] [--bin-from DIR] [--plain] [--no-start] [--uninstall]
#
#   --prefix DIR    binaries go to DIR/bin (default: ~/.local, so ~/.local/bin)
#   --bin-from DIR  copy prebuilt jfgui-agentd and jfgui-agent from DIR (e.g. target/release)
#                   instead of building them with `cargo install --path`
#   --plain         Linux: a daemon started at login and kept running
#                   (jfgui-agentd-plain.service) instead of socket activation
#   --no-start      install files only; do not enable or start anything
#   --uninstall     stop and remove what this script installed (binaries included)
#
# Environment: XDG_CONFIG_HOME (user units go to $XDG_CONFIG_HOME/systemd/user, default
# ~/.config/systemd/user).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$here")
prefix="$HOME/.local"
bin_from=""
plain=0
start=1
uninstall=0
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix=${2:?--prefix needs a directory}; shift 2 ;;
        --bin-from) bin_from=${2:?--bin-from needs a directory}; shift 2 ;;
        --plain) plain=1; shift ;;
        --no-start) start=0; shift ;;
        --uninstall) uninstall=1; shift ;;
        -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$prefix" in /*) ;; *) echo "install.sh: --prefix must be absolute" >&2; exit 2 ;; esac
bindir="$prefix/bin"
binaries="jfgui-agentd jfgui-agent"
units="jfgui-agentd.socket jfgui-agentd-control.socket jfgui-agentd.service jfgui-agentd-plain.service"
unitdir="${XDG_CONFIG_HOME:-$HOME/.config}/systemd/user"
label="io.github.jfgui.agentd"
agentdir="$HOME/Library/LaunchAgents"

have_user_systemd() {
    command -v systemctl >/dev/null 2>&1 && systemctl --user show-environment >/dev/null 2>&1
}

install_binaries() {
    mkdir -p "$bindir"
    if [ -n "$bin_from" ]; then
        for b in $binaries; do
            install -m 0755 "$bin_from/$b" "$bindir/$b"
        done
    else
        command -v cargo >/dev/null 2>&1 || { echo "install.sh: cargo not found; install Rust or pass --bin-from" >&2; exit 1; }
        cargo install --locked --path "$repo/daemon" --root "$prefix"
        cargo install --locked --path "$repo/cli" --root "$prefix"
    fi
    echo "installed $binaries in $bindir"
    case ":$PATH:" in *":$bindir:"*) ;; *) echo "note: $bindir is not on your PATH" ;; esac
}

linux_install() {
    mkdir -p "$unitdir"
    for u in $units; do
        # The shipped units name /usr/bin (the .deb); point them at this install.
        sed "s#/usr/bin/jfgui-agentd#$bindir/jfgui-agentd#" "$here/systemd/$u" > "$unitdir/$u.tmp"
        chmod 0644 "$unitdir/$u.tmp"
        mv "$unitdir/$u.tmp" "$unitdir/$u"
    done
    echo "installed the user units in $unitdir"
    [ "$start" = 1 ] || return 0
    if ! have_user_systemd; then
        echo "no systemd user manager here; start $bindir/jfgui-agentd yourself" >&2
        return 0
    fi
    systemctl --user daemon-reload
    if [ "$plain" = 1 ]; then
        systemctl --user disable --now jfgui-agentd.socket jfgui-agentd-control.socket 2>/dev/null || true
        systemctl --user enable --now jfgui-agentd-plain.service
        echo "jfgui-agentd runs now and at every login (jfgui-agentd-plain.service)"
    else
        systemctl --user disable --now jfgui-agentd-plain.service 2>/dev/null || true
        systemctl --user enable --now jfgui-agentd.socket jfgui-agentd-control.socket
        echo "systemd listens for jfgui apps now and at every login; the daemon starts on the first connection"
    fi
}

linux_uninstall() {
    if have_user_systemd; then
        systemctl --user disable --now jfgui-agentd.socket jfgui-agentd-control.socket \
            jfgui-agentd.service jfgui-agentd-plain.service 2>/dev/null || true
    fi
    for u in $units; do rm -f "$unitdir/$u"; done
    if have_user_systemd; then systemctl --user daemon-reload; fi
}

macos_install() {
    logdir="$HOME/Library/Logs"
    mkdir -p "$agentdir" "$logdir"
    plist="$agentdir/$label.plist"
    sed -e "s#@BINDIR@#$bindir#" -e "s#@LOGDIR@#$logdir#" "$here/launchd/$label.plist" > "$plist"
    chmod 0644 "$plist"
    echo "installed $plist (logs: $logdir/jfgui-agentd.log)"
    [ "$start" = 1 ] || return 0
    launchctl bootout "gui/$(id -u)/$label" 2>/dev/null || true
    launchctl bootstrap "gui/$(id -u)" "$plist"
    echo "jfgui-agentd runs now and at every login"
}

macos_uninstall() {
    launchctl bootout "gui/$(id -u)/$label" 2>/dev/null || true
    rm -f "$agentdir/$label.plist"
}

os=$(uname -s)
if [ "$uninstall" = 1 ]; then
    case "$os" in
        Darwin) macos_uninstall ;;
        *) linux_uninstall ;;
    esac
    for b in $binaries; do rm -f "$bindir/$b"; done
    echo "uninstalled"
    exit 0
fi
install_binaries
case "$os" in
    Darwin) macos_install ;;
    Linux) linux_install ;;
    *) echo "install.sh: no login integration for $os; start $bindir/jfgui-agentd yourself" >&2 ;;
esac
