"""The C example (`examples/c-counter`, built by run.sh with its Makefile) through the real
daemon and gateway, driven by the official Python MCP SDK in both protocol revisions: the
contracts the Rust dispatcher enforces hold for C callbacks too."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from conftest import World, binary


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
        assert [a["name"] for a in found] == ["counter.get", "counter.add", "counter.undo"]
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
