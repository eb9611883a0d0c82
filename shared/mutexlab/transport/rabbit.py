"""The RabbitMQ transport (docs/architecture.md#wire): topology, envelopes, a confirming, reconnecting bus.

Topology of run ``R`` (every name contains the run id, so runs never mix):

* exchange ``mutexlab.R`` (topic, durable). Routing keys:
  ``audit.<name>`` a participant's step: its protocol messages and trace batch in one body, sent
  on to each addressee by the ``CC`` header (``<TYPE>.<dest>`` each: ``REQUEST.node-3``), or its
  trace batch alone; ``<TYPE>.<dest>`` a step's protocol messages without their batch,
  ``status.<name>`` a participant's state/heartbeat, ``join.<role>`` a participant asking to
  join, ``control.<name|instance|all>`` the monitor's roster, refusal and stop signals;
* queue ``mutexlab.R.<name>`` per participant (``node-3``), bound to ``<TYPE>.<name>`` for each
  message type of the algorithm, ``control.<name>`` and ``control.all``;
* queue ``mutexlab.R.monitor`` bound to ``join.*``, ``audit.*`` and ``status.*`` (what the
  monitor needs; a step's messages reach it with the trace batch that records their sends),
  and to ``mutexlab.R.unrouted``, the run exchange's alternate exchange (fanout): a message no
  participant queue takes (an unknown type, a non-member, a joiner gone) reaches the monitor,
  which dead-letters it with the reason, instead of vanishing;
* exchange ``mutexlab.R.dlx`` (fanout) and queue ``mutexlab.R.dead``: malformed or unknown
  messages, with the reason in the header ``x-mutexlab-reason``.

Queues are durable (classic queues of version 2) and messages persistent; on a cluster (several node URLs) they are quorum
queues, replicated by Raft, and the bus connects to any live node and fails over to another when
its connection is lost (docs/cluster.md); every publish is confirmed by the broker
(publisher confirms, ``mandatory`` so an unroutable message is an error, not a silent loss).
Confirms are pipelined: ``send`` does not wait for the confirm (``poll`` takes confirms in as
they come), ``flush`` waits for everything outstanding, ``publish`` is ``send`` + ``flush``.
Consumers ack by hand after handling, and an ack never overtakes a publish: it is held back
until everything published before it is confirmed, so a message's effects are on the broker
before the message leaves its queue. The ``Bus`` re-connects after a lost connection and
re-publishes, in order, what was not confirmed, so a message may arrive twice: receivers drop
duplicates by the per-link sequence number of each message (``LinkInbox``), which also keeps
each link FIFO.
"""

from __future__ import annotations

import functools
import json
import logging
import random
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pika
from pika.exceptions import AMQPChannelError, AMQPConnectionError

from . import pika_internals
from .pika_internals import (
    WRITE_LIMIT,
    check_pika,
    confirm_asynchronously,
    join_writes,
    publish_without_waiting,
    wake,
)
from .settings import node_urls

log = logging.getLogger("mutexlab.transport")

# A message body larger than this is refused (dead-lettered) without being parsed.
MAX_BODY = 64 * 1024

# How long one wait for confirms lasts: pika's wait is not cut short by a confirm.
CONFIRM_SLICE = 0.002
# Acks are sent in batches while deliveries keep coming; after this long without one, all at once.
ACK_LINGER = 0.05
# Messages published and not yet confirmed, at most (back-pressure from the broker).
MAX_UNCONFIRMED = 1000
# What the monitor's queue is bound to on the run's exchange (besides the unrouted messages).
MONITOR_KEYS = ("join.*", "audit.*", "status.*")

LOST = (AMQPConnectionError, AMQPChannelError, ConnectionError, OSError)
REFUSED_CREDENTIALS = (
    pika.exceptions.ProbableAuthenticationError,
    pika.exceptions.AuthenticationError,
    pika.exceptions.ProbableAccessDeniedError,
)
# Quorum queues: after a nack, wait this long before re-publishing (a leader election takes about that).
NACK_PAUSE = 0.5
PRECONDITION_FAILED = 406  # AMQP reply code: e.g. a queue re-declared with other arguments
# Deleting a quorum queue waits up to 5 s (RabbitMQ's own delete timeout) for each of its members
# on a node that is down, and a channel runs one command at a time: the run's queues are deleted
# concurrently, each on a channel of its own, at most DELETE_CHANNELS at once; one whose deletion
# is not confirmed DELETE_TIMEOUT seconds after it was asked is given up (and reported).
DELETE_CHANNELS = 128
DELETE_TIMEOUT = 30.0
DELETE_SLICE = 0.002  # seconds of I/O between looks at which deletions are confirmed

__all__ = ["WRITE_LIMIT", "join_writes"]  # re-exported from pika_internals


class TransportError(RuntimeError):
    """The broker cannot be used (unreachable, refused credentials, a publish nacked)."""


class EnvelopeError(ValueError):
    """A message that is not a valid envelope for this run; the text is the dead-letter reason."""


