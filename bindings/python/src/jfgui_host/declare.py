"""Declaring actions: the :func:`action` decorator and the :class:`ActionSpec` it attaches.

Schemas are JSON Schema as Python dicts, in the subset jfgui-agentd renders for
``actions/describe`` (``type`` one of null, boolean, integer with minimum/maximum, number,
string with maxLength/enum, array with items/maxItems, object with properties/required/
additionalProperties as a boolean; ``anyOf``; ``{}`` for anything). The library checks them
when the host is created and refuses anything else with the JSON pointer of the problem, so a
constraint that would not be enforced never looks declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Optional, TypeVar

#: A JSON Schema as a Python value.
JsonSchema = dict[str, Any]

#: What an action handler is called with (the input, already checked against its schema).
F = TypeVar("F", bound=Callable[..., Any])

#: The attribute the decorator sets on a handler.
SPEC_ATTRIBUTE = "__jfgui_action__"


@dataclass(frozen=True)
class ActionSpec:
    """One action as the daemon lists and describes it."""

    name: str
    description: str
    kind: Literal["read", "write"]
    input: Optional[JsonSchema] = None
    output: Optional[JsonSchema] = None
    capabilities: int = 0
    undo: bool = False
    transaction: Optional[str] = None
    command_id: Optional[int] = None
    title: Optional[str] = None
    confirm: bool = False

    def to_json(self) -> dict[str, Any]:
        """The declaration object ``jfgui_host_declare_actions`` takes (defaults omitted: an
        action without ``input`` takes ``{}`` only, one without ``output`` returns any
        object)."""
        out: dict[str, Any] = {"name": self.name, "description": self.description, "kind": self.kind}
        if self.input is not None:
            out["inputSchema"] = self.input
        if self.output is not None:
            out["outputSchema"] = self.output
        if self.capabilities:
            out["capabilities"] = self.capabilities
        if self.undo:
            out["undo"] = True
        if self.transaction is not None:
            out["transaction"] = self.transaction
        if self.command_id is not None:
            out["commandId"] = self.command_id
        if self.title is not None:
            out["title"] = self.title
        if self.confirm:
            out["confirm"] = True
        return out


def action(
    name: str,
    description: str,
    *,
    kind: Literal["read", "write"],
    input: Optional[JsonSchema] = None,
    output: Optional[JsonSchema] = None,
    capabilities: int = 0,
    undo: bool = False,
    transaction: Optional[str] = None,
    command_id: Optional[int] = None,
    title: Optional[str] = None,
    confirm: bool = False,
) -> Callable[[F], F]:
    """Declares the decorated method of a :class:`~jfgui_host.Host` subclass as an action.

    ``kind="write"`` actions change state: every client call must carry the revision it is
    based on, checked before the method runs. ``undo`` says a successful call adds an undo
    step; ``transaction`` names the domain that lets the action take part in atomic batches
    (see :meth:`Host.supports_transaction`). ``title`` (1 to 64 characters) is what prompts
    and notices call the action; ``confirm=True`` makes every client call wait for the user's
    yes (:meth:`Host.confirm` asks; a call the user denies, or nobody answers, never runs).
    The method is called as ``method(input)`` with
    the input already checked against ``input`` and returns the output (any JSON value that
    matches ``output``), a :class:`~jfgui_host.Deferred`, or raises
    :class:`~jfgui_host.HostError`::

        class Counter(Host):
            @action("counter.add", "Add to the counter.", kind="write", undo=True,
                    input={"type": "object", "properties": {"by": {"type": "integer"}},
                           "required": ["by"], "additionalProperties": False})
            def add(self, input):
                ...
    """
    if kind not in ("read", "write"):
        raise ValueError(f"kind must be 'read' or 'write', not {kind!r}")
    spec = ActionSpec(
        name=name,
        description=description,
        kind=kind,
        input=input,
        output=output,
        capabilities=capabilities,
        undo=undo,
        transaction=transaction,
        command_id=command_id,
        title=title,
        confirm=confirm,
    )

    def decorate(method: F) -> F:
        setattr(method, SPEC_ATTRIBUTE, spec)
        return method

    return decorate
