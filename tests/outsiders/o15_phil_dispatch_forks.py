"""Dining philosophers, Chandy–Misra style — forks kept as a dict of an Enum, messages dispatched
by type with functools.singledispatchmethod (one ``_on`` for every message, one body per class).

Written from docs/problems-and-solutions.md: the forks are shared by neighbours; each fork is
with one of them — ABSENT, CLEAN or DIRTY in my ``forks`` dict — and the other holds the fork's
request token (my ``tokens`` set holds the forks whose token I have). At the start every fork is
DIRTY and with the lower-numbered neighbour, its token with the higher-numbered one.

* hungry: eat if I have both forks; else send the token of each fork I lack (REQ).
* REQ for a fork: its token is mine now. Dirty and not eating: clean it, give it (FORK); hungry
  again for it, send the token straight back. Clean, or eating: keep it until my meal is over.
* FORK: it comes clean; with both, I eat, and both get dirty.
* done: put both down; every fork whose token I hold goes to the neighbour who asked.

Planted bug (module constant, edited by the tests):

* GIVE_WHILE_EATING = True: I forget the "not eating" part — a philosopher gives a dirty fork
  away in the middle of its meal, and its neighbour eats with it too.
"""

from __future__ import annotations

from enum import Enum
from functools import singledispatchmethod
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

NAME = "o15-phil-dispatch-forks"
GIVE_WHILE_EATING = False


class Fork(Enum):
    """Where a fork is, as I see it (not a state of mine: the states are the kit's)."""

    ABSENT = "absent"
    CLEAN = "clean"
    DIRTY = "dirty"


class Req(Message):
    type: Literal["REQ"] = "REQ"
    fork: int


class Handed(Message):
    type: Literal["FORK"] = "FORK"
    fork: int


class DispatchPhilosopher(Philosopher):
    TABLE = philosopher_table(
        hungry="both forks: eat; else REQ each fork I lack → HUNGRY",
        done="forks down; FORK to who asked → THINKING",
        rows={
            THINKING: {"REQ": on("the token is mine; a dirty fork goes", "_on")},
            HUNGRY: {
                "REQ": on("dirty: give it, ask it back; clean: keep", "_on"),
                "FORK": on("a clean fork; both: eat", "_on", to=[EATING]),
            },
            EATING: {"REQ": on("keep it until the meal is over", "_on")},
        },
        never="a FORK answers my REQ, sent only while hungry and lacking it",
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        self.other = {self.left: (pid - 2) % n + 1, self.right: self.right}
        self.forks = {f: Fork.DIRTY if pid < self.other[f] else Fork.ABSENT for f in self.other}
        self.tokens = {f for f in self.other if self.forks[f] is Fork.ABSENT}

    def _msg(self, kind: type[Message], fork: int) -> Send:
        return Send(self.other[fork], kind(sender=self.pid, ts=self.clock.tick(), fork=fork))

    def _lacking(self) -> list[int]:
        return [f for f, where in self.forks.items() if where is Fork.ABSENT]

    def _hungry(self) -> list:
        return self._maybe_eat() or [self._ask(f) for f in self._lacking() if f in self.tokens]

    def _ask(self, fork: int) -> Send:
        self.tokens.discard(fork)
        return self._msg(Req, fork)

    def _give(self, fork: int) -> Send:
        self.forks[fork] = Fork.ABSENT
        return self._msg(Handed, fork)

    def _maybe_eat(self) -> list:
        if self._lacking():
            return []
        for f in self.forks:
            self.forks[f] = Fork.DIRTY
        return [self.take(self.left), self.take(self.right), *self._eat()]

    @singledispatchmethod
    def _on(self, msg: Message) -> list:
        raise TypeError(f"no handler for {type(msg).__name__}")

    @_on.register
    def _(self, msg: Req) -> list:
        self.clock.receive(msg.ts)
        self.tokens.add(msg.fork)
        eating = self.state is EATING and not GIVE_WHILE_EATING
        if eating or self.forks[msg.fork] is not Fork.DIRTY:
            return []
        out = [self._give(msg.fork)]
        if self.state is HUNGRY:
            out.append(self._ask(msg.fork))
        return out

    @_on.register
    def _(self, msg: Handed) -> list:
        self.clock.receive(msg.ts)
        self.forks[msg.fork] = Fork.CLEAN
        return self._maybe_eat()

    def _done(self) -> list:
        out: list = [self.put(self.left), self.put(self.right)]
        return out + [self._give(f) for f in sorted(self.tokens) if self.forks[f] is not Fork.ABSENT]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not HUNGRY:
            return {}
        return {"FORK": [self.other[f] for f in self._lacking()]}


SPEC = philosophers_algorithm(
    NAME,
    "Chandy–Misra's clean and dirty forks, kept as a dict of an Enum, dispatched by message type",
    DispatchPhilosopher,
    Req,
    Handed,
)
