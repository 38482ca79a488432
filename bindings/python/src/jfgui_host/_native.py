"""The ctypes layer: finding and loading libjfgui_host, and its C declarations.

Mirrors host-sdk/capi/include/jfgui_host.h (ABI version 2). Nothing here knows about Python
hosts; ``host.py`` builds on it.
"""

from __future__ import annotations

import ctypes
import enum
import os
import sys
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_bool,
    c_char_p,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)
from pathlib import Path
from typing import Optional

#: The ABI version these declarations describe (``JFGUI_HOST_ABI_VERSION``).
ABI_VERSION = 2

#: A good ``budget`` for :meth:`Host.pump` (``JFGUI_HOST_DEFAULT_BUDGET``).
DEFAULT_BUDGET = 64

#: The environment variable naming the library file to load.
LIBRARY_ENV = "JFGUI_HOST_LIB"


class Status(enum.IntEnum):
    """``JfguiStatus``: the result of every library function."""

    OK = 0
    INVALID_ARGUMENT = 1
    INVALID_JSON = 2
    INVALID_REGISTRATION = 3
    WRONG_STATE = 4
    REENTRANT = 5
    IO = 6
    TASK = 7
    INTERNAL = 8


class TaskState(enum.IntEnum):
    """``JfguiTaskState``: where a deferred task is."""

    UNKNOWN = 0
    RUNNING = 1
    CANCELLING = 2
    CANCELLED = 3
    COMPLETED = 4
    FAILED = 5


class Answer(enum.IntEnum):
    """``JFGUI_ANSWER_*``: the user's answer to a call that waits for a yes."""

    #: (:meth:`Host.confirm` only, as ``None``) a prompt is shown; :meth:`Host.answer` later.
    LATER = 0
    #: Run this call.
    ALLOW = 1
    #: Run it, and let this agent run this action without asking from now on.
    ALLOW_ALWAYS = 2
    #: Do not run it (``not_executed/denied_by_user``).
    DENY = 3
    #: Nobody can be asked (``not_executed/no_confirmation_ui``).
    NO_UI = 4


class CallInfo(Structure):
    """``JfguiCallInfo``."""

    _fields_ = [
        ("request", c_uint64),
        ("batch_index", c_int64),
        ("external", c_bool),
        ("in_transaction", c_bool),
    ]


class Str(Structure):
    """``JfguiStr``: UTF-8 by pointer and length."""

    _fields_ = [("ptr", c_void_p), ("len", c_size_t)]


class ConfirmationC(Structure):
    """``JfguiConfirmation``."""

    _fields_ = [
        ("ticket", Str),
        ("action", Str),
        ("title", Str),
        ("summary", Str),
        ("agent_name", Str),
        ("agent_label", Str),
        ("may_always", c_bool),
        ("json", Str),
    ]


class WaitC(Structure):
    """``JfguiWait``."""

    _fields_ = [("fd", c_int32), ("read", c_bool), ("write", c_bool), ("timeout_ms", c_int64)]


class InfoC(Structure):
    """``JfguiInfo``."""

    _fields_ = [("connected", c_bool), ("registered", c_bool), ("enabled", c_bool)]


# Callback types. Byte arguments are `c_void_p` so that ctypes does not stop at a NUL byte;
# read them with `ctypes.string_at(ptr, len)`.
EXECUTE = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_void_p, c_size_t, POINTER(CallInfo), c_void_p)
REVISION = CFUNCTYPE(c_uint64, c_void_p)
CAPABILITIES = CFUNCTYPE(c_uint64, c_void_p)
AVAILABILITY = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_void_p)
INSPECT = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_void_p)
SUPPORTS_TRANSACTION = CFUNCTYPE(c_bool, c_void_p, c_void_p, c_size_t)
BEGIN_TRANSACTION = CFUNCTYPE(None, c_void_p, POINTER(Str), c_size_t, c_void_p)
END_TRANSACTION = CFUNCTYPE(None, c_void_p)
LIST_RESOURCES = CFUNCTYPE(None, c_void_p, c_void_p)
READ_RESOURCE = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t, c_uint64, c_uint32, c_void_p)
CANCEL_TASK = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)
TICK = CFUNCTYPE(c_int64, c_void_p)
CONFIRM = CFUNCTYPE(c_int32, c_void_p, POINTER(ConfirmationC))
WITHDRAW_CONFIRMATION = CFUNCTYPE(None, c_void_p, c_void_p, c_size_t)


class Callbacks(Structure):
    """``JfguiCallbacks``; members left unset are NULL."""

    _fields_ = [
        ("execute", EXECUTE),
        ("revision", REVISION),
        ("capabilities", CAPABILITIES),
        ("availability", AVAILABILITY),
        ("inspect", INSPECT),
        ("supports_transaction", SUPPORTS_TRANSACTION),
        ("begin_transaction", BEGIN_TRANSACTION),
        ("commit_transaction", END_TRANSACTION),
        ("rollback_transaction", END_TRANSACTION),
        ("list_resources", LIST_RESOURCES),
        ("read_resource", READ_RESOURCE),
        ("cancel_task", CANCEL_TASK),
        ("tick", TICK),
        ("confirm", CONFIRM),
        ("withdraw_confirmation", WITHDRAW_CONFIRMATION),
    ]


