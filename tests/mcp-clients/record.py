#!/usr/bin/env python3
"""Stands between an MCP client and the gateway and records the session.

    record.py RECORD_DIR COMMAND [ARGS...]

The client starts this script as its stdio server, with whatever environment it gives servers
by default; the script starts COMMAND with exactly that environment (nothing added), copies
stdin to COMMAND and COMMAND's stdout back, byte for byte, and writes RECORD_DIR/PID.jsonl:
first {"env": [names of the variables it was given]}, then one {"dir": "in"|"out", "line": ...}
per line in each direction. driver.py checks the variable names (the point of the run: no
XDG_RUNTIME_DIR, no JFGUI_RUNTIME_DIR) and validates every "out" line against the official
MCP schema of its revision (schema_check.py). Standard library only; COMMAND's stderr passes
through; the exit status is COMMAND's.
"""

import json
import os
import signal
import subprocess
import sys
import threading


def exec_environment() -> dict:
    """The environment this process was started with. Python's locale coercion (PEP 538) adds
    LC_CTYPE to `os.environ` at start-up, so on Linux the original is read from
    /proc/self/environ, which keeps what execve(2) was given."""
    try:
        with open("/proc/self/environ", "rb") as f:
            entries = [e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e]
        return {os.fsdecode(k): os.fsdecode(v) for k, v in entries}
    except OSError:
        return dict(os.environ)


def main() -> int:
    record_dir, command = sys.argv[1], sys.argv[2:]
    lock = threading.Lock()
    log = open(os.path.join(record_dir, f"{os.getpid()}.jsonl"), "w", encoding="utf-8")

    def record(entry: dict) -> None:
        with lock:
            log.write(json.dumps(entry) + "\n")
            log.flush()

    env = exec_environment()
    record({"env": sorted(env)})
    child = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    # Clients stop a server by closing stdin, then SIGTERM: pass the signal on.
    signal.signal(signal.SIGTERM, lambda *_: child.terminate())

    def upstream() -> None:
        try:
            for line in sys.stdin.buffer:
                record({"dir": "in", "line": line.decode("utf-8", "replace")})
                child.stdin.write(line)
                child.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass
        finally:
            try:
                child.stdin.close()
            except BrokenPipeError:
                pass

    threading.Thread(target=upstream, daemon=True).start()
    for line in child.stdout:
        record({"dir": "out", "line": line.decode("utf-8", "replace")})
        try:
            sys.stdout.buffer.write(line)
            sys.stdout.buffer.flush()
        except BrokenPipeError:
            break
    status = child.wait()
    log.close()
    return status


if __name__ == "__main__":
    sys.exit(main())
