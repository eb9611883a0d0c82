"""The explorer server's connections (server.py): bounded in number and in time.

``Deadline`` reads a request within a deadline in all, however slowly its bytes trickle in (a
socket timeout alone bounds each read, not their sum); ``Bounded`` serves at most ``slots``
connections at once, each on its own thread, and closes one that finds no slot in time;
``JsonErrors`` answers what ``http.server`` refuses itself (a request line over 65,536 bytes, a
header too long) in JSON, as every answer of the API.
"""

from __future__ import annotations

import io
import json
import socket
import sys
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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


class JsonErrors(BaseHTTPRequestHandler):
    """A handler whose refusals by ``http.server`` itself (414 a request line over 65,536 bytes,
    431 a header too long or more than 100 of them, 400 a malformed request line, 505 an
    HTTP version it does not speak) are ``{"error": …, "status": …}``, not
    an HTML page: every answer of the API is JSON."""

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        said = message or self.responses.get(code, ("error", ""))[0]
        data = json.dumps({"error": said, "status": code}).encode("utf-8")
        self.log_error("code %d, message %s", code, said)
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Connection", "close")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.close_connection = True
        if (
            self.command != "HEAD"
            and code >= 200
            and code not in (HTTPStatus.NO_CONTENT, HTTPStatus.NOT_MODIFIED)
        ):
            self.wfile.write(data)
