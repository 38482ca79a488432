#!/usr/bin/env bash
# Builds the web Notepad's wasm module into examples/web-notepad/www/, next to the page that
# loads it. Needs the wasm32-unknown-unknown target (`rustup target add wasm32-unknown-unknown`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cd "$root"
cargo build -q -p jfgui-example-web-notepad --profile web --target wasm32-unknown-unknown
install -m 0644 "$target/wasm32-unknown-unknown/web/web_notepad.wasm" "$here/www/web_notepad.wasm"
echo "built $here/www/web_notepad.wasm ($(wc -c <"$here/www/web_notepad.wasm" | tr -d " ") bytes)"
