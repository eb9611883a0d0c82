"""A central coordinator (node 1) that hands the critical section on directly: the GRANT carries
the queue of nodes waiting behind the grantee, and the grantee, on leaving, passes GRANT on to the
first of them itself (telling the coordinator with DONE only when the queue is empty).

Requests that reach the coordinator while a chain of GRANTs is out wait for its DONE. The
grantee keeps the GRANT (`self.grant = msg`) and pops the next from its queue: the received
message is changed in place.
SHORTCUT = True is its bug: a REQUEST reaching the coordinator while a GRANT is out is appended to
the queue of the GRANT it sent last (`self.last.queue.append`), as if that message were still in
its hands; the receiver never sees it, and the asker waits for ever.
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

COORDINATOR = 1
SHORTCUT = False


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Grant(Message):
    type: Literal["GRANT"] = "GRANT"
    queue: list[int]


class Done(Message):
    type: Literal["DONE"] = "DONE"


class HandoffNode(ClassicNode):
    TABLE = classic_table(
        request="coordinator, free: enter; else REQUEST → WANTED",
        exit="GRANT to the first queued, or DONE → RELEASED",
        rows={
            RELEASED: {"REQUEST": on("grant or queue", "_on_request"), "DONE": on("free", "_on_done")},
            WANTED: {
                "REQUEST": on("grant or queue", "_on_request"),
                "DONE": on("free; mine next?", "_on_done", to=[HELD]),
                "GRANT": on("enter", "_on_grant", to=[HELD]),
            },
            HELD: {"REQUEST": on("queue", "_on_request"), "DONE": on("free", "_on_done")},
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.busy = False  # the coordinator's: somebody has the section
        self.waiting: list[int] = []  # the coordinator's, while nobody has a GRANT out
        self.last: Grant | None = None  # the coordinator's last GRANT sent
        self.grant: Grant | None = None  # the GRANT I was let in with

    def snapshot(self) -> tuple:
        last = tuple(self.last.queue) if self.last is not None else None
        return (
            self.state,
            self.requests_left,
            self.busy,
            tuple(self.waiting),
            last,
            tuple(self.grant.queue) if self.grant else None,
            self.clock.time,
        )

    def _ask(self, who: int) -> list:
        if not self.busy:
            self.busy = True
            if who == self.pid:
                return self._enter()
            self.last = Grant(sender=self.pid, ts=self.clock.tick(), queue=self.waiting)
            self.waiting = []
            return [Send(who, self.last)]
        if SHORTCUT and self.last is not None:
            self.last.queue.append(who)  # into the GRANT already sent
        else:
            self.waiting.append(who)
        return []

    def _request(self) -> list:
        self.state = WANTED
        if self.pid == COORDINATOR:
            return self._ask(self.pid)
        return [Send(COORDINATOR, Request(sender=self.pid, ts=self.clock.tick()))]

    def _on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        return self._ask(msg.sender)

    def _on_grant(self, msg: Grant) -> list:
        self.clock.receive(msg.ts)
        self.grant = msg  # kept: who waits behind me is its queue
        return self._enter()

    def _on_done(self, msg: Done) -> list:
        self.clock.receive(msg.ts)
        return self._free()

    def _free(self) -> list:
        self.busy, self.last = False, None
        if not self.waiting:
            return []
        who, self.waiting = self.waiting[0], self.waiting[1:]
        return self._ask(who)

    def _release(self) -> list:
        grant, self.grant = self.grant, None
        if grant is not None and grant.queue:
            nxt = grant.queue.pop(0)  # changes the GRANT I was handed
            return [Send(nxt, Grant(sender=self.pid, ts=self.clock.tick(), queue=grant.queue))]
        if self.pid == COORDINATOR:
            return self._free()
        return [Send(COORDINATOR, Done(sender=self.pid, ts=self.clock.tick()))]


SPEC = classic_algorithm(
    "o6-handoff", "a coordinator whose GRANT carries the queue", HandoffNode, Request, Grant, Done
)
