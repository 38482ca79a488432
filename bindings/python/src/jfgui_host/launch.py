""""Let agents start <App>": the app's side of activation.

When the user turns the setting on, the app calls :func:`let_agents_start`; the daemon then
starts the app (the command given, arguments passed literally, no shell) when an agent calls
it while it is not running. :func:`stop_letting_agents_start` turns it off again. An app
started that way sees :func:`started_by_agent` true: the user's setting is their yes, so it
turns agent access on at once and shows that in its window.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from typing import Optional, Sequence

from . import _native
from ._native import Status
from .host import JfguiError


def _text(value: str) -> tuple[bytes, int]:
    data = value.encode("utf-8")
    return data, len(data)


def _check(status: int, what: str) -> None:
    if status != Status.OK:
        raise JfguiError(Status(status), what)


def this_program(args: Sequence[str] = ()) -> list[str]:
    """The command that starts this script again: the interpreter, the script's absolute
    path, then ``args``."""
    return [sys.executable, os.path.abspath(sys.argv[0]), *args]


def let_agents_start(display_name: str, exec: Optional[Sequence[str]] = None) -> None:
    """Writes the launch file of ``display_name`` so the daemon may start ``exec`` (default:
    :func:`this_program`). Raises :class:`JfguiError` when the program is not a private file
    of the user or root, or the file cannot be written."""
    name, name_len = _text(display_name)
    argv, argv_len = _text(json.dumps(list(exec if exec is not None else this_program())))
    status = _native.library().jfgui_let_agents_start(name, name_len, argv, argv_len)
    _check(status, f"cannot let agents start {display_name}")


def stop_letting_agents_start(display_name: str) -> bool:
    """Removes the launch file of ``display_name``; whether there was one."""
    name, name_len = _text(display_name)
    removed = ctypes.c_bool()
    status = _native.library().jfgui_stop_letting_agents_start(name, name_len, ctypes.byref(removed))
    _check(status, f"cannot stop letting agents start {display_name}")
    return bool(removed.value)


def agents_may_start(display_name: str) -> bool:
    """Whether a launch file of ``display_name`` the daemon would use exists (the setting's
    state)."""
    name, name_len = _text(display_name)
    out = ctypes.c_bool()
    _check(_native.library().jfgui_agents_may_start(name, name_len, ctypes.byref(out)), "agents_may_start")
    return bool(out.value)


def started_by_agent() -> bool:
    """Whether the daemon started this process for an agent."""
    out = ctypes.c_bool()
    _check(_native.library().jfgui_started_by_agent(ctypes.byref(out)), "started_by_agent")
    return bool(out.value)
