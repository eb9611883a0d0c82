"""End-to-end retransmission over the per-link sequence numbers (docs/architecture.md#wire).

Protocol messages and trace batches travel as transient messages: the broker keeps them in
memory only, so a broker restart (or a purged queue) can lose some. Nothing is lost end to end
because every sender keeps what it sent until the receiver has said it has it, and sends the rest
again when asked:

* a participant keeps each protocol message it sent (``LinkOutbox``) until its addressee
  acknowledges it: every envelope carries ``ack``, the last sequence number its sender accepted
  on the reverse link, and a ``link`` message (``control.<name>``) says the same on its own;
* a receiver that sees a gap on a link (``LinkInbox`` refuses the message) asks the sender to
  send the rest again (a ``link`` message with ``resend``); so does a participant after each
  reconnect, of every peer it has exchanged messages with. A peer so asked sends its kept
  messages above the asker's ``received`` again, in order;
* every asking ``link`` message (``ask``, with ``sent``: the last sequence number the asker had
  published to the addressee) is answered with a ``link`` message saying what the answerer has
  received and echoing ``sent``. The question travels behind the messages sent before it (one
  channel, one queue: FIFO), so what the answer does not cover up to ``sent`` was lost: exactly
  those are sent again — never a message still on its way. A sender whose oldest kept message has waited
  ``LINK_RETRY`` seconds without an acknowledgement asks (the last message of a link may be the
  lost one); each question that finds nothing lost doubles that link's wait, up to
  ``LINK_RETRY_MAX``, so a slow peer costs few questions;
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

# A link whose oldest unacknowledged message has waited this long asks its addressee what it has
# (doubled, up to LINK_RETRY_MAX, after each question that found nothing lost).
LINK_RETRY = 5.0
LINK_RETRY_MAX = 60.0
# The monitor asks a participant again for missing trace events at most this often.
TRACE_RESEND_PAUSE = 0.5
# The monitor tells every participant how far it has their traces this often (they drop what it has).
TRACE_ACK_EVERY = 1.0


class LinkOutbox:
    """What this process sent on each link and its addressee has not yet acknowledged.

    Invariant: ``kept[dest]`` holds, in sequence order, every message sent to ``dest`` above
    ``acked[dest]`` as ``(seq, routing_key, body, message_id)``; ``since[dest]`` is when the link last
    made progress (a message sent to an empty link, or an acknowledgement, or a retransmission);
    ``sent[dest]`` is the last sequence number published to ``dest``.
    """

    def __init__(self) -> None:
        self.kept: dict[str, deque[tuple[int, str, dict, str]]] = {}
        self.acked: dict[str, int] = {}
        self.since: dict[str, float] = {}
        self.sent: dict[str, int] = {}  # dest -> the last sequence number published to it
        self.retry: dict[str, float] = {}  # dest -> seconds without progress before asking it
        self.retransmitted = 0  # messages sent again

    def keep(self, dest: str, seq: int, routing_key: str, body: dict, message_id: str, now: float) -> None:
        kept = self.kept.setdefault(dest, deque())
        if not kept:
            self.since[dest] = now
        kept.append((seq, routing_key, body, message_id))
        self.sent[dest] = seq

    def ack(self, dest: str, through: int, now: float) -> None:
        """``dest`` has every message of the link up to ``through``: forget them."""
        if through <= self.acked.get(dest, 0):
            return
        self.acked[dest] = through
        kept = self.kept.get(dest)
        while kept and kept[0][0] <= through:
            kept.popleft()
        self.since[dest] = now

    def above(
        self, dest: str, received: int, now: float, through: int | None = None
    ) -> list[tuple[int, str, dict, str]]:
        """The kept messages to ``dest`` above ``received`` (and up to ``through``), to send again
        in order."""
        self.ack(dest, received, now)
        again = [
            m for m in self.kept.get(dest, ()) if m[0] > received and (through is None or m[0] <= through)
        ]
        if again:
            self.since[dest] = now
            self.retransmitted += len(again)
        return again

    def answered(self, dest: str, received: int, sent: int, now: float) -> list[tuple[int, str, dict, str]]:
        """``dest`` answered this process's question, asked when ``sent`` was the last message
        published to it: it has everything up to ``received``. The kept messages up to ``sent`` not
        covered were lost (to send again); when none were, the link waits twice as long before
        asking again."""
        lost = self.above(dest, received, now, through=sent)
        wait = self.retry.get(dest, LINK_RETRY)
        self.retry[dest] = LINK_RETRY if lost else min(2 * wait, LINK_RETRY_MAX)
        return lost

    def overdue(self, now: float) -> list[str]:
        """The links whose oldest kept message has waited their retry time without progress; their
        clocks restart (ask once per retry time)."""
        late = [
            d
            for d, kept in self.kept.items()
            if kept and now - self.since[d] >= self.retry.get(d, LINK_RETRY)
        ]
        for dest in late:
            self.since[dest] = now
        return late

    def peers(self) -> set[str]:
        return set(self.kept) | set(self.acked)


def link_message(
    run_id: str, sender: str, received: int, sent: int, ask: bool, resend: bool = False
) -> dict[str, Any]:
    """``sender`` has every message from the addressee up to ``received``; ``ask``: say what you
    have (answered by a ``link`` message with ``ask`` off, echoing ``sent``: the last message the
    asker had published to the addressee); ``resend``: send me the rest again."""
    return {
        "kind": "link",
        "run": run_id,
        "from": sender,
        "received": received,
        "sent": sent,
        "ask": ask,
        "resend": resend,
    }


def parse_link(data: dict, run_id: str, roster: dict[str, int]) -> tuple[str, int, int, bool, bool]:
    """``(sender, received, sent, ask, resend)`` of a ``link`` message; ValueError naming what is wrong."""
    if data.get("run") != run_id:
        raise ValueError(f"link message of run {data.get('run')!r}, this is run {run_id!r}")
    sender, received, sent, ask = data.get("from"), data.get("received"), data.get("sent"), data.get("ask")
    if sender not in roster:
        raise ValueError(f"link message from {sender!r}, not a member of this run")
    for key, value in (("received", received), ("sent", sent)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"link message with a bad {key!r} {value!r}")
    assert isinstance(received, int) and isinstance(sent, int)
    resend = data.get("resend", False)
    if not isinstance(ask, bool) or not isinstance(resend, bool):
        raise ValueError(f"link message with a bad 'ask' or 'resend' {ask!r}, {resend!r}")
    return sender, received, sent, ask, resend


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
