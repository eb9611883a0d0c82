"""Mason bees with a hive keeper: bee-1 also keeps the hive's books (reeds and flowers).

Every other bee asks the keeper by message; the keeper answers its own asks in place.
"""

import random
from enum import StrEnum
from typing import Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "bees-hive-keeper"
KEEPER = 1


class St(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class AskReed(Message):
    type: Literal["ASK_REED"] = "ASK_REED"


class GiveReed(Message):
    type: Literal["GIVE_REED"] = "GIVE_REED"
    reed: int


class NoRoom(Message):
    type: Literal["NO_ROOM"] = "NO_ROOM"


class AskFlower(Message):
    type: Literal["ASK_FLOWER"] = "ASK_FLOWER"


class GiveFlower(Message):
    type: Literal["GIVE_FLOWER"] = "GIVE_FLOWER"


class DoneFlower(Message):
    type: Literal["DONE_FLOWER"] = "DONE_FLOWER"


class LeaveReed(Message):
    type: Literal["LEAVE_REED"] = "LEAVE_REED"
    reed: int


CODEC = Codec(AskReed, GiveReed, NoRoom, AskFlower, GiveFlower, DoneFlower, LeaveReed)


def free_reed(books):
    for r in sorted(books["holder"]):
        if books["holder"][r] is None and books["placed"][r] < books["slots"]:
            return r
    return None


def any_room(books):
    return any(n < books["slots"] for n in books["placed"].values())


def new_books(reeds, flowers, slots):
    return {
        "holder": {r: None for r in range(1, reeds + 1)},
        "placed": {r: 0 for r in range(1, reeds + 1)},
        "slots": slots,
        "flowers": flowers,
        "reed_q": [],
        "flower_q": [],
    }


KEEPER_CELLS = {
    "ASK_REED": on("keeper: place or queue", "keep_ask_reed"),
    "ASK_FLOWER": on("keeper: grant or queue", "keep_ask_flower"),
    "DONE_FLOWER": on("keeper: free a flower", "keep_done_flower"),
    "LEAVE_REED": on("keeper: free a reed", "keep_leave_reed"),
}


def row(extra):
    cells = dict(KEEPER_CELLS)
    cells.update(extra)
    return cells


class HiveBee(Protocol):
    final_states = frozenset({St.DEAD, St.RETIRED})
    TABLE = Table(
        St,
        {
            St.REST: row(
                {
                    "request": on(
                        "ask the keeper for a reed", "act_ask_reed", to=(St.WAIT_REED, St.ON_REED, St.RETIRED)
                    )
                }
            ),
            St.WAIT_REED: row(
                {
                    "GIVE_REED": on("settle on the reed", "got_reed", to=(St.ON_REED,)),
                    "NO_ROOM": on("retire", "got_no_room", to=(St.RETIRED,)),
                }
            ),
            St.ON_REED: row(
                {"request": on("ask for a flower", "act_ask_flower", to=(St.WAIT_FLOWER, St.ON_FLOWER))}
            ),
            St.WAIT_FLOWER: row({"GIVE_FLOWER": on("visit", "got_flower", to=(St.ON_FLOWER,))}),
            St.ON_FLOWER: row(
                {"exit": on("leave the flower; lay", "act_leave_flower", to=(St.ON_REED, St.DEAD))}
            ),
            St.DEAD: row({}),
            St.RETIRED: row({}),
        },
        never="only the keeper is asked; answers come to the bee that asked",
    )

    def __init__(self, pid, n, flowers, reeds, eggs, cocoons, clock):
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.eggs, self.laid, self.reed = eggs, 0, None
        self.state = St.REST
        self.books = new_books(reeds, flowers, cocoons // eggs) if pid == KEEPER else None

    def start(self):
        return [Schedule("request", "rest")]

    def msg(self, cls, **kw):
        return cls(sender=self.pid, ts=self.clock.tick(), **kw)

    def to_keeper(self, cls, **kw):
        if self.pid == KEEPER:
            return getattr(self, "keep_" + cls.__name__.lower())(None, asker=self.pid, **kw)
        return [Send(KEEPER, self.msg(cls, **kw))]

    def answer(self, pid, cls, **kw):
        if pid == self.pid:
            return getattr(self, "got_" + cls.__name__.lower())(None, **kw)
        return [Send(pid, self.msg(cls, **kw))]

    # -- the bee ------------------------------------------------------------------------
    def act_ask_reed(self, _action):
        self.state = St.WAIT_REED
        return self.to_keeper(AskReed)

    def got_givereed(self, m, reed=None):
        self.reed = m.reed if m is not None else reed
        self.state = St.ON_REED
        return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]

    got_reed = got_givereed

    def got_noroom(self, _m):
        self.state = St.RETIRED
        return [Note("retire", {})]

    got_no_room = got_noroom

    def act_ask_flower(self, _action):
        self.state = St.WAIT_FLOWER
        return self.to_keeper(AskFlower)

    def got_giveflower(self, _m):
        self.state = St.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    got_flower = got_giveflower

    def act_leave_flower(self, _action):
        self.laid += 1
        fx = [Exit("flower"), Note("egg", {"reed": self.reed, "count": self.laid})]
        fx += self.to_keeper(DoneFlower)
        if self.laid < self.eggs:
            self.state = St.ON_REED
            return fx + [Schedule("request", "reed")]
        self.state = St.DEAD
        fx += [Exit(f"reed:{self.reed}"), Note("death", {"eggs": self.laid})]
        return fx + self.to_keeper(LeaveReed, reed=self.reed)

    # -- the keeper -----------------------------------------------------------------------
    def keep_askreed(self, m, asker=None):
        b, who = self.books, (m.sender if m is not None else asker)
        r = free_reed(b)
        if r is not None:
            b["holder"][r] = who
            b["placed"][r] += 1
            return self.answer(who, GiveReed, reed=r)
        if any_room(b):
            b["reed_q"].append(who)
            return []
        return self.answer(who, NoRoom)

    keep_ask_reed = keep_askreed

    def keep_askflower(self, m, asker=None):
        b, who = self.books, (m.sender if m is not None else asker)
        if b["flowers"] > 0:
            b["flowers"] -= 1
            return self.answer(who, GiveFlower)
        b["flower_q"].append(who)
        return []

    keep_ask_flower = keep_askflower

    def keep_doneflower(self, m, asker=None):
        b = self.books
        if b["flower_q"]:
            return self.answer(b["flower_q"].pop(0), GiveFlower)
        b["flowers"] += 1
        return []

    keep_done_flower = keep_doneflower

    def keep_leavereed(self, m, asker=None, reed=None):
        b = self.books
        r = m.reed if m is not None else reed
        b["holder"][r] = None
        fx = []
        while b["reed_q"] and free_reed(b) is not None:
            fx += self.keep_askreed(None, asker=b["reed_q"].pop(0))
        if not any_room(b):
            while b["reed_q"]:
                fx += self.answer(b["reed_q"].pop(0), NoRoom)
        return fx

    keep_leave_reed = keep_leavereed

    def waiting_for(self):
        if self.state == St.WAIT_REED:
            return {"GIVE_REED": [KEEPER]}
        if self.state == St.WAIT_FLOWER:
            return {"GIVE_FLOWER": [KEEPER]}
        return {}

    def snapshot(self):
        books = None
        if self.books is not None:
            b = self.books
            books = (
                tuple(sorted(b["holder"].items())),
                tuple(sorted(b["placed"].items())),
                b["flowers"],
                tuple(b["reed_q"]),
                tuple(b["flower_q"]),
            )
        return (self.state, self.clock.time, self.laid, self.reed, books)


def make_setup(processes, options, seed=0):
    flowers = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    rng = random.Random(seed)
    bees = {
        p: HiveBee(p, processes, flowers, reeds, eggs, cocoons, rng.randrange(5))
        for p in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(NAME, bees, {p: f"bee-{p}" for p in bees}, CODEC, {"reed:*": 1, "flower": flowers}, params)


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: bee-1 keeps the hive's books",
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
