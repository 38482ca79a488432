#!/usr/bin/python3
"""Runs a command under the seccomp part of a systemd unit's sandbox, as systemd would set it
up, for machines without a systemd user manager (CI): packaging/sandbox.sh adds the mount
namespace, no-new-privileges and the empty capability set around it.

    sandbox.py UNIT -- COMMAND [ARGS...]

From UNIT it reads SystemCallFilter= (allow list, then `~` deny lists; @groups expanded with
`systemd-analyze syscall-filter`), SystemCallErrorNumber=, RestrictAddressFamilies=,
MemoryDenyWriteExecute= and RestrictNamespaces=, builds the equivalent filter with libseccomp
(python3-seccomp, Debian's /usr/bin/python3) for the native architecture only
(SystemCallArchitectures=native) and execs COMMAND under it.
"""

import errno
import os
import socket
import subprocess
import sys

import seccomp

PROT_WRITE, PROT_EXEC = 0x2, 0x4
SHM_EXEC = 0o100000
CLONE_NEW = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000 | 0x00000080
FAMILIES = {"AF_UNIX": socket.AF_UNIX, "AF_INET": socket.AF_INET, "AF_INET6": socket.AF_INET6,
            "AF_NETLINK": socket.AF_NETLINK, "AF_PACKET": socket.AF_PACKET}


def settings(unit):
    """Key=value lines of the unit (repeated keys kept in order)."""
    out = []
    with open(unit) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith(("#", ";", "[")) and "=" in line:
                key, value = line.split("=", 1)
                out.append((key, value))
    return out


def expand(names, seen=None):
    """Syscall names for a list of names and @groups."""
    seen = set() if seen is None else seen
    calls = set()
    for name in names:
        if not name.startswith("@"):
            calls.add(name)
            continue
        if name in seen:
            continue
        seen.add(name)
        listing = subprocess.run(["systemd-analyze", "syscall-filter", name], check=True,
                                 capture_output=True, text=True).stdout.splitlines()
        members = [l.strip() for l in listing[1:] if l.strip() and not l.strip().startswith("#")]
        calls |= expand(members, seen)
    return calls


def main():
    unit, sep, command = sys.argv[1], sys.argv[2], sys.argv[3:]
    if sep != "--" or not command:
        sys.exit(__doc__)
    allowed, error = None, errno.EPERM
    families, mdwe, no_namespaces = None, False, False
    for key, value in settings(unit):
        words = value.split()
        if key == "SystemCallFilter" and words and words[0].startswith("~"):
            allowed -= expand([words[0][1:]] + words[1:])
        elif key == "SystemCallFilter":
            allowed = (allowed or set()) | expand(words)
        elif key == "SystemCallErrorNumber":
            error = getattr(errno, value)
        elif key == "RestrictAddressFamilies":
            families = [FAMILIES[w] for w in words]
        elif key == "MemoryDenyWriteExecute":
            mdwe = value == "yes"
        elif key == "RestrictNamespaces":
            no_namespaces = value == "yes"
    if allowed is None:
        sys.exit(f"{unit} has no SystemCallFilter=")
    f = seccomp.SyscallFilter(defaction=seccomp.ERRNO(error))
    conditional = {"socket"} if families is not None else set()
    if mdwe:
        conditional |= {"mmap", "mprotect", "pkey_mprotect", "shmat"}
    if no_namespaces:
        conditional |= {"clone", "clone3", "unshare", "setns"}
    for call in sorted(allowed - conditional):
        try:
            f.add_rule(seccomp.ALLOW, call)
        except (RuntimeError, ValueError):
            pass  # not a syscall of this architecture
    A, MEQ = seccomp.Arg, seccomp.MASKED_EQ
    if "socket" in allowed:
        for family in families or []:
            f.add_rule(seccomp.ALLOW, "socket", A(0, seccomp.EQ, family))
    if mdwe:
        wx = PROT_WRITE | PROT_EXEC
        for prot in (0, PROT_WRITE, PROT_EXEC):
            f.add_rule(seccomp.ALLOW, "mmap", A(2, MEQ, wx, prot))
        for call in ("mprotect", "pkey_mprotect"):
            if call in allowed:
                f.add_rule(seccomp.ALLOW, call, A(2, MEQ, PROT_EXEC, 0))
        if "shmat" in allowed:
            f.add_rule(seccomp.ALLOW, "shmat", A(2, MEQ, SHM_EXEC, 0))
    if no_namespaces:
        if "clone" in allowed:
            f.add_rule(seccomp.ALLOW, "clone", A(0, MEQ, CLONE_NEW, 0))
        # clone3's flags are behind a pointer: systemd answers ENOSYS so libc falls back to clone.
        f.add_rule(seccomp.ERRNO(errno.ENOSYS), "clone3")
    f.load()
    os.execvp(command[0], command)


main()
