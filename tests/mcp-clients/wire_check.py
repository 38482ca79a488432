#!/usr/bin/env python3
"""Drives `jfgui-agent stdio notepad --protocol mcp` (or, with `--all-apps`, `jfgui-agent mcp`
in front of the same single Notepad) with raw lines no SDK would send, and checks the answers
against the wire rules of docs/PROTOCOL.md and the official MCP schemas (schema_check.py):

- an error whose id cannot be read has no `id` member (never `"id": null`), whether the line
  is garbage, an array, over-long, or sent before the connection chose MCP;
- a request whose id is not a string or an integer (null, 1.5, an object, an array, a bool)
  gets -32600 with the id not echoed;
- a tool's refused arguments are an `isError` result with class `invalid_params`; an unknown
  tool is a -32602 error; a modern request naming an unknown revision gets -32022;
- `server/discover` lists the same two revisions as -32022; an `initialize` in the modern form
  (the envelope, no params.protocolVersion) is -32601;
- all-apps: `app` may be omitted with one app, an unknown `app` is an `isError` result
  `not_found/app` listing the apps there are (data.apps), a non-string `app` is refused; its
  `tools/list` line is at most 12 KiB in both revisions; `resources/*` is -32601 naming
  jfgui_resources_read;
- all-apps with no daemon (a runtime dir nothing listens in): the session works, a tool call
  is `isError` `not_executed/daemon_unavailable` naming that dir and JFGUI_RUNTIME_DIR, and
  the gateway says so once on stderr.

Started by driver.py like the SDK checks: the gateway gets only the SDK default environment
(through record.py). Prints PASS/FAIL lines and "N passed, M failed"; exits 1 on any failure.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import queue

import schema_check

TIMEOUT_S = 30
# The all-apps tools/list budget (what a model pays per session before it does anything).
MAX_TOOLS_LIST_BYTES = 12 * 1024
SDK_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "wire-check", "version": "1"},
}
INIT_PARAMS = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "wire-check", "version": "1"}}


class Gateway:
    def __init__(self, gateway: list, extra_env: dict = None) -> None:
        command = [
            os.environ["JFGUI_PYTHON"],
            os.environ["JFGUI_RECORDER"],
            os.environ["JFGUI_RECORD_DIR"],
            os.environ["JFGUI_AGENT"],
            *gateway,
        ]
        # What the official SDKs pass to a server by default, and nothing else.
        env = {k: os.environ[k] for k in SDK_ENV if k in os.environ}
        # Only the no-daemon check adds to it (XDG_RUNTIME_DIR, to look somewhere empty): that
        # gateway is started directly (driver.py holds recorded ones to the SDK environment;
        # this session validates its lines itself) and its stderr is kept to read.
        env.update(extra_env or {})
        if extra_env:
            command = command[3:]
        stderr = subprocess.PIPE if extra_env else None
        self.proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
        self.lines = queue.Queue()
        self.session = schema_check.Session(schema_check.Schemas())
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line.decode("utf-8", "replace"))
        self.lines.put(None)

    def send(self, line: str) -> None:
        self.session.sent(line)
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def ask(self, line: str):
        return json.loads(self.ask_raw(line))

    def ask_raw(self, line: str) -> str:
        self.send(line)
        answer = self.lines.get(timeout=TIMEOUT_S)
        if answer is None:
            raise RuntimeError("the gateway closed stdout")
        self.session.received(answer)
        return answer

    def finish(self) -> int:
        self.proc.stdin.close()
        return self.proc.wait(timeout=TIMEOUT_S)


class Checks:
    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def check(self, name: str, condition: bool, detail: object = "") -> None:
        if condition:
            self.passed += 1
            print(f"PASS [wire] {name}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL [wire] {name}: {detail}", flush=True)


def request(id_token: str, method: str, params: dict) -> str:
    return f'{{"jsonrpc":"2.0","id":{id_token},"method":"{method}","params":{json.dumps(params)}}}'


def idless_error(r, code: int) -> bool:
    return isinstance(r, dict) and "id" not in r and r.get("error", {}).get("code") == code


def tool_error_class(r) -> str:
    result = r.get("result", {}) if isinstance(r, dict) else {}
    if result.get("isError") is not True:
        return ""
    return result.get("structuredContent", {}).get("error", {}).get("class", "")


def run(g: Gateway, c: Checks, all_apps: bool) -> None:
    # Before the connection chose MCP: the gateway still answers MCP-style.
    r = g.ask("this is not json")
    c.check("garbage before MCP is chosen: -32700 without id", idless_error(r, -32700), r)
    r = g.ask(request("null", "initialize", INIT_PARAMS))
    c.check("initialize with a null id: -32600 without id", idless_error(r, -32600), r)
    r = g.ask(request("1", "initialize", INIT_PARAMS))
    c.check("initialize answers 2025-11-25", r.get("result", {}).get("protocolVersion") == "2025-11-25", r)
    g.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')

    r = g.ask("{bad json")
    c.check("garbage after initialize: -32700 without id", idless_error(r, -32700), r)
    r = g.ask("[1,2]")
    c.check("an array: -32600 without id", idless_error(r, -32600), r)
    for token in ("null", "1.5", "{}", "[1]", "true"):
        r = g.ask(request(token, "tools/list", {}))
        c.check(f"legacy request id {token}: -32600, id not echoed", idless_error(r, -32600), r)
        r = g.ask(request(token, "tools/list", {"_meta": META}))
        c.check(f"modern request id {token}: -32600, id not echoed", idless_error(r, -32600), r)
    r = g.ask(request('"s-1"', "tools/list", {}))
    tools = 10 if all_apps else 9
    c.check("a string id is served and echoed", r.get("id") == "s-1" and len(r.get("result", {}).get("tools", [])) == tools, r)

    refusals = [
        ("search limit 0", "jfgui_actions_search", {"limit": 0}),
        ("search with a bad cursor", "jfgui_actions_search", {"cursor": "not-a-cursor"}),
        ("describe without action", "jfgui_actions_describe", {}),
        ("batch of no calls", "jfgui_actions_batch", {"calls": []}),
    ]
    for i, (name, tool, arguments) in enumerate(refusals):
        params = {"name": tool, "arguments": arguments}
        r = g.ask(request(str(10 + i), "tools/call", params))
        c.check(f"legacy {name}: isError, class invalid_params", tool_error_class(r) == "invalid_params", r)
        r = g.ask(request(str(20 + i), "tools/call", dict(params, _meta=META)))
        c.check(f"modern {name}: isError, class invalid_params", tool_error_class(r) == "invalid_params", r)
    r = g.ask(request("30", "tools/call", {"name": "jfgui_nope", "arguments": {}}))
    c.check("an unknown tool is a -32602 error", r.get("id") == 30 and r.get("error", {}).get("code") == -32602, r)
    bad_version = dict(META, **{"io.modelcontextprotocol/protocolVersion": "1999-01-01"})
    r = g.ask(request("31", "tools/list", {"_meta": bad_version}))
    data = r.get("error", {}).get("data", {})
    c.check("an unknown revision is -32022 naming both served", r.get("error", {}).get("code") == -32022 and data.get("supported") == ["2026-07-28", "2025-11-25"], r)
    r = g.ask(request("33", "server/discover", {"_meta": META}))
    c.check(
        "server/discover lists the two revisions -32022 names",
        r.get("result", {}).get("supportedVersions") == ["2026-07-28", "2025-11-25"],
        r,
    )
    r = g.ask(request("34", "initialize", {"_meta": META}))
    c.check("an initialize in the modern form is -32601", r.get("id") == 34 and r.get("error", {}).get("code") == -32601, r)
    r = g.ask("x" * (1024 * 1024 + 1))
    c.check("an over-long line: -32600 too_large without id", idless_error(r, -32600) and r["error"].get("data", {}).get("reason") == "too_large", r)
    if all_apps:
        app_checks(g, c)
    r = g.ask(request("32", "ping", {}))
    c.check("the session is intact", r.get("id") == 32 and r.get("result") == {}, r)


def app_checks(g: Gateway, c: Checks) -> None:
    """The `app` argument of the all-apps server, with exactly one app (Notepad) enabled."""
    for era, extra in (("legacy", {}), ("modern", {"_meta": META})):
        line = g.ask_raw(request("39", "tools/list", extra))
        size = len(line.rstrip("\n").encode())
        print(f"[tools/list] {era}: {size} bytes on the wire", flush=True)
        c.check(f"{era}: the tools/list line is at most {MAX_TOOLS_LIST_BYTES} bytes", size <= MAX_TOOLS_LIST_BYTES, size)
        r = g.ask(request("38", "resources/list", extra))
        error = r.get("error", {})
        c.check(
            f"{era}: resources/list is -32601 saying the all-apps server has none and naming jfgui_resources_read",
            error.get("code") == -32601 and "all-apps server" in error.get("message", "") and "jfgui_resources_read" in error.get("message", ""),
            r,
        )
        r = g.ask(request("40", "tools/call", dict(extra, name="jfgui_state_inspect", arguments={})))
        c.check(f"{era}: `app` may be omitted with one app", r.get("result", {}).get("isError") is False, r)
        r = g.ask(request("41", "tools/call", dict(extra, name="jfgui_state_inspect", arguments={"app": "no-such-app"})))
        error = r.get("result", {}).get("structuredContent", {}).get("error", {})
        c.check(
            f"{era}: an unknown app is isError not_found/app listing the apps there are",
            tool_error_class(r) == "not_found"
            and error.get("reason") == "app"
            and error.get("data", {}).get("apps") == [{"app": "notepad", "displayName": "Notepad"}],
            r,
        )
        r = g.ask(request("42", "tools/call", dict(extra, name="jfgui_tasks_get", arguments={"app": 5, "id": "t"})))
        c.check(f"{era}: a non-string app is isError invalid_params", tool_error_class(r) == "invalid_params", r)
        r = g.ask(request("43", "tools/call", dict(extra, name="jfgui_apps_list", arguments={})))
        apps = r.get("result", {}).get("structuredContent", {}).get("apps", [])
        c.check(f"{era}: jfgui_apps_list lists Notepad", [a.get("app") for a in apps] == ["notepad"], r)


def no_daemon(c: Checks) -> None:
    """`jfgui-agent mcp` looking in a runtime dir where no daemon listens."""
    with tempfile.TemporaryDirectory() as xdg:
        os.chmod(xdg, 0o700)
        runtime = os.path.join(xdg, "jfgui-agent")
        g = Gateway(["mcp"], {"XDG_RUNTIME_DIR": xdg})
        r = g.ask(request("1", "initialize", INIT_PARAMS))
        c.check("no daemon: initialize is still answered", r.get("result", {}).get("protocolVersion") == "2025-11-25", r)
        g.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for era, extra in (("legacy", {}), ("modern", {"_meta": META})):
            r = g.ask(request("2", "tools/call", dict(extra, name="jfgui_apps_list", arguments={})))
            error = r.get("result", {}).get("structuredContent", {}).get("error", {})
            message = error.get("message", "")
            c.check(
                f"no daemon, {era}: isError not_executed/daemon_unavailable naming {runtime} and JFGUI_RUNTIME_DIR",
                tool_error_class(r) == "not_executed"
                and error.get("reason") == "daemon_unavailable"
                and f"nothing listens in {runtime}" in message
                and "JFGUI_RUNTIME_DIR" in message,
                r,
            )
        status = g.finish()
        stderr = g.proc.stderr.read().decode("utf-8", "replace")
        c.check("no daemon: stdin EOF still ends the gateway with status 0", status == 0, status)
        c.check(
            "no daemon: the gateway says where it looked once on stderr",
            stderr.count(f"nothing listens in {runtime}") == 1,
            stderr,
        )
        for problem in g.session.problems:
            c.check("no daemon: every line validates against the official schema", False, problem)
        c.check(f"no daemon: {g.session.checked} lines validated against the official schemas", g.session.checked > 0 and not g.session.problems)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all-apps", action="store_true", help="through `jfgui-agent mcp` instead of `stdio notepad`")
    args = parser.parse_args()
    checks = Checks()
    try:
        gateway = Gateway(["mcp"] if args.all_apps else ["stdio", "notepad", "--protocol", "mcp"])
        try:
            run(gateway, checks, args.all_apps)
        finally:
            status = gateway.finish()
        checks.check("stdin EOF ends the gateway with status 0", status == 0, status)
        for problem in gateway.session.problems:
            checks.check("every line validates against the official schema", False, problem)
        checks.check(f"{gateway.session.checked} lines validated against the official schemas", not gateway.session.problems)
        if args.all_apps:
            no_daemon(checks)
    except Exception as e:  # a crash is a failure with its reason, never a silent pass
        checks.check("session ran to the end", False, f"{type(e).__name__}: {e}")
    print(f"wire: {checks.passed} passed, {checks.failed} failed", flush=True)
    return 0 if checks.failed == 0 and checks.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
