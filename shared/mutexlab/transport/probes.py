"""The services' looks at the run's queues on the broker, each a passive declare: the monitor
renews their leases (``renew``) and asks whether one is there (``queue_exists``); a participant
asks whether the monitor consumes its queue (``ConsumerProbe``). A missing queue closes the
channel it is asked on (``ChannelClosedByBroker``, 404)."""

from __future__ import annotations

from typing import Any

import pika

from ..bus.amqp import Connection


def renew(conn: Connection, queues: list[str]) -> list[str]:
    """Renew the lease (``x-expires``) of each of ``queues`` by a passive declare; the queues that
    are gone. One round trip for them all: every declare but the last goes out without a reply
    (AMQP's nowait), the last waits for its own, and the broker handles a channel's methods in
    order, so each one before it is done by then (one round trip a queue, serially, took 16–57 s
    at P = 50 on a loaded host: docs/benchmarks.md). A missing queue closes the channel (404), and
    the round is asked again one queue at a time to name every queue gone (``_renew_each``)."""
    if not queues:
        return []
    channel = conn.channel()
    try:
        for queue in queues[:-1]:
            channel.nowait.queue_declare(queue, passive=True)
        channel.queue_declare(queues[-1], passive=True)
    except pika.exceptions.ChannelClosedByBroker:
        return _renew_each(conn, queues)
    channel.close()
    return []


def _renew_each(conn: Connection, queues: list[str]) -> list[str]:
    """``renew`` one queue at a time, each on an open channel (a missing queue closes the channel
    it is asked on): the queues that are gone."""
    gone = []
    channel = None
    for queue in queues:
        if channel is None or not channel.is_open:
            channel = conn.channel()
        try:
            channel.queue_declare(queue, passive=True)
        except pika.exceptions.ChannelClosedByBroker:
            gone.append(queue)
    if channel is not None and channel.is_open:
        channel.close()
    return gone


def queue_exists(conn: Connection, queue: str) -> bool:
    """Whether ``queue`` is there: a passive declare (``renew``, which also renews its lease)."""
    return not renew(conn, [queue])


class ConsumerProbe:
    """How many consumers ``queue`` has (0 when it is gone), asked again and again on one
    connection, on a channel kept for it: one round trip a look, where a channel of its own costs
    three (open, declare, close) and a channel the broker starts and stops each time. A missing
    queue closes the channel it is asked on (0 consumers): the next look opens another, and so
    does a new connection. A lost connection raises (``amqp.LOST``)."""

    def __init__(self, queue: str) -> None:
        self.queue = queue
        self._kept: tuple[Any, Any] | None = None  # (the connection, its channel for the looks)

    def consumers(self, conn: Connection) -> int:
        if self._kept is None or self._kept[0] is not conn or not self._kept[1].is_open:
            self._kept = (conn, conn.channel())
        try:
            return self._kept[1].queue_declare(self.queue, passive=True).method.consumer_count
        except pika.exceptions.ChannelClosedByBroker:
            self._kept = None
            return 0
