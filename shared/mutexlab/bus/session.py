"""A session with the broker: one connection and one channel, re-established when lost; with a
cluster's nodes in ``url``, after a lost connection the next node first (failover: docs/cluster.md).
What the channel is for — confirms, declarations, consumers — is the subclass's (``rabbit.Bus``)."""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Callable
from typing import Any

import pika

from .amqp import LOST, REFUSED_CREDENTIALS, TransportError, cause, connect_any, redact
from .broker import node_urls
from .topology import Topology

log = logging.getLogger("mutexlab.transport")

PRECONDITION_FAILED = 406  # AMQP reply code: e.g. a queue re-declared with other arguments


class Session:
    """Invariant: ``channel`` is None or open on ``conn``; ``generation`` counts the channels
    opened, so what came on an older one (a delivery to ack) is told apart."""

    def __init__(
        self, url: str, topology: Topology, connect_timeout: float, name: str, first_node: int | None
    ) -> None:
        self.url = url
        self.nodes = node_urls(url)
        # The node to try first: random unless given, so a run's processes spread over a cluster.
        self._node = random.randrange(len(self.nodes)) if first_node is None else first_node % len(self.nodes)
        self.node: str | None = None  # the node connected to (host:port), for logs
        self.name = name
        self.topology = topology
        self.connect_timeout = connect_timeout
        self.generation = 0
        self.reconnects = 0
        self.conn: Any = None  # amqp.Connection while connected
        self.channel: Any = None  # its amqp.Channel, opened by ``_open``

    def _open(self) -> None:
        """Open ``channel`` on ``conn`` and make it ready (the subclass's)."""
        raise NotImplementedError

    def _pending(self) -> int:
        """Messages the reconnect published again (for its log line)."""
        return 0

    def connect(self) -> None:
        """Connect to a node (``amqp.connect_any``, from the one to try first), then open the channel
        (``_open``); whatever fails on the way is tried again after a growing pause, until
        ``connect_timeout``. Logs each node that did not answer, and once that the broker cannot be
        reached yet. TransportError when the broker refuses the credentials or a declaration, or
        nothing worked in time."""
        deadline = time.monotonic() + self.connect_timeout
        # Shown by the broker (management UI, rabbitmqctl list_connections): which run, which process.
        properties = {"connection_name": f"mutexlab {self.topology.run_id} {self.name}"}
        delay, warned = 0.2, False
        while True:
            try:
                self.conn, self._node = connect_any(
                    self.url,
                    self._node,
                    lambda params: setattr(params, "client_properties", properties),
                    lambda node, exc: log.warning(
                        "%s: cannot connect to %s: %s", self.name, node, cause(exc)
                    ),
                )
                params = pika.URLParameters(self.nodes[self._node])
                self.node = f"{params.host}:{params.port}"
                self._open()
                return
            except REFUSED_CREDENTIALS as exc:
                raise TransportError(
                    f"the broker refused the credentials of {redact(self.url)}: {exc!r}"
                ) from None
            except LOST as exc:
                connected = self.conn is not None  # the channel failed, not the connection
                self._drop()
                if (
                    isinstance(exc, pika.exceptions.ChannelClosedByBroker)
                    and exc.reply_code == PRECONDITION_FAILED
                ):
                    raise TransportError(
                        f"the broker refused a declaration of run {self.topology.run_id}: {exc.reply_text} "
                        f"(this process declares {self.topology.queue_type} queues, "
                        f"{'durable' if self.topology.durable else 'not durable'}: every process of a run "
                        "needs the same QUEUE_TYPE and DELIVERY and, with QUEUE_TYPE=auto, as many nodes in "
                        "AMQP_URL)"
                    ) from None
                if time.monotonic() >= deadline:
                    raise TransportError(
                        f"cannot reach RabbitMQ at {redact(self.url)} within {self.connect_timeout:g}s: {exc!r}"
                    ) from None
                if not connected and not warned:  # once: the retries themselves stay quiet
                    warned = True
                    log.warning(
                        "cannot reach RabbitMQ at %s yet (%r); retrying for up to %gs",
                        redact(self.url),
                        exc,
                        max(0.0, deadline - time.monotonic()),
                    )
                delay = 0.2 if connected else delay
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def reconnect(self, why: BaseException) -> None:
        lost = self.node
        log.warning("connection to %s lost (%r); reconnecting", lost, why)
        self._drop()
        self.reconnects += 1
        self._node = (self._node + 1) % len(self.nodes)  # a cluster: another node first (one: the same)
        started = time.monotonic()
        self.connect()
        log.warning(
            "reconnected (reconnect #%d) to %s%s in %.2fs; re-published %d unconfirmed",
            self.reconnects,
            self.node,
            "" if self.node == lost else f" (failover from {lost})",
            time.monotonic() - started,
            self._pending(),
        )

    def _drop(self) -> None:
        conn, self.conn, self.channel = self.conn, None, None
        if conn is not None:
            with contextlib.suppress(Exception):  # it is already broken
                conn.close()

    def call(self, action: Callable[[Any], Any]) -> Any:
        """``action(channel)`` on the current channel (a declaration ...); after a lost connection
        reconnect and call it again on the new one. The action must be idempotent."""
        return self._guard(lambda: action(self.channel))

    def _guard(self, action: Callable[[], Any]) -> Any:
        """Run ``action`` on the current channel; after a lost connection reconnect and retry."""
        while True:
            if self.channel is None:
                self.connect()
            try:
                return action()
            except LOST as exc:
                self.reconnect(exc)
