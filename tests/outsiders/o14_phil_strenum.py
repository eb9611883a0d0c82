"""Dining philosophers, Chandy–Misra's hygienic forks (as o13's bits in ``__slots__``), written by
someone who declares the philosopher's states themselves, as a ``StrEnum`` filled by
``enum.auto()`` — whose values are the members' names only because ``_generate_next_value_`` says
so (a StrEnum's own ``auto()`` makes ``'thinking'``, no state a philosopher's table knows).

Planted bugs (module constants, edited by the tests):

* HOARD = True: a hungry philosopher keeps even a dirty fork when asked for it: a deadlock.
* LOWER = True: the StrEnum's default ``auto()`` (lowercase values): refused at load, named.
"""

from __future__ import annotations

from enum import StrEnum, auto
from typing import Literal

from mutexlab.protocols.kit import (
    Message,
    Philosopher,
    Send,
    on,
    philosopher_table,
    philosophers_algorithm,
)

NAME = "o14-phil-strenum"
HOARD = False
LOWER = False


class Mood(StrEnum):
    if not LOWER:

        @staticmethod
        def _generate_next_value_(name: str, start: int, count: int, last_values: list) -> str:
            return name

    THINKING = auto()
    HUNGRY = auto()
    EATING = auto()


THINKING, HUNGRY, EATING = Mood.THINKING, Mood.HUNGRY, Mood.EATING

LEFT, RIGHT, BOTH = 0b01, 0b10, 0b11


class ForkMsg(Message):
    type: Literal["FORKMSG"] = "FORKMSG"
    verb: Literal["ask", "give"]
    fork: int


class BitPhilosopher(Philosopher):
    __slots__ = ("have", "dirty", "token", "peer")

    TABLE = philosopher_table(
        hungry="both bits set: eat; else ask for each missing fork whose token I hold",
        done="both dirty; give every fork whose token came meanwhile",
        rows={
            THINKING: {"FORKMSG": on("ask: dirty → give it (a give never comes now)", "_on_fork")},
            HUNGRY: {
                "FORKMSG": on(
                    "ask: dirty → give and ask back; give: set the bit, maybe eat", "_on_fork", to=[EATING]
                )
            },
            EATING: {"FORKMSG": on("ask: keep the token until the meal ends", "_on_fork")},
        },
        never="a give answers my ask, sent only while hungry",
    )

    def __init__(self, pid: int, n: int, meals: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, meals, clock)
        left_peer, right_peer = (pid - 2) % n + 1, self.right
        self.peer = (left_peer, right_peer)  # who shares my left fork, my right fork
        self.have = (LEFT if pid < left_peer else 0) | (RIGHT if pid < right_peer else 0)
        self.dirty = BOTH
        self.token = BOTH & ~self.have

    def _bit(self, fork: int) -> int:
        return LEFT if fork == self.left else RIGHT

    def _fork(self, bit: int) -> int:
        return self.left if bit == LEFT else self.right

    def _msg(self, verb: Literal["ask", "give"], bit: int) -> Send:
        to = self.peer[0] if bit == LEFT else self.peer[1]
        return Send(to, ForkMsg(sender=self.pid, ts=self.clock.tick(), verb=verb, fork=self._fork(bit)))

    def _ask(self, bit: int) -> Send:
        self.token &= ~bit
        return self._msg("ask", bit)

    def _give(self, bit: int) -> Send:
        self.have &= ~bit
        self.dirty &= ~bit
        return self._msg("give", bit)

    def _try_eat(self) -> list:
        if self.have != BOTH:
            return []
        self.dirty = BOTH
        return [self.take(self.left), self.take(self.right), *self._eat()]

    def _hungry(self) -> list:
        return self._try_eat() or [
            self._ask(b) for b in (LEFT, RIGHT) if not self.have & b and self.token & b
        ]

    def _on_fork(self, msg: ForkMsg) -> list:
        self.clock.receive(msg.ts)
        bit = self._bit(msg.fork)
        if msg.verb == "give":
            self.have |= bit
            self.dirty &= ~bit
            return self._try_eat()
        self.token |= bit
        keep = self.state == EATING or not self.dirty & bit or (HOARD and self.state == HUNGRY)
        if keep:
            return []
        out = [self._give(bit)]
        if self.state == HUNGRY:
            out.append(self._ask(bit))
        return out

    def _done(self) -> list:
        puts = [self.put(self.left), self.put(self.right)]
        return puts + [self._give(b) for b in (LEFT, RIGHT) if self.token & b and self.have & b]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state != HUNGRY:
            return {}
        return {"FORKMSG": [self.peer[i] for i, b in enumerate((LEFT, RIGHT)) if not self.have & b]}


SPEC = philosophers_algorithm(
    NAME,
    "Chandy–Misra's hygienic forks, states a StrEnum of auto()",
    BitPhilosopher,
    ForkMsg,
)
