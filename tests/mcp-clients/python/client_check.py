#!/usr/bin/env python3
"""Drives Notepad through `jfgui-agent stdio notepad --protocol mcp` with the official Python
MCP SDK (PyPI `mcp`, version pinned in requirements.txt).

    client_check.py --mode auto     # discover probe -> 2026-07-28
    client_check.py --mode legacy   # initialize handshake -> 2025-11-25
    client_check.py --mode auto --slug web-notepad   # another app with Notepad's actions
    client_check.py --mode auto --bridge-url http://127.0.0.1:PORT --token-file F
                                    # through `jfgui-agent browser-stdio` instead of `stdio SLUG`
    client_check.py --mode legacy --all-apps "Notes A,Notes B"
                                    # `jfgui-agent mcp` with these Notepads; restarts an app and
                                    # the daemon mid-session through driver.py's JFGUI_CONTROL

Needs JFGUI_AGENT (the gateway binary), JFGUI_PYTHON, JFGUI_RECORDER and JFGUI_RECORD_DIR in
the environment (driver.py sets them). The gateway is started as the SDK starts servers by
default, without an `env`: it gets only the SDK's default variables and finds the daemon through
/run/user/UID; record.py sits in between and records the session for driver.py. Prints one
PASS/FAIL line per check and a final "N passed, M failed" line; exits 1 on any failure.
"""

import argparse
import asyncio
import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version as package_version

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

NINE_TOOLS = {
    "jfgui_actions_search",
    "jfgui_actions_describe",
    "jfgui_actions_execute",
    "jfgui_actions_batch",
    "jfgui_state_inspect",
    "jfgui_tasks_get",
    "jfgui_tasks_cancel",
    "jfgui_resources_read",
    "jfgui_view_render",
}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EXPECTED_VERSION = {"auto": "2026-07-28", "legacy": "2025-11-25"}


class Checks:
    def __init__(self, label: str) -> None:
        self.label = label
        self.passed = 0
        self.failed = 0

    def check(self, name: str, condition: bool, detail: object = "") -> bool:
        if condition:
            self.passed += 1
            print(f"PASS [{self.label}] {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL [{self.label}] {name}: {detail}", flush=True)
        return condition


# The all-apps tools/list budget (what a model pays per session before it does anything).
MAX_TOOLS_LIST_BYTES = 12 * 1024


def structured(result) -> dict:
    return result.structured_content or {}


def text_of(result) -> str:
    return " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def call(client: Client, name: str, arguments: dict):
    return await client.call_tool(name, arguments)


def images_of(result) -> list:
    return [c for c in result.content if getattr(c, "type", "") == "image"]


def cli_render(slug: str) -> bytes:
    """The PNG `jfgui-agent render SLUG -o FILE` saves (the CLI, not MCP)."""
    with tempfile.TemporaryDirectory() as scratch:
        path = os.path.join(scratch, "view.png")
        subprocess.run([os.environ["JFGUI_AGENT"], "render", slug, "-o", path], check=True, stdin=subprocess.DEVNULL, capture_output=True)
        with open(path, "rb") as f:
            return f.read()


async def wait_task(client: Client, task_id: str, final: str, arguments: dict) -> dict:
    """Polls jfgui_tasks_get until the task reaches `final` (or 30 s pass); the last task."""
    deadline = time.monotonic() + 30
    task = {}
    while time.monotonic() < deadline:
        r = await call(client, "jfgui_tasks_get", dict(arguments, id=task_id))
        task = structured(r).get("task", {})
        if task.get("state") == final:
            break
        await asyncio.sleep(0.1)
    return task


async def inspect(client: Client) -> tuple[int, dict]:
    r = await call(client, "jfgui_state_inspect", {})
    sc = structured(r)
    return sc["revision"], sc["state"]


