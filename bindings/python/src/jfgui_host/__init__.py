"""jfgui-host: expose a Python app's actions to AI agents, scripts and the command line through
jfgui-agentd.

A thin ``ctypes`` layer over libjfgui_host (the C ABI of the Rust ``host-sdk``): every check
(schemas, capabilities, availability, ``expectedRevision``, atomic batches, sizes) runs in the
same Rust code a Rust app uses. No compiler is needed once the library is built.

    from jfgui_host import Host, HostError, action

    class Counter(Host):
        def __init__(self):
            super().__init__("Py Counter")
            self.value, self._revision = 0, 1

        def revision(self):
            return self._revision

        @action("counter.add", "Add to the counter.", kind="write",
                input={"type": "object", "properties": {"by": {"type": "integer"}},
                       "required": ["by"], "additionalProperties": False})
        def add(self, input):
            self.value += input["by"]
            self._revision += 1
            return {"value": self.value}

    app = Counter()
    app.set_enabled(True)
    app.connect()
    app.run()            # or jfgui_host.loops.TkPump / AsyncioPump in an event loop
"""

from ._native import DEFAULT_BUDGET, LibraryNotFound, Status, TaskState
from .declare import ActionSpec, JsonSchema, action
from .host import (
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

__all__ = [
    "DEFAULT_BUDGET",
    "ActionSpec",
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
    "headless_requested",
]
