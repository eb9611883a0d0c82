"""The AMQP client (docs/wire.md#wire-client): pika's asynchronous connection on our own I/O loop
(``loop.Loop``), driven from the caller's thread through pika's public interfaces only."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any

import pika
from pika.exceptions import AMQPChannelError, AMQPConnectionError, ChannelWrongStateError

from .broker import node_urls
from .loop import Loop

PIKA_VERSIONS = ">=1.3,<2"  # as pinned in pyproject.toml (tests/test_amqp.py compares them)

LOST = (AMQPConnectionError, AMQPChannelError, ConnectionError, OSError)
REFUSED_CREDENTIALS = (
    pika.exceptions.ProbableAuthenticationError,
    pika.exceptions.AuthenticationError,
    pika.exceptions.ProbableAccessDeniedError,
)
CLOSE_TIMEOUT = 5.0  # seconds a clean close waits for the broker's answer
# pika's channel methods that ``Channel`` calls waiting for the broker's reply
WAITING = frozenset(
    f"{o}_{v}" for o in ("exchange", "queue") for v in ("declare", "delete", "bind", "unbind")
)
WAITING |= {"basic_qos"}

log = logging.getLogger("mutexlab.transport")


class TransportError(RuntimeError):
    """The broker cannot be used (unreachable, refused credentials, a publish nacked)."""


def _open_error(error: BaseException) -> BaseException:
    """What a failed connection attempt raises, as BlockingConnection does: the node's own error
    (refused credentials as themselves), a socket's as ``AMQPConnectionError``. pika wraps it in its
    connection workflow's failure (``pika.AMQPConnectionWorkflow``: every attempt's error in
    ``exceptions``, a failed phase's cause in ``exception``); only those attributes are read."""
    if isinstance(error, AMQPConnectionError) and error.args and hasattr(error.args[0], "exceptions"):
        error = error.args[0]
    attempts = getattr(error, "exceptions", None)
    if attempts:
        error = attempts[-1]
        why = getattr(error, "exception", None)
        if isinstance(why, OSError):  # the socket did not connect
            error = AMQPConnectionError(error)
        elif isinstance(why, BaseException):
            error = why
    return error


