"""A central coordinator that serves its queue newest first (a stack).

Bug: ``_on_release`` grants ``self.queue.pop()``, the last asker, instead of the first. With
three nodes asking forever, two of them pass the grant between them while the third, queued
at the bottom, waits forever in a cycle that is fair to every other step: starvation, which a
bounded workload cannot show (every run ends), an endless one does.

For the endless worlds to be finite the node keeps its clock at 0 (it never reads a stamp)
and its ``snapshot()`` leaves out the kit's ``entries`` count, which only grows.

Caught by: mutexlab check FILE --nodes 3 --endless
Expect: liveness — waits forever
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

    def snapshot(self) -> tuple:
        return (self.state, self.requests_left, self.holder, tuple(self.queue))

    def _request(self) -> list:
        self.state = WANTED
        return [Send(COORDINATOR, Request(sender=self.pid, ts=0))]

    def _on_grant(self, msg: Grant) -> list:
        self.clock.receive(msg.ts)
        return self._enter()

    def _release(self) -> list:
        return [Send(COORDINATOR, Release(sender=self.pid, ts=0))]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.holder is None:
            return self._grant(msg.sender)
        self.queue.append(msg.sender)
        return []

    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.holder = None
        return self._grant(self.queue.pop()) if self.queue else []  # the bug: newest first

    def _grant(self, to: int) -> list:
        self.holder = to
        return [Send(to, Grant(sender=self.pid, ts=0))]


SPEC = classic_algorithm(
    "mutant-central-lifo-starves",
    "central coordinator serving newest first",
    CentralNode,
    Request,
    Grant,
    Release,
    literature={
        "messages": ("3(N−1)/N", lambda n: 3 * (n - 1) / n),
        "sync": ("2T", lambda n: 2),
    },
)
