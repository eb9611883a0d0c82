"""Mason bees whose K flowers are Lamport's queue (a ``heapq`` of ``NamedTuple`` stamps), and whose
reeds are a baton handed down the bees of each reed; written by a student of Lamport 1978.

Written from docs/your-bees.md only. Bee i lays on reed (i − 1) mod T + 1 as its (i − 1) div T-th
bee; a turn at or past cocoons div eggs retires at once (every bee can tell). The first bee of each
reed holds its baton; a dying bee hands it on (BATON) and tells every other live bee it is gone.

Flowers: a bee broadcasts REQflower(ts) and queues it in its own heap; every bee queues what it
hears and answers ACKflower; leaving, a bee broadcasts RELEASEflower and drops its stamp. A bee goes
out when its stamp is among the first K of its heap and it has heard a later message from every
other live bee (FIFO links: nothing earlier can still arrive).

Planted bug (module constant, edited by the tests):

* IMPATIENT = True: a bee goes out as soon as its stamp is among the first K, without waiting to
  hear from the others: two bees on one flower (K = 1).
"""

from __future__ import annotations

import heapq
import random
from enum import StrEnum
from typing import Any, Literal, NamedTuple

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import ConfigError, Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "o13-bees-lamport-heap"
IMPATIENT = False


class S(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class Stamp(NamedTuple):
    ts: int
    pid: int


class Baton(Message):
    type: Literal["BATON"] = "BATON"
    eggs: int  # eggs on the reed so far


class Gone(Message):
    type: Literal["GONE"] = "GONE"


class Req(Message):
    type: Literal["REQflower"] = "REQflower"


class Ack(Message):
    type: Literal["ACKflower"] = "ACKflower"


class Rel(Message):
    type: Literal["RELEASEflower"] = "RELEASEflower"


CODEC = Codec(Baton, Gone, Req, Ack, Rel)

HEARD = {
    "GONE": on("forget the bee", "_gone"),
    "REQflower": on("queue it, ACK", "_req"),
    "ACKflower": on("heard", "_heard"),
    "RELEASEflower": on("unqueue it", "_rel"),
}
WAITING = {
    "GONE": on("forget the bee; maybe out", "_gone", to=(S.ON_FLOWER,)),
    "REQflower": on("queue it, ACK", "_req"),
    "ACKflower": on("heard; maybe out", "_heard", to=(S.ON_FLOWER,)),
    "RELEASEflower": on("unqueue it; maybe out", "_rel", to=(S.ON_FLOWER,)),
}
OVER = ignore("finished: nothing more to do")
AFTER = {kind: OVER for kind in ("BATON", "GONE", "REQflower", "ACKflower", "RELEASEflower")}


class LamportBee(Protocol):
    final_states = frozenset({S.DEAD, S.RETIRED})
    TABLE = Table(
        S,
        {
            S.REST: {
                **HEARD,
                "BATON": on("keep the baton", "_baton"),
                "request": on("my reed if I hold its baton", "_want_reed", to=(S.WAIT_REED, S.ON_REED)),
            },
            S.WAIT_REED: {**HEARD, "BATON": on("keep the baton; in", "_baton", to=(S.ON_REED,))},
            S.ON_REED: {
                **HEARD,
                "request": on("REQflower to all", "_want_flower", to=(S.WAIT_FLOWER, S.ON_FLOWER)),
            },
            S.WAIT_FLOWER: WAITING,
            S.ON_FLOWER: {
                **HEARD,
                "exit": on("RELEASEflower; an egg; maybe die", "_leave", to=(S.ON_REED, S.DEAD)),
            },
            S.DEAD: AFTER,
            S.RETIRED: AFTER,
        },
        never="a BATON comes once, to the next bee of a reed, before it holds the reed",
    )

    def __init__(self, pid: int, n: int, k: int, reeds: int, eggs: int, cocoons: int, clock: int) -> None:
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.k, self.reeds, self.eggs = k, reeds, eggs
        self.reed = (pid - 1) % reeds + 1
        turns = cocoons // eggs
        self.placed = (pid - 1) // reeds < turns
        self.baton = (pid - 1) // reeds == 0
        self.live = frozenset(j for j in range(1, n + 1) if j != pid and (j - 1) // reeds < turns)
        self.heap: list[Stamp] = []
        self.last: dict[int, int] = {}  # bee → the timestamp of the last message heard from it
        self.mine: Stamp | None = None
        self.on_reed = self.laid = 0
        self.state = S.REST

    def start(self) -> list:
        if not self.placed:
            self.state = S.RETIRED
            return [Note("retire", {"would_be_reed": self.reed})]
        return [Schedule("request", "rest")]

    def _hear(self, msg: Message) -> None:
        self.clock.receive(msg.ts)
        self.last[msg.sender] = msg.ts

    # -- the reed's baton --------------------------------------------------------------------
    def _want_reed(self, _: str) -> list:
        self.state = S.WAIT_REED
        return self._in_reed() if self.baton else []

    def _baton(self, msg: Baton) -> list:
        self._hear(msg)
        self.baton, self.on_reed = True, msg.eggs
        self.live = self.live - {msg.sender}  # the bee before me on my reed died handing it on
        return self._in_reed() if self.state == S.WAIT_REED else []

    def _in_reed(self) -> list:
        self.state = S.ON_REED
        return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]

    def _gone(self, msg: Gone) -> list:
        self._hear(msg)
        self.live = self.live - {msg.sender}
        self.heap = [s for s in self.heap if s.pid != msg.sender]
        heapq.heapify(self.heap)
        return self._maybe_out()

    # -- Lamport's queue for K flowers -------------------------------------------------------
    def _want_flower(self, _: str) -> list:
        self.state = S.WAIT_FLOWER
        self.mine = Stamp(self.clock.tick(), self.pid)
        heapq.heappush(self.heap, self.mine)
        return [Send(j, Req(sender=self.pid, ts=self.mine.ts)) for j in sorted(self.live)] + self._maybe_out()

    def _req(self, msg: Req) -> list:
        self._hear(msg)
        heapq.heappush(self.heap, Stamp(msg.ts, msg.sender))
        return [Send(msg.sender, Ack(sender=self.pid, ts=self.clock.tick()))] + self._maybe_out()

    def _heard(self, msg: Ack) -> list:
        self._hear(msg)
        return self._maybe_out()

    def _rel(self, msg: Rel) -> list:
        self._hear(msg)
        self.heap = [s for s in self.heap if s.pid != msg.sender]
        heapq.heapify(self.heap)
        return self._maybe_out()

    def _maybe_out(self) -> list:
        if self.state != S.WAIT_FLOWER or self.mine is None:
            return []
        if self.mine not in heapq.nsmallest(self.k, self.heap):
            return []
        if not IMPATIENT and any(self.last.get(j, -1) <= self.mine.ts for j in self.live):
            return []
        self.state = S.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _leave(self, _: str) -> list:
        self.heap = [s for s in self.heap if s.pid != self.pid]
        heapq.heapify(self.heap)
        self.mine = None
        out: list = [Exit("flower")]
        out += [Send(j, Rel(sender=self.pid, ts=self.clock.tick())) for j in sorted(self.live)]
        self.laid += 1
        self.on_reed += 1
        out.append(Note("egg", {"reed": self.reed, "count": self.laid}))
        if self.laid < self.eggs:
            self.state = S.ON_REED
            return out + [Schedule("request", "reed")]
        self.state = S.DEAD
        out.append(Exit(f"reed:{self.reed}"))
        heir = self.pid + self.reeds
        for j in sorted(self.live):
            ts = self.clock.tick()
            out.append(
                Send(
                    j,
                    Baton(sender=self.pid, ts=ts, eggs=self.on_reed)
                    if j == heir
                    else Gone(sender=self.pid, ts=ts),
                )
            )
        return out + [Note("death", {"eggs": self.laid})]

    # -- what the tools ask ------------------------------------------------------------------
    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == S.WAIT_REED:
            return {"BATON": [self.pid - self.reeds]}
        if self.state == S.WAIT_FLOWER and self.mine is not None:
            return {"ACKflower": sorted(j for j in self.live if self.last.get(j, -1) <= self.mine.ts)}
        return {}

    def snapshot(self) -> Any:
        if self.state in self.final_states:
            return (self.state, self.laid)
        return (
            self.state,
            self.clock.time,
            self.baton,
            self.on_reed,
            self.laid,
            self.live,
            tuple(sorted(self.heap)),
            tuple(sorted(self.last.items())),
            self.mine,
        )


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    unknown = set(options) - set(SPEC.options)
    if unknown:
        raise ConfigError(f"{NAME} takes no option(s) {', '.join(sorted(unknown))}")
    k = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    rng = random.Random(f"{NAME}:{seed}")
    bees = {
        pid: LamportBee(pid, processes, k, reeds, eggs, cocoons, rng.randrange(10 * processes))
        for pid in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": k, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(NAME, bees, {p: f"bee-{p}" for p in bees}, CODEC, {"reed:*": 1, "flower": k}, params)


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: a baton per reed, Lamport's queue (a heap of NamedTuple stamps) for the K flowers",
    make_setup,
    CODEC,
    role="bee",
    options={
        "flowers": "flowers K",
        "reeds": "reeds T",
        "eggs": "eggs per bee",
        "cocoons": "cocoons per reed",
    },
    problem="bees",
)
