"""End-to-end retransmission over the per-link sequence numbers, for transient delivery
(docs/wire.md#delivery-modes).

With ``DELIVERY=transient`` the broker keeps the run's messages in memory only, and a delivery is
acked to the broker as soon as it is handled — not behind the confirms of what it caused. So
nothing on the broker stands for a protocol message once it has left its queue: the sender
does, until its addressee says it has it.

* the sender keeps every protocol message it sent on each link (``LinkOutbox``) until the
  addressee acknowledges it; the acknowledgement is cumulative: ``{"kind": "link", "from": <me>,
  "received": n}`` on ``control.<sender>`` says "I have handled your messages 1..n";
* the receiver puts it into its next step frame to the sender (``"acks": {sender: n}``, read by
  ``wire.parse_frame``): no message of its own while the link has traffic both ways; a link whose
  handled sequence number grew (``LinkInbox.last``) without a step back gets a ``link`` message,
  at most once per ``ACK_EVERY`` seconds, so acknowledgements cost a few messages a second;
* a link whose oldest kept message has waited ``RETRY`` seconds without an acknowledgement that
  covers more is sent again: every kept message of it, in order, in step frames of at most
  ``RESEND_BATCH`` messages on ``<TYPE>.<dest>`` (no trace batch: the monitor heard of the send with the original); each
  retransmission that brings no progress doubles the link's wait, up to ``RETRY_MAX``;
* the receiver drops what it already handled and holds back what came ahead of a missing message
  (``inbox.LinkInbox``), so each message is still handled once, in its link's order.

Only protocol messages are retransmitted. A trace batch or status lost on the way to the monitor
is not: the monitor then never sees the run complete and ends it as stalled (never SAFE).
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterable
from typing import Any

from .wire import compact, frame

log = logging.getLogger("mutexlab.transport")

ACK_EVERY = 0.25  # seconds at least between two acknowledgement messages on one link
RETRY = 1.0  # seconds a link's oldest unacknowledged message waits before the link is sent again
RETRY_MAX = 8.0
RESEND_BATCH = 16  # kept messages per retransmitted frame: a long backlog stays under wire.MAX_BODY

# (to, seq, id, vc, msg): one protocol message as ``wire.frame`` takes it
Entry = tuple[str, int, str, dict, dict]


class LinkOutbox:
    """The sending side. Invariant: ``kept[dest]`` holds, in sequence order, every message sent to
    ``dest`` above ``acked[dest]``, with its routing key; ``since[dest]`` is when the link last
    made progress (its first kept message, an acknowledgement covering more, a retransmission)."""

    def __init__(self) -> None:
        self.kept: dict[str, deque[tuple[str, Entry]]] = {}
        self.acked: dict[str, int] = {}
        self.since: dict[str, float] = {}
        self.retry: dict[str, float] = {}
        self.retransmitted = 0

    def keep(self, key: str, entry: Entry, now: float) -> None:
        dest = entry[0]
        kept = self.kept.setdefault(dest, deque())
        if not kept:
            self.since[dest] = now
        kept.append((key, entry))

    def ack(self, dest: str, through: int, now: float) -> None:
        """``dest`` has handled every message of the link up to ``through``: forget them."""
        if through <= self.acked.get(dest, 0):
            return
        self.acked[dest] = through
        kept = self.kept.get(dest)
        while kept and kept[0][1][1] <= through:
            kept.popleft()
        self.since[dest] = now
        self.retry[dest] = RETRY

    def overdue(self, now: float) -> list[tuple[str, list[tuple[str, Entry]]]]:
        """The links to send again now, each with its kept messages in order; their clocks restart
        and their waits double."""
        late = []
        for dest, kept in self.kept.items():
            wait = self.retry.get(dest, RETRY)
            if kept and now - self.since[dest] >= wait:
                self.since[dest] = now
                self.retry[dest] = min(2 * wait, RETRY_MAX)
                self.retransmitted += len(kept)
                late.append((dest, list(kept)))
        return late

    def next_due(self) -> float | None:
        """When the next link becomes overdue (monotonic seconds), if any holds a message."""
        due = [self.since[d] + self.retry.get(d, RETRY) for d, kept in self.kept.items() if kept]
        return min(due) if due else None


class LinkAcks:
    """The receiving side: which links' acknowledgements are due. ``sent[sender]`` is the last
    sequence number acknowledged to ``sender``, ``at[sender]`` when."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}
        self.at: dict[str, float] = {}

    def due(self, handled: dict[str, int], now: float) -> list[tuple[str, int]]:
        """``(sender, n)`` for each link handled beyond its last acknowledgement, ``ACK_EVERY`` after it."""
        out = []
        for sender, n in handled.items():
            if n > self.sent.get(sender, 0) and now - self.at.get(sender, -ACK_EVERY) >= ACK_EVERY:
                self.sent[sender], self.at[sender] = n, now
                out.append((sender, n))
        return out

    def carried(self, dests: Iterable[str], handled: dict[str, int], now: float) -> dict[str, int]:
        """``{dest: n}`` to carry in a step frame to ``dests``: each one's link handled beyond its last
        acknowledgement (taken as sent now, whatever ``ACK_EVERY``: it costs no message of its own)."""
        out = {}
        for dest in dests:
            n = handled.get(dest, 0)
            if n > self.sent.get(dest, 0):
                self.sent[dest], self.at[dest] = n, now
                out[dest] = n
        return out

    def next_due(self, handled: dict[str, int]) -> float | None:
        due = [self.at.get(s, -ACK_EVERY) + ACK_EVERY for s, n in handled.items() if n > self.sent.get(s, 0)]
        return min(due) if due else None


