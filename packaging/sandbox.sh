#!/bin/bash
# Runs COMMAND inside the sandbox a jfgui-agentd user unit asks systemd for, built by hand for
# machines without a systemd user manager (CI containers): the check that the daemon still
# works under its own unit's restrictions.
#
#   packaging/sandbox.sh UNIT RW_DIR... -- COMMAND [ARGS...]
#
# Emulated: ProtectSystem=strict + ProtectHome=read-only (every mount read-only except /dev,
# /proc and /sys), PrivateTmp= (fresh /tmp and /var/tmp), ReadWritePaths= (the RW_DIRs, which
# must exist), NoNewPrivileges=, CapabilityBoundingSet= (none), and the seccomp part
# (SystemCallFilter=, RestrictAddressFamilies=, MemoryDenyWriteExecute=, RestrictNamespaces=,
# SystemCallArchitectures=native) through packaging/sandbox.py. COMMAND and the RW_DIRs must
# lie outside /tmp and /var/tmp, which the sandbox replaces; this script and the unit may be
# anywhere. Not emulated: PrivateUsers=
# (the mapping keeps our uid), the Protect{Kernel*,Clock,Hostname,Proc}= mounts, and the
# IP allow-list (cgroup BPF). Needs root (mount namespace), util-linux and python3-seccomp.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
unit=${1:?usage: sandbox.sh UNIT RW_DIR... -- COMMAND...}
shift
rw=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do rw+=("$(cd "$1" && pwd)"); shift; done
[ "${1:-}" = "--" ] && shift || { echo "sandbox.sh: -- COMMAND missing" >&2; exit 2; }
[ $# -gt 0 ] || { echo "sandbox.sh: COMMAND missing" >&2; exit 2; }

# The script below runs in a private mount namespace (nothing leaks to the host's mounts).
exec unshare --mount --propagation private -- /bin/bash -s "$here" "$unit" "${#rw[@]}" "${rw[@]}" "$@" <<'INNER'
set -euo pipefail
here=$1 unit=$2 n=$3
shift 3
rw=("${@:1:$n}")
shift "$n"
# The fresh /tmp hides the old one, and with it a checkout under /tmp: keep what the sandbox
# itself reads (the seccomp helper and the unit) as private copies inside the fresh /tmp.
helper=$(cat "$here/sandbox.py")
unit_text=$(cat "$unit")
for t in /tmp /var/tmp; do mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$t"; done
mkdir -m 0700 /tmp/.jfgui-sandbox
printf '%s\n' "$helper" > /tmp/.jfgui-sandbox/sandbox.py
printf '%s\n' "$unit_text" > "/tmp/.jfgui-sandbox/$(basename "$unit")"
unit="/tmp/.jfgui-sandbox/$(basename "$unit")"
# Read-only everything but the API file systems and the fresh temp dirs, deepest mounts last.
findmnt -rn -o TARGET | while read -r m; do
    m=$(printf '%b' "$m")
    case "$m" in /dev|/dev/*|/proc|/proc/*|/sys|/sys/*|/tmp|/var/tmp) continue ;; esac
    mount -o remount,bind,ro "$m" 2>/dev/null || echo "sandbox.sh: $m stays as it was" >&2
done
for d in "${rw[@]}"; do mount --bind "$d" "$d"; mount -o remount,bind,rw "$d"; done
exec setpriv --no-new-privs --bounding-set=-all --inh-caps=-all \
    /usr/bin/python3 /tmp/.jfgui-sandbox/sandbox.py "$unit" -- "$@"
INNER
