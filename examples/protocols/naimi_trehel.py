"""Naimi–Tréhel (1987/1996): one token, requests routed along a dynamic tree of ``last`` pointers
to the last requester, and a distributed queue of ``next`` pointers behind the token.

``last`` is where I believe the most recent request went (None: I am the root, the tail of the
queue); ``next`` is who gets the token after me. A request travels ``last`` pointers to the
root, and every node it passes points ``last`` at the requester (path reversal), so the tree
keeps changing shape. The root queues the requester behind itself (``next``) if it wants or
holds the critical section, else sends it the token. Initially node 1 is the root and holds
the token; every other node's ``last`` is 1.

Invariants: exactly one token, in one node's hands or in flight; a node is HELD only with the
token; a root that is RELEASED holds the token.

Messages per entry: O(log N) on average, 0 (the token is here) to N (N−1 hops of the REQUEST,
then the TOKEN) (Naimi, Tréhel & Arnold, JPDC 34(1), 1996). Synchronization delay: T.
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
        self.token = False
        return [Send(to, Token(sender=self.pid, ts=self.clock.tick()))]

    def waiting_for(self) -> dict[str, list[int]]:
        return {"TOKEN": []} if self.state is WANTED else {}


SPEC = classic_algorithm(
    "naimi-trehel",
    "Naimi–Tréhel: a token, requests along a dynamic tree, a distributed queue",
    NaimiTrehelNode,
    Request,
    Token,
    literature={
        "messages": ("0 to N", lambda n: (0, n)),
        "sync": ("T", lambda n: 1),
    },
)