# -- names ---------------------------------------------------------------------------------
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

    exchange = _RunName("")
    dlx = _RunName(".dlx")
    unrouted = _RunName(".unrouted")
    monitor_queue = _RunName(".monitor")
    dead_queue = _RunName(".dead")

    def queue(self, name: str) -> str:
        return f"mutexlab.{self.run_id}.{name}"

    def _type_args(self) -> dict:
        # classic queues of version 2 (RabbitMQ ≥ 3.10; older brokers ignore the argument): their
        # index and store cost the broker less CPU per persistent message (BENCHMARKS.md §5)
        return {"x-queue-type": "quorum"} if self.queue_type == "quorum" else {"x-queue-version": 2}

    def _queue_args(self) -> dict:
        return {"x-dead-letter-exchange": self.dlx, **self._type_args()}

    # Each method below sends its declarations (or deletions) together and waits once (``_together``).

    def declare_base(self, channel) -> None:
        """Exchanges, the dead-letter queue and the monitor's queue; idempotent, anyone may call it."""
        calls: list[_Call] = [
            ("exchange_declare", (self.unrouted,), {"exchange_type": "fanout", "durable": True}),
            (
                "exchange_declare",
                (self.exchange,),
                {
                    "exchange_type": "topic",
                    "durable": True,
                    "arguments": {"alternate-exchange": self.unrouted},
                },
            ),
            ("exchange_declare", (self.dlx,), {"exchange_type": "fanout", "durable": True}),
            ("queue_declare", (self.dead_queue,), {"durable": True, "arguments": self._type_args() or None}),
            ("queue_bind", (self.dead_queue, self.dlx), {}),
            ("queue_declare", (self.monitor_queue,), {"durable": True, "arguments": self._queue_args()}),
        ]
        calls += [
            ("queue_bind", (self.monitor_queue, self.exchange), {"routing_key": key}) for key in MONITOR_KEYS
        ]
        calls.append(("queue_bind", (self.monitor_queue, self.unrouted), {}))
        _together(channel, calls)

    def declare_participants(self, channel, names: list[str], types: list[str]) -> list[str]:
        """Each of ``names``' queue, bound to its protocol messages and its control signals."""
        calls: list[_Call] = []
        for name in names:
            queue = self.queue(name)
            calls.append(("queue_declare", (queue,), {"durable": True, "arguments": self._queue_args()}))
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
        queues = [self.queue(n) for n in names] + [self.monitor_queue, self.dead_queue]
        left = delete_queues(channel.connection, queues, timeout)
        _together(channel, [("exchange_delete", (x,), {}) for x in (self.exchange, self.dlx, self.unrouted)])
        return left


