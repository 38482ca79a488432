"""Pumping a :class:`~jfgui_host.Host` from an existing event loop, without threads.

Every loop does the same: call :meth:`Host.pump`, then watch the returned ``fd`` (readable,
and writable while output is pending) and arm a timer for ``timeout``; when either fires,
pump again. The fd can change after a reconnect, so it is re-armed after every pump. An idle,
connected app has no timer at all: it wakes up only when the daemon sends something.

- Tk: :class:`TkPump` (``tkinter.Misc.createfilehandler`` and ``after``; Unix).
- asyncio: :class:`AsyncioPump` (``add_reader`` / ``add_writer`` and ``call_later``).
- Qt: the same with ``QSocketNotifier`` (Read and Write) on ``wait.fd`` and a single-shot
  ``QTimer`` for ``wait.timeout``; re-create the notifiers when the fd changes.
"""

from __future__ import annotations

import asyncio
from typing import Any, Optional

from .host import Host, Wait


class _Pump:
    """The loop-independent part: pump, then re-arm what the answer asks for."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._fd = -1
        self._mask = (False, False)

    def pump(self) -> None:
        """Pumps once and re-arms the fd watch and the timer."""
        wait = self.host.pump()
        mask = (wait.read, wait.write)
        if wait.fd != self._fd or mask != self._mask:
            if self._fd >= 0:
                self._unwatch(self._fd)
            if wait.fd >= 0 and (wait.read or wait.write):
                self._watch(wait.fd, wait.read, wait.write)
            self._fd, self._mask = wait.fd, mask
        self._schedule(wait)

    def stop(self) -> None:
        """Stops watching (the host stays open)."""
        if self._fd >= 0:
            self._unwatch(self._fd)
        self._fd, self._mask = -1, (False, False)
        self._schedule(Wait(fd=-1, read=False, write=False, timeout=None))

    def _watch(self, fd: int, read: bool, write: bool) -> None:
        raise NotImplementedError

    def _unwatch(self, fd: int) -> None:
        raise NotImplementedError

    def _schedule(self, wait: Wait) -> None:
        raise NotImplementedError


class TkPump(_Pump):
    """Pumps ``host`` from Tk's event loop: ``TkPump(root, host).pump()`` once after
    :meth:`Host.connect`, then the loop keeps it going."""

    def __init__(self, widget: Any, host: Host) -> None:
        super().__init__(host)
        self._widget = widget
        self._timer: Optional[str] = None

    def _watch(self, fd: int, read: bool, write: bool) -> None:
        import tkinter

        mask = (tkinter.READABLE if read else 0) | (tkinter.WRITABLE if write else 0)
        self._widget.tk.createfilehandler(fd, mask, lambda _fd, _mask: self.pump())

    def _unwatch(self, fd: int) -> None:
        self._widget.tk.deletefilehandler(fd)

    def _schedule(self, wait: Wait) -> None:
        if self._timer is not None:
            self._widget.after_cancel(self._timer)
            self._timer = None
        if wait.timeout is not None:
            self._timer = self._widget.after(max(1, round(wait.timeout * 1000)), self._fire)

    def _fire(self) -> None:
        self._timer = None
        self.pump()


class AsyncioPump(_Pump):
    """Pumps ``host`` from an asyncio loop: ``AsyncioPump(host).pump()`` once (inside the
    running loop) after :meth:`Host.connect`."""

    def __init__(self, host: Host, loop: Optional[asyncio.AbstractEventLoop] = None) -> None:
        super().__init__(host)
        self._loop = loop or asyncio.get_running_loop()
        self._timer: Optional[asyncio.TimerHandle] = None

    def _watch(self, fd: int, read: bool, write: bool) -> None:
        if read:
            self._loop.add_reader(fd, self.pump)
        if write:
            self._loop.add_writer(fd, self.pump)

    def _unwatch(self, fd: int) -> None:
        self._loop.remove_reader(fd)
        self._loop.remove_writer(fd)

    def _schedule(self, wait: Wait) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if wait.timeout is not None:
            self._timer = self._loop.call_later(wait.timeout, self.pump)