def library_file_name() -> str:
    """The platform's file name of the library."""
    if sys.platform == "win32":
        return "jfgui_host.dll"
    if sys.platform == "darwin":
        return "libjfgui_host.dylib"
    return "libjfgui_host.so"


def library_candidates() -> list[Path]:
    """Where the library is looked for, in order: ``$JFGUI_HOST_LIB`` (for development: a
    library of your own build); next to this module (the copy the wheel carries); and, when
    running from the source tree (an editable install), the Cargo target dir
    (``$CARGO_TARGET_DIR``, else the repository's ``target/``), release before debug."""
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        return [Path(explicit)]
    here = Path(__file__).resolve().parent
    name = library_file_name()
    candidates = [here / name]
    # src/jfgui_host -> src -> python -> bindings -> the repository
    if len(here.parents) > 3:
        repo = here.parents[3]
        target = Path(os.environ.get("CARGO_TARGET_DIR") or repo / "target")
        candidates += [target / "release" / name, target / "debug" / name]
    return candidates


class LibraryNotFound(OSError):
    """libjfgui_host could not be found or loaded."""


_library: Optional[ctypes.CDLL] = None


def library() -> ctypes.CDLL:
    """The loaded library with its function prototypes (loaded once, on first use)."""
    global _library
    if _library is None:
        tried = []
        for path in library_candidates():
            if path.is_file():
                try:
                    _library = _declare(ctypes.CDLL(str(path)))
                    break
                except OSError as e:
                    tried.append(f"{path} ({e})")
            else:
                tried.append(f"{path} (missing)")
        else:
            raise LibraryNotFound(
                "libjfgui_host not found: the jfgui-host wheel carries it, so reinstall the package from "
                "its wheel; from a source tree, build it with `cargo build -p jfgui-host-capi --release`, "
                f"or set {LIBRARY_ENV} to a library file. Tried: " + "; ".join(tried)
            )
    return _library


def _declare(lib: ctypes.CDLL) -> ctypes.CDLL:
    handle = c_void_p
    status = c_int32
    prototypes: dict[str, list[object]] = {
        "jfgui_host_new": [c_uint32, c_char_p, c_size_t, POINTER(Callbacks), c_void_p, POINTER(c_void_p)],
        "jfgui_host_declare_actions": [handle, c_char_p, c_size_t],
        "jfgui_host_connect": [handle],
        "jfgui_host_pump": [handle, c_size_t, POINTER(WaitC)],
        "jfgui_host_fd": [handle, POINTER(c_int32)],
        "jfgui_host_set_enabled": [handle, c_bool],
        "jfgui_host_info": [handle, POINTER(InfoC)],
        "jfgui_host_serve_stdio": [handle],
        "jfgui_headless_requested": [POINTER(c_bool)],
        "jfgui_let_agents_start": [c_char_p, c_size_t, c_char_p, c_size_t],
        "jfgui_stop_letting_agents_start": [c_char_p, c_size_t, POINTER(c_bool)],
        "jfgui_agents_may_start": [c_char_p, c_size_t, POINTER(c_bool)],
        "jfgui_started_by_agent": [POINTER(c_bool)],
        "jfgui_host_last_error": [handle, c_char_p, c_size_t, POINTER(c_size_t)],
        "jfgui_host_close": [handle],
        "jfgui_host_task_progress": [handle, c_char_p, c_size_t, c_uint64, POINTER(c_uint64), c_char_p, c_size_t],
        "jfgui_host_task_complete": [handle, c_char_p, c_size_t, c_char_p, c_size_t],
        "jfgui_host_task_fail": [handle, c_char_p, c_size_t, c_char_p, c_size_t, c_char_p, c_size_t],
        "jfgui_host_task_cancelled": [handle, c_char_p, c_size_t],
        "jfgui_host_task_state": [handle, c_char_p, c_size_t, POINTER(c_int32)],
        "jfgui_host_answer": [handle, c_char_p, c_size_t, c_int32],
        "jfgui_host_check": [handle, c_bool, POINTER(c_size_t)],
        "jfgui_host_check_report": [handle, c_char_p, c_size_t, POINTER(c_size_t)],
        "jfgui_reply_json": [c_void_p, c_char_p, c_size_t],
        "jfgui_reply_error": [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t],
        "jfgui_reply_deferred": [c_void_p, c_char_p, c_size_t],
        "jfgui_reply_unavailable": [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t],
        "jfgui_reply_resource": [c_void_p, c_char_p, c_size_t, c_char_p, c_size_t, c_uint64],
    }
    for name, argtypes in prototypes.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = status
    return lib
