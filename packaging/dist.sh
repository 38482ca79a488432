#!/bin/sh
# Builds what the packages ship, for this machine: the three binaries stripped (cargo profile
# `dist`), and, generated from those binaries, the man pages and the shell completions.
# With --deb also the .deb packages (cargo-deb, installed with `cargo install cargo-deb`).
#
#   packaging/dist.sh [--deb]
#
# Output, in Cargo's target dir: dist/jfgui-agentd, dist/jfgui-agent, dist/jfgui-notepad,
# dist/assets/{jfgui-agent.1.gz, jfgui-agentd.1.gz, completions/{jfgui-agent, _jfgui-agent,
# jfgui-agent.fish}}, and with --deb debian/jfgui-agentd_*.deb and debian/jfgui-agent_*.deb.
set -eu

deb=0
case "${1:-}" in
    --deb) deb=1 ;;
    "") ;;
    *) echo "dist.sh: unknown option $1 (usage: dist.sh [--deb])" >&2; exit 2 ;;
esac
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
target_dir=$(cargo metadata --format-version 1 --no-deps \
    | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
out="$target_dir/dist"

cargo build --locked --profile dist -p jfgui-daemon -p jfgui-agent -p jfgui-example-notepad

assets="$out/assets"
rm -rf "$assets"
mkdir -p "$assets/completions"
for page in jfgui-agent jfgui-agentd; do
    "$out/jfgui-agent" man "$page" > "$assets/$page.1"
    gzip -9n -f "$assets/$page.1"
done
"$out/jfgui-agent" completions bash > "$assets/completions/jfgui-agent"
"$out/jfgui-agent" completions zsh > "$assets/completions/_jfgui-agent"
"$out/jfgui-agent" completions fish > "$assets/completions/jfgui-agent.fish"
echo "dist.sh: binaries and assets in $out"

if [ "$deb" = 1 ]; then
    rm -f "$target_dir"/debian/jfgui-agent*.deb
    # The cargo-deb asset paths say target/release/; with --profile dist they mean $out.
    cargo deb --no-build --profile dist -p jfgui-daemon
    cargo deb --no-build --profile dist -p jfgui-agent
fi
