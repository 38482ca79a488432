#!/usr/bin/env python3
"""Runs one MCP client check against a real jfgui-agentd and a real jfgui-notepad.

Creates a private JFGUI_RUNTIME_DIR, starts the daemon, starts `jfgui-notepad --agent-enable`,
waits for the Notepad endpoint, runs the given command with JFGUI_RUNTIME_DIR and JFGUI_AGENT
(the gateway binary) in its environment, then stops everything and removes the directory.
Exits with the command's status (or 1 when the setup fails). Standard library only.

    driver.py --bin-dir target/debug -- python3 client_check.py --mode auto
"""

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SETUP_TIMEOUT_S = 20.0


def log(message: str) -> None:
    print(f"[driver] {message}", file=sys.stderr, flush=True)


def wait_for(path: str, proc: subprocess.Popen, what: str) -> None:
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while not os.path.exists(path):
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with status {proc.returncode} before {path} appeared")
        if time.monotonic() > deadline:
            raise RuntimeError(f"{path} did not appear within {SETUP_TIMEOUT_S} s")
        time.sleep(0.05)


def stop(proc: subprocess.Popen, name: str) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        log(f"{name} ignored SIGTERM for 10 s; killing it")
        proc.kill()
        proc.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", required=True, help="directory with jfgui-agentd, jfgui-agent, jfgui-notepad")
    parser.add_argument("--export-ms", default="5000", help="how long Notepad's export task runs")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the client command")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no client command given")
    bins = {name: os.path.join(os.path.abspath(args.bin_dir), name) for name in ("jfgui-agentd", "jfgui-agent", "jfgui-notepad")}
    for name, path in bins.items():
        if not os.access(path, os.X_OK):
            log(f"missing binary {path} (build {name} first)")
            return 1

    scratch = tempfile.mkdtemp(prefix="jfgui-mcp-")
    runtime = os.path.join(scratch, "rt")
    env = dict(os.environ, JFGUI_RUNTIME_DIR=runtime, JFGUI_AGENT=bins["jfgui-agent"])
    env.setdefault("JFGUI_LOG", "info")
    procs = []
    try:
        daemon = subprocess.Popen([bins["jfgui-agentd"]], env=env, stdin=subprocess.DEVNULL)
        procs.append((daemon, "jfgui-agentd"))
        wait_for(os.path.join(runtime, "host.sock"), daemon, "jfgui-agentd")
        notepad = subprocess.Popen(
            [bins["jfgui-notepad"], "--agent-enable", "--export-ms", args.export_ms],
            env=env,
            stdin=subprocess.DEVNULL,
        )
        procs.append((notepad, "jfgui-notepad"))
        wait_for(os.path.join(runtime, "apps", "notepad.sock"), notepad, "jfgui-notepad")
        log(f"daemon and Notepad up in {runtime}; running {' '.join(command)}")
        status = subprocess.run(command, env=env, stdin=subprocess.DEVNULL).returncode
        log(f"client exited with status {status}")
        return status
    except (OSError, RuntimeError) as e:
        log(f"setup failed: {e}")
        return 1
    finally:
        for proc, name in reversed(procs):
            stop(proc, name)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
