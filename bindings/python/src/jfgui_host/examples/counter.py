"""A counter agents can read and change: ``python -m jfgui_host.examples.counter --agent-enable``
next to a running daemon, then ``jfgui-agent call py-counter counter.add --input-json
'{"by":5}' --expected-revision 1``."""

import sys
from typing import Any

from jfgui_host import Host, HostError, action


class Counter(Host):
    def __init__(self) -> None:
        super().__init__("Py Counter")  # the display name; the endpoint is `py-counter`
        self.value, self._revision = 0, 1

    def revision(self) -> int:  # moves with every change, and only then
        return self._revision

    def inspect(self, input: Any) -> Any:
        return {"value": self.value}

    @action("counter.add", "Add to the counter.", kind="write", undo=True,
            input={"type": "object", "properties": {"by": {"type": "integer"}},
                   "required": ["by"], "additionalProperties": False})
    def add(self, input: Any) -> Any:
        if abs(self.value + input["by"]) > 1000:
            raise HostError("out_of_range", "the counter stays within -1000..1000")
        self.value += input["by"]
        self._revision += 1
        return {"value": self.value}


if __name__ == "__main__":
    app = Counter()
    app.set_enabled("--agent-enable" in sys.argv[1:])  # agent access: the user's decision
    app.connect()  # the user's daemon; reconnects by itself
    app.run()  # or pump from your event loop
