#!/usr/bin/env bash
# The real-browser stage of CI: the web Notepad (examples/web-notepad) and the JavaScript-only
# web Counter (examples/web-counter), each served from an npm install of the jfgui-web-host
# tarball (bindings/web/build.sh packs it), in Debian's Chromium and Firefox ESR, headless,
# driven by puppeteer-core (Firefox over WebDriver BiDi) through the real daemon, `jfgui-agent
# browser-bridge` and the official Python MCP client; scenario.mjs says what is checked.
# Arguments (chromium, firefox) choose the browsers; default both. Installs what it needs: the
# browsers with apt-get, puppeteer-core and typescript from the committed lockfiles, the MCP
# client's venv (shared with tests/mcp-clients), the wasm target. Screenshots, logs and the browser versions go to target/browser-artifacts/. Needs
# write access to /run (the daemon runs in /run/user/UID, as for tests/mcp-clients).
# A browser that cannot be installed or started fails the stage unless JFGUI_ALLOW_SKIP=1.
# Called by .ci/run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
started=$SECONDS

apt_install() {
    export DEBIAN_FRONTEND=noninteractive
    apt-get -o DPkg::Lock::Timeout=600 update -q
    apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@"
}
missing=()
[[ -x /usr/bin/chromium ]] || missing+=(chromium)
[[ -x /usr/bin/firefox-esr ]] || missing+=(firefox-esr)
command -v node >/dev/null || missing+=(nodejs npm)
if ((${#missing[@]} > 0)); then
    echo "installing ${missing[*]}"
    if ! apt_install "${missing[@]}"; then
        if [[ ${JFGUI_ALLOW_SKIP:-} != 1 ]]; then
            echo "browser stage: cannot install ${missing[*]} (set JFGUI_ALLOW_SKIP=1 to skip)" >&2
            exit 1
        fi
        echo "browser stage: cannot install ${missing[*]}; the scenario skips what cannot start" >&2
    fi
fi
echo "browsers: $(/usr/bin/chromium --version 2>/dev/null || echo 'no chromium'); $(/usr/bin/firefox-esr --version 2>/dev/null || echo 'no firefox-esr')"

cd "$root"
cargo build -q -p jfgui-daemon -p jfgui-agent
rustup target list --installed | grep -qx wasm32-unknown-unknown || rustup target add wasm32-unknown-unknown
bash examples/web-notepad/build.sh
# The npm package, packed as it is published; the scenario installs the tarball.
tarball=$(bash bindings/web/build.sh)
python=$(bash tests/mcp-clients/python/venv.sh)
(cd "$here" && npm ci --no-audit --no-fund --loglevel=error)

# The daemon goes to /run/user/UID/jfgui-agent, shared by every checkout on this machine: the
# same lock on /run as tests/mcp-clients/driver.py serializes the runs.
status=0
flock /run node "$here/scenario.mjs" --bin-dir "$target/debug" --python "$python" \
    --artifacts "$target/browser-artifacts" --package "$tarball" "$@" || status=$?
echo "browser stage: $((SECONDS - started)) s (installs included), artifacts in $target/browser-artifacts"
exit "$status"
