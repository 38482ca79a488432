#!/usr/bin/env python3
"""The GUI end-to-end checks: a real jfgui-sketch window under Xvfb, driven by an agent (the
official Python MCP client through `jfgui-agent stdio sketch --protocol mcp`) and by the user
(xdotool through the X server, so through the window's real event loop), and looked at with
screenshots (`import -window`) checked pixel by pixel with a tolerance, never against a golden
image. The agent's `canvas.clear` waits for the user: the window's modal is clicked (Deny,
Allow once) and withdrawn (the agent cancels), and what each did is checked on screen and in
the app's state.

    gui_check.py --bin-dir target/debug --artifacts target/gui-artifacts [--readme-shot PNG]

First the README's Sketch commands run as written (read from README.md, after the
`<!-- sketch commands` marker) in a fresh window, and the window they leave is the README's
picture: kept as sketch.png in the artifacts, and written to PNG with --readme-shot (how
docs/sketch.png is regenerated). Then the scenario proper runs in another fresh window.

Prints one PASS/FAIL line per check and a final "N passed, M failed" line. Exit status: 0 all
passed, 1 a check failed, 3 the X server or the window could not start (run.sh turns that into
a failure unless JFGUI_ALLOW_SKIP=1). Called by run.sh, which installs what it needs.
"""

import argparse
import asyncio
import base64
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
import zlib

from mcp import Client, StdioServerParameters

SETUP_TIMEOUT_S = 30.0
SCREEN_TIMEOUT_S = 15.0
TOLERANCE = 40  # per channel, for "this pixel shows that colour"
RED, BLUE, GREEN, YELLOW, WHITE, BLACK = (255, 0, 0), (0, 0, 255), (0, 255, 0), (255, 255, 0), (255, 255, 255), (0, 0, 0)


class CannotRun(Exception):
    """The X server or the window could not start: exit 3."""


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, condition: bool, detail: object = "") -> bool:
        if condition:
            self.passed += 1
            print(f"PASS [gui] {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL [gui] {name}: {detail}", flush=True)
        return condition


