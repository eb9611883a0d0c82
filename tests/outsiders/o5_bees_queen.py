"""The mason bees with a queen: bee 1 keeps the hive's book and every other bee asks it.

The queen (bee 1, a bee like the others until it dies, and the book's keeper for good) gives a
free reed that still has room for a whole bee, K flowers at a time, both in order of asking.
A reed has room for ``cocoons // eggs`` bees over the whole run; once every reed's room is
given away, the bees still waiting retire. Per reed entry: 2 messages (WANT_REED, REED) and one
LEAVE; per flower: WANT_FLOWER, FLOWER, BACK.
"""

from enum import StrEnum
from typing import Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

QUEEN = 1
# A reed given back is counted as room again (the bee that left laid its eggs elsewhere?) — no:
# its room is spent for good. RECYCLE = True forgets that.
RECYCLE = False


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


class GiveReed(Message):
    type: Literal["REED"] = "REED"
    reed: int


class NoRoom(Message):
    type: Literal["NO_ROOM"] = "NO_ROOM"


class Leave(Message):
    type: Literal["LEAVE"] = "LEAVE"
    reed: int


class WantFlower(Message):
    type: Literal["WANT_FLOWER"] = "WANT_FLOWER"


class GiveFlower(Message):
    type: Literal["FLOWER"] = "FLOWER"


class Back(Message):
    type: Literal["BACK"] = "BACK"


CODEC = Codec(WantReed, GiveReed, NoRoom, Leave, WantFlower, GiveFlower, Back)

BOOK = {
    "WANT_REED": on("queen: give a reed with room, queue, or retire the asker", "_q_want_reed"),
    "LEAVE": on("queen: the reed is free", "_q_leave"),
    "WANT_FLOWER": on("queen: give a flower or queue", "_q_want_flower"),
    "BACK": on("queen: a flower is free", "_q_back"),
}


