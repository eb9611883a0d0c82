"""Mason bees, written by someone who keeps a bee's whole state in one ``types.SimpleNamespace``
(``bee.s``: its phase too — ``state`` is a property over ``s.phase``) and makes every choice the
problem asks for in a small free function of plain values (``reed_of``, ``gets_a_place``,
``heir_of``, ``comes_first``, ``may_take_a_flower``), so the methods only move data about.

Written from docs/your-bees.md only. Reeds: bee i lays on reed (i − 1) mod T + 1; the first bee
of a reed holds its token; a dying bee hands the token (and the reed's egg count) to the next bee
of its reed and tells the others it is GONE; a bee whose turn is at or past cocoons div eggs never
gets a place and retires at once. Flowers: Ricart–Agrawala for K: a bee takes a flower with an
answer from all but K − 1 of the bees still alive.

Planted bug (module constant, edited by the tests):

* KEEP_REED = True: a dying bee hands on the token but never leaves its reed (no Exit): the next
  bee of the reed enters a reed still held.
"""

from __future__ import annotations

import random
from enum import StrEnum
from types import SimpleNamespace
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import ConfigError, Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "o14-bees-namespace"
KEEP_REED = False


class Phase(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class Baton(Message):
    type: Literal["BATON"] = "BATON"
    reed: int
    eggs: int


class Bye(Message):
    type: Literal["BYE"] = "BYE"


class MayI(Message):
    type: Literal["MAYI"] = "MAYI"


class Yes(Message):
    type: Literal["YES"] = "YES"
    asked_at: int


CODEC = Codec(Baton, Bye, MayI, Yes)


# -- the problem's choices, as plain functions -----------------------------------------------------
def reed_of(pid: int, reeds: int) -> int:
    return (pid - 1) % reeds + 1


def turn_of(pid: int, reeds: int) -> int:
    return (pid - 1) // reeds


def gets_a_place(pid: int, reeds: int, cocoons: int, eggs: int) -> bool:
    return turn_of(pid, reeds) < cocoons // eggs


def heir_of(pid: int, reeds: int) -> int:
    return pid + reeds


def comes_first(theirs: tuple[int, int], mine: tuple[int, int]) -> bool:
    return theirs < mine


def may_take_a_flower(yes: set[int], alive: set[int], flowers: int) -> bool:
    return len(yes & alive) >= len(alive) - (flowers - 1)


def frozen(value: Any) -> Any:
    if isinstance(value, set):
        return frozenset(value)
    if isinstance(value, list):
        return tuple(value)
    return value


# -- the bee -------------------------------------------------------------------------------------
TICK = ignore("a YES to a request that is over, or none", "_tick")
AFTER = {kind: ignore("gone: nothing more to do") for kind in ("BATON", "BYE", "MAYI", "YES")}


class NamespaceBee(Protocol):
    final_states = frozenset({Phase.DEAD, Phase.RETIRED})
    TABLE = Table(
        Phase,
        {
            Phase.REST: {
                "BATON": on("keep the baton", "_baton"),
                "BYE": on("forget the bee", "_bye"),
                "MAYI": on("yes", "_yes"),
                "YES": TICK,
                "request": on("to my reed", "_want_reed", to=(Phase.WAIT_REED, Phase.ON_REED)),
            },
            Phase.WAIT_REED: {
                "BATON": on("keep the baton; onto the reed", "_baton", to=(Phase.ON_REED,)),
                "BYE": on("forget the bee", "_bye"),
                "MAYI": on("yes", "_yes"),
                "YES": TICK,
            },
            Phase.ON_REED: {
                "BYE": on("forget the bee", "_bye"),
                "MAYI": on("yes", "_yes"),
                "YES": TICK,
                "request": on("ask everyone", "_want_flower", to=(Phase.WAIT_FLOWER, Phase.ON_FLOWER)),
            },
            Phase.WAIT_FLOWER: {
                "BYE": on("forget the bee; maybe fly", "_bye", to=(Phase.ON_FLOWER,)),
                "MAYI": on("yes if it came first, else later", "_yes_or_later"),
                "YES": on("count it; maybe fly", "_count", to=(Phase.ON_FLOWER,)),
            },
            Phase.ON_FLOWER: {
                "BYE": on("forget the bee", "_bye"),
                "MAYI": on("later", "_later"),
                "YES": TICK,
                "exit": on("egg; maybe die", "_egg", to=(Phase.ON_REED, Phase.DEAD)),
            },
            Phase.DEAD: AFTER,
            Phase.RETIRED: AFTER,
        },
        never="a BATON comes once, to the next bee of a reed, before it is on the reed",
    )

    def __init__(self, pid: int, n: int, cfg: dict[str, int], clock: int) -> None:
        self.pid, self.clock, self.cfg = pid, LamportClock(clock), cfg
        reeds, cocoons, eggs = cfg["reeds"], cfg["cocoons"], cfg["eggs"]
        self.s = SimpleNamespace(
            phase=Phase.REST,
            reed=reed_of(pid, reeds),
            baton=turn_of(pid, reeds) == 0,
            placed=gets_a_place(pid, reeds, cocoons, eggs),
            in_reed=0,
            laid=0,
            alive={j for j in range(1, n + 1) if j != pid and gets_a_place(j, reeds, cocoons, eggs)},
            asked_at=None,
            yes=set(),
            later=[],
        )

    @property
    def state(self) -> Phase:
        return self.s.phase

    @state.setter
    def state(self, phase: Phase) -> None:
        self.s.phase = phase

    def start(self) -> list:
        if not self.s.placed:
            self.state = Phase.RETIRED
            return [Note("retire", {"would_be_reed": self.s.reed})]
        return [Schedule("request", "rest")]

    def _tick(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        return []

    def _onto_reed(self) -> list:
        self.state = Phase.ON_REED
        return [Enter(f"reed:{self.s.reed}"), Schedule("request", "reed")]

    def _baton(self, msg: Baton) -> list:
        self.clock.receive(msg.ts)
        self.s.baton, self.s.in_reed = True, msg.eggs
        self.s.alive.discard(msg.sender)
        return self._onto_reed() if self.state == Phase.WAIT_REED else []

    def _want_reed(self, _action: str) -> list:
        self.state = Phase.WAIT_REED
        return self._onto_reed() if self.s.baton else []

    def _bye(self, msg: Bye) -> list:
        self.clock.receive(msg.ts)
        self.s.alive.discard(msg.sender)
        self.s.later = [(j, ts) for j, ts in self.s.later if j != msg.sender]
        return self._fly() if self.state == Phase.WAIT_FLOWER else []

    def _want_flower(self, _action: str) -> list:
        self.state = Phase.WAIT_FLOWER
        self.s.asked_at, self.s.yes = self.clock.tick(), set()
        asks = [Send(j, MayI(sender=self.pid, ts=self.s.asked_at)) for j in sorted(self.s.alive)]
        return asks + self._fly()

    def _fly(self) -> list:
        if not may_take_a_flower(self.s.yes, self.s.alive, self.cfg["flowers"]):
            return []
        self.state = Phase.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _yes(self, msg: MayI) -> list:
        self.clock.receive(msg.ts)
        return [Send(msg.sender, Yes(sender=self.pid, ts=self.clock.tick(), asked_at=msg.ts))]

    def _later(self, msg: MayI) -> list:
        self.clock.receive(msg.ts)
        self.s.later.append((msg.sender, msg.ts))
        return []

    def _yes_or_later(self, msg: MayI) -> list:
        if comes_first((msg.ts, msg.sender), (self.s.asked_at, self.pid)):
            return self._yes(msg)
        return self._later(msg)

    def _count(self, msg: Yes) -> list:
        self.clock.receive(msg.ts)
        if msg.asked_at == self.s.asked_at:
            self.s.yes.add(msg.sender)
        return self._fly()

    def _egg(self, _action: str) -> list:
        s = self.s
        out: list = [Exit("flower")]
        for j, ts in s.later:
            out.append(Send(j, Yes(sender=self.pid, ts=self.clock.tick(), asked_at=ts)))
        s.later, s.asked_at = [], None
        s.laid += 1
        s.in_reed += 1
        out.append(Note("egg", {"reed": s.reed, "count": s.laid}))
        if s.laid < self.cfg["eggs"]:
            self.state = Phase.ON_REED
            return out + [Schedule("request", "reed")]
        self.state = Phase.DEAD
        if not KEEP_REED:
            out.append(Exit(f"reed:{s.reed}"))
        heir = heir_of(self.pid, self.cfg["reeds"])
        for j in sorted(s.alive):
            ts = self.clock.tick()
            if j == heir:
                out.append(Send(j, Baton(sender=self.pid, ts=ts, reed=s.reed, eggs=s.in_reed)))
            else:
                out.append(Send(j, Bye(sender=self.pid, ts=ts)))
        return out + [Note("death", {"eggs": s.laid})]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == Phase.WAIT_REED:
            return {"BATON": [self.pid - self.cfg["reeds"]]}
        if self.state == Phase.WAIT_FLOWER:
            return {"YES": sorted(self.s.alive - self.s.yes)}
        return {}

    def snapshot(self) -> Any:
        return (self.clock.time, *(frozen(v) for _, v in sorted(vars(self.s).items())))


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    unknown = set(options) - set(SPEC.options)
    if unknown:
        raise ConfigError(f"{NAME} takes no option(s) {', '.join(sorted(unknown))}")
    cfg = {
        "flowers": positive_int(options, "flowers", default=3),
        "reeds": positive_int(options, "reeds", default=3),
        "eggs": positive_int(options, "eggs", default=5),
        "cocoons": positive_int(options, "cocoons", default=15),
    }
    if cfg["cocoons"] % cfg["eggs"]:
        raise ConfigError(f"cocoons per reed ({cfg['cocoons']}) must be a multiple of eggs ({cfg['eggs']})")
    rng = random.Random(f"{NAME}:{seed}")
    bees = {
        pid: NamespaceBee(pid, processes, dict(cfg), rng.randrange(10 * processes))
        for pid in range(1, processes + 1)
    }
    names = {pid: f"bee-{pid}" for pid in bees}
    return Setup(
        NAME, bees, names, CODEC, {"reed:*": 1, "flower": cfg["flowers"]}, {"bees": processes, **cfg}
    )


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: each bee's state one SimpleNamespace, the problem's choices small free functions",
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
