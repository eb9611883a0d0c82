"""A participant's trace on its way to the monitor (docs/wire.md#publishing): the events of its
steps wait here and go as one batch (``audit.<name>``), not one publish per step.

A batch is due when its oldest event (or a delivery whose ack waits for it) has waited ``bound``
seconds (``TRACE_FLUSH``), when ``MAX_EVENTS`` events or ``MAX_DELIVERIES`` deliveries wait for
it, once the process has finished (the monitor hears it at once: a run's end is not held up),
or when the participant asks (``flush``: a status, the heartbeat, the stop). The
monitor needs no order between processes' batches (it pairs a receipt heard before its send), and
a process's batches reach it in order (one channel, one queue). A batch's vector clocks travel
as what changed since the event before (``pack_batch``; the monitor's ``unpack_batch``) when they
have ``PACK_FROM`` entries or more; narrower ones go whole.

Invariant: ``traced`` is, per sender, the last sequence number handled whose events are in a batch
already published: with transient delivery, what a link's acknowledgement may say (links.py) — a
message is acknowledged to its sender only once the batch recording its receipt is on its way
(re-published after a lost connection, as every publish is; nothing waits for its confirm).
"""

from __future__ import annotations

import math
from typing import Any

from ..bus.wire import compact
from ..fastpath import changed_entries
from .driving import AuditSink

MAX_EVENTS = 512  # events waiting at most: a larger batch goes at once
# Clocks narrower than this go whole: packing a 5-entry clock costs more CPU (here and in the
# monitor) than the bytes it saves (docs/benchmarks.md#narrow-clocks).
PACK_FROM = 16
# Deliveries whose acks wait for the batch, at most: well under the prefetch (100), so the broker
# never stops handing deliveries out while they wait.
MAX_DELIVERIES = 40


class TraceBuffer:
    """The events since the last batch (in ``sink``), since when they wait, and the deliveries
    whose acks wait for the batch."""

    def __init__(self, sink: AuditSink, bound: float) -> None:
        self.sink = sink
        self.bound = bound
        self.since: float | None = None  # when the oldest thing waiting for the batch came
        self.deliveries = 0  # deliveries handled since the last batch (their acks may wait for it)
        self.traced: dict[str, int] = {}
        self.finished = False  # a batch told the monitor this process finished
        self.told: dict | None = None  # the last status sent (in a batch or alone)

    def tell(self, status: dict) -> dict:
        """``status``, remembered as the last one sent."""
        self.told = status
        return status

    def quiet(self, status: dict) -> bool:
        """Whether a heartbeat of ``status`` would tell the monitor nothing: the process finished,
        no timer pending, and the status is the last one sent but for its time (``t``). A finished
        process's status changes only with an input (a late message, a copy dropped, a reconnect)
        or a hosted program's hint, and the monitor judges a stall by the trace, not by statuses
        (feed.py): its 1-s heartbeats while the others work were a delivery each to the monitor."""
        told = self.told
        return (
            told is not None
            and bool(status.get("finished"))
            and not status.get("timers")
            and not self.sink.events
            and {**status, "t": None} == {**told, "t": None}
        )

    def waiting(self) -> bool:
        """Events wait for the next batch: a delivery handled now has its ack wait for it too."""
        return bool(self.sink.events)

    def due(self, now: float, flush: bool, changed: bool, finished: bool = False) -> bool:
        """Whether the batch goes now (``changed``: a status waits to go with it; ``finished``: it
        says the process finished, which the monitor hears at once the first time)."""
        if finished and not self.finished:
            self.finished = flush = True
        if not self.sink.events and not changed:
            self.since, self.deliveries = None, 0  # nothing waits: no ack waits for a batch
            return flush
        if self.since is None:
            self.since = now
        return (
            flush
            or self.finished  # the run's end waits for nothing: a finished process's events go at once
            or now - self.since >= self.bound
            or len(self.sink.events) >= MAX_EVENTS
            or self.deliveries >= MAX_DELIVERIES
        )

    def carries_status(self, since_status: float, heartbeat: float) -> bool:
        """Whether the batch going now carries a status, ``since_status`` seconds after the last one:
        with events, in the last two bounds before the heartbeat is due (at most half a heartbeat
        early). A busy process's heartbeat so rides on its batches, about once a heartbeat."""
        return bool(self.sink.events) and since_status >= max(heartbeat / 2, heartbeat - 2 * self.bound)

    def due_at(self) -> float:
        """When the waiting batch is due (monotonic seconds; infinity when nothing waits)."""
        return math.inf if self.since is None else self.since + self.bound

    def take(self, status: dict | None, handled: dict[str, int]) -> bytes | None:
        """The batch's body (None when nothing waits); ``handled``: the last sequence number handled
        per sender, every one of them recorded in it or before."""
        batch: dict[str, Any] = {"events": self.sink.take()}
        if status is not None:
            batch["status"] = self.tell(status)
        self.since, self.deliveries = None, 0
        self.traced = dict(handled)
        if not batch["events"] and status is None:
            return None
        return compact(pack_batch(batch) if _wide(batch["events"]) else batch)


def _wide(events: list[dict]) -> bool:
    """Whether the batch's widest clock (its last event's: a process's clock only grows) has
    ``PACK_FROM`` entries or more."""
    vc = events[-1].get("vc") if events else None
    return isinstance(vc, dict) and len(vc) >= PACK_FROM


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
        delta = changed_entries(vc, prev)
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
