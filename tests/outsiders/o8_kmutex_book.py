"""k-mutual exclusion by Lamport's queue, every peer's page in one book (a dict keyed by pid).

Written from the user docs only. REQUEST to all; each peer books it and answers ACK; RELEASE to
all on leaving. A node enters when fewer than K booked requests precede its own in (ts, pid)
and it has heard from every peer something stamped after its request. Only the order of
timestamps is read, so the file declares clock offsets for check.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Literal

from mutexlab.protocols.kit import (
    HELD,
    WANTED,
    ClassicNode,
    ClockOffsets,
    Message,
    Reductions,
    Send,
    classic_algorithm,
    classic_table,
    on,
)

LATE = 0  # > 0: a request stamped LATE or later enters at once (reads a timestamp's value)


class Req(Message):
    type: Literal["REQ"] = "REQ"


class Ack(Message):
    type: Literal["ACK"] = "ACK"


class Rel(Message):
    type: Literal["REL"] = "REL"


@dataclass(slots=True)
class Page:
    last: int = -1  # the last stamp heard from this peer
    ask: int | None = None  # its booked request


HEAR = on("book it, answer or unbook; maybe enter", "_hear", to=[HELD])
NOTED = on("book it, answer or unbook", "_hear")


class BookNode(ClassicNode):
    TABLE = classic_table(
        request="REQ to all → WANTED",
        exit="REL to all → RELEASED",
        rows={
            "RELEASED": {"REQ": NOTED, "ACK": NOTED, "REL": NOTED},
            "WANTED": {"REQ": HEAR, "ACK": HEAR, "REL": HEAR},
            "HELD": {"REQ": NOTED, "ACK": NOTED, "REL": NOTED},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.mine: int | None = None
        self.book = {j: Page() for j in self._others()}

    def _request(self) -> list:
        self.mine = self.clock.tick()
        self.state = WANTED
        out = [Send(j, Req(sender=self.pid, ts=self.mine)) for j in self._others()]
        return out + self._try()

    def _hear(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        page = self.book[msg.sender]
        page.last = msg.ts
        out: list = []
        if isinstance(msg, Req):
            page.ask = msg.ts
            out.append(Send(msg.sender, Ack(sender=self.pid, ts=self.clock.tick())))
        elif isinstance(msg, Rel):
            page.ask = None
        return out + self._try()

    def _try(self) -> list:
        if self.state is not WANTED or self.mine is None:
            return []
        if LATE and self.mine >= LATE:
            return self._enter()
        me = (self.mine, self.pid)
        ahead = sum(1 for j, p in self.book.items() if p.ask is not None and (p.ask, j) < me)
        if ahead < self.k and all(p.last > self.mine for p in self.book.values()):
            return self._enter()
        return []

    def _release(self) -> list:
        if COUNT:
            TALLY.seen.append(self.pid)
        self.mine = None
        return [Send(j, Rel(sender=self.pid, ts=self.clock.tick())) for j in self._others()]


NOTHING = 1 << 62


@dataclass(slots=True)
class Tally:
    """How many entries this interpreter has seen (statistics)."""

    seen: list[int]


TALLY = Tally([])
COUNT = False  # True: every entry is counted in TALLY (one object for every node)


def _low(node: BookNode) -> int:
    stamps = [node.clock.time] + [node.mine] * (node.mine is not None)
    for p in node.book.values():
        stamps += [p.last] * (p.last >= 0) + [p.ask] * (p.ask is not None)
    return min(stamps)


def _shift(node: BookNode, d: int) -> BookNode:
    twin = copy.deepcopy(node)
    twin.clock.time -= d
    twin.mine = None if node.mine is None else node.mine - d
    twin.book = {
        j: dataclasses.replace(
            p, last=p.last - d if p.last >= 0 else -1, ask=None if p.ask is None else p.ask - d
        )
        for j, p in node.book.items()
    }
    return twin


REDUCTIONS = Reductions(
    frozenset({BookNode}),
    clocks=ClockOffsets(_low, _shift, "only the order of timestamps is read"),
)

SPEC = classic_algorithm(
    "o8-book",
    "k-mutex: Lamport's queue, a book of pages per peer",
    BookNode,
    Req,
    Ack,
    Rel,
    problem="kmutex",
    reductions=REDUCTIONS,
)
