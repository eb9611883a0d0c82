"""k-mutex, Ricart-Agrawala style, the node's bookkeeping one frozen dataclass replaced on each change.

Messages carry an Enum saying whether a reply is immediate or was deferred (only informative).
"""

import dataclasses
import enum
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
    ignore,
    on,
)

SLACK = 0  # the broken variant sets 1: one reply too few
STATS = False  # the variant counting the ASKs sent in a closure every node shares
HISTORY = False  # the variant keeping who asked in a default argument every node shares


def _counter():
    sent = [0]

    def bump(n: int) -> int:
        sent[0] += n
        return sent[0]

    return bump


count_sent = _counter()


class Why(enum.Enum):
    AT_ONCE = "at-once"
    DEFERRED = "deferred"


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Ok(Message):
    type: Literal["OK"] = "OK"
    answers: int
    why: Why


@dataclasses.dataclass(frozen=True)
class Book:
    mine: tuple[int, int] | None = None
    got: frozenset[int] = frozenset()
    later: tuple[tuple[int, int], ...] = ()


class FrozenK(ClassicNode):
    TABLE = classic_table(
        request="ASK all → WANTED",
        exit="OK to the deferred → RELEASED",
        rows={
            RELEASED: {"ASK": on("OK", "_on_ask"), "OK": ignore("late", "_receive")},
            WANTED: {"ASK": on("defer or OK", "_on_ask"), "OK": on("count", "_on_ok", to=[HELD])},
            HELD: {"ASK": on("defer", "_on_ask"), "OK": ignore("surplus", "_receive")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.book = Book()

    def _request(self) -> list:
        ts = self.clock.tick()
        self.book = dataclasses.replace(self.book, mine=(ts, self.pid), got=frozenset())
        if self.n - self.k - SLACK <= 0:
            return self._enter()
        self.state = WANTED
        if STATS:
            count_sent(self.n - 1)
        return [Send(j, Ask(sender=self.pid, ts=ts)) for j in self._others()]

    def _on_ask(self, msg: Ask, history: list = []) -> list:  # noqa: B006 - HISTORY's point
        self.clock.receive(msg.ts)
        if HISTORY:
            history.append(msg.sender)
        b = self.book
        if self.state is HELD or (self.state is WANTED and b.mine < (msg.ts, msg.sender)):
            self.book = dataclasses.replace(b, later=b.later + ((msg.sender, msg.ts),))
            return []
        return [Send(msg.sender, Ok(sender=self.pid, ts=self.clock.tick(), answers=msg.ts, why=Why.AT_ONCE))]

    def _on_ok(self, msg: Ok) -> list:
        self.clock.receive(msg.ts)
        b = self.book
        if b.mine is not None and msg.answers == b.mine[0]:
            self.book = b = dataclasses.replace(b, got=b.got | {msg.sender})
        return self._enter() if len(b.got) >= self.n - self.k - SLACK else []

    def _release(self) -> list:
        later = self.book.later
        self.book = Book()
        return [
            Send(j, Ok(sender=self.pid, ts=self.clock.tick(), answers=ts, why=Why.DEFERRED))
            for j, ts in later
        ]


SPEC = classic_algorithm(
    "o7-frozen-k", "k-mutex RA, frozen dataclass state", FrozenK, Ask, Ok, problem="kmutex"
)
