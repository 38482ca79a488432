"""The Tkinter example (`examples/tk-notes`) as a real window under Xvfb, on the installed
jfgui-host package: agent access stays off until the user ticks the box (an xdotool click), an
agent's edit appears in the Text widget (read back through the app's own state and seen in a
screenshot), and a user's keystroke (xdotool) moves the revision, so an agent's write based on
the older text is refused. An agent's `notes.clear` opens a Tk dialog and waits: the user's
Deny (the focused button, pressed with Space) leaves the text, Allow once clears it as one
undo step."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import REPO, Result, World, tool, wait_for

NOTES = REPO / "examples" / "tk-notes" / "notes.py"
AGENT_TEXT = "Hello from the agent"


def x(display: str, *args: str) -> str:
    """Runs an X client (xdotool, import) on `display`."""
    done = subprocess.run(list(args), env={"DISPLAY": display, "PATH": "/usr/bin:/bin"}, capture_output=True, timeout=30)
    assert done.returncode == 0, (args, done.stderr.decode())
    return done.stdout.decode()


def screenshot(display: str, path: Path) -> Path:
    x(display, tool("import"), "-window", "root", str(path))
    return path


def differing_pixels(a: Path, b: Path) -> int:
    # `compare -metric AE` prints the count on stderr and exits 1 when the images differ.
    done = subprocess.run([tool("compare"), "-metric", "AE", str(a), str(b), "null:"], capture_output=True, timeout=30)
    assert done.returncode in (0, 1), done.stderr.decode()
    return int(float(done.stderr.decode().split()[0]))


def call(world: World, action: str, input: dict[str, Any], expected: int) -> Result:
    return world.agent("call", "tk-notes", action, "--input-json", json.dumps(input), "--expected-revision", str(expected))


def test_tk_notes_under_xvfb(world: World, display: str) -> None:
    xdotool = tool("xdotool")
    world.start_daemon()
    app = world.start([sys.executable, str(NOTES)], "tk-notes", env=dict(world.env, DISPLAY=display))

    # Registered, but off until the user ticks "Let agents read and edit these notes".
    entry = world.wait_enabled("tk-notes", enabled=False)
    assert entry["endpoint"] is None and entry["actionCount"] == 5, entry
    assert world.agent("inspect", "tk-notes").code == 3, "no endpoint while agent access is off"
    window = x(display, xdotool, "search", "--sync", "--onlyvisible", "--name", "^Notes$").split()[0]
    # Laid out (Tk maps the window before its widgets have their size): then click the box.
    def laid_out() -> bool:
        geometry = x(display, xdotool, "getwindowgeometry", window)  # "... Geometry: 726x434"
        return int(geometry.split("Geometry: ")[1].split("x")[0]) > 200

    wait_for(laid_out, "the Notes window's layout")
    x(display, xdotool, "mousemove", "--window", window, "15", "12", "click", "1")
    world.wait_enabled("tk-notes")

    first = world.agent("inspect", "tk-notes").json()
    assert first["state"] == {"text": "", "length": 0}, first
    before = screenshot(display, world.scratch / "before.png")

    edited = call(world, "notes.replace", {"text": AGENT_TEXT}, first["revision"])
    assert edited.code == 0, edited
    assert edited.json()["revision"] == first["revision"] + 1
    # The app's own state is the Text widget's content.
    shown = world.agent("inspect", "tk-notes").json()
    assert shown["state"]["text"] == AGENT_TEXT and shown["revision"] == first["revision"] + 1, shown
    # ... and in the window: the text area's pixels change (Tk redraws when idle).
    after = world.scratch / "after.png"
    wait_for(lambda: differing_pixels(before, screenshot(display, after)) > 200, "the agent's text to be drawn")

    # The user types: the revision moves, and an agent write based on the old text is refused.
    x(display, xdotool, "windowfocus", "--sync", window)
    x(display, xdotool, "type", "--delay", "40", "XY")
    def typed_state() -> Any:
        state = world.agent("inspect", "tk-notes").json()
        return state if state["state"]["text"].endswith("XY") else None

    typed = wait_for(typed_state, "the keystrokes to reach the Text widget")
    assert typed["revision"] > shown["revision"], typed
    stale = call(world, "notes.replace", {"text": "overwrite"}, shown["revision"])
    assert stale.code == 1 and "stale_revision" in stale.stderr, stale
    assert world.agent("inspect", "tk-notes").json()["state"]["text"] == typed["state"]["text"]

    # The agent's undo takes back the user's typing (one step), then its own edit.
    undone = call(world, "notes.undo", {}, typed["revision"])
    assert undone.code == 0, undone
    assert world.agent("inspect", "tk-notes").json()["state"]["text"] == AGENT_TEXT
    revision = world.agent("inspect", "tk-notes").json()["revision"]
    assert call(world, "notes.undo", {}, revision).code == 0
    assert world.agent("inspect", "tk-notes").json()["state"]["text"] == ""

    ask_to_clear(world, display)
    assert app.poll() is None, world.log("tk-notes")


DIALOG = "^Notes: an agent asks$"


def ask_to_clear(world: World, display: str) -> None:
    xdotool = tool("xdotool")
    revision = world.agent("inspect", "tk-notes").json()["revision"]
    assert call(world, "notes.replace", {"text": "keep this"}, revision).code == 0
    revision += 1

    def dialogs() -> list[str]:
        found = subprocess.run([xdotool, "search", "--onlyvisible", "--name", DIALOG], env={"DISPLAY": display}, capture_output=True, timeout=30)
        return found.stdout.decode().split()

    def task(id: str) -> Any:
        return world.agent("tasks", "tk-notes", "get", id, "--json").json()["task"]

    for n, (answer, keys) in enumerate((("deny", ["space"]), ("allow", ["shift+Tab", "shift+Tab", "space"])), 1):
        before = screenshot(display, world.scratch / f"before-{answer}.png")
        # The call waits, connected, for the user's answer; its task is the app's n-th waiting call.
        asked = world.agent_waiting("call", "tk-notes", "notes.clear", "--input-json", "{}", "--expected-revision", str(revision))
        id = f"confirm-{n}"
        dialog = wait_for(dialogs, "the confirmation dialog")[0]
        waiting = task(id)
        assert (waiting["state"], waiting.get("awaiting")) == ("running", "confirmation"), waiting
        assert waiting["progress"]["message"] == "waiting for you to allow Clear the notes", waiting
        shown = world.scratch / f"dialog-{answer}.png"
        wait_for(lambda: differing_pixels(before, screenshot(display, shown)) > 2000, "the dialog to be drawn")
        assert world.agent("inspect", "tk-notes").json()["state"]["text"] == "keep this", "nothing before the answer"
        x(display, xdotool, "windowfocus", "--sync", dialog)
        for key in keys:
            x(display, xdotool, "key", key)
        assert world.finished(asked).code == (1 if answer == "deny" else 0)
        ended = wait_for(lambda: (lambda t: t if t["state"] in ("completed", "failed") else None)(task(id)), "the answer")
        assert ended["consent"] == {"answer": answer}, ended
        wait_for(lambda: not dialogs(), "the dialog to close")
        state = world.agent("inspect", "tk-notes").json()
        if answer == "deny":
            assert ended["error"]["reason"] == "denied_by_user", ended
            assert (state["state"]["text"], state["revision"]) == ("keep this", revision), state
        else:
            assert ended["result"]["revision"] == revision + 1, ended
            assert state["state"]["text"] == "", state
            assert call(world, "notes.undo", {}, revision + 1).code == 0
            assert world.agent("inspect", "tk-notes").json()["state"]["text"] == "keep this", "one undo step"
