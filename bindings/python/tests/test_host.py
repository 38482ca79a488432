"""The Host class over the real libjfgui_host, against a stand-in daemon (tests/standin.py):
every callback, the contracts the library enforces before Python runs, tasks, resources,
transactions, reentrancy and the asyncio pump."""

from __future__ import annotations

import asyncio
import base64
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional, Sequence

import pytest

from jfgui_host import (
    Deferred,
    Host,
    HostError,
    JfguiError,
    ResourceChunk,
    Status,
    TaskState,
    Unavailable,
    action,
    headless_requested,
)
from jfgui_host._native import LIBRARY_ENV, library_candidates, library_file_name
from jfgui_host.loops import AsyncioPump
from standin import StandIn, execute

APPEND_INPUT = {
    "type": "object",
    "properties": {"text": {"type": "string", "maxLength": 10}},
    "required": ["text"],
    "additionalProperties": False,
}


class Doc(Host):
    """A small document with every optional method overridden."""

    def __init__(self) -> None:
        super().__init__("Doc ✎")
        self.text = ""
        self._revision = 1
        self.log: list[Any] = []
        self.saved: Optional[tuple[str, int]] = None
        self.unavailable: Optional[Unavailable] = None
        self.raised: list[BaseException] = []

    def revision(self) -> int:
        return self._revision

    def availability(self, action: str) -> Optional[Unavailable]:
        return self.unavailable

    def inspect(self, input: Any) -> Any:
        return {"text": self.text, "asked": input}

    def supports_transaction(self, domain: str) -> bool:
        return domain == "doc"

    def begin_transaction(self, domains: Sequence[str]) -> None:
        self.saved = (self.text, self._revision)
        self.log.append(("begin", list(domains)))

    def commit_transaction(self) -> None:
        self.log.append("commit")

    def rollback_transaction(self) -> None:
        assert self.saved is not None
        self.text, self._revision = self.saved
        self.log.append("rollback")

    def resources(self) -> list[dict[str, Any]]:
        return [{"uri": "mem://text", "name": "text", "mimeType": "text/plain", "size": len(self.text.encode())}]

    def read_resource(self, uri: str, offset: int, limit: int) -> Optional[ResourceChunk]:
        if uri != "mem://text":
            return None
        data = self.text.encode()
        return ResourceChunk("text/plain", data[offset : offset + limit], len(data))

    def task_cancel_requested(self, task_id: str) -> None:
        self.log.append(("cancel", task_id))

    @action("doc.append", "Append text.", kind="write", undo=True, transaction="doc", input=APPEND_INPUT)
    def append(self, input: Any) -> Any:
        if input["text"] == "!":
            raise HostError("no_bang", "no exclamation marks")
        self.text += input["text"]
        self._revision += 1
        return {"length": len(self.text)}

    @action("doc.bug", "Raises a bug.", kind="read")
    def bug(self, input: Any) -> Any:
        raise RuntimeError("a bug in the app")

    @action("doc.export", "Deferred work.", kind="write")
    def export(self, input: Any) -> Any:
        return Deferred("export-1")

    @action("doc.reenter", "Calls back into its own handle.", kind="read")
    def reenter(self, input: Any) -> Any:
        try:
            self.set_enabled(False)
        except JfguiError as e:
            self.raised.append(e)
        return {}


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private, short runtime dir (socket paths have a length limit)."""
    scratch = Path(tempfile.mkdtemp(prefix="jfh-"))
    monkeypatch.setenv("JFGUI_RUNTIME_DIR", str(scratch / "rt"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    yield scratch / "rt"
    shutil.rmtree(scratch, ignore_errors=True)


@pytest.fixture
def connected(runtime: Path) -> Iterator[tuple[Doc, StandIn]]:
    """A Doc connected to a stand-in daemon, handshake done, still disabled."""
    stand_in = StandIn(runtime)
    doc = Doc()
    doc.connect()
    stand_in.accept(doc)
    yield doc, stand_in
    doc.close()
    stand_in.close()


def error_of(outcome: dict[str, Any]) -> dict[str, Any]:
    assert "error" in outcome, outcome
    error: dict[str, Any] = outcome["error"]
    return error


def test_registration_is_the_declared_one_and_starts_disabled(runtime: Path) -> None:
    stand_in = StandIn(runtime)
    with Doc() as doc:
        doc.connect()
        hello, actions = stand_in.accept(doc)
        assert (hello["displayName"], hello["enabled"]) == ("Doc ✎", False)
        assert [a["name"] for a in actions] == ["doc.append", "doc.bug", "doc.export", "doc.reenter"]
        append = actions[0]
        assert append["inputSchema"] == APPEND_INPUT
        assert (append["kind"], append["undo"], append["transaction"]) == ("write", True, "doc")
        assert actions[1]["inputSchema"] == {"type": "object", "properties": {}, "additionalProperties": False}
        assert doc.info().registered
        # Disabled: refused before Python runs.
        assert error_of(stand_in.request(doc, execute("doc.append", {"text": "a"}, 1)))["reason"] == "disabled"
        assert doc.text == ""
    stand_in.close()


def test_calls_are_checked_before_python_runs(connected: tuple[Doc, StandIn], capsys: pytest.CaptureFixture[str]) -> None:
    doc, s = connected
    doc.set_enabled(True)
    assert s.recv() == {"enabled": {"enabled": True}}
    ok = s.request(doc, execute("doc.append", {"text": "ab"}, 1))
    assert ok == {"ok": {"executed": {"output": {"length": 2}, "revision": 2}}}
    stale = error_of(s.request(doc, execute("doc.append", {"text": "c"}, 1)))
    assert (stale["reason"], stale["data"]["currentRevision"]) == ("stale_revision", 2)
    assert error_of(s.request(doc, execute("doc.append", {"text": "c"})))["reason"] == "revision_required"
    too_long = error_of(s.request(doc, execute("doc.append", {"text": "x" * 11}, 2)))
    assert (too_long["reason"], too_long["data"]["pointer"]) == ("schema_violation", "/text")
    assert doc.text == "ab", "nothing ran"
    failed = error_of(s.request(doc, execute("doc.append", {"text": "!"}, 2)))
    assert (failed["class"], failed["reason"], failed["data"]["code"]) == ("failed", "host_error", "no_bang")
    bug = error_of(s.request(doc, execute("doc.bug")))
    assert (bug["class"], bug["reason"]) == ("internal", "invalid_reply")
    assert "RuntimeError: a bug in the app" in capsys.readouterr().err
    doc.unavailable = Unavailable("modal_dialog_open", "a dialog is open")
    refused = error_of(s.request(doc, execute("doc.append", {"text": "c"}, 2)))
    assert (refused["reason"], refused["data"]["code"]) == ("unavailable", "modal_dialog_open")
    doc.unavailable = None
    inspected = s.request(doc, {"inspect": {"input": {"q": 1}}})
    assert inspected == {"ok": {"inspected": {"revision": 2, "state": {"text": "ab", "asked": {"q": 1}}}}}
    # Calling back into the handle from inside a callback is refused, not undefined.
    assert s.request(doc, execute("doc.reenter")) == {"ok": {"executed": {"output": {}, "revision": 2}}}
    assert [e.status for e in doc.raised] == [Status.REENTRANT]  # type: ignore[attr-defined]
    assert doc.info().enabled


def test_atomic_batches_roll_back_through_python(connected: tuple[Doc, StandIn]) -> None:
    doc, s = connected
    doc.set_enabled(True)
    s.recv()

    def batch(*texts: str) -> dict[str, Any]:
        calls = [{"action": "doc.append", "input": {"text": t}, "expectedRevision": 1} for t in texts]
        return s.request(doc, {"batch": {"calls": calls, "atomic": True, "stopOnError": True}})

    failed = error_of(batch("a", "b", "!"))
    assert (failed["reason"], failed["data"]["index"]) == ("rolled_back", 2)
    assert (doc.text, doc.revision()) == ("", 1)
    assert doc.log == [("begin", ["doc"]), "rollback"]
    done = batch("a", "b")
    assert done["ok"]["batch"]["revision"] == 3
    assert doc.log[-2:] == [("begin", ["doc"]), "commit"]
    assert doc.text == "ab"


def test_deferred_tasks(connected: tuple[Doc, StandIn]) -> None:
    doc, s = connected
    doc.set_enabled(True)
    s.recv()
    deferred = s.request(doc, execute("doc.export", expected=1))
    assert deferred == {"ok": {"deferred": {"task": {"id": "export-1", "state": "running"}, "revision": 1}}}
    assert doc.task_state("export-1") == TaskState.RUNNING
    doc.task_progress("export-1", 1, 4, "a quarter")
    assert s.recv() == {
        "task": {"id": "export-1", "state": "running", "progress": {"done": 1, "total": 4, "message": "a quarter"}}
    }
    cancelling = s.request(doc, {"cancelTask": {"id": "export-1"}})
    assert cancelling["ok"]["task"]["state"] == "cancelling"
    assert s.recv()["task"]["state"] == "cancelling", "every change is reported"
    assert doc.log == [("cancel", "export-1")], "the app is told"
    doc.pump()
    assert doc.log == [("cancel", "export-1")], "once"
    doc.task_cancelled("export-1")
    assert s.recv()["task"]["state"] == "cancelled"
    assert doc.task_state("export-1") == TaskState.CANCELLED
    assert doc.task_state("nope") == TaskState.UNKNOWN
    with pytest.raises(JfguiError) as finished:
        doc.task_complete("export-1", {"done": True})
    assert finished.value.status == Status.TASK
    assert "already finished" in finished.value.message


def test_resources(connected: tuple[Doc, StandIn]) -> None:
    doc, s = connected
    doc.set_enabled(True)
    s.recv()
    s.request(doc, execute("doc.append", {"text": "hello"}, 1))
    listed = s.request(doc, {"listResources": {}})
    assert listed == {
        "ok": {"resources": {"resources": [{"uri": "mem://text", "name": "text", "mimeType": "text/plain", "size": 5}]}}
    }
    chunk = s.request(doc, {"readResource": {"uri": "mem://text", "offset": 1, "limit": 3}})["ok"]["chunk"]
    assert (base64.b64decode(chunk["data"]), chunk["totalSize"], chunk["eof"]) == (b"ell", 5, False)
    missing = error_of(s.request(doc, {"readResource": {"uri": "mem://other", "offset": 0, "limit": 10}}))
    assert (missing["class"], missing["reason"]) == ("not_found", "resource")


def test_the_asyncio_pump_answers_without_explicit_pumping(connected: tuple[Doc, StandIn]) -> None:
    doc, s = connected
    doc.set_enabled(True)
    s.recv()

    async def scenario() -> dict[str, Any]:
        pump = AsyncioPump(doc)
        pump.pump()
        s.send({"request": {"id": 99, "call": execute("doc.append", {"text": "z"}, 1)}})
        assert s.conn is not None
        s.conn.setblocking(False)
        try:
            for _ in range(2000):
                try:
                    return s.recv()
                except BlockingIOError:
                    await asyncio.sleep(0.01)
            raise AssertionError("no reply: the pump never ran")
        finally:
            s.conn.setblocking(True)
            pump.stop()

    reply = asyncio.run(scenario())
    assert reply == {"reply": {"id": 99, "outcome": {"ok": {"executed": {"output": {"length": 1}, "revision": 2}}}}}


def test_library_errors_without_a_daemon(runtime: Path) -> None:
    with Doc() as doc:
        with pytest.raises(JfguiError) as e:
            doc.pump()
        assert e.value.status == Status.WRONG_STATE
        assert "not connected" in e.value.message
        doc.set_enabled(True)
        assert doc.info().enabled and not doc.info().connected
    with pytest.raises(JfguiError, match="closed"):
        doc.info()
    doc.close()  # twice is fine


def test_declarations_are_checked_like_a_rust_registration(runtime: Path) -> None:
    class Twice(Host):
        def revision(self) -> int:
            return 1

        @action("same", "One.", kind="read")
        def one(self, input: Any) -> Any:
            return {}

        @action("same", "Two.", kind="read")
        def two(self, input: Any) -> Any:
            return {}

    with pytest.raises(JfguiError) as duplicate:
        Twice("twice")
    assert duplicate.value.status == Status.INVALID_REGISTRATION
    assert duplicate.value.message == 'duplicate action name "same"'

    class Pattern(Host):
        def revision(self) -> int:
            return 1

        @action("p", "P.", kind="read", input={"type": "object", "properties": {"s": {"type": "string", "pattern": "x"}}})
        def p(self, input: Any) -> Any:
            return {}

    with pytest.raises(JfguiError, match=r"/0/inputSchema/properties/s/pattern: unsupported keyword"):
        Pattern("pattern")

    class RenderWrite(Host):
        def revision(self) -> int:
            return 1

        @action("ui.render", "Render.", kind="write")
        def render(self, input: Any) -> Any:
            return {}

    with pytest.raises(JfguiError, match="ui.render"):
        RenderWrite("render")

    class NoRevision(Host):
        pass

    with pytest.raises(TypeError, match="revision"):
        NoRevision("none")


def test_library_lookup_and_headless_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LIBRARY_ENV, "/somewhere/libx.so")
    assert library_candidates() == [Path("/somewhere/libx.so")]
    monkeypatch.delenv(LIBRARY_ENV)
    first = library_candidates()[0]
    assert (first.name, first.parent.name) == (library_file_name(), "jfgui_host")
    monkeypatch.setenv("JFGUI_HOST_CHANNEL", "stdio")
    assert headless_requested()
    monkeypatch.delenv("JFGUI_HOST_CHANNEL")
    assert not headless_requested()
