"""The :class:`Host` base class: a Python app's side of jfgui-agentd.

A subclass declares its actions with :func:`~jfgui_host.action`, implements
:meth:`Host.revision`, and overrides the optional methods it needs. The checks (input
schemas, capabilities, availability, ``expectedRevision``, transactions, output schemas,
sizes) run in libjfgui_host, the same Rust code every Rust app runs; this class only
translates between Python values and the library's callbacks.
"""

from __future__ import annotations

import ctypes
import json
import math
import sys
import traceback
import weakref
from dataclasses import dataclass
from typing import Any, Callable, ClassVar, Optional, Sequence, TypeVar

from . import _native
from ._native import DEFAULT_BUDGET, Answer, Status, TaskState
from .declare import SPEC_ATTRIBUTE, ActionSpec

#: The revision reported when :meth:`Host.revision` raises: no ``expectedRevision`` matches
#: it, so no write passes its check (the library does the same for a C callback).
UNREADABLE_REVISION = 2**64 - 1


_H = TypeVar("_H", bound="Host")


class JfguiError(Exception):
    """A library call failed: :attr:`status` says how, the message why."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(f"{status.name.lower()}: {message}")
        self.status = status
        self.message = message


class HostError(Exception):
    """Raise from an action (or :meth:`Host.inspect`, :meth:`Host.begin_transaction`,
    :meth:`Host.read_resource`) to report a failure: the caller gets
    ``failed/host_error`` with ``code`` (machine-readable, e.g. ``"out_of_range"``) and
    ``message`` (one sentence). The action must not have changed anything."""

    def __init__(self, code: Optional[str], message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Deferred:
    """Return it from an action to answer with a task: the library starts task ``task_id``
    (1 to 128 bytes, unique among the app's tasks) in state ``running``. Report it later with
    :meth:`Host.task_progress`, :meth:`Host.task_complete`, :meth:`Host.task_fail` or
    :meth:`Host.task_cancelled`."""

    task_id: str


@dataclass(frozen=True)
class Unavailable:
    """Return it from :meth:`Host.availability`: the action cannot run now (e.g. a modal
    dialog is open); the caller gets ``not_executed/unavailable{code, explanation}``."""

    code: str
    explanation: str


@dataclass(frozen=True)
class ResourceChunk:
    """What :meth:`Host.read_resource` returns: at most ``limit`` bytes from ``offset``, the
    MIME type and the size of the whole resource."""

    mime_type: str
    data: bytes
    total_size: int


@dataclass(frozen=True)
class Confirmation:
    """A client's call that waits for the user's yes, as :meth:`Host.confirm` gets it. Every
    text is printable on one line (control characters shown escaped), ready for a prompt.

    ``ticket`` is what :meth:`Host.answer` takes; ``title`` and ``summary`` say what would be
    done (``summary`` lists every title of a batch); ``agent_name`` (the agent executable's
    file name, or "An unknown agent") and ``agent_label`` (its path and, marked as a claim,
    what the client says it is) say who asks; offer "always allow" only when
    ``may_always``. ``calls`` holds each call asked about (``{"index"?, "action", "title",
    "description", "input"}``), ``agent`` what the daemon established
    (``{"exe", "pid"?, "says"?, "transport"}``) or ``None``."""

    ticket: str
    action: str
    title: str
    summary: str
    agent_name: str
    agent_label: str
    may_always: bool
    calls: list[dict[str, Any]]
    batch_len: Optional[int]
    agent: Optional[dict[str, Any]]


@dataclass(frozen=True)
class Wait:
    """What to wait for before the next :meth:`Host.pump`: ``fd`` readable (``read``) or
    writable (``write``), or ``timeout`` seconds (``None``: only readiness). ``fd`` is -1
    while disconnected and may change after a reconnect."""

    fd: int
    read: bool
    write: bool
    timeout: Optional[float]


@dataclass(frozen=True)
class Info:
    """The handle's state: connected to the daemon, registered there, enabled for clients."""

    connected: bool
    registered: bool
    enabled: bool


def headless_requested() -> bool:
    """True when this process was started by ``jfgui-agent headless`` to speak the host
    channel on stdin/stdout (then call :meth:`Host.serve_stdio`)."""
    out = ctypes.c_bool()
    _check(None, _native.library().jfgui_headless_requested(ctypes.byref(out)))
    return bool(out.value)


def _text(value: str) -> tuple[bytes, int]:
    data = value.encode("utf-8")
    return data, len(data)


def _json_bytes(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode("utf-8")


def _last_error(handle: Optional[int]) -> str:
    if not handle:
        return "(no handle, so no message)"
    lib = _native.library()
    size = ctypes.c_size_t()
    buf = ctypes.create_string_buffer(1024)
    lib.jfgui_host_last_error(handle, buf, len(buf), ctypes.byref(size))
    if size.value > len(buf):
        buf = ctypes.create_string_buffer(size.value)
        lib.jfgui_host_last_error(handle, buf, len(buf), ctypes.byref(size))
    return buf.raw[: size.value].decode("utf-8", "replace")


def _check(handle: Optional[int], status: int) -> None:
    if status != Status.OK:
        raise JfguiError(Status(status), _last_error(handle))


def _report(what: str) -> None:
    """A host method raised something other than HostError: a bug in the app. The call gets
    an internal error from the library (no result was written); the traceback goes to stderr."""
    print(f"jfgui-host: {what} raised:", file=sys.stderr)
    traceback.print_exc()


class Host:
    """Base class of a Python app exposed through jfgui-agentd.

    Subclass it, declare actions with :func:`~jfgui_host.action`, implement
    :meth:`revision`, then::

        app = MyApp("My App")          # declares the actions (checked like a Rust app's)
        app.set_enabled(user_said_yes) # agent access is off until the app says so
        app.connect()                  # the user's daemon, with reconnect
        ... watch app.fileno() in the event loop and call app.pump() when it is ready;
        ... see jfgui_host.loops for Tk and asyncio

    Every method below is called from inside :meth:`pump` (or :meth:`serve_stdio`), on the
    thread that called it. Optional methods that are not overridden behave like the Rust
    ``Host`` trait's defaults. A method that raises anything but :class:`HostError` is an app
    bug: the traceback goes to stderr and the caller gets an internal error.
    """

    _actions: ClassVar[tuple[tuple[str, ActionSpec], ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found: dict[str, ActionSpec] = {}
        for klass in reversed(cls.__mro__):
            for attribute, value in vars(klass).items():
                spec = getattr(value, SPEC_ATTRIBUTE, None)
                if isinstance(spec, ActionSpec):
                    found[attribute] = spec
        cls._actions = tuple(found.items())

    def __init__(self, display_name: str) -> None:
        """Creates the library handle for an app called ``display_name`` (any text; the
        daemon derives the endpoint's slug from it) and declares the class's actions.
        Raises :class:`JfguiError` (``INVALID_REGISTRATION`` with the offending action and
        JSON pointer) when they break a rule."""
        if type(self).revision is Host.revision:
            raise TypeError(f"{type(self).__name__} must implement revision()")
        lib = _native.library()
        self._handlers = {spec.name: attribute for attribute, spec in self._actions}
        self._callbacks = _callbacks_for(self)
        handle = ctypes.c_void_p()
        name, name_len = _text(display_name)
        _check(
            None,
            lib.jfgui_host_new(
                _native.ABI_VERSION, name, name_len, ctypes.byref(self._callbacks), None, ctypes.byref(handle)
            ),
        )
        assert handle.value is not None, "jfgui_host_new succeeded"
        self._handle: Optional[int] = handle.value
        # Closes the handle when this object is collected (or at exit); it keeps the ctypes
        # callback objects alive until then. The callbacks reach `self` through a weak
        # reference, so they do not keep it alive.
        self._finalizer = weakref.finalize(self, _close, handle.value, self._callbacks)
        document = _json_bytes([spec.to_json() for _, spec in self._actions])
        self._call(lib.jfgui_host_declare_actions, document, len(document))

    # ---- the app's side: override these -------------------------------------------------

    def revision(self) -> int:
        """The current revision: it must increase with every change of state, and only then
        (required)."""
        raise NotImplementedError

    def capabilities(self) -> int:
        """Capability bits granted to callers (opaque; from the platform layer). Default 0."""
        return 0

    def availability(self, action: str) -> Optional[Unavailable]:
        """``None`` when ``action`` can run now, else :class:`Unavailable`. Default: always."""
        return None

    def inspect(self, input: Any) -> Any:
        """``state/inspect``: a view of the state for ``input`` (host-defined query, paging,
        ``sinceRevision``). The library adds the revision. Default: ``{}``."""
        return {}

    def supports_transaction(self, domain: str) -> bool:
        """Whether every change in ``domain`` can be rolled back, revision included. Default
        ``False``: atomic batches that write in the domain are refused before they start.
        Overriding it requires :meth:`begin_transaction`, :meth:`commit_transaction` and
        :meth:`rollback_transaction`."""
        return False

    def begin_transaction(self, domains: Sequence[str]) -> None:
        """Starts an atomic batch over ``domains``; raise :class:`HostError` to refuse."""

    def commit_transaction(self) -> None:
        """Makes the batch's changes permanent as one undo step."""

    def rollback_transaction(self) -> None:
        """Restores the state and the revision of :meth:`begin_transaction`."""

    def resources(self) -> list[dict[str, Any]]:
        """The resources offered now: ``[{"uri", "name", "mimeType", "size"?}]``. Default
        none."""
        return []

    def read_resource(self, uri: str, offset: int, limit: int) -> Optional[ResourceChunk]:
        """At most ``limit`` bytes of ``uri`` from ``offset``; ``None``: no such resource."""
        return None

    def task_cancel_requested(self, task_id: str) -> None:
        """A client asked to cancel ``task_id`` (now ``cancelling``): stop it at a safe point
        and call :meth:`task_cancelled`. Called once per request."""

    def tick(self) -> Optional[float]:
        """Advances deferred work; returns the seconds until it wants to run again (``None``:
        only when something arrives)."""
        return None

    def confirm(self, confirmation: Confirmation) -> Optional[Answer]:
        """A client's call of an action declared with ``confirm=True`` passed every check:
        ask the user. Return the :class:`Answer` now, or ``None`` to show a prompt and call
        :meth:`answer` later (until then the caller's task waits and nothing of the call has
        run). Default: ``Answer.NO_UI``, so an app without a way to ask never runs such a call."""
        return Answer.NO_UI

    def withdraw_confirmation(self, ticket: str) -> None:
        """The prompt for ``ticket`` was withdrawn (the caller cancelled, gave up waiting or went
        away, or agent access was turned off): close it."""

    # ---- the handle --------------------------------------------------------------------

    def _call(self, function: Callable[..., int], *args: Any) -> None:
        if self._handle is None:
            raise JfguiError(Status.WRONG_STATE, "the host is closed")
        _check(self._handle, function(self._handle, *args))

    def connect(self) -> None:
        """Connects to the user's daemon (the same runtime-dir rule, checks and reconnect as
        a Rust app; the daemon need not be running yet). Then watch :meth:`fileno` and call
        :meth:`pump`."""
        self._call(_native.library().jfgui_host_connect)

    def pump(self, budget: int = DEFAULT_BUDGET) -> Wait:
        """Does what is possible without blocking (connect when due, read, answer at most
        ``budget`` requests through the methods above, write) and says what to wait for."""
        wait = _native.WaitC()
        self._call(_native.library().jfgui_host_pump, budget, ctypes.byref(wait))
        timeout = None if wait.timeout_ms < 0 else wait.timeout_ms / 1000.0
        return Wait(fd=wait.fd, read=wait.read, write=wait.write, timeout=timeout)

    def fileno(self) -> int:
        """The connection's file descriptor, -1 while disconnected."""
        fd = ctypes.c_int32()
        self._call(_native.library().jfgui_host_fd, ctypes.byref(fd))
        return fd.value

    def set_enabled(self, enabled: bool) -> None:
        """Enables or disables calls from clients (off at first: enabling is the app's
        decision, e.g. a checkbox the user ticks). Disabling refuses calls at once, and the
        daemon removes the app's endpoint."""
        self._call(_native.library().jfgui_host_set_enabled, enabled)

    def info(self) -> Info:
        """Connected, registered, enabled."""
        info = _native.InfoC()
        self._call(_native.library().jfgui_host_info, ctypes.byref(info))
        return Info(connected=info.connected, registered=info.registered, enabled=info.enabled)

    def serve_stdio(self) -> None:
        """Serves the host channel on stdin/stdout until stdin ends (``jfgui-agent
        headless``; see :func:`headless_requested`). Blocking; enables the host first;
        nothing else may write to stdout meanwhile."""
        self._call(_native.library().jfgui_host_serve_stdio)

    def run(self) -> None:
        """Pumps forever, waiting in ``select``: for apps without an event loop of their own."""
        import selectors

        with selectors.DefaultSelector() as selector:
            while True:
                wait = self.pump()
                events = (selectors.EVENT_READ if wait.read else 0) | (selectors.EVENT_WRITE if wait.write else 0)
                if wait.fd >= 0 and events:
                    selector.register(wait.fd, events)
                    selector.select(wait.timeout)
                    selector.unregister(wait.fd)
                else:
                    selector.select(wait.timeout if wait.timeout is not None else 3600.0)

    def close(self) -> None:
        """Says ``bye`` to the daemon and frees the handle (also done when the object is
        collected). Raises :class:`JfguiError` (``REENTRANT``) inside one of its own methods,
        where closing is not allowed."""
        if self._handle is None:
            return
        status = _native.library().jfgui_host_close(self._handle)
        if status == Status.REENTRANT:
            _check(self._handle, status)
        # The handle is gone whatever else the status says; the finalizer must not free it
        # again (and may drop the callbacks now).
        self._finalizer.detach()
        self._handle = None

    def __enter__(self: _H) -> _H:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def answer(self, ticket: str, answer: Answer) -> bool:
        """The user's answer to the prompt of ``ticket`` (after :meth:`confirm` returned
        ``None``); on a yes the call runs now (its update is written first). ``False`` when
        nothing waits under the ticket any more (withdrawn, cancelled, answered): the answer
        is ignored. Not allowed inside the host's own methods (raises ``REENTRANT``)."""
        if answer == Answer.LATER:
            raise ValueError("an answer is ALLOW, ALLOW_ALWAYS, DENY or NO_UI")
        if self._handle is None:
            raise JfguiError(Status.WRONG_STATE, "the host is closed")
        tid, tlen = _text(ticket)
        status = _native.library().jfgui_host_answer(self._handle, tid, tlen, int(answer))
        if status == Status.TASK:
            return False
        _check(self._handle, status)
        return True

    # ---- tasks -------------------------------------------------------------------------

    def task_progress(self, task_id: str, done: int, total: Optional[int] = None, message: Optional[str] = None) -> None:
        """Reports progress of a running task (``done`` of ``total`` units)."""
        tid, tlen = _text(task_id)
        total_c = ctypes.byref(ctypes.c_uint64(total)) if total is not None else None
        msg, mlen = _text(message) if message is not None else (None, 0)
        self._call(_native.library().jfgui_host_task_progress, tid, tlen, done, total_c, msg, mlen)

    def task_complete(self, task_id: str, result: Any) -> None:
        """Finishes a task with ``result`` (any JSON value)."""
        tid, tlen = _text(task_id)
        data = _json_bytes(result)
        self._call(_native.library().jfgui_host_task_complete, tid, tlen, data, len(data))

    def task_fail(self, task_id: str, message: str, code: Optional[str] = None) -> None:
        """Finishes a task with ``failed/host_error{code}``."""
        tid, tlen = _text(task_id)
        c, clen = _text(code) if code is not None else (None, 0)
        msg, mlen = _text(message)
        self._call(_native.library().jfgui_host_task_fail, tid, tlen, c, clen, msg, mlen)

    def task_cancelled(self, task_id: str) -> None:
        """Marks a task cancelled (after :meth:`task_cancel_requested`, or on the app's own)."""
        tid, tlen = _text(task_id)
        self._call(_native.library().jfgui_host_task_cancelled, tid, tlen)

    def task_state(self, task_id: str) -> TaskState:
        """Where task ``task_id`` is (``UNKNOWN`` for an id the library does not hold)."""
        tid, tlen = _text(task_id)
        state = ctypes.c_int32()
        self._call(_native.library().jfgui_host_task_state, tid, tlen, ctypes.byref(state))
        return TaskState(state.value)


def _close(handle: int, callbacks: _native.Callbacks) -> None:
    """Frees the handle; `callbacks` is only held so the ctypes thunks outlive it."""
    del callbacks
    status = _native.library().jfgui_host_close(handle)
    if status != Status.OK:
        print(f"jfgui-host: closing the handle failed: {Status(status).name}", file=sys.stderr)


def _overrides(host: Host, name: str) -> bool:
    return getattr(type(host), name) is not getattr(Host, name)


def _callbacks_for(host: Host) -> _native.Callbacks:
    """The callback table for `host`: a member for each method it overrides (NULL for the
    rest, so the library's defaults apply), each reaching `host` through a weak reference."""
    me = weakref.ref(host)
    lib = _native.library()

    def text(ptr: Optional[int], length: int) -> str:
        return ctypes.string_at(ptr, length).decode("utf-8") if ptr is not None and length else ""

    def value(ptr: Optional[int], length: int) -> Any:
        return json.loads(ctypes.string_at(ptr, length)) if ptr is not None and length else None

    def reply_json(reply: Optional[int], result: Any) -> None:
        data = _json_bytes(result)
        lib.jfgui_reply_json(reply, data, len(data))

    def reply_error(reply: Optional[int], error: HostError) -> None:
        code, clen = _text(error.code) if error.code is not None else (None, 0)
        msg, mlen = _text(error.message)
        lib.jfgui_reply_error(reply, code, clen, msg, mlen)

    def execute(_u: Any, action: Any, action_len: int, data: Any, data_len: int, _info: Any, reply: Any) -> None:
        h = me()
        if h is None:
            return
        name = text(action, action_len)
        try:
            result = getattr(h, h._handlers[name])(value(data, data_len))
            if isinstance(result, Deferred):
                tid, tlen = _text(result.task_id)
                lib.jfgui_reply_deferred(reply, tid, tlen)
            else:
                reply_json(reply, result)
        except HostError as e:
            reply_error(reply, e)
        except Exception:
            _report(f"action {name}")

    def revision(_u: Any) -> int:
        h = me()
        try:
            return UNREADABLE_REVISION if h is None else int(h.revision())
        except Exception:
            _report("revision()")
            return UNREADABLE_REVISION

    callbacks = _native.Callbacks()
    callbacks.execute = _native.EXECUTE(execute)
    callbacks.revision = _native.REVISION(revision)

    def guarded(name: str, fallback: Any, body: Callable[[Host], Any], host_errors: bool = False) -> Any:
        """Runs `body` on the host; an exception is reported and gives `fallback`, except a
        HostError where the method may raise one (`host_errors`): that one propagates."""
        h = me()
        if h is None:
            return fallback
        try:
            return body(h)
        except HostError:
            if host_errors:
                raise
            _report(f"{name}()")
            return fallback
        except Exception:
            _report(f"{name}()")
            return fallback

    if _overrides(host, "capabilities"):
        callbacks.capabilities = _native.CAPABILITIES(lambda _u: guarded("capabilities", 0, lambda h: int(h.capabilities())))
    if _overrides(host, "availability"):

        def availability(_u: Any, action: Any, action_len: int, reply: Any) -> None:
            name = text(action, action_len)
            refused = guarded("availability", None, lambda h: h.availability(name))
            if isinstance(refused, Unavailable):
                code, clen = _text(refused.code)
                why, wlen = _text(refused.explanation)
                lib.jfgui_reply_unavailable(reply, code, clen, why, wlen)

        callbacks.availability = _native.AVAILABILITY(availability)
    if _overrides(host, "inspect"):

        def inspect(_u: Any, data: Any, data_len: int, reply: Any) -> None:
            try:
                state = guarded("inspect", _NOTHING, lambda h: h.inspect(value(data, data_len)), True)
                if state is not _NOTHING:
                    reply_json(reply, state)
            except HostError as e:
                reply_error(reply, e)

        callbacks.inspect = _native.INSPECT(inspect)
    if _overrides(host, "supports_transaction"):
        callbacks.supports_transaction = _native.SUPPORTS_TRANSACTION(
            lambda _u, d, n: bool(guarded("supports_transaction", False, lambda h: h.supports_transaction(text(d, n))))
        )

        def begin(_u: Any, domains: Any, count: int, reply: Any) -> None:
            names = [text(domains[i].ptr, domains[i].len) for i in range(count)]
            try:
                guarded("begin_transaction", None, lambda h: h.begin_transaction(names), True)
            except HostError as e:
                reply_error(reply, e)

        callbacks.begin_transaction = _native.BEGIN_TRANSACTION(begin)
        callbacks.commit_transaction = _native.END_TRANSACTION(
            lambda _u: guarded("commit_transaction", None, lambda h: h.commit_transaction())
        )
        callbacks.rollback_transaction = _native.END_TRANSACTION(
            lambda _u: guarded("rollback_transaction", None, lambda h: h.rollback_transaction())
        )
    if _overrides(host, "resources"):

        def list_resources(_u: Any, reply: Any) -> None:
            listed = guarded("resources", None, lambda h: h.resources())
            if listed is not None:
                reply_json(reply, listed)

        callbacks.list_resources = _native.LIST_RESOURCES(list_resources)
    if _overrides(host, "read_resource"):

        def read_resource(_u: Any, uri: Any, uri_len: int, offset: int, limit: int, reply: Any) -> None:
            name = text(uri, uri_len)
            try:
                chunk = guarded("read_resource", None, lambda h: h.read_resource(name, offset, limit), True)
            except HostError as e:
                reply_error(reply, e)
                return
            if isinstance(chunk, ResourceChunk):
                mime, mlen = _text(chunk.mime_type)
                lib.jfgui_reply_resource(reply, mime, mlen, chunk.data, len(chunk.data), chunk.total_size)

        callbacks.read_resource = _native.READ_RESOURCE(read_resource)
    if _overrides(host, "task_cancel_requested"):
        callbacks.cancel_task = _native.CANCEL_TASK(
            lambda _u, t, n: guarded("task_cancel_requested", None, lambda h: h.task_cancel_requested(text(t, n)))
        )
    if _overrides(host, "tick"):

        def tick(_u: Any) -> int:
            seconds = guarded("tick", None, lambda h: h.tick())
            if seconds is None or not math.isfinite(seconds) or seconds < 0:
                return -1
            return min(int(math.ceil(seconds * 1000)), 2**62)

        callbacks.tick = _native.TICK(tick)
    if _overrides(host, "confirm"):

        def confirm(_u: Any, c: Any) -> int:
            c = c.contents
            details = value(c.json.ptr, c.json.len) or {}
            confirmation = Confirmation(
                ticket=text(c.ticket.ptr, c.ticket.len),
                action=text(c.action.ptr, c.action.len),
                title=text(c.title.ptr, c.title.len),
                summary=text(c.summary.ptr, c.summary.len),
                agent_name=text(c.agent_name.ptr, c.agent_name.len),
                agent_label=text(c.agent_label.ptr, c.agent_label.len),
                may_always=bool(c.may_always),
                calls=details.get("calls", []),
                batch_len=details.get("batchLen"),
                agent=details.get("agent"),
            )
            answer = guarded("confirm", Answer.NO_UI, lambda h: h.confirm(confirmation))
            if answer is None:
                return int(Answer.LATER)
            return int(answer) if isinstance(answer, Answer) and answer != Answer.LATER else int(Answer.NO_UI)

        callbacks.confirm = _native.CONFIRM(confirm)
    if _overrides(host, "withdraw_confirmation"):
        callbacks.withdraw_confirmation = _native.WITHDRAW_CONFIRMATION(
            lambda _u, t, n: guarded("withdraw_confirmation", None, lambda h: h.withdraw_confirmation(text(t, n)))
        )
    return callbacks


#: "The method raised": distinct from every value a method may return.
_NOTHING = object()
