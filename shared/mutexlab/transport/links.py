"""End-to-end retransmission over the per-link sequence numbers (docs/architecture.md#wire).

Protocol messages and trace batches travel as transient messages: the broker keeps them in
memory only, so a broker restart (or a purged queue) can lose some. Nothing is lost end to end
because every sender keeps what it sent until the receiver has said it has it, and sends the rest
again when asked:

* a participant keeps each protocol message it sent (``LinkOutbox``) until its addressee
  acknowledges it: every envelope carries ``ack``, the last sequence number its sender accepted
  on the reverse link, and a ``link`` message (``control.<name>``) says the same on its own;
* a receiver that sees a gap on a link (``LinkInbox`` refuses the message) asks the sender with a
  ``link`` message; so does a participant after each reconnect (to every peer it has exchanged
  messages with) and a sender whose oldest kept message has waited ``LINK_RETRY`` seconds
  without an acknowledgement (the last message of a link may be the lost one). The answer to an
  asking ``link`` message is the kept messages above its ``received``, sent again in order, and
  a ``link`` message back with what the answerer has received, so both directions are repaired;
* the monitor's feed knows how far it has each participant's trace (each event ticks its
  process's own vector entry once, so a process's events are numbered 1, 2, ...) and how far
  each participant says it has recorded (``recorded`` in its status); when it is behind, it asks
  with a ``trace`` message (``control.all``), and the participant publishes its kept events
  above what the monitor has. The same message, sent every ``TRACE_ACK_EVERY`` seconds, lets the
  participants drop the events the monitor already has.

Duplicates (a message sent again that had arrived after all) are dropped by the sequence numbers
as before; the confirms and held-back acks of the bus still cover a lost connection.
"""

from __future__ import annotations

from collections import deque
from typing import Any

# A link whose oldest unacknowledged message has waited this long asks its addressee what it has.
LINK_RETRY = 2.0
# The monitor asks a participant again for missing trace events at most this often.
TRACE_RESEND_PAUSE = 0.5
# The monitor tells every participant how far it has their traces this often (they drop what it has).
TRACE_ACK_EVERY = 1.0


class LinkOutbox:
    """What this process sent on each link and its addressee has not yet acknowledged.

    Invariant: ``kept[dest]`` holds, in sequence order, every message sent to ``dest`` above
    ``acked[dest]`` as ``(seq, routing_key, body, message_id)``; ``since[dest]`` is when the link last
    made progress (a message sent to an empty link, or an acknowledgement, or a retransmission).
    """

    def __init__(self) -> None:
        self.kept: dict[str, deque[tuple[int, str, dict, str]]] = {}
        self.acked: dict[str, int] = {}
        self.since: dict[str, float] = {}
        self.retransmitted = 0  # messages sent again

    def keep(self, dest: str, seq: int, routing_key: str, body: dict, message_id: str, now: float) -> None:
        kept = self.kept.setdefault(dest, deque())
        if not kept:
            self.since[dest] = now
        kept.append((seq, routing_key, body, message_id))

    def ack(self, dest: str, through: int, now: float) -> None:
        """``dest`` has every message of the link up to ``through``: forget them."""
        if through <= self.acked.get(dest, 0):
            return
        self.acked[dest] = through
        kept = self.kept.get(dest)
        while kept and kept[0][0] <= through:
            kept.popleft()
        self.since[dest] = now

    def above(self, dest: str, received: int, now: float) -> list[tuple[int, str, dict, str]]:
        """The kept messages to ``dest`` above ``received`` (to send again, in order)."""
        self.ack(dest, received, now)
        again = [m for m in self.kept.get(dest, ()) if m[0] > received]
        if again:
            self.since[dest] = now
            self.retransmitted += len(again)
        return again

    def overdue(self, now: float, retry: float = LINK_RETRY) -> list[str]:
        """The links whose oldest kept message has waited ``retry`` seconds without progress; their
        clocks restart (ask once per ``retry``)."""
        late = [d for d, kept in self.kept.items() if kept and now - self.since[d] >= retry]
        for dest in late:
            self.since[dest] = now
        return late

    def peers(self) -> set[str]:
        return set(self.kept) | set(self.acked)


def link_message(run_id: str, sender: str, received: int, ask: bool) -> dict[str, Any]:
    """``sender`` has every message from the addressee up to ``received``; ``ask``: please send the
    rest again and say what you have (answered by a ``link`` message with ``ask`` off)."""
    return {"kind": "link", "run": run_id, "from": sender, "received": received, "ask": ask}


def parse_link(data: dict, run_id: str, roster: dict[str, int]) -> tuple[str, int, bool]:
    """``(sender, received, ask)`` of a ``link`` message; ValueError naming what is wrong."""
    if data.get("run") != run_id:
        raise ValueError(f"link message of run {data.get('run')!r}, this is run {run_id!r}")
    sender, received, ask = data.get("from"), data.get("received"), data.get("ask")
    if sender not in roster:
        raise ValueError(f"link message from {sender!r}, not a member of this run")
    if isinstance(received, bool) or not isinstance(received, int) or received < 0:
        raise ValueError(f"link message with a bad 'received' {received!r}")
    if not isinstance(ask, bool):
        raise ValueError(f"link message with a bad 'ask' {ask!r}")
    return sender, received, ask


class TraceKept:
    """The trace events a participant published that the monitor may not have yet.

    Invariant: ``events`` holds, in order, every published event whose own vector entry (the
    entry of the event's own process) is above the highest the monitor has acknowledged."""

    def __init__(self) -> None:
        self.events: deque[dict] = deque()

    @staticmethod
    def own(event: dict) -> int:
        return int(event["vc"][event["pid"]])

    def published(self, events: list[dict]) -> None:
        self.events.extend(events)

    def acked(self, through: int) -> None:
        while self.events and self.own(self.events[0]) <= through:
            self.events.popleft()

    def above(self, through: int) -> list[dict]:
        self.acked(through)
        return list(self.events)
