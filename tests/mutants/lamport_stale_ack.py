"""Lamport's mutual exclusion (CACM 1978) counting a stale message as an acknowledgement.

A node broadcasts REQUEST(ts), queues every request it hears of, answers each with ACK and, on
leaving, broadcasts RELEASE. It enters when its own request heads its queue and it has heard
from every other node a message stamped after its request ((ts, pid) order).

Bug: "heard from every other node" is checked against *any* message ever received, not one
stamped after the current request: a message from an earlier round stands in for the ACK.
With one request each the rounds never overlap and it is correct; with two, a node whose peer's
new REQUEST is still in flight enters on the peer's old ACK while the peer enters too.

Caught by: mutexlab check FILE --nodes 2 --requests 2
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


class Ack(Message):
    type: Literal["ACK"] = "ACK"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


HEAR = {
    "REQUEST": on("queue it, ACK", "_on_request"),
    "ACK": on("note the stamp", "_on_ack"),
    "RELEASE": on("drop its request", "_on_release"),
}


class Node(ClassicNode):
    TABLE = classic_table(
        request="REQUEST to all, queue mine → WANTED",
        exit="drop mine, RELEASE to all → RELEASED",
        rows={
            RELEASED: HEAR,
            WANTED: {
                "REQUEST": on("queue it, ACK; mine heads and all heard: → HELD", "_on_request", to=[HELD]),
                "ACK": on("note the stamp; mine heads and all heard: → HELD", "_on_ack", to=[HELD]),
                "RELEASE": on("drop its request; mine heads and all heard: → HELD", "_on_release", to=[HELD]),
            },
            HELD: HEAR,
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.queue: list[tuple[int, int]] = []  # (ts, pid) of every request not yet released
        self.heard: dict[int, tuple[int, int]] = {}  # j → (ts, j) of the latest message from j

    def _request(self) -> list:
        ts = self.clock.tick()
        self.queue = sorted([*self.queue, (ts, self.pid)])
        self.state = WANTED
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in self._others()]

    def _hear(self, msg: Message) -> None:
        self.clock.receive(msg.ts)
        self.heard[msg.sender] = (msg.ts, msg.sender)

    def _on_request(self, msg: Request) -> list:
        self._hear(msg)
        self.queue = sorted([*self.queue, (msg.ts, msg.sender)])
        return [Send(msg.sender, Ack(sender=self.pid, ts=self.clock.tick())), *self._try()]

    def _on_ack(self, msg: Ack) -> list:
        self._hear(msg)
        return self._try()

    def _on_release(self, msg: Release) -> list:
        self._hear(msg)
        self.queue = [r for r in self.queue if r[1] != msg.sender]
        return self._try()

    def _try(self) -> list:
        if self.state is not WANTED:
            return []
        mine = next(r for r in self.queue if r[1] == self.pid)
        # the bug: any message from j will do; correct is ``self.heard[j] > mine``
        if self.queue[0] == mine and all(j in self.heard for j in self._others()):
            return self._enter()
        return []

    def _release(self) -> list:
        self.queue = [r for r in self.queue if r[1] != self.pid]
        ts = self.clock.tick()
        return [Send(j, Release(sender=self.pid, ts=ts)) for j in self._others()]


SPEC = classic_algorithm(
    "mutant-lamport-stale-ack",
    "Lamport's algorithm taking any old message as an acknowledgement",
    Node,
    Request,
    Ack,
    Release,
)
