"""Mason bees with a beekeeper: bee 1 also keeps the book of reeds and flowers.

Written from the user docs only (docs/your-bees.md). A bee asks the keeper for a reed (WANT_REED)
and gets one that is free with room for all its eggs (REED), or is told there will be none
(NO_ROOM: it retires); a bee on its reed asks for a flower (WANT_FLOWER) and the keeper lets
K bees at a time out (FLOWER), each back with DONE_FLOWER. A dead bee leaves its reed (LEAVE).
The keeper's book is a ``@dataclass(slots=True)``, its replies carry ``NamedTuple`` spots, the
states are a plain ``enum.Enum`` with string values and the keeper dispatches with ``match``.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, NamedTuple

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o10-keeper-slots"
KEEPER = 1
COUNT_FLOWERS = True  # False: the keeper lets every bee out to the flowers at once


class Phase(str, Enum):  # noqa: UP042 - written as an outsider would, not as a StrEnum
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class Spot(NamedTuple):
    reed: int
    eggs_before: int


class WantReed(Message):
    type: Literal["WANT_REED"] = "WANT_REED"


class ReedGiven(Message):
    type: Literal["REED"] = "REED"
    spot: Spot


class NoRoom(Message):
    type: Literal["NO_ROOM"] = "NO_ROOM"


class WantFlower(Message):
    type: Literal["WANT_FLOWER"] = "WANT_FLOWER"


class FlowerGiven(Message):
    type: Literal["FLOWER"] = "FLOWER"


class DoneFlower(Message):
    type: Literal["DONE_FLOWER"] = "DONE_FLOWER"


class Leave(Message):
    type: Literal["LEAVE"] = "LEAVE"
    spot: Spot


CODEC = Codec(WantReed, ReedGiven, NoRoom, WantFlower, FlowerGiven, DoneFlower, Leave)


@dataclass(slots=True)
class Book:
    """The keeper's: eggs promised per reed, who sits where, who waits."""

    promised: list[int]
    sitting: dict[int, int] = field(default_factory=dict)  # reed -> bee
    reed_queue: deque[int] = field(default_factory=deque)
    out: int = 0  # bees on a flower
    flower_queue: deque[int] = field(default_factory=deque)


KEEPING = {
    kind: on("keeper: the book", "_keep") for kind in ("WANT_REED", "WANT_FLOWER", "DONE_FLOWER", "LEAVE")
}


