"""Lamport's algorithm in its array form (the notes' "algorithm 1", docs/architecture.md#lamport).

Each node keeps an array ``q[j]``: the last message received from ``j`` (its own last message at
``q[i]``), initially ``(RELEASE, 0, j)``. Messages are ordered by (timestamp, pid).

The state table is ``LamportNode.TABLE`` (docs/protocols.md): every message first updates the
clock and ``q[sender]``; a REQUEST is answered only in RELEASED (``q[i]`` holds no request of
its own); while WANTED every message re-checks the entry condition.

Entry condition (rule 3), checked while WANTED: (a) q[i] is the earliest REQUEST in q, and
(b) every other entry q[j] is later than q[i]. (b) implies (a); both are kept for the table.

Why the no-reply rule (rule 2) still guarantees progress: a node ``j`` that keeps quiet about
``i``'s request has its own request in ``q[j]``, already sent to ``i`` before ``i``'s request
reached it. If that request is later than ``i``'s, it is itself the "later message" ``i``
needs; if it is earlier, ``j`` enters first and its RELEASE, sent after it received ``i``'s
request, carries a later timestamp. Links are FIFO, so whatever ``i`` holds in ``q[j]`` is
replaced only by later messages of ``j``.

Invariants: a node replies to a REQUEST only while ``q[i]`` holds no request of its own; it
enters only when every ``q[j]`` is later than its own request. Messages per entry: N−1
REQUEST + at most N−1 REPLY + N−1 RELEASE ≤ 3(N−1), exactly 3(N−1) when no requests overlap.
"""

from __future__ import annotations

from typing import Literal

from ..clock import priority
from ..machine import on
from ..messages import Codec, Message
from ..protocol import Send
from ..reduction import Reductions
from ..setups import Setup
from ..spec import Figure
from .classic import ClassicNode, State, classic_spec, classic_table, workload_setup


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Reply(Message):
    type: Literal["REPLY"] = "REPLY"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


CODEC = Codec(Request, Reply, Release)

# An array entry: (message type, timestamp). The pid is the index in the array.
Entry = tuple[str, int]


class LamportNode(ClassicNode):
    TABLE = classic_table(
        request="q[i] = REQUEST; broadcast → WANTED (alone: → HELD)",
        exit="q[i] = RELEASE; broadcast → RELEASED",
        rows={
            State.RELEASED: {
                "REQUEST": on("q[j] = it; REPLY (no own request)", "_reply_to"),
                "REPLY": on("q[j] = it", "_record"),
                "RELEASE": on("q[j] = it", "_record"),
            },
            State.WANTED: {
                "REQUEST": on(
                    "q[j] = it; no reply (q[i] is own); enter? → HELD", "_record_then_try", to=(State.HELD,)
                ),
                "REPLY": on("q[j] = it; enter? → HELD", "_record_then_try", to=(State.HELD,)),
                "RELEASE": on("q[j] = it; enter? → HELD", "_record_then_try", to=(State.HELD,)),
            },
            State.HELD: {
                "REQUEST": on("q[j] = it; no reply (q[i] is own)", "_record"),
                "REPLY": on("q[j] = it", "_record"),
                "RELEASE": on("q[j] = it", "_record"),
            },
        },
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.q: dict[int, Entry] = {j: ("RELEASE", 0) for j in range(1, n + 1)}

    def _key(self, j: int) -> tuple[int, int]:
        return priority(self.q[j][1], j)

    # -- rule 1: request ---------------------------------------------------------------
    def _request(self) -> list:
        ts = self.clock.tick()
        self.q[self.pid] = ("REQUEST", ts)
        self.state = State.WANTED
        msg = Request(sender=self.pid, ts=ts)
        return [Send(j, msg) for j in self._others()] + self._try_enter()

    # -- rules 2, 4, 5: messages -------------------------------------------------------
    def _record(self, msg: Request | Reply | Release) -> list:
        """q[j] = the message of j."""
        self.clock.receive(msg.ts)
        self.q[msg.sender] = (msg.type, msg.ts)
        return []

    def _reply_to(self, msg: Request) -> list:
        self._record(msg)
        return [Send(msg.sender, Reply(sender=self.pid, ts=self.clock.tick()))]

    # -- rule 3: entry -----------------------------------------------------------------
    def may_enter(self) -> bool:
        """The entry condition, while WANTED."""
        mine = self._key(self.pid)
        earliest = all(mine < self._key(j) for j in self._others() if self.q[j][0] == "REQUEST")  # (a)
        all_later = all(mine < self._key(j) for j in self._others())  # (b)
        return earliest and all_later

    def _try_enter(self) -> list:
        return self._enter() if self.may_enter() else []

    def _record_then_try(self, msg: Request | Reply | Release) -> list:
        self._record(msg)
        return self._try_enter()

    # -- release (rule "3" bis) --------------------------------------------------------
    def _release(self) -> list:
        ts = self.clock.tick()
        self.q[self.pid] = ("RELEASE", ts)
        msg = Release(sender=self.pid, ts=ts)
        return [Send(j, msg) for j in self._others()]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not State.WANTED:
            return {}
        mine = self._key(self.pid)
        earlier = [j for j in self._others() if self._key(j) < mine]
        lacks = {
            "RELEASE": [j for j in earlier if self.q[j][0] == "REQUEST"],
            "a later message": [j for j in earlier if self.q[j][0] != "REQUEST"],
        }
        return {what: whom for what, whom in lacks.items() if whom}

    def card(self) -> list[tuple[str, str]]:
        queue = sorted((ts, j, kind) for j, (kind, ts) in self.q.items())
        return [
            ("queue (last message per node)", ", ".join(f"{kind} {ts}@{j}" for ts, j, kind in queue))
        ] + super().card()

    def snapshot(self):
        return (self.state, self.clock.time, tuple(sorted(self.q.items())), self.requests_left)


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    return workload_setup("lamport", processes, options, LamportNode, CODEC)


def _reductions() -> Reductions:  # reads LamportNode: imported when check asks
    from .lamport_reductions import REDUCTIONS

    return REDUCTIONS


SPEC = classic_spec(
    "lamport",
    "Lamport's queue of timestamped requests: every request is acknowledged and released to all",
    make_setup,
    CODEC,
    {
        "messages": Figure("3(N−1)", lambda n, p: (3 * (n - 1),) * 2),
        "sync": Figure("T", lambda n, p: (1, 1)),
    },
    reductions=_reductions,
)
