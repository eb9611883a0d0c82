"""Ricart–Agrawala (CACM 1981) written against the public file API: the correct file the ra_*
mutants beside it import and break, one method each (test_mutants.py checks it safe).

A node asks every other node with REQUEST(ts) and enters once all have answered with REPLY. A
node answers at once unless it is inside, or wants in with priority ((ts, pid) smaller than the
asker's): then it defers its REPLY until it leaves.

Messages per entry: 2(N−1); synchronization delay: T.
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


class RicartAgrawalaNode(ClassicNode):
    TABLE = classic_table(
        request="REQUEST to the others → WANTED",
        exit="REPLY to the deferred → RELEASED",
        rows={
            RELEASED: {"REQUEST": on("REPLY", "_on_request")},
            WANTED: {
                "REQUEST": on("mine first: defer; else REPLY", "_on_request"),
                "REPLY": on("count it; all → HELD", "_on_reply", to=[HELD]),
            },
            HELD: {"REQUEST": on("defer", "_on_request")},
        },
        never="a REPLY answers my request, and I enter only once all have come",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.mine: tuple[int, int] | None = None  # (ts, pid) of my request, while WANTED or HELD
        self.replies: set[int] = set()  # who answered my current request
        self.deferred: list[int] = []  # who asked while I was inside or ahead, unanswered

    def _request(self) -> list:
        ts = self.clock.tick()
        self.mine, self.replies = (ts, self.pid), set()
        self.state = WANTED
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in self._others()]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.state is HELD or (self.state is WANTED and self._mine_first(msg)):
            self._defer(msg.sender)
            return []
        return [self._reply(msg.sender)]

    def _mine_first(self, msg: Request) -> bool:
        """While WANTED: my request comes before ``msg``'s, in (ts, pid) order."""
        return self.mine < (msg.ts, msg.sender)

    def _defer(self, sender: int) -> None:
        self.deferred.append(sender)

    def _reply(self, to: int) -> Send:
        return Send(to, Reply(sender=self.pid, ts=self.clock.tick()))

    def _on_reply(self, msg: Reply) -> list:
        self.clock.receive(msg.ts)
        self.replies.add(msg.sender)
        return self._enter() if len(self.replies) == self.n - 1 else []

    def _release(self) -> list:
        self.mine = None
        deferred, self.deferred = self.deferred, []
        return [self._reply(j) for j in deferred]


SPEC = classic_algorithm(
    "ricart-agrawala-kit",
    "Ricart–Agrawala on the kit: the correct file the ra_* mutants break",
    RicartAgrawalaNode,
    Request,
    Reply,
    literature={"messages": ("2(N−1)", lambda n: 2 * (n - 1)), "sync": ("T", lambda n: 1)},
)
