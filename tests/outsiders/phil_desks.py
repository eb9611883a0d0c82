"""Dining philosophers with fork desks: fork f is lent by philosopher f (its desk), in (ts, pid)
order; a hungry philosopher asks for its lower-numbered fork first (resource ordering)."""

from __future__ import annotations

import dataclasses
import enum
import heapq
from dataclasses import dataclass, field
from typing import Literal

from mutexlab.protocols.kit import (
    EATING,
    HUNGRY,
    THINKING,
    Message,
    Philosopher,
    Send,
    on,
    philosopher_table,
    philosophers_algorithm,
)


class Ask(Message):
    type: Literal["ASK"] = "ASK"
    fork: int


class Lend(Message):
    type: Literal["LEND"] = "LEND"
    fork: int


class Back(Message):
    type: Literal["BACK"] = "BACK"
    fork: int


class Phase(enum.Enum):
    IDLE = "idle"
    FIRST = "waiting for the first fork"
    SECOND = "waiting for the second fork"


@dataclass(frozen=True)
class Desk:
    """The desk of one fork: who has it, who waits (a heap of (ts, pid))."""

    holder: int | None = None
    waiting: tuple[tuple[int, int], ...] = field(default_factory=tuple)

    def ask(self, ts: int, pid: int) -> tuple[Desk, int | None]:
        if self.holder is None:
            return dataclasses.replace(self, holder=pid), pid
        heap = list(self.waiting)
        heapq.heappush(heap, (ts, pid))
        return dataclasses.replace(self, waiting=tuple(heap)), None

    def back(self) -> tuple[Desk, int | None]:
        if not self.waiting:
            return Desk(), None
        heap = list(self.waiting)
        _, nxt = heapq.heappop(heap)
        return Desk(nxt, tuple(heap)), nxt


ALWAYS = {"ASK": on("desk: lend or queue", "_on_ask"), "BACK": on("desk: lend to the next", "_on_back")}


class DeskPhilosopher(Philosopher):
    TABLE = philosopher_table(
        hungry="ASK the lower fork's desk → HUNGRY",
        done="BACK both forks → THINKING",
        rows={
            THINKING: dict(ALWAYS),
            HUNGRY: {**ALWAYS, "LEND": on("next fork, or eat", "_on_lend", to=[EATING])},
            EATING: dict(ALWAYS),
        },
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.desk: Desk = Desk()  # of fork ``pid``
        self.phase: Phase = Phase.IDLE
        self.order: tuple[int, int] = (min(self.left, self.right), max(self.left, self.right))

    def _msg(self, kind: type[Message], to: int, fork: int) -> Send:
        return Send(to, kind(sender=self.pid, ts=self.clock.tick(), fork=fork))

    def _hungry(self) -> list:
        self.phase = Phase.FIRST
        return [self._msg(Ask, self.order[0], self.order[0])]

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        self.desk, lent = self.desk.ask(msg.ts, msg.sender)
        return [] if lent is None else [self._msg(Lend, lent, self.pid)]

    def _on_back(self, msg: Back) -> list:
        self.clock.receive(msg.ts)
        self.desk, lent = self.desk.back()
        return [] if lent is None else [self._msg(Lend, lent, self.pid)]

    def _on_lend(self, msg: Lend) -> list:
        self.clock.receive(msg.ts)
        if self.phase is Phase.FIRST:
            self.phase = Phase.SECOND
            return [self._msg(Ask, self.order[1], self.order[1])]
        self.phase = Phase.IDLE
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _done(self) -> list:
        return [self.put(self.left), self.put(self.right)] + [self._msg(Back, f, f) for f in self.order]


SPEC = philosophers_algorithm(
    "phil-desks",
    "dining philosophers: each fork lent by its desk in (ts, pid) order, lower fork first",
    DeskPhilosopher,
    Ask,
    Lend,
    Back,
)
