"""What waits for the broker's confirms (docs/wire.md#publishing): the bus's publishes, and the acks
of deliveries held back behind them; pure bookkeeping, no client. The broker confirms a channel's
publishes by delivery tag (1, 2, ... in publish order), singly or "everything up to" (``multiple``)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Outgoing:
    """A message as published, kept until the broker confirms it (re-published after a reconnect)."""

    exchange: str
    routing_key: str
    body: bytes
    props: Any
    mandatory: bool


class Outbox:
    """Invariants: ``unconfirmed`` holds, in publish order (keys: this channel's delivery tags,
    ascending), every message the broker has not confirmed together with every later one, so that
    what is re-published keeps its order at every receiver; ``acked`` are tags in it the broker
    confirmed while an earlier one is not yet; ``nacked`` are tags a quorum queue refused, kept for
    re-publishing (a later ``multiple`` ack covers only tags not already answered); ``held`` are
    ``(tag of the last publish before, delivery)`` in handling order, whose acks wait (``None``
    instead of the tag: blocked, waiting for ``unblock`` first)."""

    def __init__(self, quorum: bool = False) -> None:
        self.quorum = quorum  # a nack is a quorum queue without a leader: re-publish, not an error
        self.tag = 0  # the last publish's delivery tag on this channel
        self.unconfirmed: dict[int, Outgoing] = {}
        self.acked: set[int] = set()
        self.nacked: set[int] = set()
        self.refused: list[str] = []  # why the broker nacked or returned a message
        self.held: deque[tuple[float | None, Any]] = deque()  # None: blocked

    def __len__(self) -> int:
        return len(self.unconfirmed)

    def add(self, message: Outgoing) -> None:
        self.tag += 1
        self.unconfirmed[self.tag] = message

    def confirm(self, tag: int, multiple: bool, nack: bool) -> None:
        """The broker's ``Basic.Ack`` (or ``Basic.Nack``) of ``tag``, or of everything up to it."""
        if multiple:  # tags ascend in publish order: everything up to this one
            tags = []
            for t in self.unconfirmed:
                if t > tag:
                    break
                tags.append(t)
        else:
            tags = [tag]
        if nack and self.quorum:
            # A quorum queue refuses while it has no leader (an election after a node's loss): the
            # message stays unconfirmed, and the bus re-publishes it, in order, from a fresh channel.
            self.nacked.update(t for t in tags if t in self.unconfirmed and t not in self.nacked)
            return
        for t in tags:
            if t in self.nacked:
                continue  # refused already (quorum nack): re-published later, not confirmed by this ack
            if nack:
                message = self.unconfirmed.pop(t, None)
                if message is not None:
                    self.refused.append(f"the broker refused (nack) a message to {message.routing_key!r}")
            elif t in self.unconfirmed:
                self.acked.add(t)
        # A message is settled only with every one before it: until then a nack of an earlier one
        # (a quorum queue without a leader) sends it out again behind that one (go-back-N), for the
        # broker may have taken it ahead of the refused one.
        while self.unconfirmed:
            first = next(iter(self.unconfirmed))
            if first not in self.acked:
                break
            del self.unconfirmed[first]
            self.acked.discard(first)

    def returned(self, routing_key: str, exchange: str) -> None:
        """A mandatory message no queue takes (the broker returns it before confirming it)."""
        self.refused.append(f"no queue takes routing key {routing_key!r} on {exchange}")

    def restart(self) -> list[Outgoing]:
        """Everything not confirmed, in publish order, to publish again on a new channel (whose
        tags start from 1 again)."""
        pending = list(self.unconfirmed.values())
        self.unconfirmed.clear()
        self.nacked.clear()
        self.acked.clear()
        self.tag = 0
        return pending

    def hold(self, delivery: Any, wait: bool = True, later: bool = False, blocked: bool = False) -> None:
        """``delivery``'s ack waits for the confirms of everything published so far (unless ``wait``
        is off: transient delivery, where nothing is kept for a broker restart; it still goes out
        behind the acks before it); ``later``: and of the publish that ``made`` will name;
        ``blocked``: and for ``unblock`` first."""
        self.held.append((None if blocked else self._mark(wait, later), delivery))

    def _mark(self, wait: bool, later: bool) -> float:
        return (math.inf if later else self.tag) if wait else 0

    def unblock(self, done: Callable[[Any], bool], wait: bool = True, later: bool = False) -> None:
        """The blocked deliveries ``done`` names wait no more for ``unblock``: as if held now."""
        if any(w is None for w, _d in self.held):
            mark = self._mark(wait, later)
            self.held = deque((mark if w is None and done(d) else w, d) for w, d in self.held)

    def made(self) -> None:
        """The last publish is the one the acks held ``later`` wait for: from now on they wait for it."""
        if any(w == math.inf for w, _d in self.held):
            self.held = deque((self.tag if w == math.inf else w, d) for w, d in self.held)

    def release(self, at_least: int = 1) -> list[tuple[Any, bool]]:
        """The acks that may go now, if ``at_least`` may (else none): ``(delivery, multiple)``.

        Deliveries are handled and held in delivery order, so one cumulative ack (``multiple``) of
        the last of the leading run of releasable ones acks exactly those (and none held back);
        those released behind a blocked delivery are acked one by one."""
        # every publish with a tag up to ``through`` is confirmed
        through = next(iter(self.unconfirmed)) - 1 if self.unconfirmed else self.tag
        ready = []
        for i, (watermark, _delivery) in enumerate(self.held):
            if watermark is None:
                continue  # waits for ``unblock``; those behind it may go
            if watermark > through:
                break  # it waits for a confirm, and so do those behind it
            ready.append(i)
        if not ready or len(ready) < at_least:
            return []
        run = next((n for n, i in enumerate(ready) if i != n), len(ready))  # the leading run
        acks = [(self.held[run - 1][1], True)] if run else []
        acks += [(self.held[i][1], False) for i in ready[run:]]
        taken = set(ready)
        self.held = deque(h for i, h in enumerate(self.held) if i not in taken)
        return acks
