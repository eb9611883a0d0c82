"""Dining philosophers by resource hierarchy: each fork lives with the lower-numbered of its users.

Written from the user docs only. A hungry philosopher takes its forks lowest number first:
it asks the fork's keeper (itself, or its neighbour) with WANT and waits for LEND; it gives
forks back with BACK after eating. A keeper lends a fork when it is not using it, and queues
askers otherwise. Messages are taken by one handler, ``_got``, that matches on the message and
runs the routine its dispatch dict holds (built with functools.partial in __init__).
"""

from functools import partial
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

ORDER = "low-first"  # "left-first": the bug, everyone takes its left fork first


class Want(Message):
    type: Literal["WANT"] = "WANT"
    fork: int


class Lend(Message):
    type: Literal["LEND"] = "LEND"
    fork: int


class Back(Message):
    type: Literal["BACK"] = "BACK"
    fork: int


GOT = on("match the message; run its routine", "_got", to=[EATING])


class Keeper(Philosopher):
    TABLE = philosopher_table(
        hungry="ask for the first fork → HUNGRY",
        done="BACK the borrowed forks, lend the kept ones → THINKING",
        rows={
            THINKING: {"WANT": GOT, "BACK": GOT},
            HUNGRY: {"WANT": GOT, "LEND": GOT, "BACK": GOT},
            EATING: {"WANT": GOT, "BACK": GOT},
        },
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        forks = (self.left, self.right)
        self.keeper = {self.left: min(pid, (pid - 2) % n + 1), self.right: min(pid, self.right)}
        self.lent_to = {f: None for f in forks if self.keeper[f] == pid}  # kept forks: lent to whom
        self.asked = {f: [] for f in forks if self.keeper[f] == pid}
        self.have: set[int] = set()
        self.routines = {
            "WANT": partial(self._want),
            "LEND": partial(self._lend),
            "BACK": partial(self._back),
        }

    def _order(self) -> list[int]:
        if ORDER == "left-first":
            return [self.left, self.right]
        return sorted({self.left, self.right})

    def _got(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        match msg:
            case Want(fork=f) | Lend(fork=f) | Back(fork=f):
                return self.routines[msg.type](msg.sender, f)
            case _:
                raise TypeError(f"unexpected {msg.type}")

    def _hungry(self) -> list:
        return self._next()

    def _next(self) -> list:
        for f in self._order():
            if f in self.have:
                continue
            return self._ask(f)
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _ask(self, f: int) -> list:
        k = self.keeper[f]
        if k == self.pid:
            if self.lent_to[f] is None:
                self.have.add(f)
                return self._next()
            self.asked[f].append(self.pid)
            return []
        return [Send(k, Want(sender=self.pid, ts=self.clock.tick(), fork=f))]

    def _want(self, who: int, f: int) -> list:
        if self.lent_to[f] is None and f not in self.have:
            self.lent_to[f] = who
            return [Send(who, Lend(sender=self.pid, ts=self.clock.tick(), fork=f))]
        self.asked[f].append(who)
        return []

    def _lend(self, who: int, f: int) -> list:
        self.have.add(f)
        return self._next()

    def _back(self, who: int, f: int) -> list:
        self.lent_to[f] = None
        return self._pass_on(f)

    def _pass_on(self, f: int) -> list:
        if not self.asked[f]:
            return []
        who = self.asked[f].pop(0)
        if who == self.pid:
            self.have.add(f)
            return self._next()
        self.lent_to[f] = who
        return [Send(who, Lend(sender=self.pid, ts=self.clock.tick(), fork=f))]

    def _done(self) -> list:
        out = [self.put(self.left), self.put(self.right)]
        mine, self.have = sorted(self.have), set()
        for f in mine:
            if self.keeper[f] == self.pid:
                out += self._pass_on(f)
            else:
                out.append(Send(self.keeper[f], Back(sender=self.pid, ts=self.clock.tick(), fork=f)))
        return out

    def snapshot(self) -> tuple:
        return (
            self.state,
            self.meals_left,
            self.clock.time,
            frozenset(self.have),
            tuple(sorted(self.lent_to.items())),
            tuple((f, tuple(q)) for f, q in sorted(self.asked.items())),
        )


SPEC = philosophers_algorithm(
    "o8-keepers", "forks kept at home, lowest first, lent and given back", Keeper, Want, Lend, Back
)