class QueenBee(Protocol):
    final_states = frozenset({Bee.DEAD, Bee.RETIRED})
    TABLE = Table(
        Bee,
        {
            Bee.REST: {**BOOK, "request": on("ask the queen for a reed", "_ask_reed", to=Bee.WAIT_REED)},
            Bee.WAIT_REED: {
                **BOOK,
                "REED": on("take the reed", "_got_reed", to=Bee.ON_REED),
                "NO_ROOM": on("retire", "_retire", to=Bee.RETIRED),
            },
            Bee.ON_REED: {**BOOK, "request": on("ask for a flower", "_ask_flower", to=Bee.WAIT_FLOWER)},
            Bee.WAIT_FLOWER: {**BOOK, "FLOWER": on("visit it", "_got_flower", to=Bee.ON_FLOWER)},
            Bee.ON_FLOWER: {
                **BOOK,
                "exit": on("lay an egg; die after the last", "_back", to=(Bee.ON_REED, Bee.DEAD)),
            },
            Bee.DEAD: dict(BOOK),
            Bee.RETIRED: dict(BOOK),
        },
        never="an answer comes only to what I asked",
    )

    def __init__(self, pid, bees, reeds, flowers, eggs, cocoons, clock=0):
        self.pid = pid
        self.state = Bee.REST
        self.clock = LamportClock(clock)
        self.eggs = eggs
        self.laid = 0
        self.reed = None
        if pid == QUEEN:  # the book
            self.room = {r: cocoons // eggs for r in range(1, reeds + 1)}
            self.free_reeds = tuple(range(1, reeds + 1))
            self.flowers = flowers
            self.reed_line = ()
            self.flower_line = ()

    def start(self):
        return [Schedule("request", "rest")]

    def snapshot(self):
        return tuple(
            sorted(
                (k, v if not isinstance(v, dict) else tuple(sorted(v.items())))
                for k, v in vars(self).items()
                if k != "clock"
            )
        )

    def waiting_for(self):
        if self.state is Bee.WAIT_REED:
            return {"REED": [QUEEN]}
        if self.state is Bee.WAIT_FLOWER:
            return {"FLOWER": [QUEEN]}
        return {}

    def _send(self, to, cls, **fields):
        return Send(to, cls(sender=self.pid, ts=self.clock.tick(), **fields))

    # -- a bee -------------------------------------------------------------------------
    def _ask_reed(self, _action):
        self.state = Bee.WAIT_REED
        return [self._send(QUEEN, WantReed)]

    def _got_reed(self, msg):
        self.clock.receive(msg.ts)
        self.reed, self.state = msg.reed, Bee.ON_REED
        return [Enter(f"reed:{msg.reed}"), Schedule("request", "reed")]

    def _retire(self, msg):
        self.clock.receive(msg.ts)
        self.state = Bee.RETIRED
        return []

    def _ask_flower(self, _action):
        self.state = Bee.WAIT_FLOWER
        return [self._send(QUEEN, WantFlower)]

    def _got_flower(self, msg):
        self.clock.receive(msg.ts)
        self.state = Bee.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _back(self, _action):
        self.laid += 1
        out = [Exit("flower"), self._send(QUEEN, Back), Note("egg", {"reed": self.reed})]
        if self.laid < self.eggs:
            self.state = Bee.ON_REED
            return [*out, Schedule("request", "reed")]
        self.state = Bee.DEAD
        reed, self.reed = self.reed, None
        return [*out, Exit(f"reed:{reed}"), self._send(QUEEN, Leave, reed=reed)]

    # -- the queen's book ------------------------------------------------------------------
    def _q_want_reed(self, msg):
        self.clock.receive(msg.ts)
        self.reed_line = self.reed_line + (msg.sender,)
        return self._hand_reeds()

    def _q_leave(self, msg):
        self.clock.receive(msg.ts)
        self.free_reeds = tuple(sorted(self.free_reeds + (msg.reed,)))
        if RECYCLE:
            self.room[msg.reed] += 1
        return self._hand_reeds()

    def _hand_reeds(self):
        out = []
        while self.reed_line:
            usable = [r for r in self.free_reeds if self.room[r] > 0]
            if not usable:
                break
            bee, self.reed_line = self.reed_line[0], self.reed_line[1:]
            r = usable[0]
            self.room[r] -= 1
            self.free_reeds = tuple(x for x in self.free_reeds if x != r)
            out.append(self._send(bee, GiveReed, reed=r))
        if not any(self.room.values()):  # no reed will ever have room again
            out += [self._send(bee, NoRoom) for bee in self.reed_line]
            self.reed_line = ()
        return out

    def _q_want_flower(self, msg):
        self.clock.receive(msg.ts)
        self.flower_line = self.flower_line + (msg.sender,)
        return self._hand_flowers()

    def _q_back(self, msg):
        self.clock.receive(msg.ts)
        self.flowers += 1
        return self._hand_flowers()

    def _hand_flowers(self):
        out = []
        while self.flowers and self.flower_line:
            bee, self.flower_line = self.flower_line[0], self.flower_line[1:]
            self.flowers -= 1
            out.append(self._send(bee, GiveFlower))
        return out


def make_setup(bees, options, seed=0):
    reeds, flowers = options.get("reeds", 3), options.get("flowers", 3)
    eggs, cocoons = options.get("eggs", 5), options.get("cocoons", 15)
    nodes = {pid: QueenBee(pid, bees, reeds, flowers, eggs, cocoons) for pid in range(1, bees + 1)}
    return Setup(
        "o5-bees-queen",
        nodes,
        {pid: f"bee-{pid}" for pid in nodes},
        CODEC,
        {"reed:*": 1, "flower": flowers},
        {"bees": bees, "reeds": reeds, "flowers": flowers, "eggs": eggs, "cocoons": cocoons},
    )


SPEC = AlgorithmSpec(
    "o5-bees-queen",
    "bees",
    "bee 1 keeps the hive's book: reeds with room and K flowers, in order of asking",
    make_setup,
    CODEC,
    role="bee",
    options={
        "flowers": "flowers K (default 3)",
        "reeds": "reeds T (default 3)",
        "eggs": "eggs per bee (default 5)",
        "cocoons": "cocoons per reed (default 15)",
    },
    problem="bees",
)
