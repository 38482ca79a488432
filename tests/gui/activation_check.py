#!/usr/bin/env python3
"""Sketch started by an agent: under Xvfb, a daemon started without DISPLAY (as a systemd user
unit can be, before the graphical session) and a stopped Sketch whose "Let agents start
Sketch" is on (`jfgui-sketch --let-agents-start on` writes the launch file the toggle writes).
The official Python MCP client, whose stdio server (`jfgui-agent mcp`) gets only the SDK's
default environment, calls shape.add on Sketch: the daemon starts Sketch on the client's
display (taken from the client's process, the gateway's parent), Sketch registers with
agent access on, the call answers ok, and the red rectangle is on the screen. Prints the time
from call to answer (activation included) beside a second call's.

    activation_check.py --bin-dir target/debug --artifacts target/gui-artifacts

The daemon lives in /run/user/UID/jfgui-agent, where the gateway finds it with the SDK's
environment (the check refuses to run when a daemon may be there already). Exit status as
gui_check.py's: 0 passed, 1 a check failed, 3 the X server could not start.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mcp-clients"))
from driver import RunUser  # noqa: E402  (the run-user dir the SDK checks use)
from gui_check import RED, CannotRun, Checks, Desktop, close_to, log  # noqa: E402

# Run in a process of its own, started with DISPLAY: the display is read from the
# environment a process started with, and this script's own started without one.
CLIENT = r"""
import asyncio, json, sys, time
from mcp import Client, StdioServerParameters

async def main():
    params = StdioServerParameters(command=sys.argv[1], args=["mcp"])  # the SDK's default env
    async with Client(params, read_timeout_seconds=60) as client:
        listed = (await client.call_tool("jfgui_apps_list", {})).structured_content
        add = {"app": "sketch", "action": "shape.add", "expectedRevision": 1, "input": {
            "kind": "rectangle", "points": [[60, 60], [260, 200]], "color": "#ff0000", "fill": "#ff0000"}}
        start = time.monotonic()
        added = await client.call_tool("jfgui_actions_execute", add)
        first = time.monotonic() - start
        start = time.monotonic()
        state = await client.call_tool("jfgui_state_inspect", {"app": "sketch"})
        second = time.monotonic() - start
        print(json.dumps({"listed": listed, "added": added.structured_content, "isError": added.is_error,
                          "state": state.structured_content, "firstMs": first * 1000, "secondMs": second * 1000}))

asyncio.run(main())
"""


def scenario(desk: Desktop, checks: Checks, run_user: RunUser) -> None:
    data = os.path.join(desk.scratch, "data")
    setting = subprocess.run([desk.bins["jfgui-sketch"], "--let-agents-start", "on"], env=dict(desk.env, XDG_DATA_HOME=data), timeout=30)
    checks.check("Sketch's --let-agents-start on wrote its launch file", setting.returncode == 0 and os.path.isfile(os.path.join(data, "jfgui-agent", "apps", "sketch.json")))
    daemon_env = {k: v for k, v in desk.env.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "JFGUI_RUNTIME_DIR")}
    daemon_env.update(XDG_RUNTIME_DIR=run_user.path, XDG_DATA_HOME=data)
    daemon = subprocess.Popen([desk.bins["jfgui-agentd"]], env=daemon_env, stdin=subprocess.DEVNULL)
    desk.procs.append((daemon, "jfgui-agentd"))
    desk.wait_for(os.path.join(run_user.runtime, "host.sock"), daemon, "jfgui-agentd")
    client_env = {k: v for k, v in os.environ.items() if k not in ("JFGUI_RUNTIME_DIR", "XDG_RUNTIME_DIR")}
    client_env["DISPLAY"] = desk.env["DISPLAY"]
    out = subprocess.run([sys.executable, "-c", CLIENT, desk.bins["jfgui-agent"]], env=client_env, stdout=subprocess.PIPE, timeout=120)
    report = json.loads(out.stdout.decode().strip().splitlines()[-1]) if out.returncode == 0 else {}
    checks.check("the MCP client ran", out.returncode == 0, out.returncode)
    rows = (report.get("listed") or {}).get("apps", [])
    checks.check("jfgui_apps_list shows Sketch installed, not running", rows == [{"app": "sketch", "displayName": "Sketch", "running": False}], rows)
    added = report.get("added") or {}
    checks.check("shape.add on the stopped Sketch answered ok", report.get("isError") is False and added.get("revision") == 2, added)
    shapes = ((report.get("state") or {}).get("state") or {}).get("canvas", {}).get("shapes", [])
    checks.check("the started Sketch holds the shape", len(shapes) == 1, report.get("state"))
    log(f"call to answer with activation: {report.get('firstMs', 0):.0f} ms; a call to the running app: {report.get('secondMs', 0):.1f} ms")
    found = desk.run(["xdotool", "search", "--name", "^Sketch$"], check=False).stdout.split()
    checks.check("the Sketch window is on the client's display", bool(found), found)
    if not found:
        return
    pid = int(desk.run(["xdotool", "getwindowpid", found[0].decode()]).stdout.decode())
    desk.procs.append((_Pid(pid), "jfgui-sketch"))
    desk.find_window(lambda: os.path.exists(f"/proc/{pid}"))
    img = desk.screenshot("activated")
    red = sum(1 for y in range(0, img.height, 4) for x in range(0, img.width, 4) if close_to(img.pixel(x, y), RED))
    checks.check("the red rectangle is on the screen", red > 200, f"{red} red samples")
    with open(f"/proc/{pid}/environ", "rb") as f:
        env = f.read().split(b"\0")
    checks.check("Sketch was started for an agent", b"JFGUI_ACTIVATED=1" in env)


class _Pid:
    """A process the test did not start (Sketch, the daemon's start), stopped like its own."""

    def __init__(self, pid: int) -> None:
        self.pid = pid

    def poll(self):
        return None if os.path.exists(f"/proc/{self.pid}") else 0

    def send_signal(self, sig: int) -> None:
        try:
            os.kill(self.pid, sig)
        except ProcessLookupError:
            pass

    def wait(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.05)

    def kill(self) -> None:
        self.send_signal(9)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--artifacts", required=True)
    args = parser.parse_args()
    bins = {n: os.path.join(os.path.abspath(args.bin_dir), n) for n in ("jfgui-agentd", "jfgui-agent", "jfgui-sketch")}
    scratch = tempfile.mkdtemp(prefix="jfgui-gui-activation-")
    shots = os.path.join(scratch, "shots")
    os.makedirs(shots)
    os.makedirs(args.artifacts, exist_ok=True)
    checks, status = Checks(), 0
    desk = Desktop(bins, scratch, shots)
    try:
        with RunUser() as run_user:
            try:
                desk.start_x()
                scenario(desk, checks, run_user)
            finally:
                desk.stop()
    except CannotRun as e:
        log(f"cannot run: {e}")
        status = 3
    except BaseException as e:
        traceback.print_exception(e)
        checks.check("the activation scenario ran to the end", False, f"{type(e).__name__}: {e}")
    for name in os.listdir(shots):
        os.replace(os.path.join(shots, name), os.path.join(args.artifacts, name))
    print(f"gui activation: {checks.passed} passed, {checks.failed} failed", flush=True)
    return status or (1 if checks.failed or not checks.passed else 0)


if __name__ == "__main__":
    sys.exit(main())
