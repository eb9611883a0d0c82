"""A central coordinator whose nodes never stop talking: each starts a CHATTER to its neighbour and
answers every CHATTER with another, so the run never ends however well the critical section is
served. ``simulate`` must stop it at its event limit (incomplete, exit 3), never run until the
machine refuses it memory."""

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


class Chatter(Message):
    type: Literal["CHATTER"] = "CHATTER"


COORDINATE = {
    "REQUEST": on("coordinator: grant if free, else queue", "_on_request"),
    "RELEASE": on("coordinator: grant the next in the queue", "_on_release"),
    "CHATTER": on("answer with another CHATTER", "_on_chatter"),
}


class ChattyNode(ClassicNode):
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
        self.holder: int | None = None
        self.queue: list[int] = []

    def start(self) -> list:
        neighbour = self.pid % self.n + 1
        return [*super().start(), Send(neighbour, Chatter(sender=self.pid, ts=self.clock.tick()))]

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
        if self.holder is None:
            return self._grant(msg.sender)
        self.queue.append(msg.sender)
        return []

    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.holder = None
        return self._grant(self.queue.pop(0)) if self.queue else []

    def _on_chatter(self, msg: Chatter) -> list:
        self.clock.receive(msg.ts)
        return [Send(msg.sender, Chatter(sender=self.pid, ts=self.clock.tick()))]

    def _grant(self, to: int) -> list:
        self.holder = to
        return [Send(to, Grant(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "endless-chatter",
    "central coordinator whose nodes answer every CHATTER with another, forever",
    ChattyNode,
    Request,
    Grant,
    Release,
    Chatter,
)
