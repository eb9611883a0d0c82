"""Mason bees: reeds by turn, flowers by Lamport's queue for K — one dataclass bee (slots).

Written from the user docs only. Bee i's reed is ``(i − 1) mod T + 1`` and its turn there
``(i − 1) div T``; a turn at or past ``cocoons div eggs`` retires at once. A bee takes its reed
once the bee before it on that reed (pid − T) has said RELEASEreed (or at once, turn 0).
Flowers, Lamport's queue for K places: REQflower to every live bee, each queues it and answers
ACKflower; a bee takes a flower when its request is among the first K of its queue and every
live bee has sent it something stamped later than its request; RELflower on leaving.
State per peer is kept in a dict keyed by pid.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "o8-bees-lamport"
AHEAD = 0  # places counted ahead of me beyond K − 1: 1 is the off-by-one


class S(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class ReqFlower(Message):
    type: Literal["REQflower"] = "REQflower"


class AckFlower(Message):
    type: Literal["ACKflower"] = "ACKflower"


class RelFlower(Message):
    type: Literal["RELflower"] = "RELflower"


class ReleaseReed(Message):
    type: Literal["RELEASEreed"] = "RELEASEreed"
    reed: int


CODEC = Codec(ReqFlower, AckFlower, RelFlower, ReleaseReed)
HEAR = on("queue/unqueue, note the stamp; maybe take the flower", "_hear", to=(S.ON_FLOWER, S.ON_REED))
OVER = ignore("gone")
ROW = {"REQflower": HEAR, "ACKflower": HEAR, "RELflower": HEAR, "RELEASEreed": HEAR}


@dataclass(slots=True, eq=False)
class LamportBee(Protocol):
    pid: int
    n: int
    flowers: int
    reeds: int
    eggs: int
    cocoons: int
    clock: LamportClock
    state: S = S.REST
    laid: int = 0
    mine: int | None = None  # my flower request's stamp
    heard: dict[int, int] = field(default_factory=dict)  # pid → the last stamp heard from it
    asks: dict[int, int] = field(default_factory=dict)  # pid → its queued flower request's stamp
    gone: set[int] = field(default_factory=set)

    final_states = frozenset({S.DEAD, S.RETIRED})
    TABLE = Table(
        S,
        {
            S.REST: {**ROW, "request": on("reed free: take it", "_ask_reed", to=(S.WAIT_REED, S.ON_REED))},
            S.WAIT_REED: ROW,
            S.ON_REED: {
                **ROW,
                "request": on("REQflower to all", "_ask_flower", to=(S.WAIT_FLOWER, S.ON_FLOWER)),
            },
            S.WAIT_FLOWER: ROW,
            S.ON_FLOWER: {**ROW, "exit": on("RELflower; egg; maybe die", "_leave", to=(S.ON_REED, S.DEAD))},
            S.DEAD: {t: OVER for t in ROW},
            S.RETIRED: {t: OVER for t in ROW},
        },
    )

    @property
    def reed(self) -> int:
        return (self.pid - 1) % self.reeds + 1

    @property
    def turn(self) -> int:
        return (self.pid - 1) // self.reeds

    def live(self) -> list[int]:
        per = self.cocoons // self.eggs
        return [
            j
            for j in range(1, self.n + 1)
            if j != self.pid and j not in self.gone and (j - 1) // self.reeds < per
        ]

    def start(self) -> list:
        if self.turn >= self.cocoons // self.eggs:
            self.state = S.RETIRED
            return [Note("retire", {"would_be_reed": self.reed})]
        return [Schedule("request", "rest")]

    def _ask_reed(self, _a: str) -> list:
        self.state = S.WAIT_REED
        return self._try()

    def _ask_flower(self, _a: str) -> list:
        self.state = S.WAIT_FLOWER
        self.mine = self.clock.tick()
        out: list = [Send(j, ReqFlower(sender=self.pid, ts=self.mine)) for j in self.live()]
        return out + self._try()

    def _hear(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        self.heard[msg.sender] = msg.ts
        out: list = []
        match msg:
            case ReqFlower():
                self.asks[msg.sender] = msg.ts
                out.append(Send(msg.sender, AckFlower(sender=self.pid, ts=self.clock.tick())))
            case RelFlower():
                self.asks.pop(msg.sender, None)
            case ReleaseReed():
                self.gone.add(msg.sender)
                self.asks.pop(msg.sender, None)
            case AckFlower():
                pass
        return out + self._try()

    def _try(self) -> list:
        if self.state is S.WAIT_REED:
            before = self.pid - self.reeds
            if self.turn == 0 or before in self.gone:
                self.state = S.ON_REED
                return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]
        if self.state is S.WAIT_FLOWER:
            assert self.mine is not None
            me = (self.mine, self.pid)
            ahead = sum(1 for j, ts in self.asks.items() if j not in self.gone and (ts, j) < me)
            heard = all(self.heard.get(j, -1) > self.mine for j in self.live())
            if heard and ahead < self.flowers + AHEAD:
                self.state = S.ON_FLOWER
                return [Enter("flower"), Schedule("exit", "flower")]
        return []

    def _leave(self, _a: str) -> list:
        self.mine = None
        out: list = [Exit("flower")]
        out += [Send(j, RelFlower(sender=self.pid, ts=self.clock.tick())) for j in self.live()]
        self.laid += 1
        out.append(Note("egg", {"reed": self.reed, "count": self.laid}))
        if self.laid < self.eggs:
            self.state = S.ON_REED
            return out + [Schedule("request", "reed")]
        self.state = S.DEAD
        out.append(Exit(f"reed:{self.reed}"))
        out += [
            Send(j, ReleaseReed(sender=self.pid, ts=self.clock.tick(), reed=self.reed)) for j in self.live()
        ]
        return out + [Note("death", {"eggs": self.laid})]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is S.WAIT_REED:
            return {"RELEASEreed": [self.pid - self.reeds]}
        if self.state is S.WAIT_FLOWER:
            return {"ACKflower": [j for j in self.live() if self.heard.get(j, -1) <= (self.mine or 0)]}
        return {}

    def snapshot(self) -> Any:
        if self.state in self.final_states:
            return (self.state, self.laid)
        return (
            self.state,
            self.clock.time,
            self.laid,
            self.mine,
            tuple(sorted(self.heard.items())),
            tuple(sorted(self.asks.items())),
            frozenset(self.gone),
        )


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    flowers = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    rng = random.Random(f"{NAME}:{seed}")
    bees = {
        pid: LamportBee(
            pid, processes, flowers, reeds, eggs, cocoons, LamportClock(rng.randrange(10 * processes))
        )
        for pid in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(NAME, bees, {p: f"bee-{p}" for p in bees}, CODEC, {"reed:*": 1, "flower": flowers}, params)


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: reeds by turn, Lamport's queue for the K flowers, a slotted dataclass bee",
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
