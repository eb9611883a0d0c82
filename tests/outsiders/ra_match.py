"""Ricart–Agrawala written on a base class of my own, one dispatching handler with `match`,
requests as NamedTuples, the deferred set as a frozenset."""

from __future__ import annotations

import functools
from typing import Literal, NamedTuple

from mutexlab.protocols.kit import (
    HELD,
    RELEASED,
    WANTED,
    ClassicNode,
    Message,
    Send,
    classic_algorithm,
    classic_table,
    on,
)


class Req(Message):
    type: Literal["REQ"] = "REQ"


class Ok(Message):
    type: Literal["OK"] = "OK"


@functools.total_ordering
class Ticket(NamedTuple):
    ts: int
    pid: int


def earlier(a: Ticket, b: Ticket) -> bool:
    return a < b


class Chatty(ClassicNode):
    """My base: sends to everyone else."""

    PEERS_FROM = 1

    @property
    def others(self) -> tuple[int, ...]:
        return tuple(j for j in range(self.PEERS_FROM, self.n + 1) if j != self.pid)

    def to_all(self, make) -> list:
        return [Send(j, make()) for j in self.others]


ALL = {"REQ": on("a request: answer or defer", "_dispatch"), "OK": on("an answer", "_dispatch")}


class RA(Chatty):
    TABLE = classic_table(
        request="REQ to all → WANTED",
        exit="answer the deferred → RELEASED",
        rows={
            RELEASED: {"REQ": ALL["REQ"]},
            WANTED: {**ALL, "OK": on("count it; enter with all", "_dispatch", to=HELD)},
            HELD: {"REQ": ALL["REQ"]},
        },
        never="OK answers my REQ",
    )

    def __init__(self, pid, n, requests=0, clock=0):
        super().__init__(pid, n, requests, clock)
        self.mine: Ticket | None = None
        self.oks = frozenset()
        self.deferred = frozenset()

    def _request(self):
        self.state = WANTED
        self.mine = Ticket(self.clock.tick(), self.pid)
        self.oks = frozenset()
        if not self.others:
            return self._enter()
        return self.to_all(lambda: Req(sender=self.pid, ts=self.mine.ts))

    def _dispatch(self, msg):
        self.clock.receive(msg.ts)
        match msg:
            case Req(sender=j, ts=ts):
                theirs = Ticket(ts, j)
                if self.state is HELD or (self.state is WANTED and earlier(self.mine, theirs)):
                    self.deferred |= {j}
                    return []
                return [Send(j, Ok(sender=self.pid, ts=self.clock.tick()))]
            case Ok(sender=j):
                self.oks |= {j}
                if self.oks == set(self.others):
                    return self._enter()
                return []

    def _release(self):
        out = [Send(j, Ok(sender=self.pid, ts=self.clock.tick())) for j in sorted(self.deferred)]
        self.deferred = frozenset()
        self.mine = None
        return out


SPEC = classic_algorithm(
    "ra-match",
    "Ricart–Agrawala on a base class, one match handler",
    RA,
    Req,
    Ok,
    literature={"messages": ("2(N−1)", lambda n: 2 * (n - 1))},
)
