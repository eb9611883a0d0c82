"""k-mutual exclusion by permits on a tree — my take on Raymond's tree, with K tokens counted.

Written from docs/problems-and-solutions.md and docs/your-algorithm.md. The nodes form a fixed
binary tree (the parent of i is i // 2, node 1 the root); the root starts with all K permits.
A node keeps a count of spare permits, a FIFO of who waits here (itself or a child that asked
on behalf of its subtree), and how many ASKs it has sent up that no PERMIT answered yet.

* serve: while a spare permit and a waiter: the waiter gets it (me: I enter; a child: PERMIT).
  Then: more waiters than asks outstanding → ASK the parent for the difference; no waiter left
  → every spare permit goes BACK up (so permits drift to the root, and down where they are asked).
* request: I wait here, serve. ASK from a child: it waits here, serve. PERMIT from my parent:
  one ask answered, one permit more, serve. BACK from a child: one permit more, serve. Exit: the
  permit I used is spare again, serve.

Permits are never made or lost: at most K nodes inside. The node keeps its fields in
``__slots__`` (I like to see them all in one place) and lets the kit's default snapshot read them.

Planted bug (a module constant the tests edit):

* FORGET = True: handing a permit to a child, the node forgets to count it out — one permit
  becomes two, and K + 1 nodes can be inside.
"""

from __future__ import annotations

from collections import deque
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

NAME = "o15-kmutex-permit-tree"
FORGET = False


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Permit(Message):
    type: Literal["PERMIT"] = "PERMIT"


class Back(Message):
    type: Literal["BACK"] = "BACK"


MOVES = {
    "ASK": on("the child waits here; serve", "_on_ask"),
    "PERMIT": on("one more permit; serve", "_on_permit", to=[HELD]),
    "BACK": on("one more permit; serve", "_on_back", to=[HELD]),
}


class PermitTree(ClassicNode):
    __slots__ = ("k", "parent", "permits", "waiters", "asked")

    TABLE = classic_table(
        request="wait here; serve → WANTED, or HELD with a spare permit",
        exit="the permit is spare again; serve → RELEASED",
        rows={RELEASED: MOVES, WANTED: MOVES, HELD: MOVES},
        never="every message can come in every state",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.parent = pid // 2  # 0: I am the root
        self.permits = k if pid == 1 else 0
        self.waiters: deque[int] = deque()
        self.asked = 0

    # -- the one rule --------------------------------------------------------------------
    def _serve(self) -> list:
        out: list = []
        while self.permits and self.waiters:
            who = self.waiters.popleft()
            if who == self.pid:
                self.permits -= 1
                out += self._enter()
            else:
                if not FORGET:
                    self.permits -= 1
                out.append(self._to(who, Permit))
        if self.parent:
            short = len(self.waiters) - self.asked
            for _ in range(max(short, 0)):
                out.append(self._to(self.parent, Ask))
            self.asked += max(short, 0)
            if not self.waiters:
                out += [self._to(self.parent, Back) for _ in range(self.permits)]
                self.permits = 0
        return out

    def _to(self, who: int, kind: type[Message]) -> Send:
        return Send(who, kind(sender=self.pid, ts=self.clock.tick()))

    # -- inputs --------------------------------------------------------------------------
    def _request(self) -> list:
        self.state = WANTED
        self.waiters.append(self.pid)
        return self._serve()

    def _release(self) -> list:
        self.permits += 1
        return self._serve()

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        self.waiters.append(msg.sender)
        return self._serve()

    def _on_permit(self, msg: Permit) -> list:
        self.clock.receive(msg.ts)
        self.asked -= 1
        self.permits += 1
        return self._serve()

    def _on_back(self, msg: Back) -> list:
        self.clock.receive(msg.ts)
        self.permits += 1
        return self._serve()

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state != WANTED:
            return {}
        if self.parent:
            return {"PERMIT": [self.parent]}
        children = [c for c in (2 * self.pid, 2 * self.pid + 1) if c <= self.n]
        return {"BACK": children}


SPEC = classic_algorithm(
    NAME,
    "k-mutual exclusion: K permits on a binary tree, asked down, given back up when spare",
    PermitTree,
    Ask,
    Permit,
    Back,
    problem="kmutex",
)
