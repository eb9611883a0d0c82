"""The run's topology on the broker (docs/wire.md#wire: the names, keys and bindings in full).
Every queue expires ``expires`` seconds after its last use (the monitor renews them:
``transport/probes.py``); declarations go out together with one wait (``_together``)."""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from .amqp import Connection, connect_any
from .broker import QUEUE_EXPIRES

# What the monitor's queue is bound to on the run's exchange (besides the unrouted messages).
MONITOR_KEYS = ("join.*", "audit.*", "status.*")
# Deleting a quorum queue waits up to 5 s (RabbitMQ's own delete timeout) for each of its members
# on a node that is down, and a channel runs one command at a time: the run's queues are deleted
# concurrently, each on a channel of its own, at most DELETE_CHANNELS at once; one whose deletion
# is not confirmed DELETE_TIMEOUT seconds after it was asked is given up (and reported).
DELETE_CHANNELS = 128
DELETE_TIMEOUT = 30.0
DELETE_SLICE = 0.05  # seconds of I/O at most between looks at which deletions are confirmed


# A channel method's name, its positional and its keyword arguments.
_Call = tuple[str, tuple, dict]


class _RunName:
    """A name of run ``R``'s topology: ``mutexlab.R`` followed by ``suffix``."""

    def __init__(self, suffix: str) -> None:
        self.suffix = suffix

    def __get__(self, topology: Topology, owner: type | None = None) -> str:
        return f"mutexlab.{topology.run_id}{self.suffix}"


@dataclass(frozen=True)
class Topology:
    run_id: str
    # "classic" or "quorum" (Raft-replicated, for a cluster: docs/cluster.md); every process of a run
    # must use the same, or the second to declare a queue is refused (PRECONDITION_FAILED).
    queue_type: str = "classic"
    # False with transient delivery: the queues live in the broker's memory only (lost in a restart).
    durable: bool = True
    # Seconds a queue lives unused (``x-expires``); 0: for ever. The same for every process of a run
    # (a queue declared again with another value is refused: PRECONDITION_FAILED).
    expires: float = QUEUE_EXPIRES

    exchange = _RunName("")
    dlx = _RunName(".dlx")
    unrouted = _RunName(".unrouted")
    monitor_queue = _RunName(".monitor")
    dead_queue = _RunName(".dead")
    epoch = _RunName(".epoch")

    def queue(self, name: str) -> str:
        return f"mutexlab.{self.run_id}.{name}"

    def _type_args(self) -> dict:
        # classic queues of version 2 (RabbitMQ ≥ 3.10; older brokers ignore the argument): their
        # index and store cost the broker less CPU per persistent message (BENCHMARKS.md §5)
        return {"x-queue-type": "quorum"} if self.queue_type == "quorum" else {"x-queue-version": 2}

    def lease(self) -> dict:
        """The queue argument that ends a queue unused for ``expires`` seconds (none when 0)."""
        return {"x-expires": max(1, round(self.expires * 1000))} if self.expires > 0 else {}

    def _queue_args(self) -> dict:
        return {"x-dead-letter-exchange": self.dlx, **self._type_args(), **self.lease()}

    def _declare(self, queue: str, arguments: dict) -> _Call:
        return "queue_declare", (queue,), {"durable": self.durable, "arguments": arguments}

    # Each method below sends its declarations (or deletions) together and waits once (``_together``).

    def declare_base(self, channel) -> None:
        """Exchanges, the dead-letter queue and the monitor's queue; idempotent, anyone may call it."""
        calls: list[_Call] = [
            _exchange(self.unrouted, "fanout"),
            _exchange(self.exchange, "topic", {"alternate-exchange": self.unrouted}),
            _exchange(self.dlx, "fanout"),
            self._declare(self.dead_queue, {**self._type_args(), **self.lease()}),
            ("queue_bind", (self.dead_queue, self.dlx), {}),
            self._declare(self.monitor_queue, self._queue_args()),
            ("queue_bind", (self.monitor_queue, self.unrouted), {}),
        ]
        calls += [
            ("queue_bind", (self.monitor_queue, self.exchange), {"routing_key": k}) for k in MONITOR_KEYS
        ]
        _together(channel, calls)

    def declare_participants(self, channel, names: list[str], types: list[str]) -> list[str]:
        """Each of ``names``' queue, bound to its protocol messages and its control signals."""
        calls: list[_Call] = []
        for name in names:
            queue = self.queue(name)
            calls.append(self._declare(queue, self._queue_args()))
            calls += [
                ("queue_bind", (queue, self.exchange), {"routing_key": key})
                for key in [f"{t}.{name}" for t in types] + [f"control.{name}", "control.all"]
            ]
        _together(channel, calls)
        return [self.queue(name) for name in names]

    def declare_participant(self, channel, name: str, types: list[str]) -> str:
        return self.declare_participants(channel, [name], types)[0]

    def delete(self, channel, names: list[str], timeout: float = DELETE_TIMEOUT) -> list[str]:
        """Delete the run's queues and exchanges (missing ones are fine); the queues still there
        (``delete_queues``: empty when every deletion was confirmed)."""
        # the epoch queue too, whatever ``durable`` says: a clean-up by run id alone
        # (``delete_run``) does not know the run's delivery mode
        queues = [self.queue(n) for n in names] + [self.monitor_queue, self.dead_queue, self.epoch]
        left = delete_queues(channel.connection, queues, timeout)
        _together(channel, [("exchange_delete", (x,), {}) for x in (self.exchange, self.dlx, self.unrouted)])
        return left


