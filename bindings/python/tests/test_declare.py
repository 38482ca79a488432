"""Declarations: what the decorator records and what a Host subclass collects (no library
calls)."""

from __future__ import annotations

from typing import Any

import pytest

from jfgui_host import ActionSpec, Host, action


def test_to_json_writes_only_what_differs_from_the_defaults() -> None:
    plain = ActionSpec(name="a.get", description="Read.", kind="read")
    assert plain.to_json() == {"name": "a.get", "description": "Read.", "kind": "read"}
    full = ActionSpec(
        name="a.set",
        description="Write.",
        kind="write",
        input={"type": "object"},
        output={},
        capabilities=6,
        undo=True,
        transaction="doc",
        command_id=7,
        title="Set it",
        confirm=True,
    )
    assert full.to_json() == {
        "name": "a.set",
        "description": "Write.",
        "kind": "write",
        "inputSchema": {"type": "object"},
        "outputSchema": {},
        "capabilities": 6,
        "undo": True,
        "transaction": "doc",
        "commandId": 7,
        "title": "Set it",
        "confirm": True,
    }

    def clear(self: Any, input: Any) -> Any:
        return {}

    asking = action("a.clear", "Clear.", kind="write", title="Clear it", confirm=True)(clear)
    assert asking.__jfgui_action__.to_json()["confirm"] is True  # type: ignore[attr-defined]


def test_the_decorator_keeps_the_method_and_records_its_spec() -> None:
    def handler(self: Any, input: Any) -> Any:
        return input

    decorated = action("x.y", "Echo.", kind="read")(handler)
    assert decorated is handler
    assert decorated.__jfgui_action__ == ActionSpec(name="x.y", description="Echo.", kind="read")  # type: ignore[attr-defined]


def test_kind_is_read_or_write() -> None:
    with pytest.raises(ValueError, match="kind"):
        action("x", "X", kind="maybe")  # type: ignore[arg-type]


def test_subclasses_collect_actions_in_order_base_first() -> None:
    class Base(Host):
        @action("base.one", "One.", kind="read")
        def one(self, input: Any) -> Any:
            return {}

    class Derived(Base):
        @action("derived.two", "Two.", kind="write")
        def two(self, input: Any) -> Any:
            return {}

        @action("derived.three", "Three.", kind="read")
        def three(self, input: Any) -> Any:
            return {}

        def not_an_action(self) -> None:
            pass

    assert [spec.name for _, spec in Derived._actions] == ["base.one", "derived.two", "derived.three"]
    assert [spec.name for _, spec in Base._actions] == ["base.one"]