def delete_queues(conn, queues: list[str], timeout: float = DELETE_TIMEOUT) -> list[str]:
    """Delete ``queues`` concurrently on the ``BlockingConnection`` ``conn``, on up to
    ``DELETE_CHANNELS`` channels, each asking for one deletion at a time, and return those whose
    deletion the broker did not confirm: refused (their channel closed) or unanswered ``timeout``
    seconds after being asked. One after another, a run's quorum queues took 5 s each while a
    node of the cluster was down."""
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
            pika_internals.without_replies(channel).queue_delete(
                queue, callback=lambda _frame, queue=queue: deleted.add(queue)
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


# A channel method's name, its positional and its keyword arguments.
_Call = tuple[str, tuple, dict]


def _together(channel, calls: list[_Call]) -> None:
    """Make ``calls`` on ``channel`` in order with one wait instead of one per call: all but the
    last go out without replies (``pika_internals.without_replies``), the last waits for its
    reply — every one before it is done by then; the first the broker refuses raises
    ``ChannelClosedByBroker`` there, as it would have raised alone."""
    if not calls:
        return
    quick = pika_internals.without_replies(channel)
    for name, args, kwargs in calls[:-1]:
        getattr(quick, name)(*args, **kwargs)
    name, args, kwargs = calls[-1]
    getattr(channel, name)(*args, **kwargs)


def connect_any(
    url: str,
    first: int = 0,
    configure: Callable[[Any], None] | None = None,
    failed: Callable[[str, BaseException], None] | None = None,
):
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
            return pika.BlockingConnection(params), index
        except REFUSED_CREDENTIALS:
            raise
        except LOST as exc:
            error = exc
            if failed is not None:
                failed(f"{params.host}:{params.port}", exc)
    assert error is not None
    raise error


def quiet_pika() -> None:
    """Leave connection trouble to the bus's own log lines. pika logs each connection it loses,
    and each attempt that fails, as several ERRORs with a traceback; the bus logs the loss, each
    node that did not answer and the reconnect in one line each (``Bus.connect``)."""
    logging.getLogger("pika").setLevel(logging.CRITICAL)


def cause(exc: BaseException) -> str:
    """The innermost error pika wrapped ``exc`` around, for a log line: ``ConnectionRefusedError(111,
    'Connection refused')`` rather than ``AMQPConnectionError((AMQPConnectorSocketConnectError(...),))``."""
    while True:
        inner = exc.args[0] if exc.args else getattr(exc, "exception", None)  # pika's two ways to wrap
        if not isinstance(inner, BaseException):
            return repr(exc)
        exc = inner


def delete_run(url: str, run_id: str, names: list[str]) -> list[str]:
    """Remove everything run ``run_id`` declared (used by ``mutexlab run`` and the tests); the
    queues that could not be removed (``Topology.delete``)."""
    conn, _ = connect_any(url)
    try:
        return Topology(run_id).delete(conn.channel(), names)
    finally:
        conn.close()


# -- envelopes ------------------------------------------------------------------------------
def envelope(run_id: str, msg_id: str, sender: str, to: str, seq: int, vc: dict | None, msg: dict) -> dict:
    """A protocol message on the wire: who, where, the link sequence number, the sender's vector clock."""
    return {"run": run_id, "id": msg_id, "from": sender, "to": to, "seq": seq, "vc": vc or {}, "msg": msg}


def frame(run_id: str, sender: str, sends: list[tuple[str, int, str, dict, dict]]) -> dict:
    """The protocol part of a step's publish: its messages ``(to, seq, id, vc, msg)`` in effect order.

    One message is an envelope; several are a step frame ``{"run", "from", "msgs": [...]}`` whose
    entries ``{"to", "seq", "id", "vc" | "tick", "msg"?}`` say what differs from the entry before:
    ``tick`` is that entry's vector clock with only the sender's own entry changed (a broadcast
    ticks it once per addressee), and a missing ``msg`` is the same message (a broadcast's content
    is stored once)."""
    if len(sends) == 1:
        to, seq, msg_id, vc, msg = sends[0]
        return envelope(run_id, msg_id, sender, to, seq, vc, msg)
    entries: list[dict] = []
    last_vc: dict | None = None
    last_msg: dict | None = None
    for to, seq, msg_id, vc, msg in sends:
        entry: dict[str, Any] = {"to": to, "seq": seq, "id": msg_id}
        if last_vc is not None and _same_but(vc, last_vc, sender):
            entry["tick"] = vc.get(sender, 0)
        else:
            entry["vc"] = vc
        if msg != last_msg:
            entry["msg"] = msg
        last_vc, last_msg = vc, msg
        entries.append(entry)
    return {"run": run_id, "from": sender, "msgs": entries}


def _same_but(vc: dict, other: dict, own: str) -> bool:
    """``vc`` and ``other`` have the same entries, except perhaps ``own``'s."""
    return len(vc) == len(other) and all(other.get(k) == v or k == own for k, v in vc.items())


def compact(data: dict) -> bytes:
    """JSON as the wire carries it (compact: it holds no raw newline)."""
    return json.dumps(data, separators=(",", ":")).encode()


def pack_batch(batch: dict) -> dict:
    """A step's trace batch as sent: every event's vector clock after the first as the entries that
    changed since the event before (marked ``"vc": "delta"``; ``unpack_batch`` rebuilds them). A
    process's clock only grows, and a step's events differ in few entries — a broadcast's sends
    only in the sender's own — where a full clock has P. A batch whose clocks do not only grow is
    sent as it is."""
    events = batch.get("events") or []
    if len(events) < 2:
        return batch
    packed = [events[0]]
    prev = events[0].get("vc")
    for event in events[1:]:
        vc = event.get("vc")
        if not isinstance(prev, dict) or not isinstance(vc, dict):
            return batch
        delta = {k: v for k, v in vc.items() if prev.get(k) != v}
        if len(vc) - sum(1 for k in delta if k not in prev) != len(prev):
            return batch  # an entry of the event before is missing
        packed.append({**event, "vc": delta})
        prev = vc
    return {**batch, "events": packed, "vc": "delta"}


def unpack_batch(batch: dict) -> str | None:
    """Rebuild, in place, the full vector clocks of a batch ``pack_batch`` made (any other batch is
    left as it is); the problem when it cannot be."""
    if batch.get("vc") != "delta":
        return None
    events = batch.get("events")
    if not isinstance(events, list) or not all(
        isinstance(e, dict) and isinstance(e.get("vc"), dict) for e in events
    ):
        return "a delta-packed trace batch needs a list of events, each with a vector clock"
    for before, event in zip(events, events[1:]):
        event["vc"] = {**before["vc"], **event["vc"]}
    return None


def split_step(body: bytes) -> tuple[bytes, bytes]:
    """A step's body is its protocol part (``frame``), a newline and its trace batch: the two parts,
    or the whole body for both when it has no newline (an envelope, or a trace batch, alone)."""
    cut = body.find(b"\n")
    return (body, body) if cut < 0 else (body[:cut], body[cut + 1 :])


def parse_envelope(body: bytes, run_id: str, me: str, roster: dict[str, int]) -> dict:
    """Check a single envelope's frame (not yet the protocol message). Raises EnvelopeError with the reason."""
    sender, mine = parse_frame(body, run_id, me, roster)
    if len(mine) != 1:
        raise EnvelopeError(f"expected one envelope, got a step frame of {len(mine)} messages to {me}")
    return mine[0]


def parse_frame(body: bytes, run_id: str, me: str, roster: dict[str, int]) -> tuple[str, list[dict]]:
    """Check a delivery's protocol part (an envelope or a step frame; the trace part after it is the
    monitor's, not parsed here): ``(sender, [envelope to me, ...])`` in link order, each envelope
    with its own ``vc`` and ``msg`` filled in. Raises EnvelopeError with the reason."""
    part = split_step(body)[0]
    if len(part) > MAX_BODY:
        raise EnvelopeError(f"oversized body: {len(part)} bytes (limit {MAX_BODY})")
    try:
        data = json.loads(part)
    except (ValueError, RecursionError) as exc:  # not JSON, not UTF-8, nested too deep, a 5000-digit number
        raise EnvelopeError(f"not JSON: {str(exc)[:200]}") from None
    if not isinstance(data, dict):
        raise EnvelopeError("an envelope must be a JSON object")
    step = "msgs" in data
    missing = [k for k in (("run", "from", "msgs") if step else _ENVELOPE_KEYS) if k not in data]
    if missing:
        raise EnvelopeError(f"envelope lacks {', '.join(missing)}")
    if data["run"] != run_id:
        raise EnvelopeError(f"envelope of run {data['run']!r}, this is run {run_id!r}")
    sender = data["from"]
    if not isinstance(sender, str) or sender not in roster:
        raise EnvelopeError(f"sender {sender!r} is not a member of this run")
    if not step:
        if data["to"] != me:
            raise EnvelopeError(f"addressed to {data['to']!r}, delivered to {me}")
        _check_entry(data)
        return sender, [data]
    entries = data["msgs"]
    if not isinstance(entries, list) or not entries:
        raise EnvelopeError("a step frame's msgs must be a non-empty list")
    mine: list[dict] = []
    others: list[str] = []
    vc: Any = None  # the last full vector clock, and the sender's own entry since (None: unchanged)
    tick: Any = None
    msg: Any = None
    for n, entry in enumerate(entries, 1):
        if not isinstance(entry, dict) or any(k not in entry for k in ("to", "seq", "id")):
            raise EnvelopeError(f"message {n} of the step frame is not an object with to, seq and id")
        if "vc" in entry:
            vc, tick = entry["vc"], None
        elif "tick" in entry and vc is not None:
            tick = entry["tick"]
        else:
            raise EnvelopeError(f"bad vector clock: message {n} of the step frame has none to go by")
        if "msg" in entry:
            msg = entry["msg"]
        elif msg is None:
            raise EnvelopeError(f"message {n} of the step frame has no protocol message to go by")
        if entry["to"] != me:
            others.append(str(entry["to"]))
            continue
        if tick is not None and (isinstance(tick, bool) or not isinstance(tick, int)):
            raise EnvelopeError(f"bad vector clock: tick {tick!r}")
        own = vc if tick is None or not isinstance(vc, dict) else {**vc, sender: tick}
        env = {
            "run": run_id,
            "id": entry["id"],
            "from": sender,
            "to": me,
            "seq": entry["seq"],
            "vc": own,
            "msg": msg,
        }
        _check_entry(env)
        mine.append(env)
    if not mine:
        raise EnvelopeError(f"addressed to {', '.join(repr(o) for o in others)}, delivered to {me}")
    return sender, mine


_ENVELOPE_KEYS = ("run", "id", "from", "to", "seq", "vc", "msg")


def _check_entry(data: dict) -> None:
    if not isinstance(data["id"], str):  # it becomes the trace's message id, a string
        raise EnvelopeError(f"bad message id {str(data['id'])[:40]}")
    seq = data["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise EnvelopeError(f"bad sequence number {seq!r}")
    if not isinstance(data["vc"], dict) or not all(isinstance(v, int) for v in data["vc"].values()):
        raise EnvelopeError("bad vector clock")
    if not isinstance(data["msg"], dict):
        raise EnvelopeError("the protocol message must be a JSON object")


class LinkInbox:
    """Per-link sequence numbers. Invariant: each (sender → me) message is handled once, in order.

    ``accept(sender, seq, item)`` gives the items to handle now, in link order: ``[item]`` and the
    items held back behind it, for the next message of the link; nothing for a copy of one already
    handled or held (a redelivered or re-published duplicate: counted in ``duplicates``), nor for
    one that arrives ahead of a missing one (held back until that one comes: counted in ``gaps``).
    After a failover a queue can hand a consumer's unacked deliveries back behind newer ones, and a
    publish refused by a quorum queue comes again after later ones were taken: the missing message
    does come, and nothing is lost by waiting for it.
    """

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.held: dict[str, dict[int, Any]] = {}  # sender -> {seq: item} that came ahead of a missing one
        self.refused_seqs: dict[str, set[int]] = {}  # sender -> seqs of malformed messages (dead-lettered)
        self.duplicates = 0
        self.gaps = 0

    def accept(self, sender: str, seq: int, item: Any = None) -> list[Any]:
        last = self.last.get(sender, 0)
        held = self.held.setdefault(sender, {})
        if seq <= last or seq in held:
            self.duplicates += 1
            return []
        refused = self.refused_seqs.get(sender, ())
        while last + 1 < seq and last + 1 in refused:  # a malformed message's place, skipped when needed
            last += 1
        if seq != last + 1:
            self.last[sender] = last
            self.gaps += 1
            held[seq] = item
            log.warning("link %s: message %d came before %d; held back until it comes", sender, seq, last + 1)
            return []
        return self._release(sender, seq, [item])

    def refuse(self, sender: str, seq: int) -> list[Any]:
        """Message ``seq`` of ``sender`` was malformed (dead-lettered unhandled). Its place is skipped
        only when a later message needs it — a forged copy must not use up a genuine message's
        place — so this gives the items held back behind it, if any, to handle now."""
        self.refused_seqs.setdefault(sender, set()).add(seq)
        if not self.held.get(sender) or seq != self.last.get(sender, 0) + 1:
            return []
        return self._release(sender, seq, [])

    def _release(self, sender: str, seq: int, ready: list[Any]) -> list[Any]:
        """``seq`` is done: add the items held back behind it (over malformed messages' places)."""
        held, refused = self.held.get(sender, {}), self.refused_seqs.get(sender, ())
        while seq + 1 in held or (seq + 1 in refused and any(k > seq + 1 for k in held)):
            seq += 1
            if seq in held:
                ready.append(held.pop(seq))
        self.last[sender] = seq
        return ready

    def waits(self, sender: str, seq: int) -> bool:
        """Message ``seq`` of ``sender`` is held back, ahead of a missing one."""
        return seq in self.held.get(sender, {})


# -- the bus --------------------------------------------------------------------------------
@dataclass
class Delivery:
    queue: str
    routing_key: str
    body: bytes
    tag: int
    generation: int
    redelivered: bool
    headers: dict


class Bus:
    """One connection and one confirming channel, re-established when lost.

    ``url`` may name several nodes of a cluster (comma-separated): the bus connects to one of them,
    starting at a random one (so a run's processes spread over the nodes), and after a lost
    connection tries the next one first, then the others in turn (failover: docs/cluster.md).

    Deliveries are collected by the pika callback and handed out by ``poll`` (never handled
    inside pika's callback), so a handler may publish, and a reconnect happens outside pika's
    dispatch. Acks of deliveries from an older connection are skipped: the broker redelivers
    those, and the receiver drops them as duplicates.

    Invariants: ``_unconfirmed`` holds, in publish order, every message the broker has not yet
    confirmed together with every later one (keys: this channel's delivery tags, ascending): a
    message leaves it only when it and all before it are confirmed, so that what is re-published
    after a quorum nack or a lost connection keeps its order at every receiver; ``_acks`` holds,
    in handling order, deliveries whose ack waits for the confirms of everything published before
    ``ack`` was called.
    """

    def __init__(
        self,
        url: str,
        topology: Topology,
        connect_timeout: float = 60.0,
        on_connect: Callable[[Any], None] | None = None,
        name: str = "client",
        prefetch: int = 100,
        first_node: int | None = None,
    ) -> None:
        self.url = url
        self.nodes = node_urls(url)
        # The node to try first: random unless given, so a run's processes spread over a cluster.
        self._node = random.randrange(len(self.nodes)) if first_node is None else first_node % len(self.nodes)
        self.node: str | None = None  # the node connected to (host:port), for logs
        self.name = name
        self.topology = topology
        self.connect_timeout = connect_timeout
        self.on_connect = on_connect
        self.prefetch = prefetch
        # While deliveries keep coming, acks go out in batches of this many (at once when idle).
        self.ack_batch = max(1, prefetch // 4)
        # Invariant: at most this many published messages wait for their confirm (memory stays bounded
        # when the broker slows down: ``send`` then waits until half of them are confirmed).
        self.max_unconfirmed = MAX_UNCONFIRMED
        self.generation = 0
        self.reconnects = 0
        self.conn: Any = None  # pika.BlockingConnection while connected
        self.channel: Any = None  # its confirming BlockingChannel
        self._consumers: dict[str, str] = {}  # queue -> consumer tag (re-established on reconnect)
        self._inbox: deque[Delivery] = deque()
        self._tag = 0  # the last publish's delivery tag on this channel
        self._unconfirmed: dict[int, _Outgoing] = {}  # tag -> message, in publish order
        self._acks: deque[tuple[int, Delivery]] = deque()  # (publishes to confirm first, delivery)
        self._refused: list[str] = []  # why the broker nacked or returned a message
        # Tags a quorum queue refused (nack), kept for re-publishing: a later ``multiple`` ack covers
        # only the tags not already answered, so it must not settle these.
        self._nacked_tags: set[int] = set()
        # Tags the broker confirmed while an earlier one is not yet: kept in ``_unconfirmed`` until it is.
        self._acked_tags: set[int] = set()
        self.renacked = 0  # re-publishes after a nack (quorum queues)
        self._nacked_since: float | None = None  # when the current run of nacks began (None: no nacks)
        self.published = 0
        self.redelivered = 0  # deliveries the broker flagged as redelivered (after a lost connection)

    # -- connection ------------------------------------------------------------------------
    def connect(self) -> None:
        check_pika()
        deadline = time.monotonic() + self.connect_timeout
        # Shown by the broker (management UI, rabbitmqctl list_connections): which run, which process.
        properties = {"connection_name": f"mutexlab {self.topology.run_id} {self.name}"}
        delay = 0.2
        failed = False
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
                join_writes(self.conn)
                channel = self.conn.channel()
                self._confirm_without_waiting(channel)
                channel.basic_qos(prefetch_count=self.prefetch)
                self.channel = channel
                self.topology.declare_base(channel)
                if self.on_connect is not None:
                    self.on_connect(channel)
                self.generation += 1
                self._acks.clear()  # their deliveries come back from the broker
                for queue in list(self._consumers):
                    self._consume(queue)
                self._republish()
                if self.generation == 1:
                    log.info(
                        "%s: connected to %s (%s queues)", self.name, self.node, self.topology.queue_type
                    )
                return
            except REFUSED_CREDENTIALS as exc:
                raise TransportError(
                    f"the broker refused the credentials of {redact(self.url)}: {exc!r}"
                ) from None
            except LOST as exc:
                self._drop()
                if (
                    isinstance(exc, pika.exceptions.ChannelClosedByBroker)
                    and exc.reply_code == PRECONDITION_FAILED
                ):
                    raise TransportError(
                        f"the broker refused a declaration of run {self.topology.run_id}: {exc.reply_text} "
                        f"(this process declares {self.topology.queue_type} queues: every process of a run "
                        "needs the same QUEUE_TYPE and, with QUEUE_TYPE=auto, as many nodes in AMQP_URL)"
                    ) from None
                if time.monotonic() >= deadline:
                    raise TransportError(
                        f"cannot reach RabbitMQ at {redact(self.url)} "
                        f"within {self.connect_timeout:g}s: {exc!r}"
                    ) from None
                if not failed:  # once per connect: the retries themselves stay quiet
                    failed = True
                    log.warning(
                        "cannot reach RabbitMQ at %s yet (%r); retrying for up to %gs",
                        redact(self.url),
                        exc,
                        max(0.0, deadline - time.monotonic()),
                    )
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def _confirm_without_waiting(self, channel) -> None:
        """Publisher confirms, received asynchronously (``pika_internals`` says why and how)."""
        selected: list[bool] = []
        confirm_asynchronously(
            channel, self._on_confirm, self._on_return, lambda _frame: selected.append(True)
        )
        deadline = time.monotonic() + self.connect_timeout
        while not selected:  # pika's wait is not cut short by the select-ok: wait in slices
            if time.monotonic() >= deadline:
                raise TransportError(
                    f"the broker did not turn on publisher confirms within {self.connect_timeout:g}s"
                )
            self.conn.process_data_events(time_limit=CONFIRM_SLICE)
        self._tag = 0

    def _on_confirm(self, frame) -> None:
        if self._acks and self.conn is not None:
            wake(self.conn)  # acks wait for confirms: the poll that waits for them goes on now
        method = frame.method
        if method.multiple:  # tags ascend in publish order: everything up to this one
            tags = []
            for tag in self._unconfirmed:
                if tag > method.delivery_tag:
                    break
                tags.append(tag)
        else:
            tags = [method.delivery_tag]
        nack = isinstance(method, pika.spec.Basic.Nack)
        if not nack:
            self._nacked_since = None  # the broker takes messages again
        if nack and self.topology.queue_type == "quorum":
            # A quorum queue refuses while it has no leader (an election after a node's loss): the
            # message stays unconfirmed, and the bus re-publishes it, in order, from a fresh channel.
            refused = [tag for tag in tags if tag in self._unconfirmed and tag not in self._nacked_tags]
            self._nacked_tags.update(refused)
            return
        for tag in tags:
            if tag in self._nacked_tags:
                continue  # refused already (quorum nack): re-published later, not confirmed by this ack
            if nack:
                message = self._unconfirmed.pop(tag, None)
                if message is not None:
                    self._refused.append(f"the broker refused (nack) a message to {message.routing_key!r}")
            elif tag in self._unconfirmed:
                self._acked_tags.add(tag)
        # A message is settled only with every one before it: until then a nack of an earlier one
        # (a quorum queue without a leader) sends it out again behind that one (go-back-N), for the
        # broker may have taken it ahead of the refused one.
        while self._unconfirmed:
            first = next(iter(self._unconfirmed))
            if first not in self._acked_tags:
                break
            del self._unconfirmed[first]
            self._acked_tags.discard(first)

    def _on_return(self, _channel, method, _props, _body) -> None:
        # A mandatory message no queue takes; the broker returns it before confirming it.
        self._refused.append(f"no queue takes routing key {method.routing_key!r} on {method.exchange}")

    def reconnect(self, why: BaseException) -> None:
        lost = self.node
        log.warning("connection to %s lost (%r); reconnecting", lost, why)
        self._drop()
        self._inbox.clear()  # unacked deliveries of the old connection come back from the broker
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
            len(self._unconfirmed),
        )

    def _drop(self) -> None:
        conn, self.conn, self.channel = self.conn, None, None
        if conn is not None:
            try:
                if conn.is_open:
                    conn.close()
            except Exception:  # noqa: BLE001 - it is already broken
                pass

    def close(self) -> None:
        """Wait for outstanding confirms and acks (briefly, if the broker is reachable), then disconnect."""
        if self.channel is not None and (self._unconfirmed or self._acks):
            try:
                self.flush(timeout=5.0)
            except (TransportError, *LOST):
                pass
        self._drop()

    # -- consuming -------------------------------------------------------------------------
    def consume(self, queue: str) -> None:
        self._consumers[queue] = ""
        self._guard(lambda: self._consume(queue))

    def _consume(self, queue: str) -> None:
        generation = self.generation

        def on_message(_ch, method, props, body, queue=queue):
            if method.redelivered:
                self.redelivered += 1
            self._inbox.append(
                Delivery(
                    queue,
                    method.routing_key,
                    body,
                    method.delivery_tag,
                    generation,
                    bool(method.redelivered),
                    dict(props.headers or {}),
                )
            )

        self._consumers[queue] = self.channel.basic_consume(queue, on_message, auto_ack=False)

    def cancel(self, queue: str) -> None:
        tag = self._consumers.pop(queue, None)
        if tag and self.channel is not None:
            try:  # noqa: SIM105 - left as written while transport/ is rewritten
                self.channel.basic_cancel(tag)
            except LOST:
                pass
        self._inbox = deque(d for d in self._inbox if d.queue != queue)

    def poll(self, timeout: float) -> list[Delivery]:
        """Wait up to ``timeout`` seconds for deliveries; return those collected, in order.

        On the way, buffered publishes are written out, confirms taken in and the acks they
        release sent — in batches of ``ack_batch`` while deliveries keep coming, all of them once
        the bus has been idle for ``ACK_LINGER`` seconds. While acks are held back, a confirm ends
        pika's wait early (``_on_confirm`` wakes it), and so does the end of the linger."""
        now = time.monotonic()
        deadline = now + max(0.0, timeout)
        linger_end = now + ACK_LINGER  # a delivery ends the poll: it is idle until then
        # acks already allowed go out before any wait (they free the prefetch window)
        self._settle(force=False)
        if self._inbox:  # taken in while ``flush`` waited for confirms: handed out without a wait
            deadline = now  # (pika's wait would end early only for new ones)
        while True:
            wait = deadline - now
            if self._acks and linger_end > now:
                wait = min(wait, linger_end - now)
            self._guard(functools.partial(self._io, max(0.0, wait)))
            self._settle(force=False)
            now = time.monotonic()
            if self._inbox or now >= deadline or not self._acks:
                break  # deliveries, time is up, or the full wait passed with no ack held back
            if now >= linger_end:
                self._settle(force=True)
        batch = list(self._inbox)
        self._inbox.clear()
        return batch

    def _io(self, seconds: float) -> None:
        """pika's I/O for up to ``seconds``: writes, confirms, deliveries (on the current connection)."""
        self.conn.process_data_events(time_limit=seconds)

    def ack(self, delivery: Delivery) -> None:
        """Acknowledge ``delivery`` once everything published so far is confirmed.

        The ack goes out with the next ``poll``, ``flush`` or ``close``, together with the others
        released then (one cumulative ack)."""
        if delivery.generation != self.generation:
            return  # from a lost connection: the broker redelivers it
        self._acks.append((self._tag, delivery))

    def _confirmed_through(self) -> int:
        """Every publish with a tag up to this one is confirmed."""
        return next(iter(self._unconfirmed)) - 1 if self._unconfirmed else self._tag

    def _release_acks(self, force: bool = True) -> None:
        """Send one cumulative ack (``multiple``) for the held-back deliveries now allowed to go
        (unless ``force`` is off and fewer than ``ack_batch`` are).

        Deliveries are handled and acked in delivery order, so acking the last releasable one with
        ``multiple`` acks exactly the released ones (and nothing still held back)."""
        through = self._confirmed_through()
        releasable = 0
        for watermark, _delivery in self._acks:
            if watermark > through:
                break
            releasable += 1
        if not releasable or (not force and releasable < self.ack_batch):
            return
        for _ in range(releasable - 1):
            self._acks.popleft()
        last = self._acks.popleft()[1]
        if self.channel is None:
            return
        try:
            self.channel.basic_ack(last.tag, multiple=True)
        except LOST as exc:
            self.reconnect(exc)

    # -- publishing ------------------------------------------------------------------------
    def send(
        self,
        routing_key: str,
        body: bytes | dict,
        message_id: str | None = None,
        exchange: str | None = None,
        headers: dict | None = None,
        mandatory: bool = True,
        expiration: float | None = None,
    ) -> None:
        """Publish persistently without waiting for the confirm (``flush`` waits for it).

        ``expiration``: seconds after which the broker drops the message if no consumer took it
        (it is then dead-lettered with the reason ``expired``)."""
        if isinstance(body, dict):
            body = json.dumps(body, separators=(",", ":")).encode()
        props = pika.BasicProperties(
            delivery_mode=2,
            content_type="application/json",
            message_id=message_id,
            headers=headers,
            expiration=None if expiration is None else str(max(1, round(expiration * 1000))),
        )
        message = _Outgoing(
            self.topology.exchange if exchange is None else exchange, routing_key, body, props, mandatory
        )
        if self.channel is None:
            self.connect()
        if len(self._unconfirmed) >= self.max_unconfirmed:
            self._wait_confirms(self.max_unconfirmed // 2)  # back-pressure: the broker sets the pace
        try:
            self._transmit(message)
        except LOST as exc:
            self.reconnect(exc)  # re-publishes everything unconfirmed, this message included
        self.published += 1

    def publish(self, routing_key: str, body: bytes | dict, **options: Any) -> None:
        """``send`` (same options), then wait for the broker's confirm of it and of everything
        before it. Raises TransportError when the broker nacks or cannot route a message."""
        self.send(routing_key, body, **options)
        self.flush()

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every message sent so far is confirmed, and send the acks that releases.

        Raises TransportError when the broker refused a message, or (with ``timeout``) when the
        confirms did not come in time."""
        self._wait_confirms(0, timeout)
        self._settle()

    def _wait_confirms(self, at_most: int, timeout: float | None = None) -> None:
        """Take in confirms until no more than ``at_most`` messages are unconfirmed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while len(self._unconfirmed) > at_most:
            if deadline is not None and time.monotonic() >= deadline:
                raise TransportError(f"{len(self._unconfirmed)} messages not confirmed within {timeout:g}s")
            self._guard(lambda: self.conn.process_data_events(time_limit=CONFIRM_SLICE))
            self._raise_refused()

    def _settle(self, force: bool = True) -> None:
        self._raise_refused()
        if self._acks:
            self._release_acks(force)

    def _raise_refused(self) -> None:
        if self._nacked:
            self._recover_nacked()
        if self._refused:
            reason, self._refused = self._refused[0], []
            raise TransportError(reason)

    @property
    def _nacked(self) -> int:
        """Messages a quorum queue refused that wait for their re-publish (cleared by it)."""
        return len(self._nacked_tags)

    def _recover_nacked(self) -> None:
        """Quorum queues: after a nack (a queue without a leader), wait a moment, then start over on a
        fresh connection and channel and re-publish everything unconfirmed in its original order
        (as after a lost connection: what was delivered and not acked comes back, and duplicates are
        dropped by their sequence numbers). Gives up with TransportError after ``connect_timeout``
        seconds of nacks."""
        nacked = self._nacked
        now = time.monotonic()
        if self._nacked_since is None:
            self._nacked_since = now
        elif now - self._nacked_since > self.connect_timeout:
            raise TransportError(
                f"quorum queues kept refusing messages (nack) for {self.connect_timeout:g}s: "
                "is a majority of the cluster's nodes running?"
            )
        self.renacked += 1
        log.warning(
            "%s: the broker refused %d publish(es) (nack: a quorum queue without a leader?); "
            "re-publishing %d unconfirmed from a fresh connection",
            self.name,
            nacked,
            len(self._unconfirmed),
        )
        time.sleep(NACK_PAUSE)
        self.reconnect(TransportError("publishes nacked by a quorum queue"))

    def _transmit(self, message: _Outgoing) -> None:
        self._tag += 1
        self._unconfirmed[self._tag] = message
        # pika buffers the frames until the next poll or flush writes them out (pika_internals).
        publish_without_waiting(
            self.channel,
            message.exchange,
            message.routing_key,
            message.body,
            message.props,
            message.mandatory,
        )

    def _republish(self) -> None:
        """After a reconnect: send again, in the original order, everything not confirmed."""
        pending = list(self._unconfirmed.values())
        self._unconfirmed.clear()
        self._nacked_tags.clear()  # the new channel numbers its tags from 1 again
        self._acked_tags.clear()
        for message in pending:
            self._transmit(message)

    def dead_letter(self, delivery: Delivery, reason: str, ack: bool = True) -> None:
        """Move a delivery to the run's dead-letter queue with its reason, then ack it (unless
        ``ack`` is off: its ack was already asked for)."""
        headers = dict(delivery.headers)
        headers.update(
            {
                "x-mutexlab-reason": reason[:500],
                "x-mutexlab-queue": delivery.queue,
                "x-mutexlab-routing-key": delivery.routing_key,
            }
        )
        self.send(delivery.routing_key, delivery.body, exchange=self.topology.dlx, headers=headers)
        if ack:
            self.ack(delivery)

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


@dataclass(frozen=True)
class _Outgoing:
    """A message as published, kept until the broker confirms it (re-published after a reconnect)."""

    exchange: str
    routing_key: str
    body: bytes
    props: Any
    mandatory: bool


def redact(url: str) -> str:
    """The URL (or each of a cluster's URLs) without its credentials, for logs and errors."""
    out = []
    for node in node_urls(url):
        params = pika.URLParameters(node)
        vhost = "" if params.virtual_host == "/" else "/" + params.virtual_host
        out.append(f"{node.split('://', 1)[0]}://{params.host}:{params.port}{vhost}")
    return ",".join(out)
