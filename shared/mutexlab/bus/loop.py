"""pika's I/O, run only when turned: a "custom I/O Loop object" for ``SelectConnection``, our own
code with no pika import (docs/wire.md#wire-client). While a TCP socket's writer runs the socket is
corked (TCP_CORK), so a message's frames leave together."""

from __future__ import annotations

import heapq
import itertools
import os
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any


class Loop:
    """An I/O loop on ``selectors`` that runs when turned (``turn``) and not otherwise.

    Invariant: a turn ends when its time is up or a callback called ``wake()`` during it (after
    the events at hand are handled); every turn polls the sockets at least once."""

    READ = selectors.EVENT_READ
    WRITE = selectors.EVENT_WRITE
    ERROR = 4  # never reported on its own: an error shows as readiness to read or write

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._handlers: dict[int, Callable[[int, int], None]] = {}
        self._timers: list[list] = []  # heap of [deadline, sequence, callback or None (removed)]
        self._sequence = itertools.count()
        self._callbacks: deque[Callable[[], None]] = deque()
        self._corks: dict[int, socket.socket | None] = {}  # fd → a handle to cork it by (TCP only)
        self._thread = threading.get_ident()
        # another thread's add_callback (pika resolves host names on one) interrupts a wait here
        self._interrupt, self._interrupter = socket.socketpair()
        self._interrupt.setblocking(False)
        self._interrupter.setblocking(False)
        self.add_handler(self._interrupt.fileno(), lambda _fd, _events: self._drain(), self.READ)
        self._stopping = False
        self.woken = False

    def _drain(self) -> None:
        try:  # noqa: SIM105 - on every turn of the loop: a plain try costs nothing when nothing is raised
            self._interrupt.recv(512)
        except BlockingIOError:
            pass

    def close(self) -> None:
        for cork in self._corks.values():
            _release(cork)
        self._corks.clear()
        self._selector.close()
        self._interrupt.close()
        self._interrupter.close()

    def call_later(self, delay: float, callback: Callable[[], Any]) -> list:
        entry = [time.monotonic() + delay, next(self._sequence), callback]
        heapq.heappush(self._timers, entry)
        return entry

    def remove_timeout(self, timeout_handle: Any) -> None:
        timeout_handle[2] = None  # dropped when its time comes

    def add_callback(self, callback: Callable[[], Any]) -> None:
        self._callbacks.append(callback)
        if threading.get_ident() != self._thread:
            try:  # noqa: SIM105 - the comment below says why it passes
                self._interrupter.send(b"!")
            except (BlockingIOError, OSError):
                pass  # already interrupted, or closed

    def add_handler(self, fd: int, handler: Callable[[int, int], None], events: int) -> None:
        self._handlers[fd] = handler
        self._selector.register(fd, events & (self.READ | self.WRITE))
        self._corks[fd] = _cork_handle(fd)

    def update_handler(self, fd: int, events: int) -> None:
        self._selector.modify(fd, events & (self.READ | self.WRITE))

    def remove_handler(self, fd: int) -> None:
        del self._handlers[fd]
        self._selector.unregister(fd)
        _release(self._corks.pop(fd, None))

    def once(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for socket events (less when a timer is due sooner),
        handle them, then the callbacks asked for and the timers due."""
        if self._callbacks:
            timeout = 0.0
        elif self._timers:
            timeout = min(timeout, max(0.0, self._timers[0][0] - time.monotonic()))
        for key, events in self._selector.select(timeout):
            handler = self._handlers.get(key.fd)  # a handler before it may have removed this one
            if handler is None:
                continue
            cork = self._corks.get(key.fd) if events & self.WRITE else None
            if cork is None:
                handler(key.fd, events)
                continue
            # the frames written in one go leave in full segments, not one segment per frame
            cork.setsockopt(socket.IPPROTO_TCP, TCP_CORK, 1)
            try:
                handler(key.fd, events)
            finally:
                if cork.fileno() != -1:
                    cork.setsockopt(socket.IPPROTO_TCP, TCP_CORK, 0)
        for _ in range(len(self._callbacks)):
            self._callbacks.popleft()()
        if self._timers:
            now = time.monotonic()
            while self._timers and self._timers[0][0] <= now:
                callback = heapq.heappop(self._timers)[2]
                if callback is not None:
                    callback()

    def turn(self, seconds: float) -> None:
        """Run the I/O for up to ``seconds``, less if a callback wakes the loop."""
        self.woken = False
        deadline = time.monotonic() + seconds
        while True:
            self.once(max(0.0, deadline - time.monotonic()))
            if self.woken or time.monotonic() >= deadline:
                return

    def wake(self) -> None:
        self.woken = True

    def start(self) -> None:
        while not self._stopping:
            self.once(5.0)
        self._stopping = False

    def stop(self) -> None:
        self._stopping = True


TCP_CORK: int = getattr(socket, "TCP_CORK", 0)  # Linux; 0: no such option here


def _cork_handle(fd: int) -> socket.socket | None:
    """A second handle on a TCP socket ``fd``, to set TCP_CORK on it; None for anything else."""
    if not TCP_CORK:
        return None
    copy = os.dup(fd)
    try:
        handle = socket.socket(fileno=copy)  # family and type read from the descriptor
    except OSError:  # not a socket
        os.close(copy)
        return None
    try:
        if handle.type != socket.SOCK_STREAM or handle.family not in (socket.AF_INET, socket.AF_INET6):
            raise OSError("not TCP")
        handle.setsockopt(socket.IPPROTO_TCP, TCP_CORK, 0)
    except OSError:
        handle.close()
        return None
    return handle


def _release(cork: socket.socket | None) -> None:
    """Close a cork handle, the cork lifted first: a writer that removes its own handler (pika's
    connector, once connected) must not leave the socket corked. The handle is a dup: the socket
    itself is pika's to close."""
    if cork is None:
        return
    try:  # noqa: SIM105 - a socket already shut down has nothing left to send
        cork.setsockopt(socket.IPPROTO_TCP, TCP_CORK, 0)
    except OSError:
        pass
    cork.close()
