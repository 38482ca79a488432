#!/usr/bin/env bash
# The GUI end-to-end suite: the real jfgui-sketch window under Xvfb (Mesa's llvmpipe, a software
# OpenGL), the real daemon, the official Python MCP client through `jfgui-agent stdio sketch
# --protocol mcp`, user input through xdotool and screenshots through ImageMagick's `import`.
# Installs what it needs (Debian packages; the MCP venv of tests/mcp-clients), builds the
# binaries and runs gui_check.py. Screenshots go to $JFGUI_GUI_ARTIFACTS (default
# target/gui-artifacts): all of them when a check fails, the final one and sketch.png always:
# the window after the README's own Sketch commands. JFGUI_GUI_README_SHOT=PNG also writes that
# picture to PNG (relative to the repository root): JFGUI_GUI_README_SHOT=docs/sketch.png
# regenerates the README's; JFGUI_GUI_CONSENT_SHOT=docs/consent.png likewise writes the picture of
# the consent modal. Called by .ci/run.
#
# A machine where this cannot run (no Xvfb and no way to install it) fails the suite, unless
# JFGUI_ALLOW_SKIP=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
artifacts=${JFGUI_GUI_ARTIFACTS:-$target/gui-artifacts}

cannot_run() {
    if [[ ${JFGUI_ALLOW_SKIP:-} == 1 ]]; then
        echo "gui: SKIPPED (JFGUI_ALLOW_SKIP=1): $*" >&2
        exit 0
    fi
    echo "gui: cannot run: $* (set JFGUI_ALLOW_SKIP=1 to skip on purpose)" >&2
    exit 1
}

# Debian packages: the X server, input and screenshot tools, Mesa's software OpenGL.
packages=(xvfb xdotool imagemagick libgl1-mesa-dri libegl1 libglx-mesa0 libx11-xcb1 libxcursor1 libxi6 libxrandr2 libxkbcommon-x11-0)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
    command -v apt-get >/dev/null || cannot_run "missing ${missing[*]} and no apt-get"
    [[ $(id -u) == 0 ]] || cannot_run "missing ${missing[*]} and not root to install them"
    apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
for tool in Xvfb xdotool import; do
    command -v "$tool" >/dev/null || cannot_run "$tool is not on PATH"
done

cd "$root"
cargo build -q -p jfgui-daemon -p jfgui-agent -p jfgui-example-sketch
python=$(bash "$root/tests/mcp-clients/python/venv.sh")
readme_shot=()
[[ -n ${JFGUI_GUI_README_SHOT:-} ]] && readme_shot=(--readme-shot "$JFGUI_GUI_README_SHOT")
[[ -n ${JFGUI_GUI_CONSENT_SHOT:-} ]] && readme_shot+=(--consent-shot "$JFGUI_GUI_CONSENT_SHOT")

set +e
"$python" "$here/gui_check.py" --bin-dir "$target/debug" --artifacts "$artifacts" "${readme_shot[@]}"
status=$?
set -e
if ((status == 3)); then
    cannot_run "the X server or the window did not start (see above)"
fi
((status == 0)) || exit "$status"
# Sketch started by an agent (a daemon without DISPLAY, the SDK's default environment).
set +e
"$python" "$here/activation_check.py" --bin-dir "$target/debug" --artifacts "$artifacts"
status=$?
set -e
if ((status == 3)); then
    cannot_run "the X server did not start (see above)"
fi
exit "$status"
