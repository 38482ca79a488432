#!/usr/bin/env bash
# The latency bench's --quick mode for CI (called by .ci/run): every comparison path of
# tests/benches/latency/ (raw relay, JSON relay, dbus-broker, the daemon over JSON-1 and over
# MCP through the gateway, rmcp; the MCP cold sessions of jfgui-agent mcp and rmcp; the 16 MiB
# jfgui-agent read and raw socket copy) answers a handful of calls, each reply checked exactly.
# Nothing about time is asserted. dbus-broker and systemd-socket-activate (its launcher's
# socket activation) are installed here when missing, and the bench is told to insist on
# dbus-broker, so the D-Bus row can never be skipped silently in CI.
set -euo pipefail
cd "$(dirname "$0")/../.."

missing=()
command -v dbus-broker-launch >/dev/null || missing+=(dbus-broker)
command -v systemd-socket-activate >/dev/null || missing+=(systemd)
command -v unshare >/dev/null || missing+=(util-linux)
if ((${#missing[@]})); then
    apt-get -o DPkg::Lock::Timeout=600 update
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${missing[@]}"
fi

JFGUI_BENCH_BUS=dbus-broker cargo test -p jfgui-tests --features bench --bench latency -- --quick