async def run(mode: str, gateway: list[str], app_slug: str, checks: Checks) -> None:
    # No `env`: the SDK's default, exactly what a user's MCP client configuration gives.
    params = StdioServerParameters(
        command=os.environ["JFGUI_PYTHON"],
        args=[
            os.environ["JFGUI_RECORDER"],
            os.environ["JFGUI_RECORD_DIR"],
            os.environ["JFGUI_AGENT"],
            *gateway,
        ],
    )
    async with Client(params, mode=mode, read_timeout_seconds=30) as client:
        checks.check("negotiated revision", client.protocol_version == EXPECTED_VERSION[mode], client.protocol_version)
        caps = client.server_capabilities
        checks.check("tools and resources advertised", caps.tools is not None and caps.resources is not None, caps)

        tools = (await client.list_tools()).tools
        names = {t.name for t in tools}
        checks.check("lists the nine tools", names == NINE_TOOLS, sorted(names))
        checks.check("every tool has input and output schemas", all(t.input_schema and t.output_schema for t in tools))

        r = await call(client, "jfgui_actions_search", {"query": "text"})
        found = [a["name"] for a in structured(r).get("actions", [])]
        checks.check("search finds document.text.insert", "document.text.insert" in found, found)
        checks.check("search result text is its structured content", json.loads(r.content[0].text) == structured(r))

        r = await call(client, "jfgui_actions_describe", {"action": "document.text.insert"})
        action = structured(r).get("action", {})
        checks.check("describe returns the input schema", action.get("inputSchema", {}).get("type") == "object", action)

        revision, state = await inspect(client)
        r = await call(
            client,
            "jfgui_actions_execute",
            {"action": "document.text.insert", "input": {"text": "Hello from Python. "}, "expectedRevision": revision},
        )
        new_revision = structured(r).get("revision")
        checks.check("write with the right revision succeeds", not r.is_error and new_revision == revision + 1, r)

        r = await call(
            client,
            "jfgui_actions_execute",
            {"action": "document.text.insert", "input": {"text": "stale"}, "expectedRevision": revision},
        )
        error = structured(r).get("error", {})
        checks.check(
            "write with a stale revision is an isError result",
            r.is_error and error.get("reason") == "stale_revision" and error.get("class") == "not_executed",
            r,
        )
        checks.check(
            "the stale error names the current revision",
            error.get("data", {}).get("currentRevision") == new_revision and f"expectedRevision {new_revision}" in text_of(r),
            text_of(r),
        )

        before_revision, before_state = await inspect(client)
        r = await call(
            client,
            "jfgui_actions_batch",
            {
                "atomic": True,
                "calls": [
                    {"action": "document.text.insert", "input": {"text": "lost"}, "expectedRevision": before_revision},
                    {
                        "action": "document.text.replace",
                        "input": {"start": 0, "end": 1_000_000, "text": "x"},
                        "expectedRevision": before_revision,
                    },
                ],
            },
        )
        error = structured(r).get("error", {})
        checks.check(
            "a failing atomic batch is an isError result naming call 1",
            r.is_error and error.get("data", {}).get("index") == 1,
            r,
        )
        after_revision, after_state = await inspect(client)
        checks.check(
            "the document is unchanged after the failed batch",
            (after_revision, after_state.get("text")) == (before_revision, before_state.get("text")),
            (before_revision, after_revision, after_state),
        )

        r = await call(client, "jfgui_actions_execute", {"action": "document.export", "expectedRevision": after_revision})
        task = structured(r).get("task", {})
        checks.check("export starts a task", not r.is_error and task.get("state") == "running", r)
        r = await call(client, "jfgui_tasks_cancel", {"id": task.get("id", "")})
        cancel_state = structured(r).get("task", {}).get("state")
        checks.check("cancel moves the task to cancelling", cancel_state in ("cancelling", "cancelled"), r)
        deadline = time.monotonic() + 20
        state = cancel_state
        while state != "cancelled" and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            r = await call(client, "jfgui_tasks_get", {"id": task.get("id", "")})
            state = structured(r).get("task", {}).get("state")
        checks.check("the export task ends cancelled", state == "cancelled", r)

        r = await call(client, "jfgui_actions_execute", {"action": "document.export", "expectedRevision": after_revision})
        task = await wait_task(client, structured(r).get("task", {}).get("id", ""), "completed", {})
        export_uri = task.get("result", {}).get("uri", "")
        r = await call(client, "jfgui_resources_read", {"uri": export_uri})
        texts = [c.text for c in r.content[1:] if getattr(c, "type", "") == "text"]
        checks.check(
            "a text export is read as text (and as base64 in structuredContent)",
            not r.is_error
            and texts == [after_state.get("text")]
            and base64.b64decode(structured(r).get("data", "")).decode() == after_state.get("text"),
            r,
        )

        r = await call(client, "jfgui_view_render", {})
        rendered = r
        output = structured(r).get("output", {})
        uri = output.get("uri", "")
        checks.check("render names a PNG resource", uri == "render://view.png" and output.get("mimeType") == "image/png", r)
        # At least four chunks, whatever the PNG's size.
        limit = max(1, min(65536, int(output.get("size", 0)) // 4))
        data, offset, total, eof, chunks = b"", 0, None, False, 0
        while not eof and chunks < 10_000:
            r = await call(client, "jfgui_resources_read", {"uri": uri, "offset": offset, "limit": limit})
            sc = structured(r)
            if r.is_error:
                break
            chunk = base64.b64decode(sc["data"])
            data += chunk
            offset += len(chunk)
            total, eof, chunks = sc["totalSize"], sc["eof"], chunks + 1
        checks.check("chunked read reaches eof in several chunks", eof and chunks >= 4, (eof, chunks, limit))
        checks.check("PNG signature", data[:8] == PNG_SIGNATURE, data[:8])
        checks.check("PNG size matches totalSize and the render", len(data) == total == output.get("size"), (len(data), total, output))
        images = images_of(rendered)
        checks.check("the render result carries the image", len(images) == 1 and images[0].mime_type == "image/png", rendered.content)
        shown = base64.b64decode(images[0].data) if images else b""
        saved = cli_render(app_slug)
        checks.check("the image is the PNG jfgui-agent render saves", shown == saved == data, (len(shown), len(saved), len(data)))

        listed = [str(res.uri) for res in (await client.list_resources()).resources]
        checks.check("resources/list names the PNG", "render://view.png" in listed, listed)
        whole = await client.read_resource("render://view.png")
        blob = base64.b64decode(whole.contents[0].blob) if hasattr(whole.contents[0], "blob") else b""
        checks.check("resources/read returns the same PNG whole", blob == data, (len(blob), len(data)))

        try:
            await call(client, "jfgui_no_such_tool", {})
            checks.check("an unknown tool is a protocol error", False, "no error raised")
        except MCPError as e:
            checks.check("an unknown tool is a protocol error", e.error.code == -32602, e.error)


async def control(line: str) -> None:
    """One command to driver.py's control socket; raises unless it answers ok."""
    reader, writer = await asyncio.open_unix_connection(os.environ["JFGUI_CONTROL"])
    writer.write(line.encode() + b"\n")
    await writer.drain()
    answer = (await reader.readline()).decode().strip()
    writer.close()
    if answer != "ok":
        raise RuntimeError(f"driver control {line!r}: {answer}")


def slug(name: str) -> str:
    return "-".join(name.lower().split())


async def quick_start(client: Client, display_name: str, checks: Checks) -> None:
    """The quick-start task as a model does it, counting tool calls and result bytes: insert a
    greeting into the app `display_name` after jfgui_apps_list, in at most three calls."""
    transcript = []

    async def counted(name: str, arguments: dict):
        r = await call(client, name, arguments)
        size = len(r.model_dump_json(by_alias=True, exclude_none=True))
        transcript.append(f"{len(transcript) + 1}. {name} {json.dumps(arguments)} -> {size} bytes")
        return r

    r = await counted("jfgui_apps_list", {})
    app = next(a["app"] for a in structured(r)["apps"] if a["displayName"] == display_name)
    r = await counted("jfgui_actions_search", {"app": app, "query": "insert", "describe": True})
    action = next(a for a in structured(r)["actions"] if "text" in a.get("inputSchema", {}).get("properties", {}))
    r = await counted("jfgui_state_inspect", {"app": app})
    revision, before = structured(r)["revision"], structured(r)["state"]["text"]
    greeting = "Hello, world! "
    r = await counted(
        "jfgui_actions_execute",
        {"app": app, "action": action["name"], "input": {"text": greeting}, "expectedRevision": revision},
    )
    r_after = await call(client, "jfgui_state_inspect", {"app": app})
    after = structured(r_after)["state"]["text"]
    for line in transcript:
        print(f"[quick-start] {line}", flush=True)
    print(f"[quick-start] {len(transcript) - 1} calls after jfgui_apps_list", flush=True)
    checks.check(
        "quick start: the greeting is inserted in 3 calls after jfgui_apps_list",
        not r.is_error and len(transcript) - 1 <= 3 and greeting in after and len(after) == len(before) + len(greeting),
        transcript,
    )


async def disabled_app(client: Client, display_name: str, checks: Checks) -> None:
    """An app with agent access off: listed with `enabled: false` and what to tell the user,
    never its actions; a call to it is not_executed/app_disabled saying so."""
    r = await call(client, "jfgui_apps_list", {})
    entry = next((a for a in structured(r).get("apps", []) if a["displayName"] == display_name), {})
    checks.check(
        "an app with agent access off is listed as enabled: false with a hint, without its actions",
        entry.get("enabled") is False and "Agent access" in entry.get("hint", "") and "actionCount" not in entry,
        entry,
    )
    r = await call(client, "jfgui_actions_search", {"app": slug(display_name)})
    error = structured(r).get("error", {})
    checks.check(
        "a call to it is isError not_executed/app_disabled with the words for the user",
        r.is_error
        and (error.get("class"), error.get("reason")) == ("not_executed", "app_disabled")
        and "Agent access" in error.get("message", "")
        and "actions" not in structured(r),
        r,
    )


async def run_all_apps(mode: str, names: list[str], checks: Checks) -> None:
    """`jfgui-agent mcp`: the app list, a call to each app, an app restarted and the daemon
    restarted under one client session that is never restarted."""
    params = StdioServerParameters(
        command=os.environ["JFGUI_PYTHON"],
        args=[os.environ["JFGUI_RECORDER"], os.environ["JFGUI_RECORD_DIR"], os.environ["JFGUI_AGENT"], "mcp"],
    )
    first, second = names
    async with Client(params, mode=mode, read_timeout_seconds=30) as client:
        checks.check("negotiated revision", client.protocol_version == EXPECTED_VERSION[mode], client.protocol_version)
        tools = (await client.list_tools()).tools
        names_listed = {t.name for t in tools}
        checks.check("lists jfgui_apps_list and the nine tools", names_listed == NINE_TOOLS | {"jfgui_apps_list"}, sorted(names_listed))
        checks.check(
            "the nine tools take `app`",
            all("app" in t.input_schema.get("properties", {}) for t in tools if t.name in NINE_TOOLS),
        )

        listed_bytes = len(json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools], separators=(",", ":")))
        print(f"[tools/list] {len(tools)} tools, {listed_bytes} bytes of tool definitions", flush=True)
        checks.check(f"tools/list within {MAX_TOOLS_LIST_BYTES} bytes", listed_bytes <= MAX_TOOLS_LIST_BYTES, listed_bytes)

        async def apps() -> dict:
            r = await call(client, "jfgui_apps_list", {})
            return {a["app"]: a["displayName"] for a in structured(r).get("apps", []) if a.get("enabled")}

        listed = await apps()
        checks.check("jfgui_apps_list lists both apps", listed == {slug(n): n for n in names}, listed)
        for name in names:
            r = await call(client, "jfgui_state_inspect", {"app": slug(name)})
            checks.check(f"a call reaches {name}", structured(r).get("state", {}).get("text") == f"text of {name}", r)
        r = await call(client, "jfgui_state_inspect", {"app": first})
        revision = structured(r).get("revision")
        r = await call(
            client,
            "jfgui_actions_execute",
            {"app": first, "action": "document.text.insert", "input": {"text": " edited"}, "expectedRevision": revision},
        )
        checks.check(f"a write to {first} by display name", not r.is_error and structured(r).get("revision") == revision + 1, r)

        await quick_start(client, first, checks)
        await disabled_app(client, os.environ["JFGUI_DISABLED_APP"], checks)

        await control(f"kill-app {second}")
        r = await call(client, "jfgui_state_inspect", {"app": slug(second)})
        error = structured(r).get("error", {})
        checks.check(
            "an app that left is not_found/app listing the others",
            r.is_error
            and (error.get("class"), error.get("reason")) == ("not_found", "app")
            and error.get("data", {}).get("apps") == [{"app": slug(first), "displayName": first}],
            r,
        )
        await control(f"start-app {second}")
        r = await call(client, "jfgui_state_inspect", {"app": slug(second)})
        checks.check("the restarted app is reached by the same value", not r.is_error and structured(r).get("state", {}).get("text") == f"text of {second}", r)

        await control("stop-daemon")
        r = await call(client, "jfgui_state_inspect", {"app": slug(first)})
        error = structured(r).get("error", {})
        checks.check(
            "while the daemon is away: isError not_executed/daemon_unavailable",
            r.is_error and (error.get("class"), error.get("reason")) == ("not_executed", "daemon_unavailable"),
            r,
        )
        runtime = f"/run/user/{os.getuid()}/jfgui-agent"
        message = error.get("message", "")
        checks.check(
            "it names the runtime dir looked in and the setting that points elsewhere",
            f"nothing listens in {runtime}" in message and "JFGUI_RUNTIME_DIR" in message,
            message,
        )
        await control("start-daemon")
        r = await call(client, "jfgui_state_inspect", {"app": slug(first)})
        checks.check(
            "after the daemon restarted and the apps re-registered, the next call succeeds",
            not r.is_error and " edited" in structured(r).get("state", {}).get("text", ""),
            r,
        )
        listed = await apps()
        checks.check("both apps are listed again", listed == {slug(n): n for n in names}, listed)


