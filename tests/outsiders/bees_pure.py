"""Mason bees in a functional style: every decision is a pure function of an immutable view,
returning (changes, effects) as tuples; the Protocol class only applies them.

Reeds: bee i's reed is (i - 1) mod T + 1 and its turn (i - 1) div T; turns at or past
cocoons div eggs retire at once (every bee computes this alike). A bee whose turn is 0 enters
its reed at once; the others wait for VACATE from the bee before them on the reed.
Flowers: Lamport's queue for K places (a heapq of (ts, pid) per bee): a bee enters when its
request is among the K first and every live bee has sent it something later; leaving it sends
FREE to all; a dying bee sends BYE to all (it leaves every queue and is waited for no more).
"""

import heapq
import random
from enum import StrEnum
from typing import Literal, NamedTuple

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "bees-pure"
MINE_WINS_TIES = False  # the bug: each bee puts its own request first among equal timestamps


class B(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class Want(Message):
    type: Literal["WANT"] = "WANT"


class Heard(Message):
    type: Literal["HEARD"] = "HEARD"


class Free(Message):
    type: Literal["FREE"] = "FREE"


class Bye(Message):
    type: Literal["BYE"] = "BYE"


class Vacate(Message):
    type: Literal["VACATE"] = "VACATE"


CODEC = Codec(Want, Heard, Free, Bye, Vacate)


class View(NamedTuple):
    pid: int
    k: int
    live: frozenset  # the other bees still to be heard from
    queue: tuple  # heap of (key, pid)
    heard: tuple  # ((pid, latest ts), ...)
    mine: object  # my flower request's ts, or None


def key(view: View, ts: int, pid: int) -> tuple:
    if MINE_WINS_TIES:
        return (ts, 0 if pid == view.pid else pid)
    return (ts, pid)


def may_enter(view: View) -> bool:
    if view.mine is None:
        return False
    me = key(view, view.mine, view.pid)
    first = [entry for entry, _ in heapq.nsmallest(view.k, view.queue)]
    heard = dict(view.heard)
    return me in first and all(heard.get(j, -1) > view.mine for j in view.live)


def queued(view: View, ts: int, pid: int) -> tuple:
    heap = list(view.queue)
    heapq.heappush(heap, (key(view, ts, pid), pid))
    return tuple(heap)


def unqueued(view: View, pid: int) -> tuple:
    heap = [e for e in view.queue if e[1] != pid]
    heapq.heapify(heap)
    return tuple(heap)


def noted(view: View, pid: int, ts: int) -> tuple:
    heard = dict(view.heard)
    heard[pid] = max(heard.get(pid, -1), ts)
    return tuple(sorted(heard.items()))


def on_want(view: View, msg: Want, reply_ts: int) -> tuple:
    changes = {"queue": queued(view, msg.ts, msg.sender), "heard": noted(view, msg.sender, msg.ts)}
    return changes, (Send(msg.sender, Heard(sender=view.pid, ts=reply_ts)),)


def on_heard(view: View, msg: Message) -> tuple:
    return {"heard": noted(view, msg.sender, msg.ts)}, ()


def on_free(view: View, msg: Message) -> tuple:
    return {"queue": unqueued(view, msg.sender), "heard": noted(view, msg.sender, msg.ts)}, ()


def on_bye(view: View, msg: Message) -> tuple:
    return {"queue": unqueued(view, msg.sender), "live": view.live - {msg.sender}}, ()


ACK = on("queue it, HEARD", "_want")
HEAR = on("note it", "_heard")
FREE = on("unqueue", "_free")
BYE = on("unqueue, forget the bee", "_bye")
TRY = dict(to=(B.ON_FLOWER,))
OVER = ignore("gone")
COMMON = {"WANT": ACK, "HEARD": HEAR, "FREE": FREE, "BYE": BYE}


class PureBee(Protocol):
    final_states = frozenset({B.DEAD, B.RETIRED})
    TABLE = Table(
        B,
        {
            B.REST: {
                **COMMON,
                "VACATE": on("note my reed is free", "_vacated_early"),
                "request": on("reed: enter or wait", "_ask_reed", to=(B.WAIT_REED, B.ON_REED)),
            },
            B.WAIT_REED: {**COMMON, "VACATE": on("enter my reed", "_vacated", to=(B.ON_REED,))},
            B.ON_REED: {
                **COMMON,
                "request": on("WANT to all", "_ask_flower", to=(B.WAIT_FLOWER, B.ON_FLOWER)),
            },
            B.WAIT_FLOWER: {
                "WANT": on("queue it, HEARD; maybe enter", "_want", **TRY),
                "HEARD": on("note it; maybe enter", "_heard", **TRY),
                "FREE": on("unqueue; maybe enter", "_free", **TRY),
                "BYE": on("forget; maybe enter", "_bye", **TRY),
            },
            B.ON_FLOWER: {**COMMON, "exit": on("lay; maybe die", "_leave", to=(B.ON_REED, B.DEAD))},
            B.DEAD: {t: OVER for t in ("WANT", "HEARD", "FREE", "BYE", "VACATE")},
            B.RETIRED: {t: OVER for t in ("WANT", "HEARD", "FREE", "BYE", "VACATE")},
        },
        never="VACATE comes once, from the bee before me on my reed, while I wait for it",
    )

    def __init__(self, pid, n, flowers, reeds, eggs, cocoons, clock):
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.k, self.reeds, self.eggs = flowers, reeds, eggs
        per_reed = cocoons // eggs
        self.reed = (pid - 1) % reeds + 1
        self.turn = (pid - 1) // reeds
        self.placed = self.turn < per_reed
        self.live = frozenset(j for j in range(1, n + 1) if j != pid and (j - 1) // reeds < per_reed)
        self.queue, self.heard, self.mine = (), (), None
        self.vacated = self.turn == 0
        self.laid = 0
        self.state = B.REST

    def view(self):
        return View(self.pid, self.k, self.live, self.queue, self.heard, self.mine)

    def apply(self, result):
        changes, effects = result
        for name, value in changes.items():
            setattr(self, name, value)
        return list(effects)

    def start(self):
        if not self.placed:
            self.state = B.RETIRED
            return [Note("retire", {})]
        return [Schedule("request", "rest")]

    def snapshot(self):
        if self.state in self.final_states:
            return (self.state, self.laid)
        return (
            self.state,
            self.clock.time,
            self.live,
            self.queue,
            self.heard,
            self.mine,
            self.vacated,
            self.laid,
        )

    def waiting_for(self):
        if self.state == B.WAIT_REED:
            return {"VACATE": [self.pid - self.reeds]}
        if self.state == B.WAIT_FLOWER:
            heard = dict(self.heard)
            return {"HEARD": sorted(j for j in self.live if heard.get(j, -1) <= self.mine)}
        return {}

    # reeds
    def _ask_reed(self, _):
        self.state = B.WAIT_REED
        return self._sit() if self.vacated else []

    def _vacated(self, msg):
        self.clock.receive(msg.ts)
        self.vacated = True
        return self._sit()

    def _vacated_early(self, msg):
        self.clock.receive(msg.ts)
        self.vacated = True
        return []

    def _sit(self):
        self.state = B.ON_REED
        return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]

    # flowers
    def _ask_flower(self, _):
        self.state = B.WAIT_FLOWER
        self.mine = self.clock.tick()
        self.queue = queued(self.view(), self.mine, self.pid)
        sends = [Send(j, Want(sender=self.pid, ts=self.mine)) for j in sorted(self.live)]
        return sends + self._try()

    def _try(self):
        if self.state != B.WAIT_FLOWER or not may_enter(self.view()):
            return []
        self.state = B.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _want(self, msg):
        self.clock.receive(msg.ts)
        return self.apply(on_want(self.view(), msg, self.clock.tick())) + self._try()

    def _heard(self, msg):
        self.clock.receive(msg.ts)
        return self.apply(on_heard(self.view(), msg)) + self._try()

    def _free(self, msg):
        self.clock.receive(msg.ts)
        return self.apply(on_free(self.view(), msg)) + self._try()

    def _bye(self, msg):
        self.clock.receive(msg.ts)
        return self.apply(on_bye(self.view(), msg)) + self._try()

    def _leave(self, _):
        self.queue, self.mine = unqueued(self.view(), self.pid), None
        self.laid += 1
        effects = [Exit("flower"), Note("egg", {"reed": self.reed})]
        if self.laid < self.eggs:
            self.state = B.ON_REED
            ts = self.clock.tick()
            return (
                effects
                + [Send(j, Free(sender=self.pid, ts=ts)) for j in sorted(self.live)]
                + [Schedule("request", "reed")]
            )
        self.state = B.DEAD
        effects.append(Exit(f"reed:{self.reed}"))
        ts = self.clock.tick()
        nxt = self.pid + self.reeds
        for j in sorted(self.live):
            effects.append(Send(j, Bye(sender=self.pid, ts=ts)))
        if nxt in self.live:
            effects.append(Send(nxt, Vacate(sender=self.pid, ts=self.clock.tick())))
        return effects + [Note("death", {"eggs": self.laid})]


def make_setup(processes, options, seed=0):
    flowers = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    rng = random.Random(seed)
    bees = {
        p: PureBee(p, processes, flowers, reeds, eggs, cocoons, rng.randrange(5))
        for p in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(
        SPEC.name, bees, {p: f"bee-{p}" for p in bees}, CODEC, {"reed:*": 1, "flower": flowers}, params
    )


SPEC = AlgorithmSpec(
    NAME + ("-mine-wins-ties" if MINE_WINS_TIES else ""),
    "bees",
    "bees: static reed turns handed on by VACATE, Lamport's heap for the K flowers, pure functions",
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
