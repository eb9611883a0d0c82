"""End-to-end retransmission over the per-link sequence numbers, for transient delivery (the rules
and their measurements: docs/wire.md#delivery-modes). Only protocol messages are retransmitted."""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Iterable
from typing import Any

from .topology import addressed
from .wire import compact, frame

log = logging.getLogger("mutexlab.transport")

ACK_EVERY = 0.25  # seconds between two looks at the links owing an acknowledgement, at least
# Seconds a link owes an acknowledgement (since the look that saw it) before a ``link`` message
# carries it; meanwhile a step frame going back may carry it free (docs/benchmarks.md#link-acks).
ACK_DELAY = 1.0
# Seconds a link's oldest unacknowledged message waits before the link is sent again. Invariant:
# above ACK_DELAY + 2 ACK_EVERY and a loaded host's delays (at 1 s, a 50-process run, load 20-45,
# sent 2,000-7,000 messages again, none of them lost).
RETRY = 3.0
# A link's wait, at most (its first, learnt, and doubled while nothing moves): a shorter cap sent
# more copies than messages on a loaded host (docs/wire.md#delivery-modes).
RETRY_MAX = 30.0
RESEND_BATCH = 16  # kept messages per retransmitted frame: a long backlog stays under wire.MAX_BODY

# (to, seq, id, vc, msg): one protocol message as ``wire.frame`` takes it
Entry = tuple[str, int, str, dict, dict]


class LinkOutbox:
    """The sending side. Invariant: ``kept[dest]`` holds, in sequence order, every message sent to
    ``dest`` above ``acked[dest]``, with its routing key; ``since[dest]`` is when the link last
    made progress (its first kept message, an acknowledgement covering more, a retransmission).

    A link's first wait is ``wait``: ``RETRY``, or three times the smoothed time acknowledgements
    have taken (on a loaded machine they take longer, and sending again then only adds load),
    at most ``RETRY_MAX``. As in TCP (Karn), a link sent again gives no sample when acknowledged,
    and its doubled wait stays the first wait until a link sent once gives one: else, where every
    acknowledgement is late, every message is sent again, no sample ever lengthens the wait, and
    each message starts over from the short one."""

    def __init__(self) -> None:
        self.kept: dict[str, deque[tuple[str, Entry]]] = {}
        self.acked: dict[str, int] = {}
        self.refused = 0  # acknowledgements of more than was sent: ignored (counted, logged)
        self.since: dict[str, float] = {}
        self.retry: dict[str, float] = {}
        self.resent: set[str] = set()
        self.smoothed: float | None = None  # seconds an acknowledgement took, smoothed
        self.wait = RETRY
        self.retransmitted = 0
        # Invariant: no link holding a message is due before ``earliest`` (a lower bound, so the
        # loop's look at the links is one comparison until then).
        self.earliest = math.inf

    def keep(self, key: str, entry: Entry, now: float) -> None:
        dest = entry[0]
        kept = self.kept.setdefault(dest, deque())
        if not kept:  # the link's first wait starts: its due time is fixed until it moves
            self.since[dest] = now
            self.retry[dest] = self.wait
            self.earliest = min(self.earliest, now + self.wait)
        kept.append((key, entry))

    def sent_through(self, dest: str) -> int:
        """The last sequence number sent to ``dest``: the last kept, or the last acknowledged."""
        kept = self.kept.get(dest)
        return kept[-1][1][1] if kept else self.acked.get(dest, 0)

    def ack(self, dest: str, through: int, now: float) -> None:
        """``dest`` has handled every message of the link up to ``through``: forget them. An
        acknowledgement beyond the last message sent is a peer's fault: it would drop messages
        never handled, so it is ignored (and logged)."""
        sent = self.sent_through(dest)
        if through > sent:
            self.refused += 1
            log.warning("ignored %s's acknowledgement of %d messages: %d were sent", dest, through, sent)
            return
        if through <= self.acked.get(dest, 0):
            return
        self.acked[dest] = through
        kept = self.kept.get(dest)
        while kept and kept[0][1][1] <= through:
            kept.popleft()
        if dest in self.resent:  # Karn: no sample, and the backed-off wait stays
            self.resent.discard(dest)
            self.wait = max(self.wait, self.retry[dest])
        elif dest in self.since:
            took = now - self.since[dest]
            self.smoothed = took if self.smoothed is None else 0.875 * self.smoothed + 0.125 * took
            self.wait = min(max(RETRY, 3 * self.smoothed), RETRY_MAX)
        self.since[dest] = now
        self.retry[dest] = self.wait
        if kept:
            self.earliest = min(self.earliest, now + self.wait)

    def overdue(self, now: float) -> list[tuple[str, list[tuple[str, Entry]]]]:
        """The links to send again now, each with its kept messages in order; their clocks restart
        and their waits double."""
        if now < self.earliest:
            return []
        late = []
        for dest, kept in self.kept.items():
            wait = self.retry[dest]
            if kept and now - self.since[dest] >= wait:
                self.since[dest] = now
                self.retry[dest] = min(2 * wait, RETRY_MAX)
                self.resent.add(dest)
                self.retransmitted += len(kept)
                late.append((dest, list(kept)))
        due = [self.since[d] + self.retry[d] for d, kept in self.kept.items() if kept]
        self.earliest = min(due, default=math.inf)
        return late

    def next_due(self) -> float | None:
        """When the next link may become overdue (monotonic seconds), if any may hold a message."""
        return None if self.earliest == math.inf else self.earliest


