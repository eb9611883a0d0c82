"""Dining philosophers as Ricart–Agrawala between neighbours, what each knows in a dict by pid.

Written from the user docs only. A hungry philosopher asks both neighbours (MAY_I, stamped); a
neighbour answers OK at once unless it eats, or is hungry with priority; a deferred OK goes out
after the meal. With both OKs it takes both forks and eats. Priority: (ts, pid) — PRIORITY =
"pid" compares pids only, so the lower-numbered neighbour always wins.
"""

from enum import Enum
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

PRIORITY = "ts"


class Mood(Enum):
    CALM = "calm"
    WANTS = "wants"


class MayI(Message):
    type: Literal["MAY_I"] = "MAY_I"


class Ok(Message):
    type: Literal["OK"] = "OK"
    for_ts: int


class Neighbourly(Philosopher):
    TABLE = philosopher_table(
        hungry="MAY_I to both neighbours → HUNGRY",
        done="OK to the deferred → THINKING",
        rows={
            THINKING: {"MAY_I": on("OK", "_may_i"), "OK": on("late", "_ok")},
            HUNGRY: {
                "MAY_I": on("mine first: defer; else OK", "_may_i"),
                "OK": on("count", "_ok", to=[EATING]),
            },
            EATING: {"MAY_I": on("defer", "_may_i"), "OK": on("late", "_ok")},
        },
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.next_door = {(pid - 2) % n + 1: Mood.CALM, pid % n + 1: Mood.CALM}
        self.mine: int | None = None
        self.oks: frozenset[int] = frozenset()
        self.owed: dict[int, int] = {}

    def _first(self, ts: int, pid: int) -> bool:
        assert self.mine is not None
        if PRIORITY == "pid":
            return self.pid < pid
        return (self.mine, self.pid) < (ts, pid)

    def _hungry(self) -> list:
        self.mine, self.oks = self.clock.tick(), frozenset()
        return [Send(j, MayI(sender=self.pid, ts=self.mine)) for j in self.next_door]

    def _may_i(self, msg: MayI) -> list:
        self.clock.receive(msg.ts)
        self.next_door[msg.sender] = Mood.WANTS
        if self.state is EATING or (self.state is HUNGRY and self._first(msg.ts, msg.sender)):
            self.owed[msg.sender] = msg.ts
            return []
        self.next_door[msg.sender] = Mood.CALM
        return [Send(msg.sender, Ok(sender=self.pid, ts=self.clock.tick(), for_ts=msg.ts))]

    def _ok(self, msg: Ok) -> list:
        self.clock.receive(msg.ts)
        if self.state is HUNGRY and msg.for_ts == self.mine:
            self.oks |= {msg.sender}
            if len(self.oks) == len(self.next_door):
                return [self.take(self.left), self.take(self.right), *self._eat()]
        return []

    def _done(self) -> list:
        out: list = [self.put(self.left), self.put(self.right)]
        for j, ts in sorted(self.owed.items()):
            self.next_door[j] = Mood.CALM
            out.append(Send(j, Ok(sender=self.pid, ts=self.clock.tick(), for_ts=ts)))
        self.owed, self.mine = {}, None
        return out


SPEC = philosophers_algorithm(
    "o8-neighbourly", "philosophers: Ricart–Agrawala between neighbours", Neighbourly, MayI, Ok
)
