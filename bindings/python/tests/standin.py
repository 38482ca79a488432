"""A stand-in for jfgui-agentd's end of the host channel, for unit tests of the package.

It listens on ``host.sock`` in a private runtime dir (``JFGUI_RUNTIME_DIR``), accepts the
host's connection, and speaks the framed channel (a u32 big-endian length, then one JSON
object; docs/PROTOCOL.md "The host channel"). Requests are sent by the test, which then pumps
the host (same thread: the host's socket is non-blocking) and reads the answer.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import time
from pathlib import Path
from typing import Any, Optional

from jfgui_host import Host

TIMEOUT_S = 20.0


class StandIn:
    """One listening socket; :meth:`accept` takes the host's connection and its handshake."""

    def __init__(self, runtime_dir: Path) -> None:
        runtime_dir.mkdir(mode=0o700)
        os.chmod(runtime_dir, 0o700)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(runtime_dir / "host.sock"))
        self.listener.listen(4)
        self.listener.settimeout(TIMEOUT_S)
        self.conn: Optional[socket.socket] = None
        self.buffer = b""
        self.next_id = 1

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.listener.close()

    def accept(self, host: Host) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Accepts the host (pumping it until it connected) and reads hello, the action pages
        and ready; returns the hello and all actions. Then sends welcome."""
        deadline = time.monotonic() + TIMEOUT_S
        self.listener.setblocking(False)
        while self.conn is None:
            host.pump()
            try:
                self.conn, _ = self.listener.accept()
            except BlockingIOError:
                assert time.monotonic() < deadline, "the host never connected"
                time.sleep(0.01)
        self.conn.settimeout(TIMEOUT_S)
        host.pump()
        hello = self.recv()["hello"]
        actions: list[dict[str, Any]] = []
        while True:
            message = self.recv()
            if "ready" in message:
                assert message["ready"]["actionCount"] == len(actions)
                break
            actions += message["actions"]["actions"]
        self.send({"welcome": {"slug": "stand-in", "limits": {"maxFrameBytes": 1114112, "maxMessageBytes": 1048576}}})
        host.pump()
        return hello, actions

    def send(self, message: dict[str, Any]) -> None:
        assert self.conn is not None
        body = json.dumps(message, separators=(",", ":")).encode()
        self.conn.sendall(struct.pack(">I", len(body)) + body)

    def recv(self) -> dict[str, Any]:
        """The next frame from the host."""
        assert self.conn is not None
        while True:
            if len(self.buffer) >= 4:
                (length,) = struct.unpack(">I", self.buffer[:4])
                if len(self.buffer) >= 4 + length:
                    body, self.buffer = self.buffer[4 : 4 + length], self.buffer[4 + length :]
                    message: dict[str, Any] = json.loads(body)
                    return message
            chunk = self.conn.recv(65536)
            assert chunk, "the host closed the connection"
            self.buffer += chunk

    def request(self, host: Host, call: dict[str, Any]) -> dict[str, Any]:
        """Sends `call`, pumps the host once and returns the reply's outcome."""
        request_id = self.next_id
        self.next_id += 1
        self.send({"request": {"id": request_id, "call": call}})
        host.pump()
        reply = self.recv()["reply"]
        assert reply["id"] == request_id, reply
        outcome: dict[str, Any] = reply["outcome"]
        return outcome


def execute(action: str, input: Any = None, expected: Optional[int] = None) -> dict[str, Any]:
    """An `execute` call."""
    call: dict[str, Any] = {"action": action, "input": {} if input is None else input}
    if expected is not None:
        call["expectedRevision"] = expected
    return {"execute": call}
