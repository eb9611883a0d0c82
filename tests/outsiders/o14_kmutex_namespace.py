"""k-mutual exclusion à la Ricart–Agrawala, written by a scripter who keeps every piece of a
node's bookkeeping in one ``types.SimpleNamespace`` (``self.book``) and dispatches messages by a
dict of ``(state, type) → function`` built once at import, instead of a method per row.

Written from docs/problems-and-solutions.md only. A node asks the others; a node answers at once
unless inside, or wanting with priority ((ts, pid) smaller); then it defers the answer until it
leaves. A node enters once N−K others answered its current request (an answer echoes the stamp).

Planted bug (module constant, edited by the tests):

* GREEDY = True: a node counts itself as one answer (enters after N−K−1 others): K+1 inside.
"""

from __future__ import annotations

from types import SimpleNamespace
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

NAME = "o14-kmutex-namespace"
GREEDY = False


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Yes(Message):
    type: Literal["YES"] = "YES"
    answers: int


def _ask(node: NamespaceNode, msg: Ask) -> list:
    node.clock.receive(msg.ts)
    b = node.book
    if node.state == HELD or (node.state == WANTED and b.mine < (msg.ts, msg.sender)):
        b.deferred = (*b.deferred, (msg.sender, msg.ts))
        return []
    return [node.yes(msg.sender, msg.ts)]


def _yes(node: NamespaceNode, msg: Yes) -> list:
    node.clock.receive(msg.ts)
    b = node.book
    if b.mine is not None and msg.answers == b.mine[0]:
        b.answered = b.answered | {msg.sender}
    need = node.n - node.k - (1 if GREEDY else 0)
    return node._enter() if len(b.answered) >= need else []  # noqa: SLF001 - a router of the class


def _late(node: NamespaceNode, msg: Yes) -> list:
    node.clock.receive(msg.ts)
    return []


ROUTES = {
    (RELEASED, "ASK"): _ask,
    (WANTED, "ASK"): _ask,
    (HELD, "ASK"): _ask,
    (WANTED, "YES"): _yes,
    (RELEASED, "YES"): _late,
    (HELD, "YES"): _late,
}


class NamespaceNode(ClassicNode):
    TABLE = classic_table(
        request="ASK the others (K = N: enter) → WANTED",
        exit="YES to the deferred → RELEASED",
        rows={
            RELEASED: {"ASK": on("YES", "_route"), "YES": ignore("a late answer", "_route")},
            WANTED: {
                "ASK": on("mine first: defer; else YES", "_route"),
                "YES": on("count", "_route", to=[HELD]),
            },
            HELD: {"ASK": on("defer", "_route"), "YES": ignore("an answer beyond those needed", "_route")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.book = SimpleNamespace(mine=None, answered=frozenset(), deferred=())

    def snapshot(self) -> tuple:
        b = self.book
        return (self.state, self.requests_left, self.clock.time, b.mine, b.answered, b.deferred)

    def yes(self, to: int, answers: int) -> Send:
        return Send(to, Yes(sender=self.pid, ts=self.clock.tick(), answers=answers))

    def _route(self, msg) -> list:
        return ROUTES[self.state, msg.type](self, msg)

    def _request(self) -> list:
        ts = self.clock.tick()
        self.book.mine, self.book.answered = (ts, self.pid), frozenset()
        if self.n - self.k - (1 if GREEDY else 0) <= 0:
            return self._enter()
        self.state = WANTED
        return [Send(j, Ask(sender=self.pid, ts=ts)) for j in self._others()]

    def _release(self) -> list:
        self.book.mine = None
        deferred, self.book.deferred = self.book.deferred, ()
        return [self.yes(j, ts) for j, ts in deferred]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state != WANTED:
            return {}
        return {"YES": [j for j in self._others() if j not in self.book.answered]}


SPEC = classic_algorithm(
    NAME,
    "k-mutual exclusion, Ricart–Agrawala's answers, bookkeeping in a SimpleNamespace",
    NamespaceNode,
    Ask,
    Yes,
    problem="kmutex",
)
