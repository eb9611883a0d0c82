"""pika's I/O, run only when turned, with its frames joined into few writes (docs/architecture.md#wire).

pika's asynchronous connection runs on any I/O services implementing its public
``AbstractIOServices`` interface (``SelectConnection(custom_ioloop=...)``); pika's own
``SelectorIOServicesAdapter`` provides them on any loop implementing ``AbstractSelectorIOLoop``.
``Loop`` is such a loop, on the standard ``selectors``, with no thread of its own: it never runs
between the caller's calls; ``turn(t)`` handles socket events, timers and callbacks for up to
``t`` seconds, and a callback ends the turn with ``wake()``. ``JoinedServices`` are pika's services
on it, each connection's transport wrapped so that the frames written between two polls leave in
one write (pika writes each frame with its own system call: a publish is three).
"""

from __future__ import annotations

import heapq
import itertools
import selectors
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from pika.adapters.utils.nbio_interface import AbstractStreamProtocol, AbstractStreamTransport
from pika.adapters.utils.selector_ioloop_adapter import AbstractSelectorIOLoop, SelectorIOServicesAdapter

# Buffered frames are joined into socket writes of at most this many bytes (``JoinedWrites``).
WRITE_LIMIT = 128 * 1024


class Loop(AbstractSelectorIOLoop):
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
        self._thread = threading.get_ident()
        # another thread's add_callback (pika resolves host names on one) interrupts a wait here
        self._interrupt, self._interrupter = socket.socketpair()
        self._interrupt.setblocking(False)
        self._interrupter.setblocking(False)
        self.add_handler(self._interrupt.fileno(), lambda _fd, _events: self._drain(), self.READ)
        self._stopping = False
        self.woken = False
        self.before_poll: list[Callable[[], None]] = []  # called before each wait for socket events

    def _drain(self) -> None:
        try:  # noqa: SIM105 - on every turn of the loop: a plain try costs nothing when nothing is raised
            self._interrupt.recv(512)
        except BlockingIOError:
            pass

    def close(self) -> None:
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

    def update_handler(self, fd: int, events: int) -> None:
        self._selector.modify(fd, events & (self.READ | self.WRITE))

    def remove_handler(self, fd: int) -> None:
        del self._handlers[fd]
        self._selector.unregister(fd)

    def once(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds for socket events (less when a timer is due sooner),
        handle them, then the callbacks asked for and the timers due."""
        for hook in self.before_poll:
            hook()
        if self._callbacks:
            timeout = 0.0
        elif self._timers:
            timeout = min(timeout, max(0.0, self._timers[0][0] - time.monotonic()))
        for key, events in self._selector.select(timeout):
            handler = self._handlers.get(key.fd)  # a handler before it may have removed this one
            if handler is not None:
                handler(key.fd, events)
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


class JoinedWrites(AbstractStreamTransport):
    """pika's transport ``inner``, the frames written to it between two polls of ``loop`` joined:
    same bytes, same order, in pieces of at most ``limit`` bytes (a large backlog is not copied
    whole). Invariant: what is pending is written before the loop next waits for events."""

    def __init__(self, inner: AbstractStreamTransport, loop: Loop, limit: int = WRITE_LIMIT) -> None:
        self.inner = inner
        self.limit = limit
        self.pending: list[bytes] = []
        self.pending_size = 0
        loop.before_poll.append(self.flush)

    def write(self, data: bytes) -> None:
        if self.pending and self.pending_size + len(data) > self.limit:
            self.flush()
        self.pending.append(data)
        self.pending_size += len(data)

    def flush(self) -> None:
        if self.pending:
            data = self.pending[0] if len(self.pending) == 1 else b"".join(self.pending)
            self.pending, self.pending_size = [], 0
            self.inner.write(data)

    def get_write_buffer_size(self) -> int:
        return self.pending_size + self.inner.get_write_buffer_size()

    def get_protocol(self) -> AbstractStreamProtocol:
        return self.inner.get_protocol()

    def abort(self) -> None:
        self.pending, self.pending_size = [], 0
        self.inner.abort()


class _Forward(AbstractStreamProtocol):
    """pika's protocol ``inner`` (its connection), given ``JoinedWrites`` around its transport."""

    def __init__(self, inner: AbstractStreamProtocol, services: JoinedServices) -> None:
        self.inner = inner
        self.loop = services.loop
        self.services = services
        self.joined: JoinedWrites | None = None

    def connection_made(self, transport: AbstractStreamTransport) -> None:
        self.joined = JoinedWrites(transport, self.loop)
        self.services.transports.append(self.joined)
        self.inner.connection_made(self.joined)

    def connection_lost(self, error: BaseException | None) -> None:
        if self.joined is not None and self.joined.flush in self.loop.before_poll:
            self.loop.before_poll.remove(self.joined.flush)
        self.inner.connection_lost(error)

    def eof_received(self) -> bool:
        return bool(self.inner.eof_received())

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)


class JoinedServices(SelectorIOServicesAdapter):
    """pika's I/O services on ``loop``, each streaming connection's writes joined (``JoinedWrites``)."""

    def __init__(self, loop: Loop) -> None:
        super().__init__(loop)
        self.loop = loop
        self.transports: list[JoinedWrites] = []  # one per connection made

    def create_streaming_connection(
        self,
        protocol_factory: Callable[[], AbstractStreamProtocol],
        sock: socket.socket,
        on_done: Callable[[Any], None],
        ssl_context: Any = None,
        server_hostname: str | None = None,
    ) -> Any:
        def done(result: Any) -> None:
            if isinstance(result, tuple):  # (transport, protocol): pika's own, as it gave them
                forward = result[1]
                result = (forward.joined, forward.inner)
            on_done(result)

        return super().create_streaming_connection(
            lambda: _Forward(protocol_factory(), self), sock, done, ssl_context, server_hostname
        )
