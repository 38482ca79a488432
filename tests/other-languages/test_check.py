"""`jfgui-agent check --mutate` against the C counter and against Tk Notes (a real Tkinter window
under Xvfb, on the installed jfgui-host package), through the real daemon and CLI: both keep
every contract the checks probe (no FAIL; WARNs allowed)."""

from __future__ import annotations

import sys
from typing import Any

from conftest import REPO, World, binary


def assert_passes_check(world: World, slug: str) -> dict[str, Any]:
    result = world.agent("check", slug, "--mutate", "--json")
    report: dict[str, Any] = result.json()
    failed = [f for f in report["findings"] if f["level"] == "FAIL"]
    assert result.code == 0 and report["passed"] and not failed, (failed, result.stderr)
    ran = {f["check"] for f in report["findings"]}
    assert {"lint", "inspect", "read", "stale_write", "invalid_write", "valid_write", "atomic_batch"} <= ran, ran
    return report


def test_the_c_counter_passes_check(world: World) -> None:
    world.start_daemon()
    world.start([str(binary("c-counter")), "--agent-enable"], "c-counter")
    world.wait_enabled("c-counter")
    report = assert_passes_check(world, "c-counter")
    valid = [f for f in report["findings"] if f["check"] == "valid_write" and f["level"] == "PASS"]
    assert {f["action"] for f in valid} == {"counter.add", "counter.undo"}, report


def test_tk_notes_pass_check(world: World, display: str) -> None:
    world.start_daemon()
    notes = REPO / "examples" / "tk-notes" / "notes.py"
    app = world.start([sys.executable, str(notes), "--agent-enable"], "tk-notes", env=dict(world.env, DISPLAY=display))
    world.wait_enabled("tk-notes")
    report = assert_passes_check(world, "tk-notes")
    moved = [f for f in report["findings"] if f["check"] == "valid_write" and f["level"] == "PASS"]
    assert moved, report
    assert app.poll() is None, world.log("tk-notes")
