"""Contract checks for a Python app's own tests: the checks ``jfgui-agent check`` runs against a
running app, run in-process against a :class:`~jfgui_host.Host` (its declarations and methods,
through the library's dispatcher, no daemon). The checks are libjfgui_host's own (the Rust
``host-sdk`` ``testing`` module, through ``jfgui_host_check``); this module only reads the
report. With pytest::

    from jfgui_host.testing import check

    def test_notes_keep_the_contracts():
        app = Notes()                       # declared, not connected
        check(app, mutate=True).assert_passed()

``mutate=True`` adds the write checks (a stale write, a schema-violating write, a valid write,
a cancelled task, an atomic batch): they change the app's state as an agent would, so give the
check a fresh app. Run it before :meth:`~jfgui_host.Host.connect`.
"""

from __future__ import annotations

import ctypes
import json
from dataclasses import dataclass
from typing import Any, Literal, Optional

from . import _native
from .host import Host

#: A finding's verdict.
Level = Literal["PASS", "WARN", "FAIL"]


@dataclass(frozen=True)
class Finding:
    """One check's verdict on one action (``action``), resource (``resource``) or the whole
    app (neither): what was seen (``why``) and, unless it passed, how to fix it (``fix``)."""

    level: Level
    check: str
    why: str
    action: Optional[str] = None
    resource: Optional[str] = None
    fix: Optional[str] = None

    @property
    def subject(self) -> str:
        """The action or resource, ``-`` for the whole app."""
        return self.action or self.resource or "-"

    def __str__(self) -> str:
        line = f"{self.level:<6}  {self.check:<13}  {self.subject}  {self.why}"
        return f"{line} → fix: {self.fix}" if self.fix else line


@dataclass(frozen=True)
class Report:
    """Every finding of one run, in the order the checks ran."""

    mutate: bool
    passed: bool
    findings: tuple[Finding, ...]

    @property
    def failures(self) -> tuple[Finding, ...]:
        """The FAIL findings."""
        return tuple(f for f in self.findings if f.level == "FAIL")

    def assert_passed(self) -> None:
        """Raises ``AssertionError`` listing every finding when anything FAILed (WARNs pass)."""
        if not self.passed:
            raise AssertionError(f"the app breaks a contract:\n{self}")

    def __str__(self) -> str:
        counts = {level: sum(f.level == level for f in self.findings) for level in ("PASS", "WARN", "FAIL")}
        summary = f"{counts['PASS']} PASS, {counts['WARN']} WARN, {counts['FAIL']} FAIL"
        return "\n".join([*(str(f) for f in self.findings), summary])


def check(host: Host, mutate: bool = False) -> Report:
    """Runs the contract checks against ``host`` (declared, not yet connected) and returns the
    report. Raises :class:`~jfgui_host.JfguiError` when the host cannot be checked (e.g. it is
    connected)."""
    lib = _native.library()
    length = ctypes.c_size_t()
    host._call(lib.jfgui_host_check, mutate, ctypes.byref(length))
    buf = ctypes.create_string_buffer(max(length.value, 1))
    host._call(lib.jfgui_host_check_report, buf, len(buf), ctypes.byref(length))
    report: dict[str, Any] = json.loads(buf.raw[: length.value])
    findings = tuple(
        Finding(
            level=f["level"],
            check=f["check"],
            why=f["why"],
            action=f.get("action"),
            resource=f.get("resource"),
            fix=f.get("fix"),
        )
        for f in report["findings"]
    )
    return Report(mutate=bool(report["mutate"]), passed=bool(report["passed"]), findings=findings)
