#!/usr/bin/env bash
# The crates people install, packaged as crates.io would get them (nothing is published): every
# workspace member that may be published (no `publish = false`) carries the registry metadata,
# `cargo package` packs them in dependency order against a temporary local registry and builds
# each packed copy on its own (the verification step), and each .crate holds its README and
# licences (jfgui-host-capi also its C header and cbindgen config). Prints each .crate's size.
# Run from anywhere: `bash packaging/crates.sh`. Needs only cargo, python3, tar and crates.io.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
step() { printf '\n== %s\n' "$*"; }
fail() { echo "packaging/crates.sh: FAIL: $*" >&2; exit 1; }

step "registry metadata of the publishable crates"
metadata=$(cargo metadata --format-version 1 --no-deps --locked)
# Prints the publishable packages as NAME VERSION, then the others as `exclude NAME`; fails
# naming every missing field.
listing=$(python3 -c '
import json, sys
packages = json.load(sys.stdin)["packages"]
problems = []
for p in packages:
    name = p["name"]
    if p["publish"] == []:
        print("exclude", name)
        continue
    print(name, p["version"])
    for field in ("description", "license", "repository", "documentation", "readme", "rust_version"):
        if not p.get(field):
            problems.append(f"{name}: no {field}")
    for field in ("keywords", "categories"):
        if not 1 <= len(p[field]) <= 5:
            problems.append(f"{name}: {field} must have 1 to 5 entries, has {len(p[field])}")
    if not (p.get("documentation") or "").startswith("https://docs.rs/" + p["name"]):
        problems.append(f"{name}: documentation is not its docs.rs page")
if problems:
    sys.exit("\n".join(problems))
' <<<"$metadata") || fail "metadata incomplete (above)"
published=()
excluded=()
while read -r first second; do
    if [[ $first == exclude ]]; then
        excluded+=(--exclude "$second")
    else
        published+=("$first-$second")
    fi
done <<<"$listing"
printf '%s\n' "${published[@]}"
[[ ${#published[@]} -gt 0 ]] || fail "no publishable crate"

step "cargo package: pack in dependency order, then build each packed crate on its own"
# Cargo takes a registry crate of a given name and version as fixed: it reuses the copy it
# unpacked under CARGO_HOME/registry/src/-HASH/ (HASH of the temporary registry's path, the same
# for every run from this checkout) and the build it made of it. An earlier run's copy, with
# older code, would be built in place of this run's; so both go first: the packing gets a target
# dir of its own, emptied, and the unpacked copies of our crates are removed (only local
# registries' dirs start with "-": crates.io's copies are never touched).
target_dir=$(python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' <<<"$metadata")
pack_dir=$target_dir/crates
rm -rf "$pack_dir"
for crate in "${published[@]}"; do
    rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$crate"
done
cargo package --workspace --locked --target-dir "$pack_dir" "${excluded[@]}"

step "contents of each .crate"
for crate in "${published[@]}"; do
    file="$pack_dir/package/$crate.crate"
    [[ -f $file ]] || fail "$file was not written"
    listed=$(tar -tzf "$file")
    need=(README.md LICENSE-MIT LICENSE-APACHE)
    [[ $crate == jfgui-host-capi-* ]] && need+=(include/jfgui_host.h cbindgen.toml)
    for path in "${need[@]}"; do
        grep -qx "$crate/$path" <<<"$listed" || fail "$crate.crate lacks $path"
    done
    # Anything beyond the code and the files above would be a stray (an `include` too wide).
    strays=$(grep -vxE "$crate/(src/.*\.rs|Cargo\.(toml|toml\.orig|lock)|\.cargo_vcs_info\.json|README\.md|LICENSE-(MIT|APACHE)|include/jfgui_host\.h|cbindgen\.toml)" <<<"$listed" || true)
    [[ -z $strays ]] || fail "$crate.crate carries files it does not need: $strays"
    printf '%-28s %8d bytes, %3d files\n' "$crate.crate" "$(stat -c %s "$file")" "$(wc -l <<<"$listed")"
done

echo "crates: packaged and verified"
