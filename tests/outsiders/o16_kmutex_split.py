"""K-mutex, Ricart–Agrawala counting N−K answers — split over two files: the messages and my
base class live in o16_kmutex_split_parts.py beside this one (``import`` as in a script).

A node wanting in sends ASK(ts) to the others and enters on N−K OKs that echo its stamp; a node
inside, or wanting in before the asker, keeps the OK until it leaves. The list of deferred askers
is kept with ``bisect.insort`` (oldest stamp first), which is how I like to read it in explore.

Planted bug (a module constant the tests edit):

* ONE_SHORT = True: the node enters after N−K−1 answers (an off-by-one): K+1 inside.
"""

from __future__ import annotations

import bisect

from o16_kmutex_split_parts import Ask, MyBaseNode, Ok

from mutexlab.protocols.kit import HELD, RELEASED, WANTED, classic_algorithm, classic_table, ignore, on

NAME = "o16-kmutex-split"
ONE_SHORT = False


class SplitNode(MyBaseNode):
    TABLE = classic_table(
        request="ASK the others → WANTED (K = N: HELD)",
        exit="OK the deferred → RELEASED",
        rows={
            RELEASED: {"ASK": on("OK", "_on_ask"), "OK": ignore("late", "_late")},
            WANTED: {
                "ASK": on("theirs first: OK; else defer", "_on_ask"),
                "OK": on("count", "_on_ok", to=[HELD]),
            },
            HELD: {"ASK": on("defer", "_on_ask"), "OK": ignore("beyond what I needed", "_late")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.mine: tuple[int, int] | None = None
        self.oks: frozenset[int] = frozenset()
        self.deferred: list[tuple[int, int]] = []  # (their stamp, who), oldest first

    @property
    def enough(self) -> int:
        return self.n - self.k - (1 if ONE_SHORT else 0)

    def _request(self) -> list:
        stamp = self.clock.tick()
        self.mine, self.oks = (stamp, self.pid), frozenset()
        if self.enough <= 0:
            return self._enter()
        self.state = WANTED
        return [self.tell(j, Ask, stamp) for j in self.peers(self.pid, self.n)]

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        if self.state == HELD or self.before(self.mine, (msg.ts, msg.sender)):
            bisect.insort(self.deferred, (msg.ts, msg.sender))
            return []
        return [self.tell(msg.sender, Ok, for_ts=msg.ts)]

    def _on_ok(self, msg: Ok) -> list:
        self.clock.receive(msg.ts)
        if self.mine is not None and msg.for_ts == self.mine[0]:
            self.oks = self.oks | {msg.sender}
        return self._enter() if len(self.oks) >= self.enough else []

    def _late(self, msg: Ok) -> list:
        self.clock.receive(msg.ts)
        return []

    def _release(self) -> list:
        out = [self.tell(who, Ok, for_ts=ts) for ts, who in self.deferred]
        self.mine, self.oks, self.deferred = None, frozenset(), []
        return out


SPEC = classic_algorithm(NAME, "k-mutex: Ricart–Agrawala for K, its parts in a sibling module", SplitNode, Ask, Ok,
                         problem="kmutex")  # fmt: skip