class Connection:
    """A pika ``SelectConnection`` on a ``Loop`` of its own, opened when made (or raising why not)."""

    def __init__(self, params: pika.connection.Parameters) -> None:
        self.loop = Loop()
        self.lost: BaseException | None = None  # why the connection closed (None: open)
        done: list[Any] = []
        self.pika = pika.SelectConnection(
            params,
            on_open_callback=self.waking(done.append),
            on_open_error_callback=self.waking(lambda _connection, error: done.append(error)),
            on_close_callback=self._on_close,
            custom_ioloop=self.loop,
        )
        try:
            self.until(lambda: bool(done))
        except BaseException:
            self.loop.close()
            raise
        if isinstance(done[0], BaseException):
            self.loop.close()
            raise _open_error(done[0])

    def waking(self, callback: Callable[..., Any]) -> Callable[..., None]:
        """``callback`` for pika, ending the current turn of the I/O once it has run."""

        def call(*args: Any) -> None:
            callback(*args)
            self.loop.wake()

        return call

    def _on_close(self, _connection: Any, reason: BaseException) -> None:
        self.lost = reason
        self.loop.wake()

    @property
    def is_open(self) -> bool:
        return self.lost is None and self.pika.is_open

    def wake(self) -> None:
        """End the current turn of ``process_data_events`` once the callback calling this returns."""
        self.loop.wake()

    def process_data_events(self, time_limit: float = 0.0) -> None:
        """Run the I/O for up to ``time_limit`` seconds (less if a callback wakes the loop); raise
        the connection's loss."""
        if self.lost is None:
            self.loop.turn(time_limit)
        if self.lost is not None:
            raise self.lost

    def until(self, ready: Callable[[], bool], timeout: float | None = None) -> bool:
        """Run the I/O until ``ready()`` (True) or ``timeout`` seconds passed (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not ready():
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return False
            self.process_data_events(min(left, 1.0))
        return True

    def channel(self) -> Channel:
        opened: list[Any] = []
        self.pika.channel(on_open_callback=self.waking(opened.append))
        self.until(lambda: bool(opened))
        return Channel(self, opened[0])

    def close(self) -> None:
        """Close cleanly if open (waiting briefly for the broker), and release the loop."""
        try:
            if self.lost is None and self.pika.is_open:
                self.pika.close()
                self.until(lambda: self.lost is not None, CLOSE_TIMEOUT)
        except LOST:
            pass
        finally:
            self.loop.close()


class Channel:
    """A channel whose calls wait for their replies; ``nowait`` is pika's channel itself."""

    def __init__(self, connection: Connection, channel: pika.channel.Channel) -> None:
        self.connection = connection
        self.nowait = channel
        self.closed_by: BaseException | None = None  # why it closed (None: open)
        channel.add_on_close_callback(self._on_close)

    def _on_close(self, _channel: Any, reason: BaseException) -> None:
        self.closed_by = reason
        self.connection.wake()

    @property
    def is_open(self) -> bool:
        return self.closed_by is None and self.nowait.is_open

    @property
    def is_closed(self) -> bool:
        return not self.is_open

    def check(self) -> None:
        """Raise why the channel closed (the broker's refusal: ``ChannelClosedByBroker``), if it did."""
        if self.closed_by is not None:
            raise (
                self.closed_by
                if isinstance(self.closed_by, AMQPChannelError)
                else ChannelWrongStateError(repr(self.closed_by))
            )

    def _call(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``method(*args, **kwargs, callback=...)`` on pika's channel; the frame of its reply."""
        self.check()
        reply: list[Any] = []
        method(*args, callback=self.connection.waking(reply.append), **kwargs)
        self.connection.until(lambda: bool(reply) or self.closed_by is not None)
        if not reply:
            self.check()
        return reply[0]

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """``queue_declare``, ``queue_bind`` ... (``WAITING``): pika's method, waiting for its reply."""
        if name not in WAITING:
            raise AttributeError(name)
        return functools.partial(self._call, getattr(self.nowait, name))

    def confirm_delivery(self, on_confirm: Callable[[Any], None], on_return: Callable[..., None]) -> None:
        """Publisher confirms, each ``Basic.Ack``/``Basic.Nack`` to ``on_confirm`` (publishes do not
        wait for them), each returned message to ``on_return``."""
        self.nowait.add_on_return_callback(on_return)
        self._call(self.nowait.confirm_delivery, on_confirm)

    def basic_publish(
        self, exchange: str, routing_key: str, body: bytes, properties: Any = None, mandatory: bool = False
    ) -> None:
        """Buffered until the connection's next I/O writes it; nothing waits for a confirm."""
        self.nowait.basic_publish(exchange, routing_key, body, properties=properties, mandatory=mandatory)

    def close(self) -> None:
        if self.is_open:
            self.nowait.close()
            self.connection.until(lambda: self.closed_by is not None, CLOSE_TIMEOUT)


def connect_any(
    url: str,
    first: int = 0,
    configure: Callable[[Any], None] | None = None,
    failed: Callable[[str, BaseException], None] | None = None,
) -> tuple[Connection, int]:
    """A connection to the first node of ``url`` (one URL, or several comma-separated) that takes
    one, trying them in turn from index ``first``: ``(connection, index)``. ``configure(params)``
    may adjust each node's ``pika.URLParameters``; ``failed(node, error)`` hears of each node that
    did not answer (``host:port``). Refused credentials raise at once; when no node answers, the
    last node's error is raised."""
    nodes = node_urls(url)
    error: BaseException | None = None
    for k in range(len(nodes)):
        index = (first + k) % len(nodes)
        params = pika.URLParameters(nodes[index])
        if configure is not None:
            configure(params)
        try:
            return Connection(params), index
        except REFUSED_CREDENTIALS:
            raise
        except LOST as exc:
            error = exc
            if failed is not None:
                failed(f"{params.host}:{params.port}", exc)
    assert error is not None
    raise error


def quiet_pika() -> None:
    """Leave connection trouble to the bus's own log lines, one each (``Session.connect``): pika logs
    each lost connection and failed attempt as several ERRORs with a traceback."""
    logging.getLogger("pika").setLevel(logging.CRITICAL)


def cause(exc: BaseException) -> str:
    """The innermost error pika wrapped ``exc`` around, for a log line: ``ConnectionRefusedError(111,
    'Connection refused')`` rather than ``AMQPConnectionError((AMQPConnectorSocketConnectError(...),))``."""
    while True:
        inner = exc.args[0] if exc.args else getattr(exc, "exception", None)  # pika's two ways to wrap
        if not isinstance(inner, BaseException):
            return repr(exc)
        exc = inner


def redact(url: str) -> str:
    """The URL (or each of a cluster's URLs) without its credentials, for logs and errors."""
    out = []
    for node in node_urls(url):
        params = pika.URLParameters(node)
        vhost = "" if params.virtual_host == "/" else "/" + params.virtual_host
        out.append(f"{node.split('://', 1)[0]}://{params.host}:{params.port}{vhost}")
    return ",".join(out)
