"""The C example (`examples/c-counter`, built by run.sh with its Makefile) through the real
daemon and gateway, driven by the official Python MCP SDK in both protocol revisions: the
contracts the Rust dispatcher enforces hold for C callbacks too. Its `counter.reset` asks
through the `confirm` callback: on a terminal (a pseudo-terminal here) the user's typed answer
decides; without one it never runs."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import subprocess
import time
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from conftest import PATIENCE_S, World, binary, wait_for


def structured(result: Any) -> dict[str, Any]:
    content: dict[str, Any] = result.structured_content or {}
    return content


async def scenario(world: World, mode: str) -> None:
    params = StdioServerParameters(
        command=str(binary("jfgui-agent")),
        args=["stdio", "c-counter", "--protocol", "mcp"],
        env=world.env,
    )
    async with Client(params, mode=mode, read_timeout_seconds=30) as client:
        assert client.protocol_version == {"auto": "2026-07-28", "legacy": "2025-11-25"}[mode]

        async def tool(name: str, arguments: dict[str, Any]) -> Any:
            return await client.call_tool(name, arguments)

        async def state() -> dict[str, Any]:
            return structured(await tool("jfgui_state_inspect", {}))

        found = structured(await tool("jfgui_actions_search", {"query": "counter"}))["actions"]
        assert [a["name"] for a in found] == ["counter.get", "counter.add", "counter.undo", "counter.reset"]
        described = structured(await tool("jfgui_actions_describe", {"action": "counter.add"}))["action"]
        assert described["inputSchema"]["properties"]["by"] == {"type": "integer", "minimum": -1000, "maximum": 1000}

        before = await state()
        revision, value = before["revision"], before["state"]["value"]
        ok = await tool("jfgui_actions_execute", {"action": "counter.add", "input": {"by": 2}, "expectedRevision": revision})
        assert not ok.is_error and structured(ok) == {"output": {"value": value + 2}, "revision": revision + 1}
        after = await state()

        stale = await tool("jfgui_actions_execute", {"action": "counter.add", "input": {"by": 2}, "expectedRevision": revision})
        error = structured(stale)["error"]
        assert stale.is_error and (error["class"], error["reason"]) == ("not_executed", "stale_revision")
        assert error["data"]["currentRevision"] == revision + 1
        assert await state() == after, "a stale write has no side effects"

        failed = await tool("jfgui_actions_execute", {"action": "counter.add", "input": {"by": 1000}, "expectedRevision": revision + 1})
        error = structured(failed)["error"]
        assert failed.is_error and (error["reason"], error["data"]["code"]) == ("host_error", "out_of_range")

        calls = [
            {"action": "counter.add", "input": {"by": 1}, "expectedRevision": revision + 1},
            {"action": "counter.add", "input": {"by": 1000}, "expectedRevision": revision + 1},
        ]
        rolled = await tool("jfgui_actions_batch", {"calls": calls, "atomic": True})
        error = structured(rolled)["error"]
        assert rolled.is_error and (error["reason"], error["data"]["index"]) == ("rolled_back", 1)
        assert await state() == after, "the C rollback restored value and revision"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_the_official_mcp_client_drives_the_c_counter(world: World, mode: str) -> None:
    world.start_daemon()
    counter = world.start([str(binary("c-counter")), "--agent-enable"], "c-counter")
    world.wait_enabled("c-counter")
    assert "c-counter: running as C Counter, agent access on" in world.log("c-counter")
    asyncio.run(scenario(world, mode))
    assert world.stop(counter) == 0, world.log("c-counter")


def reset(world: World) -> subprocess.Popen[bytes]:
    """Calls counter.reset, which waits, connected, for the user's answer."""
    revision = world.agent("inspect", "c-counter").json()["revision"]
    return world.agent_waiting("call", "c-counter", "counter.reset", "--expected-revision", str(revision))


def ended(world: World, id: str) -> dict[str, Any]:
    task: dict[str, Any] = wait_for(
        lambda: (lambda t: t if t["state"] in ("completed", "failed") else None)(world.agent("tasks", "c-counter", "get", id, "--json").json()["task"]),
        f"task {id} to end",
    )
    return task


def add(world: World, by: int) -> None:
    revision = world.agent("inspect", "c-counter").json()["revision"]
    done = world.agent("call", "c-counter", "counter.add", "--input-json", f'{{"by":{by}}}', "--expected-revision", str(revision))
    assert done.code == 0, done


def test_reset_without_a_terminal_never_runs(world: World) -> None:
    world.start_daemon()
    world.start([str(binary("c-counter")), "--agent-enable"], "c-counter")
    world.wait_enabled("c-counter")
    add(world, 7)
    asked = world.finished(reset(world))
    assert asked.code == 1, asked
    task = asked.json()["task"]
    assert (task["error"]["reason"], task["consent"]) == ("no_confirmation_ui", {"answer": "no_ui"}), task
    assert world.agent("inspect", "c-counter").json()["state"]["value"] == 7


class Terminal:
    """c-counter with a pseudo-terminal as stdin, stdout and stderr."""

    def __init__(self, world: World) -> None:
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen([str(binary("c-counter")), "--agent-enable"], env=world.env, stdin=slave, stdout=slave, stderr=slave)
        world.procs.append((self.proc, "c-counter"))
        os.close(slave)
        self.screen = b""

    def wait_for(self, needle: str) -> None:
        deadline = time.monotonic() + PATIENCE_S
        while needle.encode() not in self.screen:
            assert time.monotonic() < deadline, f"no {needle!r} on the terminal: {self.screen!r}"
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                self.screen += os.read(self.master, 4096)

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())


def test_reset_asks_on_the_terminal_and_the_typed_answer_decides(world: World) -> None:
    world.start_daemon()
    terminal = Terminal(world)
    world.wait_enabled("c-counter")
    add(world, 7)
    asked = reset(world)
    id = "confirm-1"  # the app's first waiting call
    terminal.wait_for("wants to: Reset the counter")  # the agent the OS names: this test's python
    waiting = world.agent("tasks", "c-counter", "get", id, "--json").json()["task"]
    assert waiting.get("awaiting") == "confirmation", waiting
    assert world.agent("inspect", "c-counter").json()["state"]["value"] == 7, "nothing before the answer"
    terminal.type("n")
    assert world.finished(asked).code == 1
    task = ended(world, id)
    assert (task["error"]["reason"], task["consent"]) == ("denied_by_user", {"answer": "deny"}), task
    assert world.agent("inspect", "c-counter").json()["state"]["value"] == 7

    asked, id = reset(world), "confirm-2"
    terminal.wait_for("allow? [y]es once, [a]lways, [n]o > ")
    terminal.type("y")
    assert world.finished(asked).code == 0
    task = ended(world, id)
    assert (task["state"], task["consent"]) == ("completed", {"answer": "allow"}), task
    assert task["result"]["output"] == {"value": 0}, task
    state = world.agent("inspect", "c-counter").json()
    assert state["state"]["value"] == 0
    undone = world.agent("call", "c-counter", "counter.undo", "--expected-revision", str(state["revision"]))
    assert undone.code == 0 and world.agent("inspect", "c-counter").json()["state"]["value"] == 7, "one undo step"
