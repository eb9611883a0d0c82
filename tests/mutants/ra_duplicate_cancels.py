"""Ricart–Agrawala that takes a second copy of a deferred REQUEST as its withdrawal.

Bug: a REQUEST from a node already deferred removes it from the deferred list ("asked twice:
it gave up"). On FIFO links that deliver each message once this never happens and the
algorithm is correct; on links that duplicate, the reply is forgotten and the asker waits
forever.

Caught by: mutexlab check FILE --nodes 2 --duplicate 1
Expect: deadlock — nothing can move; waiting: {'node-2': {'entry'
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
    ignore,
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
            RELEASED: {
                "REQUEST": on("REPLY", "_on_request"),
                "REPLY": ignore("a second copy of a REPLY I was served by", "_receive"),
            },
            WANTED: {
                "REQUEST": on("mine first: defer; else REPLY", "_on_request"),
                "REPLY": on("count it; all → HELD", "_on_reply", to=[HELD]),
            },
            HELD: {
                "REQUEST": on("defer", "_on_request"),
                "REPLY": ignore("a second copy of a REPLY I entered by", "_receive"),
            },
        },
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
        if msg.sender in self.deferred:  # the bug: a duplicate cancels the deferral
            self.deferred.remove(msg.sender)
            return []
        if self.state is HELD or (self.state is WANTED and self.mine < (msg.ts, msg.sender)):
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
    "mutant-ra-duplicate-cancels",
    "Ricart–Agrawala dropping a request seen twice",
    Node,
    Request,
    Reply,
)
