"""Ricart–Agrawala that answers a REQUEST at once while it is inside the critical section.

Bug: only a WANTED node with priority defers; a HELD node replies like a RELEASED one, so the
asker enters while this node is still inside — two nodes in the critical section.

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


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Reply(Message):
    type: Literal["REPLY"] = "REPLY"


class Node(ClassicNode):
    TABLE = classic_table(
        request="REQUEST to the others → WANTED",
        exit="REPLY to the deferred → RELEASED",
        rows={
            RELEASED: {"REQUEST": on("REPLY", "_on_request")},
            WANTED: {
                "REQUEST": on("mine first: defer; else REPLY", "_on_request"),
                "REPLY": on("count it; all → HELD", "_on_reply", to=[HELD]),
            },
            HELD: {"REQUEST": on("defer (the bug: REPLY)", "_on_request")},
        },
        never="a REPLY answers my request, and I enter only once all have come",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.mine: tuple[int, int] | None = None
        self.replies: set[int] = set()
        self.deferred: list[int] = []

    def _request(self) -> list:
        ts = self.clock.tick()
        self.mine, self.replies = (ts, self.pid), set()
        self.state = WANTED
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in self._others()]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.state is WANTED and self.mine < (msg.ts, msg.sender):  # the bug: HELD not deferred
            self.deferred.append(msg.sender)
            return []
        return [Send(msg.sender, Reply(sender=self.pid, ts=self.clock.tick()))]

    def _on_reply(self, msg: Reply) -> list:
        self.clock.receive(msg.ts)
        self.replies.add(msg.sender)
        return self._enter() if len(self.replies) == self.n - 1 else []

    def _release(self) -> list:
        self.mine = None
        deferred, self.deferred = self.deferred, []
        return [Send(j, Reply(sender=self.pid, ts=self.clock.tick())) for j in deferred]


SPEC = classic_algorithm(
    "mutant-ra-replies-while-held",
    "Ricart–Agrawala replying while inside",
    Node,
    Request,
    Reply,
)
