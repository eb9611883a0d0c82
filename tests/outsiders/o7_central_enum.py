"""A central coordinator whose message tags are members of a StrEnum, and whose queue is computed
by a recursive walk (DEPTH levels deep) on every grant. SPIN busy-waits in a handler."""

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
    on,
)

DEPTH = 10  # how deep the recursive walk of the queue goes
SPIN = False  # the variant that loops forever once two nodes wait


class Kind(enum.StrEnum):
    REQ = "REQ"
    GRANT = "GRANT"
    REL = "REL"


class Req(Message):
    type: Literal[Kind.REQ] = Kind.REQ


class Grant(Message):
    type: Literal[Kind.GRANT] = Kind.GRANT


class Rel(Message):
    type: Literal[Kind.REL] = Kind.REL


def _walk(q: tuple[int, ...], d: int) -> tuple[int, ...]:
    return q if d == 0 else _walk(q, d - 1)


class Central(ClassicNode):
    TABLE = classic_table(
        request="REQ → WANTED",
        exit="REL → RELEASED",
        rows={
            RELEASED: {Kind.REQ: on("grant or queue", "_on_req"), Kind.REL: on("next", "_on_rel")},
            WANTED: {
                Kind.REQ: on("grant or queue", "_on_req"),
                Kind.REL: on("next", "_on_rel"),
                Kind.GRANT: on("enter", "_on_grant", to=[HELD]),
            },
            HELD: {Kind.REQ: on("grant or queue", "_on_req"), Kind.REL: on("next", "_on_rel")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.busy = False
        self.queue: tuple[int, ...] = ()

    def _request(self) -> list:
        self.state = WANTED
        return [Send(1, Req(sender=self.pid, ts=self.clock.tick()))]

    def _on_grant(self, msg: Grant) -> list:
        self.clock.receive(msg.ts)
        return self._enter()

    def _release(self) -> list:
        return [Send(1, Rel(sender=self.pid, ts=self.clock.tick()))]

    def _on_req(self, msg: Req) -> list:
        self.clock.receive(msg.ts)
        if not self.busy:
            self.busy = True
            return [Send(msg.sender, Grant(sender=self.pid, ts=self.clock.tick()))]
        self.queue = _walk(self.queue + (msg.sender,), DEPTH)
        while SPIN and len(self.queue) == 2:
            pass  # "wait until the holder is done": nobody else can run
        return []

    def _on_rel(self, msg: Rel) -> list:
        self.clock.receive(msg.ts)
        if not self.queue:
            self.busy = False
            return []
        nxt, self.queue = self.queue[0], _walk(self.queue[1:], DEPTH)
        return [Send(nxt, Grant(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "o7-central-enum", "central, StrEnum tags, recursive queue", Central, Req, Grant, Rel
)
