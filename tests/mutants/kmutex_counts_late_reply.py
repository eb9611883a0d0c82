"""k-mutual exclusion à la Ricart–Agrawala (examples/solutions/kmutex_ricart_agrawala.py) counting late replies.

A node enters once N−K of the others have answered its REQUEST; a REPLY echoes the stamp of the
request it answers.

Bug: ``_on_reply`` counts every REPLY, without comparing the stamp it echoes with the current
request's. A node that entered on N−K answers leaves K−1 answers in flight; asking again, it
counts those late ones for its new request and enters without the answers that keep the count
inside at K: K+1 nodes in the critical section.

Breadth-first: the shortest way there is 13 steps, found after some 60,000 worlds, where the
depth-first search wanders much deeper first.

Caught by: mutexlab check FILE --nodes 3 -k 2 --requests 2 --search bfs
Expect: capacity — cs (capacity 2) held by node-1×1, node-2×1, node-3×1
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
    answers: int  # the timestamp of the request it answers


class KRicartAgrawalaNode(ClassicNode):
    TABLE = classic_table(
        request="REQUEST to the others (K = N: enter) → WANTED",
        exit="REPLY to the deferred → RELEASED",
        rows={
            RELEASED: {
                "REQUEST": on("REPLY", "_on_request"),
                "REPLY": ignore("a late answer to a request I was already served for", "_receive"),
            },
            WANTED: {
                "REQUEST": on("mine first: defer; else REPLY", "_on_request"),
                "REPLY": on("count it; N−K answers → HELD", "_on_reply", to=[HELD]),
            },
            HELD: {
                "REQUEST": on("defer", "_on_request"),
                "REPLY": ignore("an answer beyond the N−K I needed", "_receive"),
            },
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.mine: tuple[int, int] | None = None  # (ts, pid) of my request, while WANTED or HELD
        self.answered: set[int] = set()  # who answered my current request
        self.deferred: list[tuple[int, int]] = []  # (who, the timestamp of its request)

    def needed(self) -> int:
        """How many answers let me in."""
        return self.n - self.k

    def _request(self) -> list:
        ts = self.clock.tick()
        self.mine, self.answered = (ts, self.pid), set()
        if self.needed() <= 0:
            return self._enter()
        self.state = WANTED
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in self._others()]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.state is HELD or (self.state is WANTED and self.mine < (msg.ts, msg.sender)):
            self.deferred.append((msg.sender, msg.ts))
            return []
        return [self._reply(msg.sender, msg.ts)]

    def _reply(self, to: int, answers: int) -> Send:
        return Send(to, Reply(sender=self.pid, ts=self.clock.tick(), answers=answers))

    def _on_reply(self, msg: Reply) -> list:
        self.clock.receive(msg.ts)
        self.answered.add(msg.sender)  # the bug: ``msg.answers == self.mine[0]`` unchecked
        return self._enter() if len(self.answered) >= self.needed() else []

    def _release(self) -> list:
        self.mine = None
        deferred, self.deferred = self.deferred, []
        return [self._reply(j, ts) for j, ts in deferred]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not WANTED:
            return {}
        return {"REPLY": [j for j in self._others() if j not in self.answered]}


SPEC = classic_algorithm(
    "mutant-k-ricart-agrawala-counts-late-reply",
    "k-Ricart–Agrawala counting a reply to an earlier request",
    KRicartAgrawalaNode,
    Request,
    Reply,
    problem="kmutex",
    literature={"messages": ("2(N−1)", lambda n: 2 * (n - 1)), "sync": ("T", lambda n: 1)},
)
