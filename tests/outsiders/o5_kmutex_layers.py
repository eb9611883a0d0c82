"""K-mutual exclusion in layers: a base that stamps and counts, a Ricart-Agrawala layer, and a
K layer on top, each calling ``super()``.

A node enters once N-K others have answered its current request; a reply echoes the stamp of
the request it answers. Messages per entry: 2(N-1).
"""

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


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Yes(Message):
    type: Literal["YES"] = "YES"
    answers: int


class Stamped(ClassicNode):
    """Layer 1: the clock discipline, and the peers."""

    def __init__(self, pid, n, requests=0, clock=0, **rest):
        super().__init__(pid, n, requests, clock, **rest)
        self.peers = tuple(j for j in range(1, n + 1) if j != pid)

    def stamp(self):
        return self.clock.tick()

    def heard(self, msg):
        self.clock.receive(msg.ts)


class Permissions(Stamped):
    """Layer 2: ask everyone, defer while ahead, answer the deferred on leaving."""

    # requests deferred until I leave, (pid, ts): a tuple, replaced, never changed in place
    deferred = ()

    def __init__(self, pid, n, requests=0, clock=0, **rest):
        super().__init__(pid, n, requests, clock, **rest)
        self.mine = None
        self.yes = frozenset()

    def ahead(self, msg):
        return self.state is HELD or (self.state is WANTED and self.mine < (msg.ts, msg.sender))

    def _request(self):
        self.state = WANTED
        self.mine = (self.stamp(), self.pid)
        self.yes = frozenset()
        if self.enough():
            return self._enter()
        return [Send(j, Ask(sender=self.pid, ts=self.mine[0])) for j in self.peers]

    def _on_ask(self, msg):
        self.heard(msg)
        if self.ahead(msg):
            self.deferred = self.deferred + ((msg.sender, msg.ts),)
            return []
        return [Send(msg.sender, Yes(sender=self.pid, ts=self.stamp(), answers=msg.ts))]

    def _on_yes(self, msg):
        self.heard(msg)
        if self.mine is not None and msg.answers == self.mine[0]:
            self.yes = self.yes | {msg.sender}
        return self._enter() if self.state is WANTED and self.enough() else []

    def _release(self):
        self.mine = None
        out = [Send(j, Yes(sender=self.pid, ts=self.stamp(), answers=ts)) for j, ts in self.deferred]
        self.deferred = ()
        return out

    def enough(self):
        return len(self.yes) >= len(self.peers)


class KPermissions(Permissions):
    """Layer 3: room for K: N-K answers are enough."""

    def __init__(self, pid, n, requests=0, clock=0, k=2):
        super().__init__(pid, n, requests, clock)
        self.k = k

    def enough(self):
        return len(self.yes) >= self.n - self.k


ANY = {"ASK": on("answer, or defer while ahead", "_on_ask")}


class LayeredK(KPermissions):
    TABLE = classic_table(
        request="ASK all -> WANTED (or HELD when N-K is 0)",
        exit="YES to the deferred -> RELEASED",
        rows={
            RELEASED: {**ANY, "YES": on("late answer: ignored", "_on_yes")},
            WANTED: {**ANY, "YES": on("count; enter with N-K", "_on_yes", to=HELD)},
            HELD: {**ANY, "YES": on("late answer: ignored", "_on_yes")},
        },
    )


SPEC = classic_algorithm(
    "o5-kmutex-layers",
    "Ricart-Agrawala for K, in three layers",
    LayeredK,
    Ask,
    Yes,
    problem="kmutex",
    literature={"messages": ("2(N-1)", lambda n: 2 * (n - 1))},
)
