"""Mutual exclusion with tree quorums (D. Agrawal and A. El Abbadi, "An efficient and fault-tolerant
solution for distributed mutual exclusion", ACM TOCS 9(1), 1991) — my course project.

The N nodes are a complete binary tree in heap order: node 1 is the root, node i's children are 2i
and 2i+1. With every node up, a quorum is a path from the root to a leaf; any two such paths share
the root, so two quorums always intersect (the paper's fault tolerance — a failed node replaced by
a path through each of its subtrees — is not needed here: nobody fails). Node i's quorum is the
path from the root down to i and on to the leftmost leaf below it.

Each node is an arbiter with one vote: LOCK asks for it, GRANT gives it, UNLOCK gives it back;
askers wait in a FIFO queue. A node asks the members of its quorum ONE AT A TIME, in increasing
number (root first): everybody takes votes in one global order, so no cycle of waiting — no
INQUIRE/YIELD as in Maekawa. Enter once every member granted; UNLOCK them all on leaving.

All three messages are ONE model, ``Vote``, whose ``type`` is ``Literal["LOCK", "GRANT",
"UNLOCK"]`` (I do not like three classes that differ in a name only).

Planted bug (a module constant the tests edit):

* SKIP_ROOT = True: a node below the root leaves the root out of its quorum (I thought the root
  would be a bottleneck): two paths in different subtrees share nobody.
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
    ignore,
    on,
)

NAME = "o18-tree-quorum"
SKIP_ROOT = False


class Vote(Message):
    type: Literal["LOCK", "GRANT", "UNLOCK"]


def parent(i: int) -> int | None:
    return i // 2 if i > 1 else None


def leftmost_leaf_path(i: int, n: int) -> list[int]:
    """i and its leftmost descendants down to a leaf of the tree of n nodes."""
    path = [i]
    while 2 * path[-1] <= n:
        path.append(2 * path[-1])
    return path


def quorum(i: int, n: int) -> tuple[int, ...]:
    """The root-to-leaf path through i, in increasing order (the order votes are taken in)."""
    up: list[int] = []
    j = parent(i)
    while j is not None:
        up.append(j)
        j = parent(j)
    path = sorted(up) + leftmost_leaf_path(i, n)
    if SKIP_ROOT and i != 1:
        path.remove(1)
    return tuple(path)


ARBITER = {
    "LOCK": on("arbiter: vote if free, else queue", "_on_lock", to=[HELD]),
    "UNLOCK": on("arbiter: vote for the next in the queue", "_on_unlock", to=[HELD]),
}


class TreeNode(ClassicNode):
    TABLE = classic_table(
        request="LOCK the first member of my quorum → WANTED",
        exit="UNLOCK every member → RELEASED",
        rows={
            RELEASED: {**ARBITER, "GRANT": ignore("never: I asked nobody", "_receive")},
            WANTED: {**ARBITER, "GRANT": on("next member, or enter", "_on_grant", to=[HELD])},
            HELD: {**ARBITER, "GRANT": ignore("never: all granted", "_receive")},
        },
        never="a GRANT answers my LOCK, one member at a time",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.quorum = quorum(pid, n)
        self.got = 0  # how many members of my quorum granted, in order
        self.voted_for: int | None = None  # the arbiter's vote
        self.queue: deque[int] = deque()

    def _vote(self, kind: Literal["LOCK", "GRANT", "UNLOCK"], to: int) -> Send:
        return Send(to, Vote(type=kind, sender=self.pid, ts=self.clock.tick()))

    # -- as a requester ---------------------------------------------------------------------
    def _request(self) -> list:
        self.state, self.got = WANTED, 0
        return self._ask_next()

    def _ask_next(self) -> list:
        if self.got == len(self.quorum):
            return self._enter()
        member = self.quorum[self.got]
        if member == self.pid:
            return self._lock(self.pid)
        return [self._vote("LOCK", member)]

    def _granted(self) -> list:
        self.got += 1
        return self._ask_next()

    def _on_grant(self, msg: Vote) -> list:
        self.clock.receive(msg.ts)
        return self._granted()

    def _release(self) -> list:
        out: list = []
        for member in self.quorum:
            out += self._unlock() if member == self.pid else [self._vote("UNLOCK", member)]
        self.got = 0
        return out

    # -- as an arbiter ----------------------------------------------------------------------
    def _lock(self, who: int) -> list:
        if self.voted_for is not None:
            self.queue.append(who)
            return []
        self.voted_for = who
        return self._granted() if who == self.pid else [self._vote("GRANT", who)]

    def _unlock(self) -> list:
        self.voted_for = None
        return self._lock(self.queue.popleft()) if self.queue else []

    def _on_lock(self, msg: Vote) -> list:
        self.clock.receive(msg.ts)
        return self._lock(msg.sender)

    def _on_unlock(self, msg: Vote) -> list:
        self.clock.receive(msg.ts)
        return self._unlock()

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state != WANTED or self.got >= len(self.quorum):
            return {}
        member = self.quorum[self.got]
        if member != self.pid:
            return {"GRANT": [member]}
        return {"UNLOCK": [self.voted_for]} if self.voted_for not in (None, self.pid) else {}


SPEC = classic_algorithm(
    NAME, "tree quorums (Agrawal–El Abbadi): a root-to-leaf path of votes", TreeNode, Vote
)
