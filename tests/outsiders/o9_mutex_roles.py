"""A central coordinator, written with a base class and a subclass per role.

Written from the user docs only. ``Node`` is what every process does (ask, enter on GRANT,
leave with RELEASE); ``Coordinator`` (node 1) also keeps the grant: who holds it and who waits,
in a ``collections.deque``. A factory builds the right class for each pid.

Messages per entry: 3 (REQUEST, GRANT, RELEASE), none for the coordinator's own.
"""

from collections import deque
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

BOSS = 1
CHECK_HOLDER = True  # False: grant every REQUEST at once, whoever holds the grant


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Grant(Message):
    type: Literal["GRANT"] = "GRANT"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


class Node(ClassicNode):
    """A member: asks the boss, enters on its GRANT, leaves with a RELEASE."""

    TABLE = classic_table(
        request="REQUEST to the boss → WANTED",
        exit="RELEASE to the boss → RELEASED",
        rows={WANTED: {"GRANT": on("enter", "_on_grant", to=[HELD])}},
        never="only the boss is asked, and a GRANT answers my one request",
    )

    def _request(self) -> list:
        self.state = WANTED
        return [Send(BOSS, Request(sender=self.pid, ts=self.clock.tick()))]

    def _on_grant(self, msg: Grant) -> list:
        self.clock.receive(msg.ts)
        return self._enter()

    def _release(self) -> list:
        return [Send(BOSS, Release(sender=self.pid, ts=self.clock.tick()))]


KEEP = {
    "REQUEST": on("grant if free, else queue", "_on_request"),
    "RELEASE": on("grant the next waiting", "_on_release"),
}


class Coordinator(Node):
    """Node 1: a member that also keeps the grant."""

    TABLE = classic_table(
        request="REQUEST to myself → WANTED",
        exit="RELEASE to myself → RELEASED",
        rows={
            RELEASED: KEEP,
            WANTED: {**KEEP, "GRANT": on("enter", "_on_grant", to=[HELD])},
            HELD: KEEP,
        },
        never="a GRANT answers my one request",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.holder: int | None = None
        self.waiting: deque[int] = deque()

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.holder is not None and CHECK_HOLDER:
            self.waiting.append(msg.sender)
            return []
        return self._grant(msg.sender)

    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.holder = None
        return self._grant(self.waiting.popleft()) if self.waiting else []

    def _grant(self, to: int) -> list:
        self.holder = to
        return [Send(to, Grant(sender=self.pid, ts=self.clock.tick()))]


def make_node(pid: int, n: int, requests: int = 0, clock: int = 0) -> Node:
    """The boss is a Coordinator, everyone else a plain Node."""
    role = Coordinator if pid == BOSS else Node
    return role(pid, n, requests, clock)


SPEC = classic_algorithm(
    "o9-roles",
    "central coordinator: a Node class and a Coordinator subclass for node 1",
    make_node,
    Request,
    Grant,
    Release,
    literature={"messages": ("3(N−1)/N", lambda n: 3 * (n - 1) / n)},
)
