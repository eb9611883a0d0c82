"""Ricart–Agrawala that stops answering after its second deferral, under a key that ignores the count.

Bug: the node counts the requests it has deferred in ``deferrals`` and, once it has deferred two,
leaves the critical section without answering them ("a quota"): the asker waits forever.

The file also declares a canonical key without ``deferrals`` ("only counted, never read") —
false for this code, whose exit reads it: two states the key merges can differ in what their
exit sends. A wrong declaration must not buy a wrong verdict: here the search, with the key
applied, still reaches the deadlock, and the counterexample replays on the real code (which
no key touches).

Caught by: mutexlab check FILE --nodes 2 --requests 2
Expect: deadlock — nothing can move
"""

from typing import Literal

from mutexlab.protocols.kit import (
    HELD,
    RELEASED,
    WANTED,
    Canonical,
    ClassicNode,
    Message,
    Reductions,
    Send,
    classic_algorithm,
    classic_table,
    on,
)


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Reply(Message):
    type: Literal["REPLY"] = "REPLY"


class Node(ClassicNode):
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
        self.mine: tuple[int, int] | None = None
        self.replies: set[int] = set()
        self.deferred: list[int] = []
        self.deferrals = 0  # requests I deferred so far

    def _request(self) -> list:
        ts = self.clock.tick()
        self.mine, self.replies = (ts, self.pid), set()
        self.state = WANTED
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in self._others()]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        if self.state is HELD or (self.state is WANTED and self.mine < (msg.ts, msg.sender)):
            self.deferred.append(msg.sender)
            self.deferrals += 1
            return []
        return [Send(msg.sender, Reply(sender=self.pid, ts=self.clock.tick()))]

    def _on_reply(self, msg: Reply) -> list:
        self.clock.receive(msg.ts)
        self.replies.add(msg.sender)
        return self._enter() if len(self.replies) == self.n - 1 else []

    def _release(self) -> list:
        self.mine = None
        deferred, self.deferred = self.deferred, []
        if self.deferrals >= 2:  # the bug: past the quota, nobody is answered
            return []
        return [Send(j, Reply(sender=self.pid, ts=self.clock.tick())) for j in deferred]


def _key(node: Node) -> tuple:
    return tuple(part for part in node.snapshot() if part[0] not in ("deferrals", "entries"))


# The declaration the bug makes false: ``deferrals`` is read by the exit.
REDUCTIONS = Reductions(
    frozenset({Node}),
    canonical=Canonical(_key, "`deferrals` and `entries` are only counted; no handler reads them"),
)

SPEC = classic_algorithm(
    "mutant-ra-key-hides-count",
    "Ricart–Agrawala with a deferral quota its key hides",
    Node,
    Request,
    Reply,
    reductions=REDUCTIONS,
)
