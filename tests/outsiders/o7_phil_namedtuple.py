"""Dining philosophers, a waiter-free solution with NamedTuple fork records and a deque of asks.

Each fork is kept as a Fork(here: bool, asked_by: int | None); the lower-numbered neighbour holds
it first. Ordered acquisition: a philosopher first asks for its lower-numbered fork, then the
higher one (resource hierarchy, no cycle). A holder that is not eating and does not need the
fork right now gives it on request; otherwise remembers the asker.
"""

from collections import deque
from typing import Literal, NamedTuple

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

FORGET = False  # broken variant: forgets to hand over a fork asked for while eating
RAISE_RARE = False  # broken variant: a KeyError in one interleaving


class Want(Message):
    type: Literal["WANT"] = "WANT"
    fork: int


class Give(Message):
    type: Literal["GIVE"] = "GIVE"
    fork: int


class ForkRec(NamedTuple):
    here: bool
    asked_by: int | None


class Hier(Philosopher):
    TABLE = philosopher_table(
        hungry="ask for the lower fork first → HUNGRY (or eat)",
        done="give forks asked for → THINKING",
        rows={
            THINKING: {"WANT": on("give", "_on_want")},
            HUNGRY: {"WANT": on("give or keep", "_on_want"), "GIVE": on("take", "_on_give", to=[EATING])},
            EATING: {"WANT": on("keep", "_on_want")},
        },
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.nb = {self.left: (pid - 2) % n + 1, self.right: self.right}
        self.forks = {f: ForkRec(pid < self.nb[f], None) for f in (self.left, self.right)}
        self.order = tuple(sorted((self.left, self.right)))
        self.log: deque[int] = deque(maxlen=3)  # last forks received (for the card)

    def _send(self, cls: type[Message], f: int) -> Send:
        return Send(self.nb[f], cls(sender=self.pid, ts=self.clock.tick(), fork=f))

    def _next_missing(self) -> int | None:
        for f in self.order:
            if not self.forks[f].here:
                return f
        return None

    def _hungry(self) -> list:
        return self._progress()

    def _progress(self) -> list:
        f = self._next_missing()
        if f is None:
            return [self.take(self.left), self.take(self.right), *self._eat()]
        return [self._send(Want, f)]

    def _needs_now(self, f: int) -> bool:
        # hungry and holding f while f comes first in the order (or all below it are here)
        if self.state is not HUNGRY:
            return False
        idx = self.order.index(f)
        return all(self.forks[g].here for g in self.order[: idx + 1])

    def _on_want(self, msg: Want) -> list:
        self.clock.receive(msg.ts)
        f = msg.fork
        if RAISE_RARE and self.state is EATING and self.pid == 2:
            raise KeyError(("rare", f))
        if self.state is EATING or self._needs_now(f):
            self.forks[f] = self.forks[f]._replace(asked_by=msg.sender)
            return []
        self.forks[f] = ForkRec(False, None)
        return [self._send(Give, f)]

    def _on_give(self, msg: Give) -> list:
        self.clock.receive(msg.ts)
        self.forks[msg.fork] = self.forks[msg.fork]._replace(here=True)
        self.log.append(msg.fork)
        return self._progress()

    def _done(self) -> list:
        effects = [self.put(self.left), self.put(self.right)]
        for f in self.order:
            rec = self.forks[f]
            if rec.asked_by is not None:
                if FORGET and f == self.order[1]:
                    self.forks[f] = rec._replace(asked_by=None)
                    continue
                self.forks[f] = ForkRec(False, None)
                effects.append(self._send(Give, f))
        return effects

    def waiting_for(self) -> dict[str, list[int]]:
        f = self._next_missing() if self.state is HUNGRY else None
        return {"GIVE": [self.nb[f]]} if f is not None else {}


SPEC = philosophers_algorithm("o7-phil-hier", "hierarchy of forks, NamedTuple records", Hier, Want, Give)
