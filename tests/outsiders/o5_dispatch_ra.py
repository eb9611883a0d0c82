"""Ricart-Agrawala, every message taken by one ``functools.singledispatchmethod``.

The table sends every message type to ``_got``; the dispatcher picks the overload by the
message's class. Messages per entry: 2(N-1). Sync delay: T.
"""

from functools import singledispatchmethod
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

# Build the broadcast lazily with ``map`` (saves a list) — or eagerly.
LAZY = False


class Req(Message):
    type: Literal["REQ"] = "REQ"


class Ok(Message):
    type: Literal["OK"] = "OK"


GOT = on("dispatch by class", "_got")


class DispatchRA(ClassicNode):
    TABLE = classic_table(
        request="REQ to all -> WANTED",
        exit="OK to every deferred -> RELEASED",
        rows={
            RELEASED: {"REQ": GOT},
            WANTED: {"REQ": GOT, "OK": on("count; enter with N-1", "_got", to=HELD)},
            HELD: {"REQ": GOT},
        },
        never="an OK answers my own REQ",
    )

    def __init__(self, pid, n, requests=0, clock=0):
        super().__init__(pid, n, requests, clock)
        self.my_ts = None
        self.oks = frozenset()
        self.later = ()

    def _others(self):
        return [j for j in range(1, self.n + 1) if j != self.pid]

    def _request(self):
        self.state = WANTED
        self.my_ts = self.clock.tick()
        self.oks = frozenset()
        if self.n == 1:
            return self._enter()
        if LAZY:
            return map(lambda j: Send(j, Req(sender=self.pid, ts=self.my_ts)), self._others())
        return [Send(j, Req(sender=self.pid, ts=self.my_ts)) for j in self._others()]

    def _release(self):
        self.my_ts = None
        out = [Send(j, Ok(sender=self.pid, ts=self.clock.tick())) for j in self.later]
        self.later = ()
        return out

    @singledispatchmethod
    def _got(self, msg):
        raise self.refuse(msg)

    @_got.register
    def _(self, msg: Req):
        self.clock.receive(msg.ts)
        mine_first = self.state is HELD or (
            self.state is WANTED and (self.my_ts, self.pid) < (msg.ts, msg.sender)
        )
        if mine_first:
            self.later = self.later + (msg.sender,)
            return []
        return [Send(msg.sender, Ok(sender=self.pid, ts=self.clock.tick()))]

    @_got.register
    def _(self, msg: Ok):
        self.clock.receive(msg.ts)
        self.oks = self.oks | {msg.sender}
        return self._enter() if len(self.oks) == self.n - 1 else []


SPEC = classic_algorithm(
    "o5-dispatch-ra",
    "Ricart-Agrawala through one singledispatchmethod",
    DispatchRA,
    Req,
    Ok,
    literature={"messages": ("2(N-1)", lambda n: 2 * (n - 1)), "sync": ("T", lambda n: 1)},
)
