#!/usr/bin/env bash
# Builds the npm package jfgui-web-host from bindings/web/ and packs it: the generic host's
# wasm (the jfgui-web-host crate, wasm32-unknown-unknown, the workspace's `web` profile), the
# license texts, the type declarations generated from the modules' JSDoc (typescript from the
# committed lockfile, which also type-checks the modules and a TypeScript app against the
# declarations), then `npm pack`. Prints the tarball's path on stdout, the rest on stderr.
# Needs the wasm32-unknown-unknown target (`rustup target add wasm32-unknown-unknown`).
#
#   bash bindings/web/build.sh [DIR]     # the tarball goes to DIR (default: target/npm)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
out=${1:-$target/npm}
cd "$root"
# The package's version is the crates' (package.json names it for npm).
crates=$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"$/\1/p' Cargo.toml)
package=$(node -p 'require(process.argv[1]).version' "$here/package.json")
if [[ $crates != "$package" ]]; then
    echo "bindings/web/package.json says version $package, the crates $crates" >&2
    exit 1
fi
cargo build -q -p jfgui-web-host --profile web --target wasm32-unknown-unknown
install -m 0644 "$target/wasm32-unknown-unknown/web/jfgui_web_host.wasm" "$here/jfgui_web_host.wasm"
install -m 0644 "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$here/"
mkdir -p "$out"
cd "$here"
npm ci --no-audit --no-fund --loglevel=error >&2
tarball=$(npm pack --pack-destination "$out" --loglevel=error | tail -n 1)
echo "packed $out/$tarball ($(wc -c <"$out/$tarball" | tr -d " ") bytes)" >&2
echo "$out/$tarball"
