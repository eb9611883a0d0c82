"""Dining philosophers by resource hierarchy, with fork requests.

Each fork is a token kept by one of its two neighbours. A hungry philosopher acquires its
forks in increasing number: it first claims the lower one (asking its neighbour with NEED if it
lacks it), and only then the higher one. A fork that is claimed (held by a philosopher that has
claimed every lower fork of its own) is kept until the meal ends; any other fork held is given
at once on NEED. Dijkstra's ordering forbids a cycle of waits.
"""

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


class Need(Message):
    type: Literal["NEED"] = "NEED"
    fork: int


class Here(Message):
    type: Literal["HERE"] = "HERE"
    fork: int


@dataclass
class ForkView:
    """What I know of one fork: do I have it, have I claimed it, does my neighbour want it."""

    mine: bool
    claimed: bool = False
    wanted: bool = False
    asked: bool = False
    neighbour: int = field(default=0)


class Hierarchy(Philosopher):
    TABLE = philosopher_table(
        hungry="claim forks lowest first; NEED what I lack",
        done="put forks down; HERE to whoever asked",
        rows={
            THINKING: {"NEED": on("give it", "_on_need"), "HERE": on("keep", "_on_here")},
            HUNGRY: {
                "NEED": on("claimed: defer; else give", "_on_need"),
                "HERE": on("claim in order; both: eat", "_on_here", to=[EATING]),
            },
            EATING: {"NEED": on("defer", "_on_need")},
        },
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.lo, self.hi = sorted((self.left, self.right))
        nbr = {self.left: (pid - 2) % n + 1, self.right: self.right}
        # the fork starts with the neighbour for whom it is the higher fork
        self.forks = {
            f: ForkView(mine=self._starts_with(f, nbr[f]), neighbour=nbr[f]) for f in (self.lo, self.hi)
        }

    def _starts_with(self, f: int, other: int) -> bool:
        return self.pid < other

    def snapshot(self) -> tuple:
        return (
            self.state,
            self.meals_left,
            self.clock.time,
            tuple((v.mine, v.claimed, v.wanted, v.asked) for v in self.forks.values()),
        )

    def _msg(self, kind: type, f: int) -> Send:
        return Send(self.forks[f].neighbour, kind(sender=self.pid, ts=self.clock.tick(), fork=f))

    def _hungry(self) -> list:
        return self._advance()

    def _advance(self) -> list:
        """Claim what I can in order; ask for the next; eat when both are claimed."""
        for f in (self.lo, self.hi):
            v = self.forks[f]
            if v.claimed:
                continue
            if v.mine:
                v.claimed = True
                continue
            if v.asked:
                return []
            v.asked = True
            return [self._msg(Need, f)]
        return [self.take(self.lo), self.take(self.hi), *self._eat()]

    def _on_need(self, msg: Need) -> list:
        self.clock.receive(msg.ts)
        v = self.forks[msg.fork]
        if v.claimed or self.state is EATING:
            v.wanted = True
            return []
        return self._give(msg.fork)

    def _give(self, f: int) -> list:
        v = self.forks[f]
        v.claimed = v.wanted = False  # BUG: forgets that the fork is no longer mine
        return [self._msg(Here, f)]

    def _on_here(self, msg: Here) -> list:
        self.clock.receive(msg.ts)
        v = self.forks[msg.fork]
        v.mine, v.asked = True, False
        return self._advance() if self.state is HUNGRY else []

    def _done(self) -> list:
        effects: list = [self.put(self.lo), self.put(self.hi)]
        for f, v in self.forks.items():
            v.claimed = False
            if v.wanted:
                effects += self._give(f)
        return effects

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not HUNGRY:
            return {}
        return {"HERE": [v.neighbour for v in self.forks.values() if v.asked]}


SPEC = philosophers_algorithm(
    "phil-hierarchy-broken",
    "resource hierarchy: forks claimed lowest first, fork tokens passed on NEED",
    Hierarchy,
    Need,
    Here,
)
