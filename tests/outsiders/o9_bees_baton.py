"""Mason bees with one baton: the bee holding it lives its whole life, then hands it on.

Written from the user docs only. The baton carries the eggs on every reed and who is finished.
A bee that asks for a reed waits for the baton, takes the first reed with room, visits a flower
and lays each egg, then dies and passes the baton to the next bee not finished; a bee that finds
no reed with room retires. Slow (one bee at a time) but simple. A bee numbers its eggs from an
iterator it keeps (``next(self.numbers)``).
"""

from __future__ import annotations

import random
from enum import StrEnum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o9-baton"
NUMBERS = "iter"  # "generator": number the eggs from a generator function instead
RUSH = False  # True: hand the baton on as soon as I sit on my reed (without marking it taken)


class S(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class Baton(Message):
    type: Literal["BATON"] = "BATON"
    eggs: tuple[int, ...]  # eggs on reed 1..T
    finished: tuple[int, ...]  # bees dead or retired


CODEC = Codec(Baton)
KEEP = on("keep the baton", "_keep")
DONE = {"BATON": on("pass it on", "_pass_on")}


def count_up(upto: int):
    yield from range(1, upto + 1)


class BatonBee(Protocol):
    final_states = frozenset({S.DEAD, S.RETIRED})
    TABLE = Table(
        S,
        {
            S.REST: {
                "BATON": KEEP,
                "request": on("ask for a reed", "_ask", to=(S.WAIT_REED, S.ON_REED, S.RETIRED)),
            },
            S.WAIT_REED: {"BATON": on("take a reed or retire", "_on_baton", to=(S.ON_REED, S.RETIRED))},
            S.ON_REED: {
                "BATON": KEEP,
                "request": on("go to a flower", "_to_flower", to=(S.ON_FLOWER,)),
            },
            S.ON_FLOWER: {"BATON": KEEP, "exit": on("lay an egg", "_lay", to=(S.ON_REED, S.DEAD))},
            S.DEAD: DONE,
            S.RETIRED: DONE,
        },
        never="one baton, and a bee waits for it only before its reed",
    )

    def __init__(
        self, pid: int, n: int, reeds: int, eggs: int, cocoons: int, clock: int, baton: bool
    ) -> None:
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.reeds, self.eggs, self.cocoons = reeds, eggs, cocoons
        self.state = S.REST
        self.baton: tuple[tuple[int, ...], frozenset[int]] | None = (
            ((0,) * reeds, frozenset()) if baton else None
        )
        self.reed: int | None = None
        self.laid = 0
        self.numbers = count_up(eggs) if NUMBERS == "generator" else iter(range(1, eggs + 1))

    def start(self) -> list:
        return [Schedule("request", "rest")]

    def _keep(self, msg: Baton) -> list:
        self.clock.receive(msg.ts)
        self.baton = (msg.eggs, frozenset(msg.finished))
        return []

    def _ask(self, _action: str) -> list:
        self.state = S.WAIT_REED
        return self._sit() if self.baton is not None else []

    def _on_baton(self, msg: Baton) -> list:
        return self._keep(msg) + self._sit()

    def _sit(self) -> list:
        assert self.baton is not None
        eggs, finished = self.baton
        room = [r for r in range(1, self.reeds + 1) if eggs[r - 1] + self.eggs <= self.cocoons]
        if not room:
            self.state = S.RETIRED
            self.baton = (eggs, finished | {self.pid})
            return [Note("retire", {})] + self._hand_on()
        self.reed = room[0]
        self.state = S.ON_REED
        out: list = [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]
        return out + self._hand_on() if RUSH else out

    def _to_flower(self, _action: str) -> list:
        self.state = S.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _lay(self, _action: str) -> list:
        number = next(self.numbers)
        self.laid += 1
        out: list = [Exit("flower"), Note("egg", {"reed": self.reed, "count": number})]
        if self.laid < self.eggs:
            self.state = S.ON_REED
            return out + [Schedule("request", "reed")]
        self.state = S.DEAD
        out += [Exit(f"reed:{self.reed}"), Note("death", {"eggs": self.laid})]
        if self.baton is None:  # handed on early (RUSH)
            return out
        eggs, finished = self.baton
        filled = tuple(e + self.laid if r == self.reed else e for r, e in enumerate(eggs, 1))
        self.baton = (filled, finished | {self.pid})
        return out + self._hand_on()

    def _hand_on(self) -> list:
        assert self.baton is not None
        eggs, finished = self.baton
        later = [j for j in range(self.pid + 1, self.n + 1) if j not in finished]
        earlier = [j for j in range(1, self.pid) if j not in finished]
        to = (later + earlier)[:1]
        if not to:
            return []  # everyone is finished: the baton stays here
        self.baton = None
        msg = Baton(sender=self.pid, ts=self.clock.tick(), eggs=eggs, finished=tuple(sorted(finished)))
        return [Send(to[0], msg)]

    def _pass_on(self, msg: Baton) -> list:
        return self._keep(msg) + self._hand_on()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"BATON": []} if self.state == S.WAIT_REED else {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.baton, self.reed, self.laid)


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    flowers = int(options.get("flowers", 3))
    reeds = int(options.get("reeds", 3))
    eggs = int(options.get("eggs", 5))
    cocoons = int(options.get("cocoons", 15))
    rng = random.Random(f"{NAME}:{seed}")
    bees = {
        pid: BatonBee(pid, processes, reeds, eggs, cocoons, rng.randrange(10 * processes), pid == 1)
        for pid in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(
        NAME, bees, {pid: f"bee-{pid}" for pid in bees}, CODEC, {"reed:*": 1, "flower": flowers}, params
    )


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: one baton; its holder lives its whole life, then hands it on",
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
