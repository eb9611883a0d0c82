"""Maekawa's quorum voting (TOCS 1985) without INQUIRE and RELINQUISH.

Node i's quorum is {i, i mod N + 1} (any two of them meet: N = 3). A node asks its quorum with
REQUEST(ts); a member votes LOCKED for one request at a time and queues the others by priority;
a node enters with every vote of its quorum and, on leaving, sends RELEASE to its quorum, whose
members vote for the next request they queued.

Bug: Maekawa's INQUIRE/RELINQUISH, which takes a vote back from a request of lower priority
when one of higher priority arrives, is left out. Three nodes asking at once each get their own
vote and wait for the next node's, which is given to that node: a cycle of waits, nobody moves.

Caught by: mutexlab check FILE --nodes 3
Expect: deadlock — nothing can move
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


class Locked(Message):
    type: Literal["LOCKED"] = "LOCKED"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


VOTE = {
    "REQUEST": on("member: vote if free, else queue", "_on_request"),
    "RELEASE": on("member: vote for the next queued", "_on_release"),
}


class Node(ClassicNode):
    TABLE = classic_table(
        request="REQUEST to my quorum → WANTED",
        exit="RELEASE to my quorum → RELEASED",
        rows={
            RELEASED: VOTE,
            WANTED: {
                "REQUEST": on("member: vote if free, else queue", "_on_request", to=[HELD]),
                "RELEASE": on("member: vote for the next queued", "_on_release", to=[HELD]),
                "LOCKED": on("count it; all my quorum → HELD", "_on_locked", to=[HELD]),
            },
            HELD: VOTE,
        },
        never="a LOCKED answers my request, and I enter only once all have come",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.quorum = sorted({pid, pid % n + 1})
        self.votes: set[int] = set()  # who voted for my request
        self.voted: tuple[int, int] | None = None  # member: the request (ts, pid) I voted for
        self.waiting: list[tuple[int, int]] = []  # member: requests queued behind it

    def _request(self) -> list:
        ts = self.clock.tick()
        self.state, self.votes = WANTED, set()
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in self.quorum]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.voted is None:
            return self._vote((msg.ts, msg.sender))
        self.waiting = sorted([*self.waiting, (msg.ts, msg.sender)])
        return []  # the bug: no INQUIRE to the one I voted for, even when this request comes first

    def _vote(self, request: tuple[int, int]) -> list:
        self.voted = request
        return [Send(request[1], Locked(sender=self.pid, ts=self.clock.tick()))]

    def _on_locked(self, msg: Locked) -> list:
        self.clock.receive(msg.ts)
        self.votes.add(msg.sender)
        return self._enter() if self.votes == set(self.quorum) else []

    def _release(self) -> list:
        ts = self.clock.tick()
        return [Send(j, Release(sender=self.pid, ts=ts)) for j in self.quorum]

    def _on_release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.voted = None
        if self.waiting:
            return self._vote(self.waiting.pop(0))
        return []


SPEC = classic_algorithm(
    "mutant-maekawa-no-inquire",
    "Maekawa's voting without INQUIRE/RELINQUISH",
    Node,
    Request,
    Locked,
    Release,
)
