#!/usr/bin/env bash
# Where the idle daemon's resident memory comes from (docs/PERFORMANCE.md, "Idle memory"):
# starts the release jfgui-agentd and one Notepad in a private runtime dir, runs the latency
# bench's readiness checks (the bench's idle state: one app registered, no client left), waits
# until the daemon went 2 s without a context switch, and prints:
#
#   - VmRSS (the bench's idle figure) split into anonymous and file-backed;
#   - the resident pages of every mapping group (the binary's code, read-only data and data;
#     each shared library; heap; thread stacks and other anonymous mappings), from smaps;
#   - which crates the resident code pages of the binary belong to: the pages present in the
#     daemon's page table (/proc/PID/pagemap) over its text mapping, mapped back to the
#     binary's symbols (nm) and by each symbol's path to its crate, beside each crate's whole
#     code size in the binary. Needs the binary's symbol table (release keeps it; dist is
#     stripped, then only the totals are printed).
#
# Needs python3, nm and readelf (binutils); root or the same user as the daemon (pagemap).
# Usage: tests/benches/rss.sh [TOP]   (TOP crates listed, default 25)
# With JFGUI_TEST_BIN_DIR set, the binaries there are measured (e.g. target/dist, or a saved
# baseline) and nothing is built.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=${1:-25}
. tests/benches/setup.sh
needs python3 nm readelf
binaries jfgui-daemon jfgui-example-notepad
daemon_with_notepad Rss idle
readiness_checks

switches() { cat /proc/"$daemon"/task/*/status | awk '/ctxt_switches/ {n += $2} END {print n}'; }
last=$(switches) quiet=0
for _ in $(seq 150); do # settled: 2 s without a context switch, at most 15 s
    sleep 0.1
    now=$(switches)
    if [[ $now == "$last" ]]; then
        quiet=$((quiet + 1))
        ((quiet < 20)) || break
    else
        last=$now quiet=0
    fi
done

echo "## jfgui-agentd idle memory: one app registered, no client"
echo
echo "$bin/jfgui-agentd ($(stat -c %s "$bin/jfgui-agentd") bytes), $(date -u +%FT%TZ)"
echo
python3 - "$daemon" "$bin/jfgui-agentd" "$top" <<'EOF'
import collections, os, re, struct, subprocess, sys

pid, exe, top = int(sys.argv[1]), os.path.realpath(sys.argv[2]), int(sys.argv[3])
PAGE = os.sysconf("SC_PAGE_SIZE")
kib = lambda n: f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.2f} MiB"

status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
field = lambda k: int(status[k].split()[0]) * 1024
print(f"VmRSS **{kib(field('VmRSS'))}** = anonymous {kib(field('RssAnon'))} + file-backed "
      f"{kib(field('RssFile'))} + shmem {kib(field('RssShmem'))}")
print()

# smaps: one entry per mapping (header line, then "Key: n kB" lines).
maps, cur = [], None
for line in open(f"/proc/{pid}/smaps"):
    head = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) ([0-9a-f]+) \S+ \d+\s*(.*)", line)
    if head:
        cur = {"start": int(head[1], 16), "end": int(head[2], 16), "perms": head[3],
               "offset": int(head[4], 16), "path": head[5].strip()}
        maps.append(cur)
    elif ":" in line and cur is not None:
        k, v = line.split(":", 1)
        if v.strip().endswith("kB"):
            cur[k] = int(v.split()[0]) * 1024

def group(m):
    path, perms = m["path"], m["perms"]
    if path == exe or path.startswith(exe + " "):
        kind = {"r-x": "code", "r--": "read-only data", "rw-": "data"}.get(perms[:3], perms)
        return f"jfgui-agentd {kind}"
    if path.startswith("/"):
        return os.path.basename(path)
    if path in ("[heap]", "[stack]"):
        return path
    if path:
        return path
    # Anonymous: a thread's stack is a read-write mapping the size of the stack (2 MiB for
    # Rust threads, 8 MiB by default for others); the rest are allocations above malloc's
    # mmap threshold (e.g. a queue allocated at its bound) and other threads' malloc arenas.
    size = m["end"] - m["start"]
    if m["perms"].startswith("rw") and size in range(1 << 20, 9 << 20):
        return "anonymous: thread stacks (1-8 MiB mappings)"
    return "anonymous: large allocations, other threads' malloc arenas"

rss = collections.Counter()
for m in maps:
    rss[group(m)] += m.get("Rss", 0)
print("| mapping | resident |")
print("|---|---|")
for name, n in rss.most_common():
    if n:
        print(f"| {name} | {kib(n)} |")
print()

# The binary's resident code, by crate.
text = [m for m in maps if m["path"] == exe and m["perms"].startswith("r-x")]
syms = subprocess.run(["nm", "-C", "-S", "--defined-only", exe], capture_output=True,
                      text=True).stdout
loads = []
for line in subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if f and f[0] == "LOAD":
        loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))  # offset, vaddr, filesz
if not text or not syms.strip():
    print("(no symbol table in this binary: crate breakdown not available)")
    sys.exit()

def crate(name):
    # `<tokio::x::Y as core::future::Future>::poll` -> tokio; `core::ptr::drop_in_place<daemon::..>`
    # stays core (the glue is instantiated in the caller's crate, but named after core).
    name = name.lstrip("<&*")
    name = re.sub(r"^(dyn |mut |const |\[)", "", name)
    m = re.match(r"([A-Za-z_][A-Za-z0-9_]*)::", name)
    return m[1] if m else "(C / runtime: libc glue, compiler-rt, std's C parts)"

symbols = []
for line in syms.splitlines():
    f = line.split(maxsplit=3)
    if len(f) == 4 and f[2] in "tTwW":
        symbols.append((int(f[0], 16), int(f[1], 16), crate(f[3])))
symbols.sort()
size_by_crate = collections.Counter()
for _, size, c in symbols:
    size_by_crate[c] += size

def vaddr(fileoff):
    for off, va, filesz in loads:
        if off <= fileoff < off + filesz:
            return va + fileoff - off
    return None

present = set()  # ELF vaddrs of resident pages
with open(f"/proc/{pid}/pagemap", "rb") as pm:
    for m in text:
        npages = (m["end"] - m["start"]) // PAGE
        pm.seek(m["start"] // PAGE * 8)
        data = pm.read(npages * 8)
        for i in range(npages):
            (entry,) = struct.unpack_from("<Q", data, i * 8)
            if entry >> 63 & 1:
                va = vaddr(m["offset"] + i * PAGE)
                if va is not None:
                    present.add(va // PAGE)

resident_by_crate = collections.Counter()
for addr, size, c in symbols:
    first, last = addr // PAGE, (addr + max(size, 1) - 1) // PAGE
    for page in range(first, last + 1):
        if page in present:
            lo, hi = max(addr, page * PAGE), min(addr + size, (page + 1) * PAGE)
            resident_by_crate[c] += max(hi - lo, 0)
total_text = sum(size_by_crate.values())
total_res = len(present) * PAGE
print(f"Code: {kib(total_text)} of functions in the binary, {kib(total_res)} of it resident "
      f"({len(present)} pages); by crate, the bytes of its functions that lie on resident "
      "pages:")
print()
print("| crate | resident code | its code in the binary |")
print("|---|---|---|")
for c, n in resident_by_crate.most_common(top):
    print(f"| {c} | {kib(n)} | {kib(size_by_crate[c])} |")
rest = sum(n for _, n in resident_by_crate.most_common()[top:])
if rest:
    print(f"| (the other {len(resident_by_crate) - top}) | {kib(rest)} | |")
EOF