class KeeperBee(Protocol):
    final_states = frozenset({Phase.DEAD, Phase.RETIRED})
    TABLE = Table(
        Phase,
        {
            Phase.REST: {**KEEPING, "request": on("ask for a reed", "_ask_reed", to=[Phase.WAIT_REED])},
            Phase.WAIT_REED: {
                **KEEPING,
                "REED": on("sit on it", "_on_reed", to=[Phase.ON_REED]),
                "NO_ROOM": on("retire", "_on_no_room", to=[Phase.RETIRED]),
            },
            Phase.ON_REED: {
                **KEEPING,
                "request": on("ask for a flower", "_ask_flower", to=[Phase.WAIT_FLOWER]),
            },
            Phase.WAIT_FLOWER: {**KEEPING, "FLOWER": on("fly out", "_on_flower", to=[Phase.ON_FLOWER])},
            Phase.ON_FLOWER: {**KEEPING, "exit": on("lay an egg", "_lay", to=[Phase.ON_REED, Phase.DEAD])},
            Phase.DEAD: KEEPING,
            Phase.RETIRED: KEEPING,
        },
        never="the keeper answers each question once",
    )

    def __init__(self, pid: int, reeds: int, flowers: int, eggs: int, cocoons: int, clock: int) -> None:
        self.pid, self.clock, self.state = pid, LamportClock(clock), Phase.REST
        self.flowers, self.eggs, self.cocoons = flowers, eggs, cocoons
        self.spot: Spot | None = None
        self.laid = 0
        self.book = Book([0] * reeds) if pid == KEEPER else None

    def start(self) -> list:
        return [Schedule("request", "rest")]

    def _to_keeper(self, cls: type[Message], **fields: Any) -> Send:
        return Send(KEEPER, cls(sender=self.pid, ts=self.clock.tick(), **fields))

    # -- the bee ----------------------------------------------------------------------------
    def _ask_reed(self, _action: str) -> list:
        self.state = Phase.WAIT_REED
        return [self._to_keeper(WantReed)]

    def _on_reed(self, msg: ReedGiven) -> list:
        self.clock.receive(msg.ts)
        self.spot, self.state = Spot(*msg.spot), Phase.ON_REED
        return [Enter(f"reed:{self.spot.reed}"), Schedule("request", "reed")]

    def _on_no_room(self, msg: NoRoom) -> list:
        self.clock.receive(msg.ts)
        self.state = Phase.RETIRED
        return [Note("retire", {})]

    def _ask_flower(self, _action: str) -> list:
        self.state = Phase.WAIT_FLOWER
        return [self._to_keeper(WantFlower)]

    def _on_flower(self, msg: FlowerGiven) -> list:
        self.clock.receive(msg.ts)
        self.state = Phase.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _lay(self, _action: str) -> list:
        assert self.spot is not None
        self.laid += 1
        out: list = [Exit("flower"), Note("egg", {"reed": self.spot.reed}), self._to_keeper(DoneFlower)]
        if self.laid < self.eggs:
            self.state = Phase.ON_REED
            return [*out, Schedule("request", "reed")]
        self.state = Phase.DEAD
        return [*out, Exit(f"reed:{self.spot.reed}"), Note("death", {"eggs": self.laid}),
                self._to_keeper(Leave, spot=self.spot)]  # fmt: skip

    # -- the keeper -------------------------------------------------------------------------
    def _keep(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        book = self.book
        assert book is not None, "only the keeper is asked"
        match msg:
            case WantReed(sender=bee):
                book.reed_queue.append(bee)
            case WantFlower(sender=bee):
                book.flower_queue.append(bee)
            case DoneFlower():
                book.out -= 1
            case Leave(spot=Spot(reed=reed)):
                del book.sitting[reed]
            case _:
                raise ValueError(f"the keeper cannot take {msg.type}")
        return self._seat(book) + self._let_out(book)

    def _seat(self, book: Book) -> list:
        out: list = []
        for bee in list(book.reed_queue):
            free = [
                r
                for r, n in enumerate(book.promised, 1)
                if r not in book.sitting and n + self.eggs <= self.cocoons
            ]
            roomy = [r for r, n in enumerate(book.promised, 1) if n + self.eggs <= self.cocoons]
            if free:
                reed = free[0]
                book.reed_queue.remove(bee)
                out.append(
                    Send(
                        bee,
                        ReedGiven(
                            sender=self.pid, ts=self.clock.tick(), spot=Spot(reed, book.promised[reed - 1])
                        ),
                    )
                )
                book.sitting[reed] = bee
                book.promised[reed - 1] += self.eggs
            elif not roomy:
                book.reed_queue.remove(bee)
                out.append(Send(bee, NoRoom(sender=self.pid, ts=self.clock.tick())))
        return out

    def _let_out(self, book: Book) -> list:
        out: list = []
        while book.flower_queue and (book.out < self.flowers or not COUNT_FLOWERS):
            book.out += 1
            out.append(Send(book.flower_queue.popleft(), FlowerGiven(sender=self.pid, ts=self.clock.tick())))
        return out

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == Phase.WAIT_REED:
            return {"REED": [KEEPER], "NO_ROOM": [KEEPER]}
        return {"FLOWER": [KEEPER]} if self.state == Phase.WAIT_FLOWER else {}

    def snapshot(self) -> Any:
        book = self.book
        kept = None
        if book is not None:
            sitting = tuple(sorted(book.sitting.items()))
            kept = (tuple(book.promised), sitting, tuple(book.reed_queue), book.out, tuple(book.flower_queue))
        return (self.state, self.clock.time, self.spot, self.laid, kept)


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    flowers = int(options.get("flowers", 3))
    reeds = int(options.get("reeds", 3))
    eggs = int(options.get("eggs", 5))
    cocoons = int(options.get("cocoons", 15))
    rng = random.Random(f"{NAME}:{seed}")
    bees = {
        pid: KeeperBee(pid, reeds, flowers, eggs, cocoons, rng.randrange(10 * processes))
        for pid in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(
        NAME, bees, {pid: f"bee-{pid}" for pid in bees}, CODEC, {"reed:*": 1, "flower": flowers}, params
    )


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: bee 1 keeps the book of reeds and flowers; the others ask it",
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
