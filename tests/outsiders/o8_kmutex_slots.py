"""k-mutual exclusion, a vote class and a K-vote class: Ricart–Agrawala entering after N−K votes.

Written from the user docs only. The bookkeeping lives in ``__slots__`` (less memory per node);
who is owed a vote waits in a heap ordered by the asker's (ts, pid), answered in that order.
"""

import heapq
import sys
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

TIE = 1  # the tie-break: compare (ts, pid) when TIE = 1
STRICT = False  # True: a vote for another request than mine "cannot happen": sys.exit(3)


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Vote(Message):
    type: Literal["VOTE"] = "VOTE"
    for_ts: int


class Voter(ClassicNode):
    """Ricart–Agrawala for one: a vote from every other node."""

    __slots__ = ("mine", "votes", "owed")

    TABLE = classic_table(
        request="ASK the others → WANTED",
        exit="VOTE for every owed asker → RELEASED",
        rows={
            RELEASED: {"ASK": on("VOTE", "_on_ask"), "VOTE": ignore("late", "_late")},
            WANTED: {
                "ASK": on("earlier than mine: VOTE; else owe", "_on_ask"),
                "VOTE": on("count; enough → HELD", "_on_vote", to=[HELD]),
            },
            HELD: {"ASK": on("owe", "_on_ask"), "VOTE": ignore("surplus", "_late")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.mine: int | None = None
        self.votes: frozenset[int] = frozenset()
        self.owed: list[tuple[int, int]] = []

    def needed(self) -> int:
        return self.n - 1

    def _late(self, msg: Vote) -> list:
        self.clock.receive(msg.ts)
        return []

    def _request(self) -> list:
        self.mine = self.clock.tick()
        self.votes = frozenset()
        if self.needed() <= 0:
            return self._enter()
        self.state = WANTED
        return [Send(j, Ask(sender=self.pid, ts=self.mine)) for j in self._others()]

    def _before(self, ts: int, pid: int) -> bool:
        assert self.mine is not None
        if TIE:
            return (ts, pid) < (self.mine, self.pid)
        return ts < self.mine

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        if self.state is HELD or (self.state is WANTED and not self._before(msg.ts, msg.sender)):
            heapq.heappush(self.owed, (msg.ts, msg.sender))
            return []
        return [Send(msg.sender, Vote(sender=self.pid, ts=self.clock.tick(), for_ts=msg.ts))]

    def _on_vote(self, msg: Vote) -> list:
        self.clock.receive(msg.ts)
        if msg.for_ts == self.mine:
            self.votes = self.votes | {msg.sender}
        elif STRICT:
            sys.exit(3)
        return self._enter() if len(self.votes) >= self.needed() else []

    def _release(self) -> list:
        out = []
        while self.owed:
            ts, j = heapq.heappop(self.owed)
            out.append(Send(j, Vote(sender=self.pid, ts=self.clock.tick(), for_ts=ts)))
        self.mine = None
        return out


class KVoter(Voter):
    """The same with room for K: N−K votes."""

    __slots__ = ("k",)

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k

    def needed(self) -> int:
        return self.n - self.k


SPEC = classic_algorithm(
    "o8-kvoter",
    "k-mutex: a voter class, a K-voter class, votes in slots",
    KVoter,
    Ask,
    Vote,
    problem="kmutex",
)
