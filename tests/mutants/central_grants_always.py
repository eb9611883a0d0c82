"""A central coordinator that grants every REQUEST, whoever holds the grant.

Bug: ``_on_request`` grants at once without looking at ``holder``: the second asker enters
while the first is inside.

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

COORDINATOR = 1


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Grant(Message):
    type: Literal["GRANT"] = "GRANT"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


# What the coordinator does, whatever its own state as a node.
COORDINATE = {
    "REQUEST": on("coordinator: grant if free, else queue", "_on_request"),
    "RELEASE": on("coordinator: grant the next in the queue", "_on_release"),
}


class CentralNode(ClassicNode):
    TABLE = classic_table(
        request="REQUEST to the coordinator → WANTED",
        exit="RELEASE to the coordinator → RELEASED",
        rows={
            RELEASED: COORDINATE,
            WANTED: {**COORDINATE, "GRANT": on("enter", "_on_grant", to=[HELD])},
            HELD: COORDINATE,
        },
        never="a GRANT answers my request, and I have one at a time",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.holder: int | None = None  # the coordinator's: who has the grant
        self.queue: list[int] = []  # the coordinator's: who waits for it, in order

    def _request(self) -> list:
        self.state = WANTED
        return [Send(COORDINATOR, Request(sender=self.pid, ts=self.clock.tick()))]

    def _on_grant(self, msg: Grant) -> list:
        self.clock.receive(msg.ts)
        return self._enter()

    def _release(self) -> list:
        return [Send(COORDINATOR, Release(sender=self.pid, ts=self.clock.tick()))]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        return self._grant(msg.sender)  # the bug: busy or not

    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.holder = None
        return self._grant(self.queue.pop(0)) if self.queue else []

    def _grant(self, to: int) -> list:
        self.holder = to
        return [Send(to, Grant(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "mutant-central-grants-always",
    "central coordinator granting every request",
    CentralNode,
    Request,
    Grant,
    Release,
    literature={
        "messages": ("3(N−1)/N", lambda n: 3 * (n - 1) / n),
        "sync": ("2T", lambda n: 2),
    },
)
