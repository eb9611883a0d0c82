"""Mason bees with a beekeeper, the keeper built by a factory function.

Bee 1 keeps the hive as well as being a bee. ``make_keeper(reeds, flowers, eggs, cocoons)``
builds the keeper's class for one hive — a subclass of the bee made inside the function, the
hive's numbers fixed in it, its book (``Hive``) its own — whose answers are (bee, reply) pairs.
(My first keeper was a bag of closures over one ``Hive``: ``check`` called it not deterministic,
since a copy of a process does not copy what its functions close over. A class it is.)

A bee asks for a reed (WANT_REED) and gets one with room for all its eggs (REED), or is told
there will be none (NO_ROOM: it retires); on its reed it asks for a flower (WANT_FLOWER), and the
keeper lets K bees out at a time (FLOWER), each coming back with DONE_FLOWER. A bee that laid all
its eggs dies and leaves its reed (LEAVE).

Planted bug (a module constant the tests edit):

* FORGET_OUT = True: the keeper does not count a bee it lets out to the flowers — every bee
  that asks flies.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o18-bees-keeper-factory"
KEEPER = 1
FORGET_OUT = False


class Bee(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class WantReed(Message):
    type: Literal["WANT_REED"] = "WANT_REED"


class Reed(Message):
    type: Literal["REED"] = "REED"
    reed: int


class NoRoom(Message):
    type: Literal["NO_ROOM"] = "NO_ROOM"


class WantFlower(Message):
    type: Literal["WANT_FLOWER"] = "WANT_FLOWER"


class Flower(Message):
    type: Literal["FLOWER"] = "FLOWER"


class DoneFlower(Message):
    type: Literal["DONE_FLOWER"] = "DONE_FLOWER"


class Leave(Message):
    type: Literal["LEAVE"] = "LEAVE"
    reed: int


CODEC = Codec(WantReed, Reed, NoRoom, WantFlower, Flower, DoneFlower, Leave)


@dataclass
class Hive:
    promised: list[int]  # eggs promised per reed
    sitting: dict[int, int] = field(default_factory=dict)  # reed -> bee
    reed_queue: deque[int] = field(default_factory=deque)
    out: int = 0
    flower_queue: deque[int] = field(default_factory=deque)


KEEPING = {
    k: on("keeper: ask the keeper", "_keep") for k in ("WANT_REED", "WANT_FLOWER", "DONE_FLOWER", "LEAVE")
}


class KeptBee(Protocol):
    final_states = frozenset({Bee.DEAD, Bee.RETIRED})
    TABLE = Table(
        Bee,
        {
            Bee.REST: {**KEEPING, "request": on("ask for a reed", "_ask_reed", to=[Bee.WAIT_REED])},
            Bee.WAIT_REED: {
                **KEEPING,
                "REED": on("sit on it", "_on_reed", to=[Bee.ON_REED]),
                "NO_ROOM": on("retire", "_on_no_room", to=[Bee.RETIRED]),
            },
            Bee.ON_REED: {**KEEPING, "request": on("ask for a flower", "_ask_flower", to=[Bee.WAIT_FLOWER])},
            Bee.WAIT_FLOWER: {**KEEPING, "FLOWER": on("fly out", "_on_flower", to=[Bee.ON_FLOWER])},
            Bee.ON_FLOWER: {**KEEPING, "exit": on("lay an egg", "_lay", to=[Bee.ON_REED, Bee.DEAD])},
            Bee.DEAD: KEEPING,
            Bee.RETIRED: KEEPING,
        },
        never="the keeper answers each question once",
    )

    def __init__(self, pid: int, eggs: int) -> None:
        self.pid, self.clock, self.state = pid, LamportClock(0), Bee.REST
        self.eggs = eggs
        self.reed: int | None = None
        self.laid = 0

    def start(self) -> list:
        return [Schedule("request", "rest")]

    def _ask(self, model: type[Message], **fields: Any) -> list:
        if self.pid == KEEPER:  # the keeper asks itself without a message
            return self._answer(self._question(model.model_fields["type"].default, self.pid, **fields))
        return [Send(KEEPER, model(sender=self.pid, ts=self.clock.tick(), **fields))]

    # -- the bee ------------------------------------------------------------------------------
    def _ask_reed(self, _action: str) -> list:
        self.state = Bee.WAIT_REED
        return self._ask(WantReed)

    def _sit(self, reed: int) -> list:
        self.reed, self.state = reed, Bee.ON_REED
        return [Enter(f"reed:{reed}"), Schedule("request", "reed")]

    def _on_reed(self, msg: Reed) -> list:
        self.clock.receive(msg.ts)
        return self._sit(msg.reed)

    def _retire(self) -> list:
        self.state = Bee.RETIRED
        return [Note("retire", {})]

    def _on_no_room(self, msg: NoRoom) -> list:
        self.clock.receive(msg.ts)
        return self._retire()

    def _ask_flower(self, _action: str) -> list:
        self.state = Bee.WAIT_FLOWER
        return self._ask(WantFlower)

    def _fly(self) -> list:
        self.state = Bee.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _on_flower(self, msg: Flower) -> list:
        self.clock.receive(msg.ts)
        return self._fly()

    def _lay(self, _action: str) -> list:
        assert self.reed is not None
        self.laid += 1
        out: list = [Exit("flower"), Note("egg", {"reed": self.reed})]
        if self.laid < self.eggs:
            self.state = Bee.ON_REED
            return out + self._ask(DoneFlower) + [Schedule("request", "reed")]
        self.state, reed = Bee.DEAD, self.reed
        return [*out, *self._ask(DoneFlower), Exit(f"reed:{reed}"), Note("death", {"eggs": self.laid}),
                *self._ask(Leave, reed=reed)]  # fmt: skip

    # -- the keeper (only make_keeper's class answers) ----------------------------------------
    def _question(self, kind: str, bee: int, **fields: Any) -> list:
        raise AssertionError(f"bee {self.pid} is no keeper, and was asked {kind} by bee {bee}")

    def _keep(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        fields = {"reed": msg.reed} if isinstance(msg, Leave) else {}
        return self._answer(self._question(msg.type, msg.sender, **fields))

    def _answer(self, replies: list) -> list:
        out: list = []
        for bee, (kind, reed) in replies:
            if bee == self.pid:
                out += {"REED": lambda r=reed: self._sit(r), "NO_ROOM": self._retire, "FLOWER": self._fly}[
                    kind
                ]()
            elif kind == "REED":
                out.append(Send(bee, Reed(sender=self.pid, ts=self.clock.tick(), reed=reed)))
            else:
                model = NoRoom if kind == "NO_ROOM" else Flower
                out.append(Send(bee, model(sender=self.pid, ts=self.clock.tick())))
        return out

    def waiting_for(self) -> dict[str, list[int]]:
        if self.pid == KEEPER:
            return {}
        if self.state == Bee.WAIT_REED:
            return {"REED": [KEEPER], "NO_ROOM": [KEEPER]}
        return {"FLOWER": [KEEPER]} if self.state == Bee.WAIT_FLOWER else {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.reed, self.laid)


def make_keeper(reeds: int, flowers: int, eggs: int, cocoons: int) -> type[KeptBee]:
    """The keeper's class for this hive: a bee that also answers the others' questions, the
    hive's numbers fixed in it (a fresh class per hive; its book, ``Hive``, is per instance)."""

    class Keeper(KeptBee):
        def __init__(self, pid: int, eggs: int) -> None:
            super().__init__(pid, eggs)
            self.hive = Hive([0] * reeds)

        def _question(self, kind: str, bee: int, **fields: Any) -> list:
            hive = self.hive
            if kind == "WANT_REED":
                hive.reed_queue.append(bee)
            elif kind == "WANT_FLOWER":
                hive.flower_queue.append(bee)
            elif kind == "DONE_FLOWER":
                hive.out -= 1 if not FORGET_OUT else 0
            else:
                del hive.sitting[fields["reed"]]
            return self._seat() + self._let_out()

        def _seat(self) -> list[tuple[int, Any]]:
            hive, replies = self.hive, []
            for bee in list(hive.reed_queue):
                roomy = [r for r, n in enumerate(hive.promised, 1) if n + eggs <= cocoons]
                free = [r for r in roomy if r not in hive.sitting]
                if free:
                    hive.reed_queue.remove(bee)
                    hive.sitting[free[0]] = bee
                    hive.promised[free[0] - 1] += eggs
                    replies.append((bee, ("REED", free[0])))
                elif not roomy:
                    hive.reed_queue.remove(bee)
                    replies.append((bee, ("NO_ROOM", None)))
            return replies

        def _let_out(self) -> list[tuple[int, Any]]:
            hive, replies = self.hive, []
            while hive.flower_queue and hive.out < flowers:
                if not FORGET_OUT:
                    hive.out += 1
                replies.append((hive.flower_queue.popleft(), ("FLOWER", None)))
            return replies

        def snapshot(self) -> Any:
            h = self.hive
            kept = (tuple(h.promised), tuple(sorted(h.sitting.items())), tuple(h.reed_queue), h.out,
                    tuple(h.flower_queue))  # fmt: skip
            return (*super().snapshot(), kept)

    Keeper.__qualname__ = Keeper.__name__ = f"Keeper{reeds}x{flowers}"
    return Keeper


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    flowers, reeds = int(options.get("flowers", 3)), int(options.get("reeds", 3))
    eggs, cocoons = int(options.get("eggs", 5)), int(options.get("cocoons", 15))
    keeper = make_keeper(reeds, flowers, eggs, cocoons)
    bees = {pid: (keeper if pid == KEEPER else KeptBee)(pid, eggs) for pid in range(1, processes + 1)}
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(
        NAME, bees, {pid: f"bee-{pid}" for pid in bees}, CODEC, {"reed:*": 1, "flower": flowers}, params
    )


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: bee 1 keeps the hive, its class made by a factory function",
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
