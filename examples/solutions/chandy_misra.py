"""Chandy–Misra's hygienic dining philosophers (TOPLAS 6(4), 1984): dirty and clean forks.

A solution of the ``philosophers`` problem. Each fork is shared by two neighbours and is with one
of them, clean or dirty; the other holds the fork's *request token*. At the start every fork is
dirty and with the lower-numbered neighbour (the precedence graph is acyclic).

* Hungry: for each fork I lack, send my request token for it (REQFORK).
* A REQFORK for a fork I hold: the token is mine now. If the fork is dirty and I am not eating,
  I clean it and send it (FORK), and if I am hungry I ask for it back at once (the token again).
  A clean fork, or one I eat with, I keep: the request waits for my meal's end.
* A FORK arrives clean; holding both forks I eat, and both become dirty.
* After eating: every fork whose request token I hold goes to the neighbour who asked.

A hungry philosopher keeps a clean fork and yields a dirty one, so the one who has just eaten
yields to its hungry neighbours: no deadlock, no starvation.
"""

from typing import Literal

from mutexlab.protocols.kit import (
    EATING,
    HUNGRY,
    THINKING,
    Canonical,
    Message,
    Philosopher,
    Reductions,
    Send,
    on,
    philosopher_table,
    philosophers_algorithm,
)


class ReqFork(Message):
    type: Literal["REQFORK"] = "REQFORK"
    fork: int


class Fork(Message):
    type: Literal["FORK"] = "FORK"
    fork: int


class ChandyMisra(Philosopher):
    TABLE = philosopher_table(
        hungry="both forks: eat → EATING; else REQFORK for each missing one → HUNGRY",
        done="forks dirty; FORK to every neighbour whose token I hold → THINKING",
        rows={
            THINKING: {"REQFORK": on("dirty: clean it, FORK", "_on_reqfork")},
            HUNGRY: {
                "REQFORK": on("dirty: FORK, and REQFORK it back; clean: keep", "_on_reqfork"),
                "FORK": on("clean fork; both: eat", "_on_fork", to=[EATING]),
            },
            EATING: {"REQFORK": on("keep the token until I have eaten", "_on_reqfork")},
        },
        never="a FORK answers my REQFORK, sent only while hungry and lacking it",
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        forks = (self.left, self.right)
        # fork → its other neighbour: the left fork's is pid − 1 (N for 1), the right fork's is its number
        self.neighbour = {self.left: (pid - 2) % n + 1, self.right: self.right}
        self.have = {f: pid < self.neighbour[f] for f in forks}  # the lower-numbered starts with it
        self.dirty = {f: True for f in forks}
        self.token = {f: not self.have[f] for f in forks}  # the request token: with the other one

    def snapshot(self) -> tuple:
        forks = (self.left, self.right)
        return (
            self.state,
            self.meals_left,
            self.eaten,
            self.clock.time,
            tuple((self.have[f], self.dirty[f], self.token[f]) for f in forks),
        )

    def _send(self, to: int, message: type[Message], fork: int) -> Send:
        return Send(to, message(sender=self.pid, ts=self.clock.tick(), fork=fork))

    def _hungry(self) -> list:
        return self._try_eat() or [
            self._ask(f) for f in (self.left, self.right) if not self.have[f] and self.token[f]
        ]

    def _ask(self, f: int) -> Send:
        self.token[f] = False
        return self._send(self.neighbour[f], ReqFork, f)

    def _try_eat(self) -> list:
        if not (self.have[self.left] and self.have[self.right]):
            return []
        self.dirty[self.left] = self.dirty[self.right] = True
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _on_reqfork(self, msg: ReqFork) -> list:
        self.clock.receive(msg.ts)
        f = msg.fork
        self.token[f] = True
        if self.state is EATING or not self.dirty[f]:
            return []  # kept: answered after my meal
        effects = [self._give(f)]
        if self.state is HUNGRY:
            effects.append(self._ask(f))
        return effects

    def _give(self, f: int) -> Send:
        self.have[f], self.dirty[f] = False, False
        return self._send(self.neighbour[f], Fork, f)

    def _on_fork(self, msg: Fork) -> list:
        self.clock.receive(msg.ts)
        self.have[msg.fork], self.dirty[msg.fork] = True, False
        return self._try_eat()

    def _done(self) -> list:
        puts = [self.put(self.left), self.put(self.right)]
        return puts + [self._give(f) for f in (self.left, self.right) if self.token[f] and self.have[f]]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not HUNGRY:
            return {}
        return {"FORK": [self.neighbour[f] for f in (self.left, self.right) if not self.have[f]]}


def _key(p: ChandyMisra) -> tuple:
    return p.snapshot()[:2] + p.snapshot()[3:]  # all but ``eaten``


# What check may merge, for ChandyMisra exactly (a subclass is other code: it gets none).
REDUCTIONS = Reductions(
    frozenset({ChandyMisra}),
    canonical=Canonical(_key, "`eaten` is only counted (the card shows it); no handler reads it"),
)

SPEC = philosophers_algorithm(
    "chandy-misra",
    "Chandy–Misra's hygienic dining philosophers: dirty forks yield, clean forks stay",
    ChandyMisra,
    ReqFork,
    Fork,
    reductions=REDUCTIONS,
)
