"""k-mutual exclusion (Raymond's Ricart–Agrawala for K), written by someone who keeps a node's
whole bookkeeping in ONE frozen dataclass, replaced on every change (``dataclasses.replace``), and
dispatches every message through one method with a ``match`` statement on its class.

Written from docs/problems-and-solutions.md and docs/your-algorithm.md only: a node enters once
N−K of the others have answered its REQUEST; it defers its answer while it is inside, or while it
wants in with priority ((ts, pid) smaller). A REPLY carries the timestamp it answers.

Planted bugs (module constants, edited by the tests):

* SLACK = 1: a node enters after N−K−1 answers: K+1 inside (safety);
* FORGET_DEFERRED = True: leaving, a node drops the answers it deferred: the others wait forever
  (liveness: a deadlock once everyone else waits on it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
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
    on,
)

NAME = "o13-kmutex-ledger"
SLACK = 0
FORGET_DEFERRED = False


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Yes(Message):
    type: Literal["YES"] = "YES"
    answers: int


@dataclass(frozen=True)
class Ledger:
    """Everything a node remembers between two inputs, never changed in place."""

    mine: tuple[int, int] | None = None  # (ts, pid) of the request I am waiting on / inside with
    yes: frozenset[int] = frozenset()  # who answered it
    owed: tuple[tuple[int, int], ...] = ()  # (who, ts): answers I deferred, oldest first
    served: int = field(default=0, compare=True)  # entries so far (the card shows it)


class LedgerNode(ClassicNode):
    TABLE = classic_table(
        request="ASK everyone else (K = N: enter at once) → WANTED",
        exit="YES to everyone I deferred → RELEASED",
        rows={
            RELEASED: {"ASK": on("YES", "_on_msg"), "YES": on("stale: dropped", "_on_msg")},
            WANTED: {
                "ASK": on("theirs first: YES; else defer", "_on_msg"),
                "YES": on("count; N−K → HELD", "_on_msg", to=[HELD]),
            },
            HELD: {"ASK": on("defer", "_on_msg"), "YES": on("surplus: dropped", "_on_msg")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 2) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.book = Ledger()

    @property
    def quorum(self) -> int:
        return max(0, self.n - self.k - SLACK)

    # -- local ------------------------------------------------------------------------------
    def _request(self) -> list:
        ts = self.clock.tick()
        self.book = replace(self.book, mine=(ts, self.pid), yes=frozenset())
        if self.quorum == 0:
            return self._in()
        self.state = WANTED
        return [Send(j, Ask(sender=self.pid, ts=ts)) for j in self._others()]

    def _release(self) -> list:
        owed = () if FORGET_DEFERRED else self.book.owed
        self.book = replace(self.book, mine=None, yes=frozenset(), owed=())
        return [Send(j, Yes(sender=self.pid, ts=self.clock.tick(), answers=ts)) for j, ts in owed]

    def _in(self) -> list:
        self.book = replace(self.book, served=self.book.served + 1)
        return self._enter()

    # -- messages: one door ----------------------------------------------------------------
    def _on_msg(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        match msg:
            case Ask(sender=who, ts=ts):
                ahead = self.book.mine is not None and self.book.mine < (ts, who)
                if self.state == HELD or (self.state == WANTED and ahead):
                    self.book = replace(self.book, owed=(*self.book.owed, (who, ts)))
                    return []
                return [Send(who, Yes(sender=self.pid, ts=self.clock.tick(), answers=ts))]
            case Yes(sender=who, answers=ts) if self.state == WANTED:
                if self.book.mine is not None and ts == self.book.mine[0]:
                    self.book = replace(self.book, yes=self.book.yes | {who})
                return self._in() if len(self.book.yes) >= self.quorum else []
            case Yes():
                return []  # late, or one more than I needed
            case _:
                raise self.refuse(msg)

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state != WANTED:
            return {}
        return {"YES": [j for j in self._others() if j not in self.book.yes]}


SPEC = classic_algorithm(
    NAME,
    "k-mutex: Ricart–Agrawala entering after N−K answers, its book one frozen dataclass",
    LedgerNode,
    Ask,
    Yes,
    problem="kmutex",
    literature={"messages": ("2(N−1)", lambda n: 2 * (n - 1)), "sync": ("T", lambda n: 1)},
)
