"""Carvalho–Roucairol (1983): Ricart–Agrawala, but a permission is kept until asked back.

A REPLY from j is j's permission; I keep it (j ∈ ``kept``) until I reply to a request of j's.
To enter I ask only the nodes whose permission I lack, so a node that enters again before
anyone else asked needs no message at all. For each pair at most one of the two holds the
other's permission (it changes hands only by a REPLY, given up as it is sent), hence safety.

A request of j's that beats mine ((t, j) < my (t, i)) while I am WANTED is answered at once,
and if I had kept j's permission I ask for it again (my REQUEST, with my original timestamp):
I never wrote to j for this request, since I held its permission.

Messages per entry: 0 to 2(N−1); synchronization delay: T (O. Carvalho, G. Roucairol, "On
mutual exclusion in computer networks", CACM 26(2), 1983; Kshemkalyani & Singhal's
"Distributed Computing", the Ricart–Agrawala section).
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


class CarvalhoRoucairolNode(ClassicNode):
    TABLE = classic_table(
        request="all kept: → HELD; else REQUEST to the others → WANTED",
        exit="REPLY to the deferred, their permissions given up → RELEASED",
        rows={
            RELEASED: {"REQUEST": on("REPLY, permission given up", "_on_request")},
            WANTED: {
                "REQUEST": on("(t, j) < mine: REPLY, and REQUEST again if kept; else defer", "_on_request"),
                "REPLY": on("keep the permission; all kept → HELD", "_on_reply", to=[HELD]),
            },
            HELD: {"REQUEST": on("defer", "_on_request")},
        },
        never="a REPLY answers my current request, and I enter only once all N−1 are kept",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.my_request: tuple[int, int] | None = None  # (ts, pid) while WANTED or HELD
        self.kept: set[int] = set()  # whose permission I hold
        self.deferred: list[int] = []

    def _request(self) -> list:
        ts = self.clock.tick()
        self.my_request = (ts, self.pid)
        missing = [j for j in self._others() if j not in self.kept]
        if not missing:
            return self._enter()
        self.state = WANTED
        return [Send(j, Request(sender=self.pid, ts=ts)) for j in missing]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        j = msg.sender
        if self.state is HELD or (self.state is WANTED and self.my_request < (msg.ts, j)):
            self.deferred.append(j)
            return []
        had = j in self.kept
        effects = [self._give_up(j)]
        if self.state is WANTED and had:  # I never asked j for this request: ask now
            effects.append(Send(j, Request(sender=self.pid, ts=self.my_request[0])))
        return effects

    def _give_up(self, j: int) -> Send:
        """REPLY to j: from now on, j's permission is not mine."""
        self.kept.discard(j)
        return Send(j, Reply(sender=self.pid, ts=self.clock.tick()))

    def _on_reply(self, msg: Reply) -> list:
        self.clock.receive(msg.ts)
        self.kept.add(msg.sender)
        return self._enter() if len(self.kept) == self.n - 1 else []

    def _release(self) -> list:
        self.my_request = None
        deferred, self.deferred = self.deferred, []
        return [self._give_up(j) for j in deferred]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not WANTED:
            return {}
        return {"REPLY": [j for j in self._others() if j not in self.kept]}


SPEC = classic_algorithm(
    "carvalho-roucairol",
    "Carvalho–Roucairol: Ricart–Agrawala keeping each permission until asked back",
    CarvalhoRoucairolNode,
    Request,
    Reply,
    literature={
        "messages": ("0 to 2(N−1)", lambda n: (0, 2 * (n - 1))),
        "sync": ("T", lambda n: 1),
    },
)
