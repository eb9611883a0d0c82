"""Lamport's mutual exclusion written by an outsider: a heap as the request queue, one
handler reached through a dict of handlers, frozensets in its state, no type hints."""

import heapq
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


class Req(Message):
    type: Literal["REQ"] = "REQ"


class Ack(Message):
    type: Literal["ACK"] = "ACK"


class Rel(Message):
    type: Literal["REL"] = "REL"


ANY = {"REQ": on("queue it, ack", "handle"), "REL": on("drop its request", "handle")}


class LamportHeap(ClassicNode):
    TABLE = classic_table(
        request="REQ to all",
        exit="REL to all",
        rows={RELEASED: dict(ANY), WANTED: {**ANY, "ACK": on("count", "handle", to=[HELD])}, HELD: dict(ANY)},
    )

    def __init__(self, pid, n, requests=0, clock=0):
        super().__init__(pid, n, requests, clock)
        self.heap = []
        self.acks = frozenset()

    def handle(self, msg):
        self.clock.receive(msg.ts)
        return {"REQ": self.req, "REL": self.rel, "ACK": self.ack}[msg.type](msg)

    def req(self, msg):
        heapq.heappush(self.heap, (msg.ts, msg.sender))
        out = [Send(msg.sender, Ack(sender=self.pid, ts=self.clock.tick()))]
        return out + self.maybe()

    def rel(self, msg):
        self.heap = [e for e in self.heap if e[1] != msg.sender]
        heapq.heapify(self.heap)
        return self.maybe()

    def ack(self, msg):
        self.acks = self.acks | {msg.sender}
        return self.maybe()

    def maybe(self):
        if (
            self.state is WANTED
            and len(self.acks) == self.n - 1
            and self.heap
            and self.heap[0][1] == self.pid
        ):
            return self._enter()
        return []

    def _request(self):
        ts = self.clock.tick()
        heapq.heappush(self.heap, (ts, self.pid))
        self.acks = frozenset()
        self.state = WANTED
        return [Send(j, Req(sender=self.pid, ts=ts)) for j in self._others()] + self.maybe()

    def _release(self):
        self.heap = [e for e in self.heap if e[1] != self.pid]
        heapq.heapify(self.heap)
        ts = self.clock.tick()
        return [Send(j, Rel(sender=self.pid, ts=ts)) for j in self._others()]


SPEC = classic_algorithm("lamport-heap", "Lamport with a heap", LamportHeap, Req, Ack, Rel)