def log(message: str) -> None:
    print(f"[gui] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Images: PPM from `import`, PNG from ui.render (8-bit RGB, as render.rs writes it).


class Image:
    def __init__(self, width: int, height: int, rgb: bytes) -> None:
        self.width, self.height, self.rgb = width, height, rgb

    def pixel(self, x: int, y: int) -> tuple:
        i = (y * self.width + x) * 3
        return tuple(self.rgb[i : i + 3])

    def crop(self, x: int, y: int, w: int, h: int) -> "Image":
        rows = [self.rgb[((y + r) * self.width + x) * 3 : ((y + r) * self.width + x + w) * 3] for r in range(h)]
        return Image(w, h, b"".join(rows))


def parse_ppm(data: bytes) -> Image:
    # P6 <w> <h> <max>\n<bytes>; `import` writes no comments.
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos : pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos : pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    if fields[0] != b"P6" or fields[3] != b"255":
        raise ValueError(f"not an 8-bit P6 PPM: {fields}")
    w, h = int(fields[1]), int(fields[2])
    return Image(w, h, data[pos + 1 : pos + 1 + w * h * 3])


def parse_png(data: bytes) -> Image:
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length = int.from_bytes(data[pos : pos + 4], "big")
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height = int.from_bytes(body[0:4], "big"), int.from_bytes(body[4:8], "big")
            if body[8:13] != bytes([8, 2, 0, 0, 0]):
                raise ValueError(f"expected 8-bit RGB, non-interlaced: {body[8:13].hex()}")
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, out, prev = zlib.decompress(idat), width * 3, bytearray(), bytearray(width * 3)
    for row in range(height):
        f, line = raw[row * (stride + 1)], bytearray(raw[row * (stride + 1) + 1 : (row + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - 3] if i >= 3 else 0
            b, c = prev[i], (prev[i - 3] if i >= 3 else 0)
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out += line
        prev = line
    return Image(width, height, bytes(out))


def encode_png(img: Image) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")

    stride = img.width * 3
    raw = b"".join(b"\0" + img.rgb[r * stride : (r + 1) * stride] for r in range(img.height))
    ihdr = img.width.to_bytes(4, "big") + img.height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b"")


def close_to(pixel: tuple, color: tuple) -> bool:
    return all(abs(p - c) <= TOLERANCE for p, c in zip(pixel, color))


def differing(a: Image, b: Image, threshold: int = 48) -> int:
    """How many pixels differ by more than `threshold` in some channel."""
    n = 0
    for i in range(0, min(len(a.rgb), len(b.rgb)), 3):
        if max(abs(a.rgb[i] - b.rgb[i]), abs(a.rgb[i + 1] - b.rgb[i + 1]), abs(a.rgb[i + 2] - b.rgb[i + 2])) > threshold:
            n += 1
    return n


# ---------------------------------------------------------------------------------------------
# The desktop: Xvfb, the daemon, the app, xdotool, import.


class Desktop:
    def __init__(self, bins: dict, scratch: str, shots: str) -> None:
        self.bins, self.scratch, self.shots = bins, scratch, shots
        # The runtime dir's parent is private to this run: the daemon watches that parent for
        # the runtime dir's removal, and a busy parent (such as /tmp) would wake it for nothing.
        self.runtime = os.path.join(scratch, "rt")
        self.procs: list = []
        # The state dir (audit log, grants) is private to this run too.
        self.env = dict(os.environ, JFGUI_RUNTIME_DIR=self.runtime, JFGUI_AUDIT_DIR=os.path.join(scratch, "state"), JFGUI_LOG="info")
        self.window = ""
        self.origin = (0, 0)
        self.shot_count = 0

    def start(self, export_ms: int) -> None:
        self.start_x()
        daemon = subprocess.Popen([self.bins["jfgui-agentd"]], env=self.env, stdin=subprocess.DEVNULL)
        self.procs.append((daemon, "jfgui-agentd"))
        self.wait_for(os.path.join(self.runtime, "host.sock"), daemon, "jfgui-agentd")
        self.app = subprocess.Popen(
            [self.bins["jfgui-sketch"], "--agent-enable", "--export-ms", str(export_ms)],
            env=self.env,
            stdin=subprocess.DEVNULL,
        )
        self.procs.append((self.app, "jfgui-sketch"))
        try:
            self.wait_for(os.path.join(self.runtime, "apps", "sketch.sock"), self.app, "jfgui-sketch")
        except RuntimeError as e:
            raise CannotRun(str(e))
        self.find_window(lambda: self.app.poll() is None)

    def start_x(self) -> None:
        """Xvfb on a free display, named in self.env["DISPLAY"]."""
        read_fd, write_fd = os.pipe()
        try:
            xvfb = subprocess.Popen(
                ["Xvfb", "-displayfd", str(write_fd), "-screen", "0", "1024x768x24", "-nolisten", "tcp", "-noreset"],
                pass_fds=(write_fd,),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        except OSError as e:
            raise CannotRun(f"cannot start Xvfb: {e}")
        os.close(write_fd)
        self.procs.append((xvfb, "Xvfb"))
        display = b""
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while not display.endswith(b"\n"):
            if xvfb.poll() is not None or time.monotonic() > deadline:
                raise CannotRun(f"Xvfb did not start (status {xvfb.poll()})")
            chunk = os.read(read_fd, 16)
            if not chunk:
                raise CannotRun("Xvfb closed its display pipe")
            display += chunk
        os.close(read_fd)
        self.env["DISPLAY"] = ":" + display.decode().strip()
        log(f"Xvfb on {self.env['DISPLAY']}, runtime dir {self.runtime}")

    def find_window(self, alive) -> None:
        """Waits for the Sketch window while `alive()` says its process runs."""
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while not self.window:
            found = self.run(["xdotool", "search", "--name", "^Sketch$"], check=False).stdout.split()
            if found:
                self.window = found[0].decode()
            elif time.monotonic() > deadline or not alive():
                raise CannotRun("the Sketch window did not appear")
            else:
                time.sleep(0.1)
        geometry = dict(
            line.split("=", 1) for line in self.run(["xdotool", "getwindowgeometry", "--shell", self.window]).stdout.decode().split()
        )
        self.origin = (int(geometry["X"]), int(geometry["Y"]))
        log(f"window {self.window} at {self.origin}, {geometry['WIDTH']}x{geometry['HEIGHT']}")

    def wait_for(self, path: str, proc: subprocess.Popen, what: str) -> None:
        deadline = time.monotonic() + SETUP_TIMEOUT_S
        while not os.path.exists(path):
            if proc.poll() is not None:
                raise RuntimeError(f"{what} exited with status {proc.returncode} before {path} appeared")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{path} did not appear within {SETUP_TIMEOUT_S} s")
            time.sleep(0.05)

    def run(self, argv: list, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(argv, env=self.env, check=check, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=30)

    def screenshot(self, name: str) -> Image:
        """The window as the X server shows it; also kept as <n>-<name>.png."""
        self.shot_count += 1
        img = parse_ppm(self.run(["import", "-window", self.window, "-depth", "8", "ppm:-"]).stdout)
        with open(os.path.join(self.shots, f"{self.shot_count:03d}-{name}.png"), "wb") as f:
            f.write(encode_png(img))
        return img

    def xdo(self, *args: str) -> None:
        self.run(["xdotool", *args])

    def press(self, keys: str) -> None:
        self.xdo("windowfocus", "--sync", self.window)
        self.xdo("key", "--clearmodifiers", keys)

    def drag(self, start: tuple, end: tuple, steps: int = 8) -> None:
        (x0, y0), (x1, y1) = self.screen(start), self.screen(end)
        self.xdo("mousemove", "--sync", str(x0), str(y0))
        self.xdo("mousedown", "1")
        for i in range(1, steps + 1):
            time.sleep(0.03)
            self.xdo("mousemove", "--sync", str(x0 + (x1 - x0) * i // steps), str(y0 + (y1 - y0) * i // steps))
        time.sleep(0.05)
        self.xdo("mouseup", "1")

    def click(self, at: tuple) -> None:
        x, y = self.screen(at)
        self.xdo("mousemove", "--sync", str(x), str(y))
        # Over the target for a frame first, as a hand is: egui gives a press to the layer it
        # found under the pointer, and a modal dialog's buttons are a layer of their own.
        time.sleep(0.2)
        self.xdo("mousedown", "1")
        time.sleep(0.1)
        self.xdo("mouseup", "1")

    def screen(self, window_xy: tuple) -> tuple:
        return (self.origin[0] + int(window_xy[0]), self.origin[1] + int(window_xy[1]))

    def agent(self, *args: str) -> subprocess.CompletedProcess:
        return self.run([self.bins["jfgui-agent"], *args], check=False)

    def context_switches(self, pid: int) -> dict:
        """Voluntary context switches of every thread of `pid`, by thread name."""
        out = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                name = f.read().strip()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                n = next(int(l.split()[1]) for l in f if l.startswith("voluntary_ctxt_switches"))
            out[f"{name}/{tid}"] = n
        return out

    def stop(self) -> None:
        for proc, name in reversed(self.procs):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    log(f"{name} ignored SIGTERM for 10 s; killing it")
                    proc.kill()
                    proc.wait()


# ---------------------------------------------------------------------------------------------
# The agent: the official MCP client.


def structured(result) -> dict:
    return result.structured_content or {}


class Agent:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def execute(self, action: str, input: dict, expected=None):
        args = {"action": action, "input": input}
        if expected is not None:
            args["expectedRevision"] = expected
        return await self.client.call_tool("jfgui_actions_execute", args)

    async def batch(self, calls: list, atomic: bool):
        return await self.client.call_tool("jfgui_actions_batch", {"calls": calls, "atomic": atomic})

    async def inspect(self) -> tuple:
        sc = structured(await self.client.call_tool("jfgui_state_inspect", {}))
        return sc["revision"], sc["state"]

    async def read(self, uri: str) -> bytes:
        data, offset = b"", 0
        while True:
            sc = structured(await self.client.call_tool("jfgui_resources_read", {"uri": uri, "offset": offset}))
            chunk = base64.b64decode(sc["data"])
            data, offset = data + chunk, offset + len(chunk)
            if sc["eof"]:
                return data

    async def task(self, name: str, id: str) -> dict:
        return structured(await self.client.call_tool(name, {"id": id})).get("task", {})


async def eventually(probe, condition, timeout: float = SCREEN_TIMEOUT_S):
    """Calls `probe` until `condition(result)` holds or the timeout passes; returns the last
    result (the caller's check then reports it)."""
    deadline = time.monotonic() + timeout
    while True:
        result = await probe()
        if condition(result) or time.monotonic() > deadline:
            return result
        await asyncio.sleep(0.1)


# ---------------------------------------------------------------------------------------------
# The README's picture.

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_commands() -> list:
    """The shell commands of the README's block after `<!-- sketch commands`, continued lines
    joined."""
    with open(os.path.join(REPO, "README.md")) as f:
        text = f.read()
    match = re.search(r"<!-- sketch commands.*?-->\s*\n```sh\n(.*?)\n```", text, re.S)
    if not match:
        raise ValueError("README.md has no `<!-- sketch commands` block")
    return [c.strip() for c in match.group(1).replace("\\\n", " ").splitlines() if c.strip()]


def readme_picture(desk: Desktop, checks: Checks, artifacts: str, out) -> None:
    """Runs the README's Sketch commands in the shell as written, with the built binaries first
    on PATH, and keeps the window they leave once it shows the shapes and the last agent action."""
    env = dict(desk.env, PATH=os.path.dirname(desk.bins["jfgui-agent"]) + ":" + os.environ.get("PATH", ""))
    commands = readme_commands()
    checks.check("the README shows the Sketch commands", len(commands) >= 2, commands)
    for command in commands:
        run = subprocess.run(["sh", "-c", command], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, timeout=30)
        checks.check(f"the README's `{command[:60]}...` succeeds", run.returncode == 0, (run.returncode, run.stderr.decode()))

    def inspect() -> dict:
        return json.loads(desk.agent("inspect", "sketch", "--json").stdout)["state"]

    # The activity notice follows the answer: wait for the window to have it.
    deadline = time.monotonic() + SCREEN_TIMEOUT_S
    while (state := inspect()).get("lastAgentAction", {}).get("count") != len(commands) and time.monotonic() < deadline:
        time.sleep(0.1)
    view, last = state["view"], state.get("lastAgentAction", {})
    checks.check("the window's last agent action is the README's last call", (last.get("action"), last.get("count")) == ("shape.add", len(commands)), last)
    ppp, canvas = view["pixelsPerPoint"], view["canvas"]

    def shows(img: Image, x: float, y: float, color: tuple) -> bool:
        return close_to(img.pixel(round(canvas["x"] + x * ppp), round(canvas["y"] + y * ppp)), color)

    deadline = time.monotonic() + SCREEN_TIMEOUT_S
    while True:
        time.sleep(0.3)  # a frame or two after the notice, so the bar shows it
        img = desk.screenshot("readme")
        if (shows(img, 140, 110, RED) and shows(img, 440, 200, BLUE)) or time.monotonic() > deadline:
            break
    checks.check("the README's commands draw a red rectangle and a blue ellipse", shows(img, 140, 110, RED) and shows(img, 440, 200, BLUE), img.pixel(0, 0))
    shot = os.path.join(desk.shots, f"{desk.shot_count:03d}-readme.png")
    shutil.copy(shot, os.path.join(artifacts, "sketch.png"))
    if out:
        shutil.copy(shot, out)
        log(f"wrote {out}")


# ---------------------------------------------------------------------------------------------
# The scenario.


async def scenario(desk: Desktop, checks: Checks, artifacts: str, consent_shot) -> None:
    # Idle: the window open, connected and enabled, nothing happening. Reported, not asserted
    # (a shared machine is noisy); the app's threads should not wake up at all.
    time.sleep(1.0)
    before = desk.context_switches(desk.app.pid)
    time.sleep(10.0)
    after = desk.context_switches(desk.app.pid)
    wakeups = {t: after[t] - before.get(t, 0) for t in after}
    log(f"idle wake-ups of jfgui-sketch over 10 s: {sum(wakeups.values())} {json.dumps(wakeups)}")

    params = StdioServerParameters(command=desk.bins["jfgui-agent"], args=["stdio", "sketch", "--protocol", "mcp"], env=desk.env)
    over = []  # set once the session is meant to be dead: its teardown may then fail
    try:
        async with Client(params, read_timeout_seconds=30) as client:
            await agent_session(desk, checks, artifacts, client, over, consent_shot)
    except BaseException as e:
        if not over:
            raise
        log(f"closing the ended MCP session: {type(e).__name__}")


async def agent_session(desk: Desktop, checks: Checks, artifacts: str, client: Client, over: list, consent_shot) -> None:
    agent = Agent(client)
    revision, state = await agent.inspect()
    view = state.get("view", {})
    checks.check("inspect reports where the canvas is on screen", "canvas" in view and view.get("zoom") == 1, view)
    ppp = view["pixelsPerPoint"]
    canvas_at = (round(view["canvas"]["x"]), round(view["canvas"]["y"]))
    toggle = view["agentToggle"]

    def agent_bar(img: Image) -> Image:
        """The agent bar right of the toggle: the endpoint and the "last agent action" line."""
        x, y = round(toggle["x"] + toggle["width"]), round(toggle["y"])
        return img.crop(x, y, img.width - x, round(toggle["height"]))

    checks.check("before any agent call, inspect has no last agent action", "lastAgentAction" not in state, state.get("lastAgentAction"))
    bar_before = agent_bar(desk.screenshot("no-agent-action"))

    def at(x: float, y: float) -> tuple:
        """A canvas point in window pixels (zoom 1)."""
        return (canvas_at[0] + round(x * ppp), canvas_at[1] + round(y * ppp))

    def shows(img: Image, x: float, y: float, color: tuple) -> bool:
        return close_to(img.pixel(*at(x, y)), color)

    def canvas_of(img: Image) -> Image:
        return img.crop(canvas_at[0], canvas_at[1], round(640 * ppp), round(400 * ppp))

    # --- the agent draws a red rectangle and a blue ellipse ---------------------------------
    r = await agent.execute("shape.add", {"kind": "rectangle", "points": [[40, 40], [240, 180]], "color": "#ff0000", "fill": "#ff0000", "width": 2}, revision)
    rect_id = structured(r).get("output", {}).get("id")
    checks.check("the agent adds a red rectangle", not r.is_error and structured(r).get("revision") == revision + 1, r)
    r = await agent.execute("shape.add", {"kind": "ellipse", "points": [[300, 80], [600, 300]], "color": "#0000ff", "fill": "#0000ff"}, revision + 1)
    checks.check("the agent adds a blue ellipse", not r.is_error and structured(r).get("revision") == revision + 2, r)
    revision += 2

    async def shot(name):
        return desk.screenshot(name)

    img = await eventually(lambda: shot("agent-drew"), lambda i: shows(i, 140, 110, RED) and shows(i, 440, 200, BLUE))
    checks.check("the window shows red inside the rectangle", shows(img, 140, 110, RED) and shows(img, 45, 45, RED), img.pixel(*at(140, 110)))
    checks.check("the window shows blue inside the ellipse", shows(img, 440, 200, BLUE) and shows(img, 440, 90, BLUE), img.pixel(*at(440, 200)))
    checks.check(
        "paper stays white outside the shapes (the ellipse's box corner too)",
        shows(img, 600, 20, WHITE) and shows(img, 326, 86, WHITE) and shows(img, 280, 110, WHITE),
        (img.pixel(*at(600, 20)), img.pixel(*at(326, 86)), img.pixel(*at(280, 110))),
    )

    # --- the window says what the agent did (the daemon's activity notices) --------------------
    _, state = await eventually(agent.inspect, lambda rs: rs[1].get("lastAgentAction", {}).get("count") == 2)
    last = state.get("lastAgentAction", {})
    checks.check("inspect's last agent action is the second shape.add, ok, counting 2 calls", (last.get("action"), last.get("outcome"), last.get("count")) == ("shape.add", "ok", 2), last)
    def changed(img: Image) -> bool:
        return differing(agent_bar(img), bar_before) >= 50

    img = await eventually(lambda: shot("agent-action-shown"), changed)
    checks.check(
        "the agent bar's \"No agent action yet\" is replaced on screen by the last agent action",
        changed(img),
        f"{differing(agent_bar(img), bar_before)} pixels of the bar changed",
    )

    # --- ui.render agrees with the window's canvas --------------------------------------------
    r = await client.call_tool("jfgui_view_render", {})
    output = structured(r).get("output", {})
    png = await agent.read(output.get("uri", "render://canvas.png"))
    render = parse_png(png)
    checks.check("ui.render is a 640x400 PNG at scale 1", (render.width, render.height) == (640, 400), (render.width, render.height))
    with open(os.path.join(desk.shots, "render.png"), "wb") as f:
        f.write(png)
    images = [c for c in r.content if getattr(c, "type", "") == "image"]
    checks.check(
        "the render result carries that PNG as an image a model can look at",
        len(images) == 1 and base64.b64decode(images[0].data) == png,
        [getattr(c, "type", "") for c in r.content],
    )
    r = await client.call_tool("jfgui_view_render", {"input": {"maxWidth": 160}})
    images = [c for c in r.content if getattr(c, "type", "") == "image"]
    small = parse_png(base64.b64decode(images[0].data)) if images else None
    checks.check(
        "maxWidth 160 renders the canvas scaled down to 160x100",
        small is not None and (small.width, small.height) == (160, 100),
        structured(r).get("output"),
    )
    if ppp == 1:
        window = canvas_of(img)
        off = differing(window, render)
        log(f"ui.render vs the window's canvas: {off} of {640 * 400} pixels differ by more than 48")
        checks.check("ui.render matches the window's canvas pixel for pixel (within tolerance)", off <= 640 * 400 // 200, f"{off} pixels differ")
    else:
        checks.check("ui.render is compared at 1 pixel per point", False, f"pixelsPerPoint {ppp}")

    # --- the user draws through the real event loop -------------------------------------------
    before_user = revision
    desk.drag(at(60, 360), at(300, 380))
    revision, state = await eventually(agent.inspect, lambda rs: rs[0] == before_user + 1)
    shapes = state.get("canvas", {}).get("shapes", [])
    checks.check("a drag with the line tool adds one line: one revision", revision == before_user + 1 and shapes and shapes[-1]["kind"] == "line", (revision, shapes[-1:]))
    line = shapes[-1]["points"] if shapes else [[0, 0], [0, 0]]
    mid = ((line[0][0] + line[1][0]) / 2, (line[0][1] + line[1][1]) / 2)
    img = await eventually(lambda: shot("user-line"), lambda i: shows(i, *mid, BLACK))
    checks.check("the line is on screen", shows(img, *mid, BLACK), img.pixel(*at(*mid)))

    desk.press("ctrl+z")
    revision, state = await eventually(agent.inspect, lambda rs: rs[0] == before_user + 2)
    checks.check("Ctrl+Z undoes the line: the revision moves on", revision == before_user + 2 and len(state["canvas"]["shapes"]) == 2, (revision, len(state["canvas"]["shapes"])))
    img = await eventually(lambda: shot("undone"), lambda i: shows(i, *mid, WHITE))
    checks.check("the line is gone from the screen", shows(img, *mid, WHITE), img.pixel(*at(*mid)))
    desk.press("ctrl+shift+z")
    revision, state = await eventually(agent.inspect, lambda rs: rs[0] == before_user + 3)
    checks.check("Ctrl+Shift+Z redoes it", revision == before_user + 3 and len(state["canvas"]["shapes"]) == 3, (revision, len(state["canvas"]["shapes"])))
    img = await eventually(lambda: shot("redone"), lambda i: shows(i, *mid, BLACK))
    checks.check("the line is back on screen", shows(img, *mid, BLACK), img.pixel(*at(*mid)))

    r = await agent.execute("shape.delete", {"id": rect_id}, before_user)
    error = structured(r).get("error", {})
    checks.check(
        "an agent write based on the revision before the user's edits is refused stale_revision",
        r.is_error and error.get("reason") == "stale_revision" and error.get("data", {}).get("currentRevision") == revision,
        r,
    )
    time.sleep(0.5)
    after = desk.screenshot("after-stale")
    checks.check("the refused write changed nothing on screen", differing(canvas_of(after), canvas_of(img)) == 0 and shows(after, 140, 110, RED), differing(canvas_of(after), canvas_of(img)))
    checks.check("nor the revision", (await agent.inspect())[0] == revision)
    checks.check("a call refused by its checks asks nobody", "prompt" not in (await agent.inspect())[1].get("view", {}))

    # --- atomic batches -----------------------------------------------------------------------
    green = {"action": "shape.add", "input": {"kind": "rectangle", "points": [[420, 330], [520, 390]], "color": "#00ff00", "fill": "#00ff00"}, "expectedRevision": revision}
    yellow = {"action": "shape.add", "input": {"kind": "ellipse", "points": [[560, 20], [630, 70]], "color": "#ffff00", "fill": "#ffff00"}, "expectedRevision": revision}
    missing = {"action": "shape.update", "input": {"id": 9999}, "expectedRevision": revision}
    r = await agent.batch([green, missing], atomic=True)
    error = structured(r).get("error", {})
    checks.check("an atomic batch failing at its second call is rolled back", r.is_error and error.get("reason") == "rolled_back" and error.get("data", {}).get("index") == 1, r)
    time.sleep(0.5)
    after = desk.screenshot("after-rollback")
    checks.check("the rolled-back batch left the screen unchanged", differing(canvas_of(after), canvas_of(img)) == 0 and shows(after, 470, 360, WHITE), after.pixel(*at(470, 360)))
    checks.check("and the revision", (await agent.inspect())[0] == revision)

    r = await agent.batch([green, yellow], atomic=True)
    checks.check("a committed atomic batch adds both shapes", not r.is_error and len(structured(r).get("results", [])) == 2, r)
    img = await eventually(lambda: shot("batch"), lambda i: shows(i, 470, 360, GREEN) and shows(i, 595, 45, YELLOW))
    checks.check("both are on screen", shows(img, 470, 360, GREEN) and shows(img, 595, 45, YELLOW), (img.pixel(*at(470, 360)), img.pixel(*at(595, 45))))
    batch_revision = (await agent.inspect())[0]
    desk.press("ctrl+z")
    img = await eventually(lambda: shot("batch-undone"), lambda i: shows(i, 470, 360, WHITE) and shows(i, 595, 45, WHITE))
    checks.check("one Ctrl+Z takes back the whole batch", shows(img, 470, 360, WHITE) and shows(img, 595, 45, WHITE) and shows(img, 140, 110, RED), (img.pixel(*at(470, 360)), img.pixel(*at(595, 45))))
    revision, state = await agent.inspect()
    checks.check("... as one undo step (one revision, three shapes left)", revision == batch_revision + 1 and len(state["canvas"]["shapes"]) == 3, (revision, batch_revision, len(state["canvas"]["shapes"])))

    # --- the export task: progress, cancel, complete, read back -------------------------------
    r = await agent.execute("document.export", {}, revision)
    task = structured(r).get("task", {})
    checks.check("export starts a task", not r.is_error and task.get("state") == "running", r)
    seen = await eventually(lambda: agent.task("jfgui_tasks_get", task.get("id", "")), lambda t: (t.get("progress") or {}).get("done", 0) >= 1)
    checks.check("the task reports progress", (seen.get("progress") or {}).get("total") == 3 and seen.get("state") == "running", seen)
    cancelled = await agent.task("jfgui_tasks_cancel", task.get("id", ""))
    checks.check("cancel moves it to cancelling", cancelled.get("state") in ("cancelling", "cancelled"), cancelled)
    final = await eventually(lambda: agent.task("jfgui_tasks_get", task.get("id", "")), lambda t: t.get("state") == "cancelled")
    checks.check("the export ends cancelled", final.get("state") == "cancelled", final)

    r = await agent.execute("document.export", {}, revision)
    task = structured(r).get("task", {})
    done = await eventually(lambda: agent.task("jfgui_tasks_get", task.get("id", "")), lambda t: t.get("state") == "completed", timeout=60)
    result = done.get("result", {})
    checks.check("a second export completes with every shape", done.get("state") == "completed" and (done.get("progress") or {}).get("done") == 3, done)
    svg = await agent.read(result.get("uri", "export://drawing.svg"))
    try:
        root = ET.fromstring(svg)
        ns = "{http://www.w3.org/2000/svg}"
        fills = {(el.tag.replace(ns, ""), el.get("fill")) for el in root}
        checks.check(
            "the SVG read back through jfgui_resources_read parses and holds the shapes",
            ("rect", "#ff0000") in fills and ("ellipse", "#0000ff") in fills and any(t == "line" for t, _ in fills),
            sorted(fills),
        )
    except ET.ParseError as e:
        checks.check("the exported SVG parses", False, e)

    # The consent part runs through the all-apps gateway, as an MCP client is configured.
    gateway = StdioServerParameters(command=desk.bins["jfgui-agent"], args=["mcp"], env=desk.env)
    async with Client(gateway, read_timeout_seconds=30) as all_apps:
        await consent(desk, checks, Agent(all_apps), at, shows, canvas_of, consent_shot)

    frames = (await agent.inspect())[1].get("view", {}).get("frames", {})
    log(f"per-frame cost of pumping the host channel (µs; the whole update beside it): {json.dumps(frames)}")

    # --- jfgui-agent check --mutate against the live window: no contract broken ---------------
    done = desk.agent("check", "sketch", "--mutate", "--json")
    report = json.loads(done.stdout) if done.stdout else {}
    failed = [f for f in report.get("findings", []) if f.get("level") == "FAIL"]
    log(f"check --mutate: {report.get('counts')}")
    checks.check("jfgui-agent check sketch --mutate finds no FAIL", done.returncode == 0 and report.get("passed") is True, failed or done.stderr)

    # --- the user turns agent access off ------------------------------------------------------
    desk.click((toggle["x"] + 9 * ppp, toggle["y"] + toggle["height"] / 2))

    async def listed():
        out = desk.agent("list", "--json").stdout
        apps = json.loads(out).get("apps", []) if out else []
        return next((a for a in apps if a.get("slug") == "sketch"), {})

    entry = await eventually(listed, lambda a: a.get("enabled") is False)
    checks.check("clicking the toggle off removes the endpoint", entry.get("enabled") is False and entry.get("endpoint") is None, entry)
    checks.check("its socket is gone", not os.path.exists(os.path.join(desk.runtime, "apps", "sketch.sock")))
    desk.screenshot("agent-off")
    try:
        r = await asyncio.wait_for(agent.inspect(), timeout=30)
        checks.check("the client's next call fails cleanly", False, f"it succeeded: {r}")
    except asyncio.TimeoutError:
        checks.check("the client's next call fails cleanly", False, "it hung for 30 s")
    except Exception as e:  # the gateway ended: an error, promptly, is the clean failure
        checks.check("the client's next call fails cleanly", True)
        log(f"after the toggle: {type(e).__name__}: {e}")
    over.append(True)


def center(r: dict) -> tuple:
    return (r["x"] + r["width"] / 2, r["y"] + r["height"] / 2)


async def consent(desk: Desktop, checks: Checks, agent: Agent, at, shows, canvas_of, consent_shot) -> None:
    """canvas.clear through `jfgui-agent mcp` asks the user: a modal in the window naming the
    agent the daemon saw calling (this Python program, which started the gateway), clicked with
    the real pointer: Deny, cancel, Allow once, Always (a grant: the next call runs without a
    modal), and after `grants revoke` it asks again."""
    revision, state = await agent.inspect()
    shapes = len(state["canvas"]["shapes"])
    before = desk.screenshot("before-clear")

    async def shot(name: str) -> Image:
        await asyncio.sleep(0.1)  # a frame after the change
        return desk.screenshot(name)

    async def prompt_shown() -> dict:
        return (await agent.inspect())[1].get("view", {}).get("prompt", {})

    async def settled(ticket: str) -> dict:
        """The prompt of `ticket` once two reads a few frames apart agree: egui lays a new
        modal out over its first frames, and a click aimed by an earlier layout can hit the
        neighbouring button."""
        last: dict = {}

        async def read() -> dict:
            nonlocal last
            before, last = last, await prompt_shown()
            await asyncio.sleep(0.2)
            return {"now": last, "before": before}

        seen = await eventually(read, lambda r: r["now"].get("ticket") == ticket and r["now"] == r["before"])
        return seen["now"]

    async def press(prompt: dict, button: str) -> None:
        """Clicks `button` of the modal until the modal of that ticket is gone: on a loaded
        machine a frame may not be drawn between the pointer's arrival and the press, and egui
        then gives the press to the backdrop. Another click can only reach the same ticket's
        modal, so it never answers a second prompt."""
        ticket = prompt.get("ticket")
        for _ in range(5):
            desk.click(center(prompt[button]))
            shown = await eventually(prompt_shown, lambda p: p.get("ticket") != ticket, timeout=3.0)
            if shown.get("ticket") != ticket:
                return
        log(f"the {button} button of {ticket} took no click in 5 tries")

    async def ask() -> tuple:
        r = await agent.execute("canvas.clear", {}, revision)
        task = structured(r).get("task", {})
        prompt = await settled(task.get("id"))
        return r, task, prompt

    # --- the user says no -----------------------------------------------------------------
    r, task, prompt = await ask()
    checks.check("canvas.clear answers at once with a task that waits", not r.is_error and task.get("state") == "running", r)
    checks.check("the window shows a modal for that task", prompt.get("ticket") == task.get("id"), prompt)
    seen = await agent.task("jfgui_tasks_get", task.get("id", ""))
    checks.check(
        "the task says it waits for the user's confirmation",
        seen.get("awaiting") == "confirmation" and (seen.get("progress") or {}).get("message") == "waiting for you to allow Clear the canvas",
        seen,
    )
    checks.check("the agent the OS named is offered \"always\"", "always" in prompt and "allowOnce" in prompt and "deny" in prompt, prompt)
    time.sleep(0.3)
    img = desk.screenshot("prompt")
    if consent_shot:
        with open(consent_shot, "wb") as f:
            f.write(encode_png(img))
        log(f"the consent picture: {consent_shot}")
    dialog = prompt.get("dialog", {"x": 0, "y": 0, "width": 1, "height": 1})
    box = (round(dialog["x"]), round(dialog["y"]), max(1, round(dialog["width"])), max(1, round(dialog["height"])))
    changed = differing(img.crop(*box), before.crop(*box))
    checks.check("the modal is on screen where the window says", changed >= box[2] * box[3] // 10, f"{changed} of {box[2] * box[3]} pixels changed")
    checks.check("the backdrop dims the canvas behind the modal", not shows(img, 600, 20, WHITE), img.pixel(*at(600, 20)))
    await press(prompt, "deny")
    final = await eventually(lambda: agent.task("jfgui_tasks_get", task.get("id", "")), lambda t: t.get("state") == "failed")
    checks.check(
        "Deny: the task fails denied_by_user, decided by the user",
        (final.get("error") or {}).get("reason") == "denied_by_user" and (final.get("consent") or {}).get("answer") == "deny",
        final,
    )
    gone = await eventually(prompt_shown, lambda p: not p)
    checks.check("the modal closes", not gone, gone)
    now, state = await agent.inspect()
    checks.check("nothing was cleared: same shapes, same revision", now == revision and len(state["canvas"]["shapes"]) == shapes, (now, len(state["canvas"]["shapes"])))
    img = await eventually(lambda: shot("denied"), lambda i: shows(i, 140, 110, RED))
    checks.check("and the screen shows the same canvas", differing(canvas_of(img), canvas_of(before)) == 0, differing(canvas_of(img), canvas_of(before)))

    # --- the caller gives up: the modal closes ------------------------------------------------
    r, task, prompt = await ask()
    cancelled = await agent.task("jfgui_tasks_cancel", task.get("id", ""))
    checks.check("cancelling a waiting call cancels it at once", cancelled.get("state") == "cancelled", cancelled)
    gone = await eventually(prompt_shown, lambda p: not p)
    checks.check("and withdraws the modal", not gone, gone)
    checks.check("nothing was cleared", (await agent.inspect())[0] == revision)

    # --- the user says yes --------------------------------------------------------------------
    r, task, prompt = await ask()
    await press(prompt, "allowOnce")
    final = await eventually(lambda: agent.task("jfgui_tasks_get", task.get("id", "")), lambda t: t.get("state") in ("completed", "failed"))
    result = final.get("result") or {}
    checks.check(
        "Allow once: the task completes with the output and the new revision",
        final.get("state") == "completed" and result.get("revision") == revision + 1 and (result.get("output") or {}).get("shapeCount") == 0,
        final,
    )
    checks.check("decided by the user", (final.get("consent") or {}).get("answer") == "allow", final)
    img = await eventually(lambda: shot("cleared"), lambda i: shows(i, 140, 110, WHITE) and shows(i, 440, 200, WHITE))
    checks.check("the canvas is empty on screen", shows(img, 140, 110, WHITE) and shows(img, 440, 200, WHITE) and not (await prompt_shown()), img.pixel(*at(140, 110)))
    desk.press("ctrl+z")
    now, state = await eventually(agent.inspect, lambda rs: rs[0] == revision + 2)
    checks.check("one Ctrl+Z brings every shape back: the clear was one undo step", now == revision + 2 and len(state["canvas"]["shapes"]) == shapes, (now, len(state["canvas"]["shapes"])))
    img = await eventually(lambda: shot("clear-undone"), lambda i: shows(i, 140, 110, RED))
    checks.check("and on screen", shows(img, 140, 110, RED) and shows(img, 440, 200, BLUE), img.pixel(*at(140, 110)))

    # --- the user allows it always: a grant, and the next call runs without a modal -----------
    revision, state = await agent.inspect()
    shapes = len(state["canvas"]["shapes"])
    r, task, prompt = await ask()
    await press(prompt, "always")
    final = await eventually(lambda: agent.task("jfgui_tasks_get", task.get("id", "")), lambda t: t.get("state") in ("completed", "failed"))
    checks.check("Always: the task completes, decided allow_always", final.get("state") == "completed" and (final.get("consent") or {}).get("answer") == "allow_always", final)
    out = desk.agent("grants", "--json").stdout
    grants = json.loads(out).get("grants", []) if out else []
    checks.check(
        "a grant names the agent's executable, Sketch and canvas.clear",
        len(grants) == 1 and grants[0].get("app") == "Sketch" and grants[0].get("action") == "canvas.clear" and os.path.realpath(grants[0].get("agent", "")) == os.path.realpath(sys.executable),
        (grants, sys.executable),
    )
    desk.press("ctrl+z")
    revision, _ = await eventually(agent.inspect, lambda rs: len(rs[1]["canvas"]["shapes"]) == shapes)
    r = await agent.execute("canvas.clear", {}, revision)
    output = structured(r).get("output") or {}
    checks.check("the next canvas.clear runs at once, without a task", not r.is_error and output.get("shapeCount") == 0 and "task" not in structured(r), r)
    checks.check("and without a modal", not (await prompt_shown()))

    # --- revoked: it asks again ---------------------------------------------------------------
    done = desk.agent("grants", "revoke", "--all")
    checks.check("grants revoke --all", done.returncode == 0, done)
    desk.press("ctrl+z")
    revision, _ = await eventually(agent.inspect, lambda rs: len(rs[1]["canvas"]["shapes"]) == shapes)
    r, task, prompt = await ask()
    checks.check("after the revoke the call asks again", prompt.get("ticket") == task.get("id") and task.get("awaiting") == "confirmation", (task, prompt))
    await press(prompt, "deny")
    final = await eventually(lambda: agent.task("jfgui_tasks_get", task.get("id", "")), lambda t: t.get("state") == "failed")
    checks.check("and Deny refuses it", (final.get("error") or {}).get("reason") == "denied_by_user", final)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--artifacts", required=True, help="where screenshots are kept")
    parser.add_argument("--export-ms", type=int, default=3000)
    parser.add_argument("--readme-shot", metavar="PNG", help="also write the README's picture of Sketch to PNG")
    parser.add_argument("--consent-shot", metavar="PNG", help="also write the picture of the consent modal to PNG")
    args = parser.parse_args()
    bins = {n: os.path.join(os.path.abspath(args.bin_dir), n) for n in ("jfgui-agentd", "jfgui-agent", "jfgui-sketch")}
    for name, path in bins.items():
        if not os.access(path, os.X_OK):
            log(f"missing binary {path} (build {name} first)")
            return 1
    shutil.rmtree(args.artifacts, ignore_errors=True)
    os.makedirs(args.artifacts)
    scratch = tempfile.mkdtemp(prefix="jfgui-gui-")
    shots = os.path.join(scratch, "shots")
    os.makedirs(shots)
    checks = Checks()
    status = 0
    readme = Desktop(bins, os.path.join(scratch, "readme"), shots)
    os.makedirs(readme.scratch)
    try:
        readme.start(args.export_ms)
        readme_picture(readme, checks, args.artifacts, args.readme_shot and os.path.abspath(args.readme_shot))
    except CannotRun as e:
        log(f"cannot run: {e}")
        status = 3
    except BaseException as e:
        traceback.print_exception(e)
        checks.check("the README's Sketch commands ran", False, f"{type(e).__name__}: {e}")
    finally:
        readme.stop()
    desk = Desktop(bins, scratch, shots)
    try:
        if status:
            raise CannotRun("see above")
        desk.start(args.export_ms)
        consent_shot = args.consent_shot and os.path.abspath(args.consent_shot)
        asyncio.run(asyncio.wait_for(scenario(desk, checks, args.artifacts, consent_shot), timeout=300))
    except CannotRun as e:
        log(f"cannot run: {e}")
        status = 3
    except BaseException as e:  # a crash is a failure with its reason, never a silent pass
        traceback.print_exception(e)
        checks.check("the scenario ran to the end", False, f"{type(e).__name__}: {e}")
    finally:
        try:
            desk.screenshot("final")
        except Exception:
            pass
        desk.stop()
    print(f"gui: {checks.passed} passed, {checks.failed} failed", flush=True)
    failed = status == 0 and (checks.failed > 0 or checks.passed == 0)
    keep = sorted(os.listdir(shots)) if failed else [n for n in os.listdir(shots) if n.endswith("-final.png")]
    for name in keep:
        shutil.copy(os.path.join(shots, name), os.path.join(args.artifacts, name))
    if failed:
        log(f"screenshots kept in {args.artifacts}")
    shutil.rmtree(scratch, ignore_errors=True)
    return status or (1 if failed else 0)


if __name__ == "__main__":
    sys.exit(main())
