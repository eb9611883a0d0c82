"""K-mutual exclusion by permissions, written as a small class hierarchy.

Written from the user docs only (docs/your-algorithm.md, docs/problems-and-solutions.md). An
abstract base ``PermissionNode`` (``abc.ABC``) says what any permission-based node needs — a
``quorum`` (an abstract property) and a ``yields_to`` rule — and does the asking, answering and
deferring once; ``KQuorumNode`` fills them in for K: it enters once N−K others said yes, and
yields to an older (ts, pid). Everything a handler asks goes through properties (``inside``,
``wanting``, ``enough``); the answers so far are a frozenset behind a property with a setter.
The deferred askers satisfy a ``typing.Protocol`` (anything with ``who`` and ``ts``).

Planted bugs (module constants):

* QUORUM_SLACK = 1: enter with one answer fewer than N−K (K+1 inside);
* LATE_REPLY = "raise": a REPLY to a request already served looks its request up in a dict of
  open requests and raises KeyError (a handler that raises: a finding, not a crash).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Literal, Protocol

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

QUORUM_SLACK = 0
LATE_REPLY = "ignore"  # "raise": look the answered request up, KeyError when it is served already


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Yes(Message):
    type: Literal["YES"] = "YES"
    to_ts: int


class Asker(Protocol):
    @property
    def who(self) -> int: ...

    @property
    def ts(self) -> int: ...


@dataclass(frozen=True, order=True)
class Deferred:
    ts: int
    who: int


class PermissionNode(ClassicNode, ABC):
    """Ask everyone, count the yeses, enter at the quorum; defer those I yield nothing to."""

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.my_ts: int | None = None
        self._yes: frozenset[int] = frozenset()
        self.open: dict[int, int] = {}  # my open request's ts -> answers wanted (LATE_REPLY="raise")
        self.waiting_askers: tuple[Deferred, ...] = ()

    @property
    @abstractmethod
    def quorum(self) -> int: ...

    @abstractmethod
    def yields_to(self, asker: Asker) -> bool: ...

    @property
    def inside(self) -> bool:
        return self.state is HELD

    @property
    def wanting(self) -> bool:
        return self.state is WANTED

    @property
    def answers(self) -> frozenset[int]:
        return self._yes

    @answers.setter
    def answers(self, value: frozenset[int]) -> None:
        self._yes = frozenset(value)

    @property
    def enough(self) -> bool:
        return len(self.answers) >= self.quorum

    def _request(self) -> list:
        self.my_ts = self.clock.tick()
        self.answers = frozenset()
        if self.quorum <= 0:
            return self._enter()
        self.state = WANTED
        self.open[self.my_ts] = self.quorum
        return [Send(j, Ask(sender=self.pid, ts=self.my_ts)) for j in self._others()]

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        asker = Deferred(msg.ts, msg.sender)
        if self.inside or (self.wanting and not self.yields_to(asker)):
            self.waiting_askers = (*self.waiting_askers, asker)
            return []
        return [self._yes_to(asker)]

    def _yes_to(self, asker: Asker) -> Send:
        return Send(asker.who, Yes(sender=self.pid, ts=self.clock.tick(), to_ts=asker.ts))

    def _on_yes(self, msg: Yes) -> list:
        self.clock.receive(msg.ts)
        if LATE_REPLY == "raise":
            self.open[msg.to_ts] -= 1  # KeyError: the request it answers was served already
        if not self.wanting or msg.to_ts != self.my_ts:
            return []
        self.answers = self.answers | {msg.sender}
        if self.enough:
            self.open.pop(self.my_ts, None)
            return self._enter()
        return []

    def _release(self) -> list:
        self.my_ts = None
        askers, self.waiting_askers = self.waiting_askers, ()
        return [self._yes_to(a) for a in askers]

    def waiting_for(self) -> dict[str, list[int]]:
        return {"YES": [j for j in self._others() if j not in self.answers]} if self.wanting else {}


class KQuorumNode(PermissionNode):
    TABLE = classic_table(
        request="ASK everyone → WANTED (a quorum of 0: enter)",
        exit="YES to every deferred asker → RELEASED",
        rows={
            RELEASED: {"ASK": on("YES", "_on_ask"), "YES": on("late: nothing to count", "_on_yes")},
            WANTED: {
                "ASK": on("older asker: YES; else defer", "_on_ask"),
                "YES": on("count it; a quorum: enter", "_on_yes", to=[HELD]),
            },
            HELD: {"ASK": on("defer", "_on_ask"), "YES": on("beyond the quorum: nothing", "_on_yes")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k

    @property
    def quorum(self) -> int:
        return self.n - self.k - QUORUM_SLACK

    def yields_to(self, asker: Asker) -> bool:
        assert self.my_ts is not None
        return (asker.ts, asker.who) < (self.my_ts, self.pid)


SPEC = classic_algorithm(
    "o11-props-abc",
    "k-mutex by permissions: an abc.ABC base with abstract properties, a K-quorum subclass",
    KQuorumNode,
    Ask,
    Yes,
    problem="kmutex",
)
