"""Naimi–Tréhel's token along a dynamic tree (JPDC 1996) that keeps a copy of the token it sends.

Requests travel ``last`` pointers to the root, which passes the token to the requester or queues
it behind itself in ``next``; node 1 starts as the root with the token.

Bug: passing the token does not clear ``self.token``: the node that gave it away still believes
it holds it and, asking again, enters at once while the new holder is inside.

Caught by: mutexlab check FILE --nodes 2
Expect: capacity — cs (capacity 1) held by node-1×1, node-2×1
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

ROOT = 1  # the first root, and holder of the token


class Request(Message):
    """A request of ``requester``'s, forwarded by ``sender``."""

    type: Literal["REQUEST"] = "REQUEST"
    requester: int


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"


class NaimiTrehelNode(ClassicNode):
    TABLE = classic_table(
        request="token here: → HELD; else REQUEST to last, last = none → WANTED",
        exit="next: TOKEN to next → RELEASED",
        rows={
            RELEASED: {"REQUEST": on("root: TOKEN to j; else forward to last; last = j", "_on_request")},
            WANTED: {
                "REQUEST": on("root: next = j; else forward to last; last = j", "_on_request"),
                "TOKEN": on("enter", "_on_token", to=[HELD]),
            },
            HELD: {"REQUEST": on("root: next = j; else forward to last; last = j", "_on_request")},
        },
        never="the token goes only to the requester queued behind its holder, WANTED until it comes",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.token = pid == ROOT
        self.last: int | None = None if pid == ROOT else ROOT
        self.next: int | None = None

    def _request(self) -> list:
        if self.token:
            return self._enter()
        self.state = WANTED
        to, self.last = self.last, None
        return [Send(to, Request(sender=self.pid, ts=self.clock.tick(), requester=self.pid))]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        j, to = msg.requester, self.last
        self.last = j
        if to is not None:
            forward = Request(sender=self.pid, ts=self.clock.tick(), requester=j)
            return [Send(to, forward)]
        if self.state is RELEASED:
            return self._pass_token(j)
        self.next = j
        return []

    def _on_token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.token = True
        return self._enter()

    def _release(self) -> list:
        if self.next is None:
            return []
        to, self.next = self.next, None
        return self._pass_token(to)

    def _pass_token(self, to: int) -> list:
        # the bug: ``self.token = False`` is missing
        return [Send(to, Token(sender=self.pid, ts=self.clock.tick()))]

    def waiting_for(self) -> dict[str, list[int]]:
        return {"TOKEN": []} if self.state is WANTED else {}


SPEC = classic_algorithm(
    "mutant-naimi-trehel-keeps-token",
    "Naimi–Tréhel keeping the token it passes on",
    NaimiTrehelNode,
    Request,
    Token,
    literature={
        "messages": ("0 to N", lambda n: (0, n)),
        "sync": ("T", lambda n: 1),
    },
)
