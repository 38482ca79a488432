"""jfgui-host: expose a Python app's actions to AI agents, scripts and the command line through
jfgui-agentd.

A thin ``ctypes`` layer over libjfgui_host (the C ABI of the Rust ``jfgui-host-sdk``), which the
wheel carries: every check (schemas, capabilities, availability, ``expectedRevision``, atomic
batches, sizes) runs in the same Rust code a Rust app uses. Subclass :class:`Host`, declare
actions with :func:`action`, then ``set_enabled``, ``connect`` and ``run`` (or pump from an
event loop with :mod:`jfgui_host.loops`). ``python -m jfgui_host.examples.counter`` is a
complete app; its source is ``jfgui_host/examples/counter.py``.
"""

from ._native import DEFAULT_BUDGET, Answer, LibraryNotFound, Status, TaskState
from .declare import ActionSpec, JsonSchema, action
from .host import (
    Confirmation,
    Deferred,
    Host,
    HostError,
    Info,
    JfguiError,
    ResourceChunk,
    Unavailable,
    Wait,
    headless_requested,
)
from .launch import (
    agents_may_start,
    let_agents_start,
    started_by_agent,
    stop_letting_agents_start,
    this_program,
)

__all__ = [
    "DEFAULT_BUDGET",
    "ActionSpec",
    "Answer",
    "Confirmation",
    "Deferred",
    "Host",
    "HostError",
    "Info",
    "JfguiError",
    "JsonSchema",
    "LibraryNotFound",
    "ResourceChunk",
    "Status",
    "TaskState",
    "Unavailable",
    "Wait",
    "action",
    "agents_may_start",
    "headless_requested",
    "let_agents_start",
    "started_by_agent",
    "stop_letting_agents_start",
    "this_program",
]
