#!/usr/bin/env bash
# Apps in C and Python on libjfgui_host (host-sdk/capi): the committed header is exactly what
# cbindgen generates; the C ABI type-checks for Windows and macOS; the capi suite runs with
# the C example under valgrind (a leak or an invalid access fails it); the Python package is
# type-checked (mypy --strict) and unit tested (pytest, against a stand-in daemon); then,
# against the real daemon and CLI, the official Python MCP client drives the C example, the
# docs' C and Python sections are executed, and the Tkinter example runs as a real window
# under Xvfb. Installs what it needs (apt-get, cargo install, pip into the venv of
# tests/mcp-clients). Called by .ci/run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cd "$root"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
step() { printf '\n== %s\n' "$*"; }
fail() { echo "tests/other-languages/run.sh: FAIL: $*" >&2; exit 1; }

step "tools"
packages=()
command -v valgrind >/dev/null || packages+=(valgrind)
command -v Xvfb >/dev/null || packages+=(xvfb)
command -v xdotool >/dev/null || packages+=(xdotool)
command -v import >/dev/null || packages+=(imagemagick)
command -v make >/dev/null || packages+=(make)
# Python with Tk and venv (Debian's python3 has Tk only with python3-tk).
python3 -c 'import tkinter, venv, ensurepip' 2>/dev/null || packages+=(python3 python3-venv python3-tk)
if ((${#packages[@]} > 0)); then
    apt-get -o DPkg::Lock::Timeout=600 update
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y --no-install-recommends "${packages[@]}"
fi
# The header's bytes depend on the cbindgen version: pinned.
cbindgen_version=0.29.4
if ! cbindgen --version 2>/dev/null | grep -qx "cbindgen $cbindgen_version"; then
    cargo install cbindgen --version "$cbindgen_version" --locked
fi

step "the committed header is cbindgen's output"
cbindgen --quiet --config host-sdk/capi/cbindgen.toml --crate jfgui-host-capi --output "$scratch/jfgui_host.h"
if ! cmp -s host-sdk/capi/include/jfgui_host.h "$scratch/jfgui_host.h"; then
    diff -u host-sdk/capi/include/jfgui_host.h "$scratch/jfgui_host.h" >&2 || true
    fail "host-sdk/capi/include/jfgui_host.h is stale: regenerate it (command in host-sdk/capi/cbindgen.toml)"
fi

step "the C ABI type-checks for Windows and macOS, and its docs build"
rustup target add x86_64-pc-windows-gnu x86_64-apple-darwin
cargo check -q -p jfgui-host-capi --target x86_64-pc-windows-gnu
cargo check -q -p jfgui-host-capi --target x86_64-apple-darwin
RUSTDOCFLAGS="-D warnings" cargo doc -q -p jfgui-host-capi --no-deps

step "build"
cargo build -q -p jfgui-daemon -p jfgui-agent -p jfgui-host-capi
make --no-print-directory -C examples/c-counter LIBDIR="$target/debug" OUT="$target/debug/c-counter"

step "capi suite, the C example under valgrind"
JFGUI_TEST_WRAPPER="valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=definite,indirect,possible --errors-for-leak-kinds=definite,indirect,possible" \
    cargo test -q -p jfgui-tests --test suite capi::

step "python: the MCP clients' venv, plus pytest, mypy and this package"
python=$(bash tests/mcp-clients/python/venv.sh)
"$python" -c 'import tkinter' || fail "the venv's python ($python) has no tkinter"
"$python" -m pip install -q --disable-pip-version-check -r "$here/requirements.txt"
# What an app author installs: the wheel, which carries libjfgui_host (its build compiles it);
# built and reinstalled every run for a fresh library. bindings/python/check-wheel.sh installs
# it where there is no Rust and no checkout.
"$python" -m pip wheel -q --disable-pip-version-check --no-deps -w "$scratch/wheel" ./bindings/python
"$python" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$scratch"/wheel/jfgui_host-*.whl

step "python package: mypy --strict, pytest"
(cd bindings/python && MYPYPATH=src:tests "$python" -m mypy --strict --no-incremental src/jfgui_host tests)
# From outside the source tree, so the installed package (with its bundled library) is tested.
(cd "$scratch" && "$python" -m pytest -q -p no:cacheprovider "$root/bindings/python/tests")

step "end to end: MCP client on the C example, the docs, Tk under Xvfb"
(cd "$scratch" && JFGUI_BIN_DIR="$target/debug" "$python" -m pytest -q -p no:cacheprovider "$here")

echo "other-languages: passed"