def reason(e: BaseException) -> str:
    """An exception and, for a group (the SDK's task groups), the ones inside it."""
    inner = getattr(e, "exceptions", None)
    if inner:
        return "; ".join(reason(x) for x in inner)
    return f"{type(e).__name__}: {e}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=sorted(EXPECTED_VERSION), required=True)
    parser.add_argument("--slug", default="notepad", help="the app's endpoint slug (default: notepad; with --bridge-url, the web app's, for `jfgui-agent render`)")
    parser.add_argument("--bridge-url", help="go through `jfgui-agent browser-stdio --url URL` instead of `stdio SLUG`")
    parser.add_argument("--token-file", help="the bridge's token file (with --bridge-url; the SDK passes no env)")
    parser.add_argument("--all-apps", help="comma-separated display names: drive them through `jfgui-agent mcp`")
    args = parser.parse_args()
    if args.all_apps:
        label = f"python mcp {package_version('mcp')} {EXPECTED_VERSION[args.mode]} mcp"
        checks = Checks(label)
        try:
            asyncio.run(asyncio.wait_for(run_all_apps(args.mode, args.all_apps.split(","), checks), timeout=180))
        except Exception as e:  # a crash is a failure with its reason, never a silent pass
            checks.check("session ran to the end", False, reason(e))
        print(f"{label}: {checks.passed} passed, {checks.failed} failed", flush=True)
        return 0 if checks.failed == 0 and checks.passed > 0 else 1
    if args.bridge_url:
        if not args.token_file:
            parser.error("--bridge-url needs --token-file")
        gateway = ["browser-stdio", "--url", args.bridge_url, "--token-file", args.token_file, "--protocol", "mcp"]
    else:
        gateway = ["stdio", args.slug, "--protocol", "mcp"]
    label = f"python mcp {package_version('mcp')} {EXPECTED_VERSION[args.mode]} {' '.join(gateway[:2])}"
    checks = Checks(label)
    try:
        asyncio.run(asyncio.wait_for(run(args.mode, gateway, args.slug, checks), timeout=120))
    except Exception as e:  # a crash is a failure with its reason, never a silent pass
        checks.check("session ran to the end", False, reason(e))
    print(f"{label}: {checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