class LinkAcks:
    """The receiving side: which links' acknowledgements are due. ``sent[sender]`` is the last
    sequence number acknowledged to ``sender``; ``owed[sender]``, since when (the first look that
    saw it) the link owes an acknowledgement; ``looked``, when the links were last looked at."""

    def __init__(self) -> None:
        self.sent: dict[str, int] = {}
        self.owed: dict[str, float] = {}
        self.looked = -ACK_EVERY

    def due(self, handled: dict[str, int], now: float) -> dict[str, int]:
        """``{sender: n}``, every link that has owed its acknowledgement ``ACK_DELAY`` seconds, for one
        ``link`` message now; empty sooner than ``ACK_EVERY`` after the last look."""
        if now - self.looked < ACK_EVERY:
            return {}
        self.looked = now
        out = {}
        for sender, n in handled.items():
            if n > self.sent.get(sender, 0) and now - self.owed.setdefault(sender, now) >= ACK_DELAY:
                self.sent[sender] = out[sender] = n
                del self.owed[sender]
        return out

    def again(self, sender: str) -> None:
        """A copy of a message already handled came from ``sender``: it has not heard the
        acknowledgement (lost on its way), so the link is acknowledged again, at the next look."""
        self.sent.pop(sender, None)
        self.owed[sender] = -math.inf

    def carried(self, dests: Iterable[str], handled: dict[str, int]) -> dict[str, int]:
        """``{dest: n}`` to carry in a step frame to ``dests``: each one's link handled beyond its last
        acknowledgement (whatever ``ACK_DELAY``: it costs no message of its own)."""
        out = {}
        for sender in dests:
            n = handled.get(sender, 0)
            if n > self.sent.get(sender, 0):
                self.sent[sender] = out[sender] = n
                self.owed.pop(sender, None)
        return out

    def next_due(self, handled: dict[str, int], now: float) -> float | None:
        """When to look at the links again: ``ACK_EVERY`` after the last, while one owes (else None)."""
        if self.owed or any(n > self.sent.get(s, 0) for s, n in handled.items()):
            return self.looked + ACK_EVERY
        return None


def link_message(run_id: str, sender: str, acks: dict[str, int]) -> dict[str, Any]:
    """``sender`` has handled every message from each addressee ``a`` up to ``acks[a]``."""
    return {"kind": "link", "run": run_id, "from": sender, "acks": acks}


def parse_link(data: dict, run_id: str, roster: dict[str, int], me: str) -> tuple[str, int]:
    """``(sender, received)``: what a ``link`` message acknowledges to ``me``; ValueError naming what
    is wrong."""
    if data.get("run") != run_id:
        raise ValueError(f"link message of run {data.get('run')!r}, this is run {run_id!r}")
    sender, acks = data.get("from"), data.get("acks")
    if not isinstance(sender, str) or sender not in roster:
        raise ValueError(f"link message from {sender!r}, not a member of this run")
    if not isinstance(acks, dict) or me not in acks:
        raise ValueError(f"link message from {sender} without an acknowledgement for {me}")
    received = acks[me]
    if isinstance(received, bool) or not isinstance(received, int) or received < 0:
        raise ValueError(f"link message with a bad acknowledgement {received!r}")
    return sender, received


class Retransmission:
    """A participant's end of every link, with transient delivery: what it keeps of its sends
    (``LinkOutbox``), the acknowledgements it owes (``LinkAcks``), and the messages that carry them."""

    def __init__(self, run_id: str, me: str) -> None:
        self.run_id, self.me = run_id, me
        self.outbox = LinkOutbox()
        self.acks = LinkAcks()

    def carried(self, dests: Iterable[str], handled: dict[str, int]) -> dict[str, int] | None:
        """The acknowledgements a step frame to ``dests`` carries (``wire.frame``'s ``acks``)."""
        return self.acks.carried(dests, handled) or None

    def acked(self, acks: dict[str, int], now: float) -> None:
        """Acknowledgements a step frame carried (``wire.parse_frame``'s ``acks``)."""
        for sender, n in acks.items():
            self.outbox.ack(sender, n, now)

    def on_link(self, data: dict, roster: dict[str, int], now: float) -> None:
        """A ``link`` message from a peer: it has handled what it says; a bad one is logged, ignored
        (it carries no protocol input, and a forged one never gets here: auth.py)."""
        try:
            sender, received = parse_link(data, self.run_id, roster, self.me)
        except ValueError as exc:
            log.warning("%s: ignored a link message: %s", self.me, exc)
            return
        self.outbox.ack(sender, received, now)

    def tick(self, bus: Any, handled: dict[str, int], now: float) -> None:
        """Send the acknowledgements due (``handled``: the last sequence number handled per sender)
        and the links overdue again, through ``bus`` (``rabbit.Bus.send``)."""
        acks = self.acks.due(handled, now)
        if acks:
            key, headers = addressed([f"control.{sender}" for sender in acks])
            bus.send(key, link_message(self.run_id, self.me, acks), headers=headers)
        for dest, kept in self.outbox.overdue(now):
            log.info("%s: sending %d unacknowledged message(s) to %s again", self.me, len(kept), dest)
            for i in range(0, len(kept), RESEND_BATCH):
                batch = kept[i : i + RESEND_BATCH]
                bus.send(batch[0][0], compact(frame(self.run_id, self.me, [entry for _key, entry in batch])))

    def next_due(self, handled: dict[str, int], now: float) -> float:
        """When the links want a look again (monotonic seconds; infinity: not until something changes)."""
        due = [t for t in (self.acks.next_due(handled, now), self.outbox.next_due()) if t is not None]
        return min(due, default=math.inf)