def _exchange(name: str, kind: str, arguments: dict | None = None) -> _Call:
    """An exchange of the run: durable, auto-deleted with its last bound queue (they expire: ``lease``)."""
    return (
        "exchange_declare",
        (name,),
        dict(exchange_type=kind, durable=True, auto_delete=True, arguments=arguments),
    )


def delete_queues(conn: Connection, queues: list[str], timeout: float = DELETE_TIMEOUT) -> list[str]:
    """Delete ``queues`` concurrently on ``conn``, on up to ``DELETE_CHANNELS`` channels, each
    asking for one deletion at a time, and return those whose deletion the broker did not confirm:
    refused (their channel closed) or unanswered ``timeout`` seconds after being asked. One after
    another, a run's quorum queues took 5 s each while a node of the cluster was down."""
    waiting = deque(queues)
    idle: list[Any] = []  # open channels with no deletion pending
    asked: dict[str, tuple[Any, float]] = {}  # queue -> (its channel, when its deletion was asked)
    deleted: set[str] = set()
    left: list[str] = []
    while waiting or asked:
        while waiting and (idle or len(asked) < DELETE_CHANNELS):
            queue = waiting.popleft()
            channel = idle.pop() if idle else conn.channel()
            # the reply (DeleteOk) comes to the callback: a channel handles one command at a time,
            # and a quorum queue's deletion can take seconds
            channel.nowait.queue_delete(
                queue, callback=conn.waking(lambda _frame, queue=queue: deleted.add(queue))
            )
            asked[queue] = (channel, time.monotonic())
        conn.process_data_events(time_limit=DELETE_SLICE)
        now = time.monotonic()
        for queue, (channel, since) in list(asked.items()):
            if queue in deleted:
                del asked[queue]
                idle.append(channel)
            elif channel.is_closed or now - since > timeout:  # refused, or no answer: given up
                del asked[queue]
                left.append(queue)
    for channel in idle:
        channel.close()
    return left


def addressed(keys: list[str]) -> tuple[str, dict[str, list[str]] | None]:
    """The routing key and headers of one publish that reaches every key of ``keys``: the first as
    its routing key, the others by the ``BCC`` header (RabbitMQ's sender-selected distribution; the
    broker removes ``BCC`` before delivering, so no receiver decodes it)."""
    return keys[0], ({"BCC": keys[1:]} if len(keys) > 1 else None)


def send_frames(bus: Any, framed: list[tuple[list[str], bytes]]) -> None:
    """Publish a step's frames (``wire.frames``: one, or several in order past ``MAX_BODY``), each to
    the keys of its addressees (``addressed``)."""
    for keys, body in framed:
        key, headers = addressed(keys)
        bus.send(key, body, headers=headers)


def _together(channel, calls: list[_Call]) -> None:
    """Make ``calls`` on ``channel`` in order with one wait instead of one per call: all but the
    last go out without replies (``channel.nowait``: AMQP's nowait), the last waits for its reply —
    every one before it is done by then; the first the broker refuses raises
    ``ChannelClosedByBroker`` there, as it would have raised alone. A channel without ``nowait``
    (pika's ``BlockingChannel``, in tests) makes each call wait."""
    if not calls:
        return
    quick = getattr(channel, "nowait", channel)
    for name, args, kwargs in calls[:-1]:
        getattr(quick, name)(*args, **kwargs)
    name, args, kwargs = calls[-1]
    getattr(channel, name)(*args, **kwargs)


def delete_run(url: str, run_id: str, names: list[str]) -> list[str]:
    """Remove everything run ``run_id`` declared (used by ``mutexlab run`` and the tests); the
    queues that could not be removed (``Topology.delete``)."""
    conn, _ = connect_any(url)
    try:
        return Topology(run_id).delete(conn.channel(), names)
    finally:
        conn.close()
