"""k-mutual exclusion by a desk (node 1) that hands out K passes, the next one by lottery.

Written from the user docs only (docs/problems-and-solutions.md). Module-level settings, a
dataclass ``Desk`` (its waiting list a ``field(default_factory=list)``) held by node 1 alone,
and the module ``random`` to draw who gets a freed pass — no seed of its own: ``check`` calls
that not deterministic, and ``simulate`` must still run the same under one seed.

Planted bugs (module constants):

* DRAW = "first": take the waiting list in order (deterministic); "lottery": ``random.choice``;
* SLACK = 1: the desk hands out a pass while K are out already (``<=`` for ``<``): K+1 inside.
"""

from __future__ import annotations

import random
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
    on,
)

DESK = 1
DRAW = "lottery"
SLACK = 0


class WantPass(Message):
    type: Literal["WANT_PASS"] = "WANT_PASS"


class Pass(Message):
    type: Literal["PASS"] = "PASS"


class PassBack(Message):
    type: Literal["PASS_BACK"] = "PASS_BACK"


@dataclass
class Desk:
    passes: int
    out: int = 0
    waiting: list[int] = field(default_factory=list)

    def may_hand_out(self) -> bool:
        return self.out < self.passes + SLACK

    def next_one(self) -> int:
        who = random.choice(self.waiting) if DRAW == "lottery" else self.waiting[0]
        self.waiting.remove(who)
        return who


AT_THE_DESK = {
    "WANT_PASS": on("desk: a pass if one is left, else wait", "_on_want"),
    "PASS_BACK": on("desk: the pass to someone waiting", "_on_back"),
}


class LotteryNode(ClassicNode):
    TABLE = classic_table(
        request="WANT_PASS to the desk → WANTED",
        exit="PASS_BACK to the desk → RELEASED",
        rows={
            RELEASED: AT_THE_DESK,
            WANTED: {**AT_THE_DESK, "PASS": on("enter", "_on_pass", to=[HELD])},
            HELD: AT_THE_DESK,
        },
        never="a PASS answers my WANT_PASS, one at a time",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.desk = Desk(k) if pid == DESK else None

    def _request(self) -> list:
        self.state = WANTED
        return [Send(DESK, WantPass(sender=self.pid, ts=self.clock.tick()))]

    def _on_pass(self, msg: Pass) -> list:
        self.clock.receive(msg.ts)
        return self._enter()

    def _release(self) -> list:
        return [Send(DESK, PassBack(sender=self.pid, ts=self.clock.tick()))]

    def _hand(self, to: int) -> list:
        assert self.desk is not None
        self.desk.out += 1
        return [Send(to, Pass(sender=self.pid, ts=self.clock.tick()))]

    def _on_want(self, msg: WantPass) -> list:
        self.clock.receive(msg.ts)
        assert self.desk is not None
        if self.desk.may_hand_out():
            return self._hand(msg.sender)
        self.desk.waiting.append(msg.sender)
        return []

    def _on_back(self, msg: PassBack) -> list:
        self.clock.receive(msg.ts)
        assert self.desk is not None
        self.desk.out -= 1
        return self._hand(self.desk.next_one()) if self.desk.waiting else []


SPEC = classic_algorithm(
    "o12-kmutex-lottery",
    "a desk hands out K passes, a freed one by lottery",
    LotteryNode,
    WantPass,
    Pass,
    PassBack,
    problem="kmutex",
)
