"""The services' looks at the run's queues on the broker, each a passive declare: the monitor
renews their leases (``renew``) and asks whether one is there (``queue_exists``); a participant
asks whether the monitor consumes its queue (``ConsumerProbe``). A missing queue closes the
channel it is asked on (``ChannelClosedByBroker``, 404)."""

from __future__ import annotations

from typing import Any

import pika

from ..bus.amqp import CLOSE_TIMEOUT, Channel, Connection

LANES = 8  # channels a renewal round asks on at once: pika sends a channel's next call at its reply


def renew(conn: Connection, queues: list[str]) -> list[str]:
    """Renew the lease (``x-expires``) of each of ``queues`` by a passive declare; the queues that
    are gone. Each declare waits for its reply: one sent with AMQP's nowait renews no lease on
    RabbitMQ (the queue expired while renewed so). pika sends a channel's calls one reply after
    another, so the round asks on ``LANES`` channels at once, opened together and closed together
    (one round trip a queue, serially, took 16–57 s at P = 50 on a loaded host:
    docs/benchmarks.md). A missing queue closes the channel it is asked on (404), and the round is
    asked again one queue at a time to name every queue gone (``_renew_each``)."""
    if not queues:
        return []
    lanes = min(LANES, len(queues))
    opened: list[Any] = []
    for _ in range(lanes):
        conn.pika.channel(on_open_callback=conn.waking(opened.append))
    conn.until(lambda: len(opened) == lanes)
    channels = [Channel(conn, channel) for channel in opened]
    replies: list[Any] = []
    for k, queue in enumerate(queues):
        channels[k % lanes].nowait.queue_declare(queue, passive=True, callback=conn.waking(replies.append))
    conn.until(lambda: len(replies) == len(queues) or any(channel.is_closed for channel in channels))
    for channel in channels:
        if channel.is_open:
            channel.nowait.close()
    conn.until(lambda: all(channel.is_closed for channel in channels), CLOSE_TIMEOUT)
    return [] if len(replies) == len(queues) else _renew_each(conn, queues)


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
