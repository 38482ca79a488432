"""jfgui_host.testing: libjfgui_host's contract checks run in-process against a Python Host.
A healthy counter app passes; with one contract broken at a time, the check that claims to
catch it FAILs, naming the action (or resource), and nothing else does."""

from __future__ import annotations

import struct
import zlib
from typing import Any, Optional, Sequence

import pytest

from jfgui_host import Deferred, Host, JfguiError, ResourceChunk, Status, action
from jfgui_host.testing import Report, check

VIEW = "render://view.png"
BLOB = "blob://data.bin"
BLOB_BYTES = bytes(i % 251 for i in range(20_000))

ADD_INPUT = {
    "type": "object",
    "properties": {"by": {"type": "integer", "minimum": 1, "maximum": 100}},
    "required": ["by"],
    "additionalProperties": False,
}
NO_INPUT = {"type": "object", "properties": {}, "additionalProperties": False}
VALUE = {
    "type": "object",
    "properties": {"value": {"type": "integer"}},
    "required": ["value"],
    "additionalProperties": False,
}
RENDERED = {
    "type": "object",
    "properties": {"uri": {"type": "string"}, "mimeType": {"type": "string"}},
    "required": ["uri", "mimeType"],
    "additionalProperties": False,
}
TASK = {
    "type": "object",
    "properties": {"task": {"type": "string"}},
    "required": ["task"],
    "additionalProperties": False,
}


def png(width: int, height: int) -> bytes:
    """A grey RGB PNG, written with zlib and CRC-32 as the format says."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x80" * (3 * width) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class Counter(Host):
    """A counter with a read, a write and a deferred write in one transaction domain, a
    rendered view and a blob; `defect` breaks one contract."""

    def __init__(self, defect: Optional[str] = None) -> None:
        super().__init__("Checked Counter")
        self.defect = defect
        self.value = 0
        self._revision = 1
        self.saved: Optional[tuple[int, int]] = None
        self.exports: list[str] = []
        self.cancel_asked: list[str] = []
        self.view = b"GIF89a, not a PNG" if defect == "render-not-png" else png(4, 3)

    def revision(self) -> int:
        return self._revision

    def availability(self, action: str) -> None:
        if self.defect == "applies-before-revision-check" and action == "counter.add":
            # A pending change applied whenever availability is asked: even for a stale write.
            self.value += 1
            self._revision += 1
        return None

    def inspect(self, input: Any) -> Any:
        return {"value": self.value}

    def supports_transaction(self, domain: str) -> bool:
        return domain == "counter"

    def begin_transaction(self, domains: Sequence[str]) -> None:
        self.saved = (self.value, self._revision)

    def rollback_transaction(self) -> None:
        assert self.saved is not None
        revision = self._revision
        self.value, self._revision = self.saved
        if self.defect == "rollback-keeps-revision":
            self._revision = revision

    def resources(self) -> list[dict[str, Any]]:
        return [
            {"uri": VIEW, "name": "view.png", "mimeType": "image/png", "size": len(self.view)},
            {"uri": BLOB, "name": "data.bin", "mimeType": "application/octet-stream", "size": len(BLOB_BYTES)},
        ]

    def read_resource(self, uri: str, offset: int, limit: int) -> Optional[ResourceChunk]:
        if uri == VIEW:
            return ResourceChunk("image/png", self.view[offset : offset + limit], len(self.view))
        if uri == BLOB:
            lie = 100 if self.defect == "chunks-do-not-add-up" else 0
            return ResourceChunk("application/octet-stream", BLOB_BYTES[offset : offset + limit], len(BLOB_BYTES) + lie)
        return None

    def task_cancel_requested(self, task_id: str) -> None:
        self.cancel_asked.append(task_id)

    def tick(self) -> Optional[float]:
        if self.defect != "ignores-cancel":
            for task_id in self.cancel_asked:
                self.task_cancelled(task_id)
        self.cancel_asked.clear()
        return None

    @action("counter.add", "Add `by` (1 to 100) to the counter.", kind="write", transaction="counter", input=ADD_INPUT, output=VALUE)
    def add(self, input: Any) -> Any:
        self.value += input["by"]
        self._revision += 1
        return {"value": self.value}

    @action("counter.get", "Read the counter's value.", kind="read", input=NO_INPUT, output=VALUE)
    def get(self, input: Any) -> Any:
        if self.defect == "read-moves-revision":
            self._revision += 1
        if self.defect == "output-violates-schema":
            return "not an object"
        return {"value": self.value}

    @action("counter.export", "Export the counter as a task that can be cancelled.", kind="write", transaction="counter", input=NO_INPUT, output=TASK)
    def export(self, input: Any) -> Any:
        task_id = f"export-{len(self.exports) + 1}"
        self.exports.append(task_id)
        return Deferred(task_id)

    @action("ui.render", "Render the counter into the PNG resource render://view.png.", kind="read", input=NO_INPUT, output=RENDERED)
    def render(self, input: Any) -> Any:
        return {"uri": VIEW, "mimeType": "image/png"}


def failures(report: Report) -> list[tuple[str, str]]:
    return [(f.check, f.subject) for f in report.failures]


def test_a_healthy_app_passes_every_check() -> None:
    with Counter() as app:
        report = check(app, mutate=True)
    report.assert_passed()
    assert [f for f in report.findings if f.level != "PASS"] == [], str(report)
    checks = {f.check for f in report.findings}
    assert checks == {
        "lint",
        "inspect",
        "read",
        "render",
        "resource",
        "stale_write",
        "invalid_write",
        "valid_write",
        "task_cancel",
        "atomic_batch",
    }, str(report)
    batch = next(f for f in report.findings if f.check == "atomic_batch")
    assert "counter.export (deferred" in batch.why, "the app's own rollback ran"


def test_read_only_changes_nothing_and_leaves_the_host_usable() -> None:
    with Counter() as app:
        report = check(app)
        assert report.passed and not report.mutate, str(report)
        assert (app.value, app.revision()) == (0, 1)
        assert not app.info().enabled, "as disabled as before"
        assert check(app, mutate=True).passed, "a second run works on the same host"


@pytest.mark.parametrize(
    ("defect", "expected"),
    [
        ("read-moves-revision", [("read", "counter.get")]),
        ("applies-before-revision-check", [("stale_write", "counter.add")]),
        ("rollback-keeps-revision", [("atomic_batch", "-")]),
        ("output-violates-schema", [("read", "counter.get")]),
        ("render-not-png", [("render", "ui.render")]),
        ("chunks-do-not-add-up", [("resource", BLOB)]),
        ("ignores-cancel", [("task_cancel", "counter.export")]),
    ],
)
def test_each_broken_contract_is_a_fail_of_its_check(defect: str, expected: list[tuple[str, str]]) -> None:
    with Counter(defect) as app:
        report = check(app, mutate=True)
    assert failures(report) == expected, str(report)
    assert all(f.fix for f in report.failures), "every FAIL says how to fix it"
    with pytest.raises(AssertionError, match="the app breaks a contract"):
        report.assert_passed()


def test_a_connected_host_is_not_checked(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    # Connecting needs no daemon (it keeps retrying); the checks are for a host before that.
    monkeypatch.setenv("JFGUI_RUNTIME_DIR", str(tmp_path / "rt"))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    with Counter() as app:
        app.connect()
        with pytest.raises(JfguiError) as raised:
            check(app)
    assert raised.value.status == Status.WRONG_STATE
    assert "already connected" in raised.value.message
