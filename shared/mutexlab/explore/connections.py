"""The explorer server's connections (server.py): bounded in number and in time.

``Deadline`` reads a request within a deadline in all, however slowly its bytes trickle in (a
socket timeout alone bounds each read, not their sum); ``Bounded`` serves at most ``slots``
connections at once, each on its own thread, and closes one that finds no slot in time.
"""

from __future__ import annotations

import io
import socket
import sys
import threading
import time
from http.server import ThreadingHTTPServer


class Deadline(io.RawIOBase):
    """The connection as the handler reads it, each read bounded by what is left until
    ``deadline`` (``time.monotonic()``; None: the socket's own timeout alone): TimeoutError
    once it has passed, however slowly the bytes trickle in."""

    def __init__(self, sock: socket.socket, timeout: float) -> None:
        self.sock = sock
        self.timeout = timeout
        self.deadline: float | None = None

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[override]
        if self.deadline is not None:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the request's deadline passed")
            self.sock.settimeout(min(left, self.timeout))
        return self.sock.recv_into(buffer)


class Bounded(ThreadingHTTPServer):
    """A ``ThreadingHTTPServer`` that serves at most ``slots`` connections at once; its handler
    class's ``timeout`` is how long a connection waits for one."""

    def __init__(self, address: tuple[str, int], handler: type, slots: int) -> None:
        super().__init__(address, handler)
        self.slots = threading.BoundedSemaphore(slots)

    def process_request(self, request, client_address) -> None:
        """Serve the connection on a thread of its own once a slot is free (waiting up to the
        handler's ``timeout``, while further ones wait in the listen backlog); else close it."""
        if not self.slots.acquire(timeout=getattr(self.RequestHandlerClass, "timeout", None) or 10.0):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except Exception:  # no thread started (it would release the slot itself): free it here
            self.slots.release()
            raise
        # An interrupt (Ctrl-C, SIGINT) while the thread starts leaves the slot to the thread: it
        # may have run already, and releasing it twice would turn the interrupt into a ValueError.

    def process_request_thread(self, request, client_address) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address) -> None:
        """A connection the client or a deadline cut short is no error worth a traceback."""
        if not isinstance(sys.exc_info()[1], OSError):
            super().handle_error(request, client_address)