def link_message(run_id: str, sender: str, received: int) -> dict[str, Any]:
    """``sender`` has handled every message from the addressee up to ``received``."""
    return {"kind": "link", "run": run_id, "from": sender, "received": received}


def parse_link(data: dict, run_id: str, roster: dict[str, int]) -> tuple[str, int]:
    """``(sender, received)`` of a ``link`` message; ValueError naming what is wrong."""
    if data.get("run") != run_id:
        raise ValueError(f"link message of run {data.get('run')!r}, this is run {run_id!r}")
    sender, received = data.get("from"), data.get("received")
    if not isinstance(sender, str) or sender not in roster:
        raise ValueError(f"link message from {sender!r}, not a member of this run")
    if isinstance(received, bool) or not isinstance(received, int) or received < 0:
        raise ValueError(f"link message with a bad 'received' {received!r}")
    return sender, received


class Retransmission:
    """A participant's end of every link, with transient delivery: what it keeps of its sends
    (``LinkOutbox``), the acknowledgements it owes (``LinkAcks``), and the messages that carry them."""

    def __init__(self, run_id: str, me: str) -> None:
        self.run_id, self.me = run_id, me
        self.outbox = LinkOutbox()
        self.acks = LinkAcks()

    def keep(self, key: str, entry: Entry, now: float) -> None:
        self.outbox.keep(key, entry, now)

    def carried(self, dests: Iterable[str], handled: dict[str, int], now: float) -> dict[str, int] | None:
        """The acknowledgements a step frame to ``dests`` carries (``wire.frame``'s ``acks``)."""
        return self.acks.carried(dests, handled, now) or None

    def acked(self, acks: dict[str, int], now: float) -> None:
        """Acknowledgements a step frame carried (``wire.parse_frame``'s ``acks``)."""
        for sender, n in acks.items():
            self.outbox.ack(sender, n, now)

    def on_link(self, data: dict, roster: dict[str, int], now: float) -> None:
        """A ``link`` message from a peer: it has handled what it says; a bad one is logged, ignored
        (it carries no protocol input, and a forged one never gets here: auth.py)."""
        try:
            sender, received = parse_link(data, self.run_id, roster)
        except ValueError as exc:
            log.warning("%s: ignored a link message: %s", self.me, exc)
            return
        self.outbox.ack(sender, received, now)

    def tick(self, bus: Any, handled: dict[str, int], now: float) -> None:
        """Send the acknowledgements due (``handled``: the last sequence number handled per sender)
        and the links overdue again, through ``bus`` (``rabbit.Bus.send``)."""
        for sender, n in self.acks.due(handled, now):
            bus.send(f"control.{sender}", link_message(self.run_id, self.me, n))
        for dest, kept in self.outbox.overdue(now):
            log.info("%s: sending %d unacknowledged message(s) to %s again", self.me, len(kept), dest)
            for i in range(0, len(kept), RESEND_BATCH):
                batch = kept[i : i + RESEND_BATCH]
                bus.send(batch[0][0], compact(frame(self.run_id, self.me, [entry for _key, entry in batch])))

    def next_due(self, handled: dict[str, int]) -> float | None:
        due = [t for t in (self.acks.next_due(handled), self.outbox.next_due()) if t is not None]
        return min(due) if due else None
