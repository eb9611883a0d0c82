"""The receiving end of each link (docs/wire.md#publishing: reconnecting and duplicates): every
protocol message carries its link's sequence number (sender → receiver, from 1); a message sent
again may come twice or ahead of an earlier one, and a ``LinkInbox`` hands each out once, in order."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("mutexlab.transport")
NOTHING_HELD: dict[int, Any] = {}  # read only: the held-back items of a link that has none


@dataclass
class Delivery:
    """A message as the bus hands it out: where from, its body, what its ack needs."""

    queue: str
    routing_key: str
    body: bytes
    tag: int
    generation: int
    redelivered: bool
    headers: dict
    forged: str | None = None  # why it is not the run's own (auth.Signer.forged); None: authentic
    signed: bool = False  # its MAC was checked and is valid: a process of the run published it


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
        # sender -> {seq: item} that came ahead of a missing one; only links holding something back
        self.held: dict[str, dict[int, Any]] = {}
        self.refused_seqs: dict[str, set[int]] = {}  # sender -> seqs of malformed messages (dead-lettered)
        self.duplicates = 0
        self.gaps = 0

    def accept(self, sender: str, seq: int, item: Any = None) -> list[Any]:
        last = self.last.get(sender, 0)
        held = self.held.get(sender, NOTHING_HELD)
        if seq <= last or seq in held:
            if seq in held:  # the newest copy's delivery is the one its broker still holds
                held[seq] = item
            self.duplicates += 1
            return []
        refused = self.refused_seqs.get(sender, ())
        while last + 1 < seq and last + 1 in refused:  # a malformed message's place, skipped when needed
            last += 1
        if seq != last + 1:
            self.last[sender] = last
            self.gaps += 1
            self.held.setdefault(sender, {})[seq] = item
            log.warning("link %s: message %d came before %d; held back until it comes", sender, seq, last + 1)
            return []
        return self._release(sender, seq, [item])

    def handled(self, sender: str, seq: int) -> bool:
        """Message ``seq`` of ``sender`` was handled already: a copy (counted in ``duplicates``)."""
        if seq > self.last.get(sender, 0):
            return False
        self.duplicates += 1
        return True

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
        if not held:  # a link holds nothing back: no entry, so ``holding`` (every step) looks at none
            self.held.pop(sender, None)
        self.last[sender] = seq
        return ready

    def holding(self) -> list[Any]:
        """The items held back, of every link."""
        return [item for held in self.held.values() for item in held.values()]

    def waits(self, sender: str, seq: int) -> bool:
        """Message ``seq`` of ``sender`` is held back, ahead of a missing one."""
        return seq in self.held.get(sender, {})
