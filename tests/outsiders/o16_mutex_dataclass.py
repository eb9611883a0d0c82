"""Ricart–Agrawala for one critical section, the node written as a ``@dataclass`` (I write all my
classes so: the fields in one place, ``__repr__`` for free), ``__post_init__`` doing the rest.

The dataclass makes ``__init__(pid, n, requests=0, clock=0)`` — the signature mutexlab calls — and
``__post_init__`` hands those to ``ClassicNode.__init__``, which turns ``clock`` into the Lamport
clock. The deferred askers are a ``dict[int, int]`` (who → the stamp of its request), so a REPLY
echoes the stamp it answers.

Planted bug (a module constant the tests edit):

* TIE_BY_STAMP = True: requests are ordered by their stamp alone, ties not broken by pid: two
  nodes asking with one stamp each defer to neither — both enter.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mutexlab.protocols.kit import (
    HELD,
    RELEASED,
    WANTED,
    ClassicNode,
    Message,
    Send,
    classic_algorithm,
    classic_table,
    ignore,
    on,
)

NAME = "o16-mutex-dataclass"
TIE_BY_STAMP = False


class Req(Message):
    type: Literal["REQ"] = "REQ"


class Rep(Message):
    type: Literal["REP"] = "REP"
    echo: int


@dataclass
class RaNode(ClassicNode):
    pid: int
    n: int
    requests: int = 0
    clock: int = 0  # type: ignore[assignment]  # ClassicNode makes it a LamportClock
    stamp: int | None = None
    replied: set[int] = field(default_factory=set)
    deferred: dict[int, int] = field(default_factory=dict)

    TABLE = classic_table(
        request="REQ to all → WANTED",
        exit="REP to the deferred → RELEASED",
        rows={
            RELEASED: {"REQ": on("REP", "_on_req"), "REP": ignore("never: I ask nobody", "_seen")},
            WANTED: {
                "REQ": on("older: REP; else defer", "_on_req"),
                "REP": on("count", "_on_rep", to=[HELD]),
            },
            HELD: {"REQ": on("defer", "_on_req"), "REP": ignore("never: all answered", "_seen")},
        },
    )

    def __post_init__(self) -> None:
        ClassicNode.__init__(self, self.pid, self.n, self.requests, self.clock)  # type: ignore[arg-type]

    def _first(self, stamp: int, who: int) -> bool:
        """Whether my request comes before (stamp, who)."""
        if self.stamp is None:
            return False
        if TIE_BY_STAMP:
            return self.stamp < stamp
        return (self.stamp, self.pid) < (stamp, who)

    def _request(self) -> list:
        self.stamp, self.replied = self.clock.tick(), set()
        self.state = WANTED
        if self.n == 1:
            return self._enter()
        return [Send(j, Req(sender=self.pid, ts=self.stamp)) for j in range(1, self.n + 1) if j != self.pid]

    def _on_req(self, msg: Req) -> list:
        self.clock.receive(msg.ts)
        if self.state == HELD or (self.state == WANTED and self._first(msg.ts, msg.sender)):
            self.deferred[msg.sender] = msg.ts
            return []
        return [Send(msg.sender, Rep(sender=self.pid, ts=self.clock.tick(), echo=msg.ts))]

    def _on_rep(self, msg: Rep) -> list:
        self.clock.receive(msg.ts)
        if msg.echo == self.stamp:
            self.replied.add(msg.sender)
        return self._enter() if len(self.replied) == self.n - 1 else []

    def _seen(self, msg: Rep) -> list:
        self.clock.receive(msg.ts)
        return []

    def _release(self) -> list:
        out = [
            Send(j, Rep(sender=self.pid, ts=self.clock.tick(), echo=ts))
            for j, ts in sorted(self.deferred.items())
        ]
        self.stamp, self.replied, self.deferred = None, set(), {}
        return out


SPEC = classic_algorithm(NAME, "Ricart–Agrawala, the node a dataclass", RaNode, Req, Rep)
