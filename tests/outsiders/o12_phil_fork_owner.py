"""Dining philosophers as a student's class hierarchy: a base that owns forks, a subclass that eats.

Written from the user docs only (docs/problems-and-solutions.md). ``ForkOwner`` keeps one
``ForkState`` dataclass per fork (who holds it, who asked: a set, ``field(default_factory=set)``)
and answers fork requests; ``OrderlyPhilosopher`` decides in which order to ask. The fork between
two philosophers starts with the lower-numbered one. The order is a class constant a subclass
changes: the lower-numbered fork first (a resource hierarchy: no cycle of waits).

Planted bug (module constant):

* ORDER = "left-first": every philosopher asks its left fork first and keeps it while it waits
  for the right one — the textbook deadlock, each holding one fork.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
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

ORDER = "lowest-first"  # "left-first": the deadlock


class Order(StrEnum):
    LOWEST_FIRST = "lowest-first"
    LEFT_FIRST = "left-first"


class AskFork(Message):
    type: Literal["ASK_FORK"] = "ASK_FORK"
    fork: int


class HandFork(Message):
    type: Literal["HAND_FORK"] = "HAND_FORK"
    fork: int


@dataclass
class ForkState:
    mine: bool
    neighbour: int
    askers: set[int] = field(default_factory=set)


class ForkOwner(Philosopher):
    """Keeps the two forks and gives one away when asked, unless it needs it now."""

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        left_neighbour = (pid - 2) % n + 1
        self.forks = {
            self.left: ForkState(pid < left_neighbour, left_neighbour),
            self.right: ForkState(pid < self.right, self.right),
        }

    def asking_order(self) -> tuple[int, int]:
        raise NotImplementedError

    def needs(self, f: int) -> bool:
        """Hungry, and ``f`` is the fork it asks first or it holds every fork before ``f``."""
        if self.state is not HUNGRY:
            return False
        order = self.asking_order()
        return all(self.forks[g].mine for g in order[: order.index(f) + 1])

    def _on_ask(self, msg: AskFork) -> list:
        self.clock.receive(msg.ts)
        fork = self.forks[msg.fork]
        if self.state is EATING or self.needs(msg.fork):
            fork.askers.add(msg.sender)
            return []
        fork.mine = False
        return [Send(msg.sender, HandFork(sender=self.pid, ts=self.clock.tick(), fork=msg.fork))]

    def hand_over_asked(self) -> list:
        out = []
        for f, fork in self.forks.items():
            if fork.askers:
                fork.askers.clear()
                fork.mine = False
                out.append(Send(fork.neighbour, HandFork(sender=self.pid, ts=self.clock.tick(), fork=f)))
        return out


class OrderlyPhilosopher(ForkOwner):
    TABLE = philosopher_table(
        hungry="ask for the first missing fork in my order → HUNGRY (or eat)",
        done="hand over the forks asked for → THINKING",
        rows={
            THINKING: {"ASK_FORK": on("hand it over", "_on_ask")},
            HUNGRY: {
                "ASK_FORK": on("hand it over unless I need it now", "_on_ask"),
                "HAND_FORK": on("keep it; ask the next or eat", "_on_hand", to=[EATING]),
            },
            EATING: {"ASK_FORK": on("remember the asker", "_on_ask")},
        },
    )

    order = Order(ORDER)

    def asking_order(self) -> tuple[int, int]:
        if self.order is Order.LEFT_FIRST:
            return (self.left, self.right)
        return (min(self.left, self.right), max(self.left, self.right))

    def missing(self) -> int | None:
        return next((f for f in self.asking_order() if not self.forks[f].mine), None)

    def _go_on(self) -> list:
        f = self.missing()
        if f is None:
            return [self.take(self.left), self.take(self.right), *self._eat()]
        return [Send(self.forks[f].neighbour, AskFork(sender=self.pid, ts=self.clock.tick(), fork=f))]

    def _hungry(self) -> list:
        return self._go_on()

    def _on_hand(self, msg: HandFork) -> list:
        self.clock.receive(msg.ts)
        self.forks[msg.fork].mine = True
        return self._go_on()

    def _done(self) -> list:
        return [self.put(self.left), self.put(self.right), *self.hand_over_asked()]

    def waiting_for(self) -> dict[str, list[int]]:
        f = self.missing() if self.state is HUNGRY else None
        return {"HAND_FORK": [self.forks[f].neighbour]} if f is not None else {}


SPEC = philosophers_algorithm(
    "o12-phil-fork-owner",
    "forks kept in dataclasses, asked in a class's order",
    OrderlyPhilosopher,
    AskFork,
    HandFork,
)
