"""k-mutual exclusion with Lamport's queue: every node keeps every request, ordered by (ts, pid).

A node broadcasts REQUEST(ts), queues it, and enters when its request is among the first K of
its queue and it has heard from every other node something stamped after its request. An ACK
answers every REQUEST; RELEASE tells everyone to drop the sender's request.
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

Stamp = tuple[int, int]  # (ts, pid)


class Req(Message):
    type: Literal["REQ"] = "REQ"


class Ack(Message):
    type: Literal["ACK"] = "ACK"


class Rel(Message):
    type: Literal["REL"] = "REL"


ALWAYS = {
    "REQ": on("queue it; ACK", "handle_req"),
    "ACK": on("note the stamp; maybe enter", "handle_ack", to=[HELD]),
    "REL": on("dequeue the sender; maybe enter", "handle_rel", to=[HELD]),
}


def first_k(queue: dict[int, Stamp], k: int) -> set[int]:
    """The pids of the K earliest requests."""
    return {pid for _, pid in sorted(queue.values(), key=lambda stamp: stamp[0])[:k]}  # BUG: ties


class LamportK(ClassicNode):
    TABLE = classic_table(
        request="REQ to all → WANTED",
        exit="REL to all → RELEASED",
        rows={
            RELEASED: {**ALWAYS, "ACK": on("note", "handle_ack"), "REL": on("dequeue", "handle_rel")},
            WANTED: ALWAYS,
            HELD: {**ALWAYS, "ACK": on("note", "handle_ack"), "REL": on("dequeue", "handle_rel")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 2) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.queue: dict[int, Stamp] = {}
        self.last_heard: dict[int, Stamp] = {}

    def peers(self) -> list[int]:
        return [p for p in range(1, self.n + 1) if p != self.pid]

    def broadcast(self, kind: type) -> list:
        ts = self.clock.tick()
        return [Send(p, kind(sender=self.pid, ts=ts)) for p in self.peers()]

    def _request(self) -> list:
        self.state = WANTED
        sends = self.broadcast(Req)
        self.queue[self.pid] = (self.clock.time, self.pid)
        return sends + self.maybe_enter()

    def _release(self) -> list:
        del self.queue[self.pid]
        return self.broadcast(Rel)

    def hear(self, msg: Message) -> None:
        self.clock.receive(msg.ts)
        self.last_heard[msg.sender] = (msg.ts, msg.sender)

    def handle_req(self, msg: Req) -> list:
        self.hear(msg)
        self.queue[msg.sender] = (msg.ts, msg.sender)
        return [Send(msg.sender, Ack(sender=self.pid, ts=self.clock.tick()))] + self.maybe_enter()

    def handle_ack(self, msg: Ack) -> list:
        self.hear(msg)
        return self.maybe_enter()

    def handle_rel(self, msg: Rel) -> list:
        self.hear(msg)
        self.queue.pop(msg.sender, None)
        return self.maybe_enter()

    def maybe_enter(self) -> list:
        if self.state is not WANTED:
            return []
        mine = self.queue[self.pid]
        if self.pid not in first_k(self.queue, self.k):
            return []
        if any(self.last_heard.get(p, (-1, 0)) < mine for p in self.peers()):
            return []
        return self._enter()


SPEC = classic_algorithm(
    "k-lamport-queue-broken",
    "k-mutual exclusion with Lamport's request queue: enter among the first K, heard from all",
    LamportK,
    Req,
    Ack,
    Rel,
    literature={"messages": ("3(N−1)", lambda n: 3 * (n - 1))},
    problem="kmutex",
)
