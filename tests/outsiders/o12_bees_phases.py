"""Mason bees with a token per reed, written by a student whose states are an old-style
``class Phase(str, Enum)`` (the idiom before Python 3.11's ``StrEnum``: ``str()`` of a member is
``Phase.DEAD`` since 3.11, its value ``"DEAD"``) and whose tests are one more plain ``Enum`` away.

Written from the user docs only (docs/your-bees.md), after examples/solutions/bees_reed_tokens.py:
bee i lays on reed (i − 1) mod T + 1, the first bee of each reed holds its token, a dying bee hands
it to the next bee of its reed; the K flowers are Ricart–Agrawala for K places.

Planted bugs (module constants):

* STATES = "plain": the states are a plain ``Enum`` (values are ints): no name a trace can hold;
* LEAVE_EARLY = True: a bee leaves its reed before it lays its last egg there (an egg laid on a
  reed it no longer holds).
"""

from __future__ import annotations

import random
from enum import Enum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import ConfigError, Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "o12-bees-phases"
STATES = "str"
LEAVE_EARLY = False


class _Phase(str, Enum):  # noqa: UP042 - the idiom under test
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


S = _Phase if STATES == "str" else Enum("S", [p.name for p in _Phase])  # type: ignore[misc]


class Token(Message):
    """The reed's token: the receiver is the next bee of ``reed``, which holds ``eggs`` eggs."""

    type: Literal["TOKEN"] = "TOKEN"
    reed: int
    eggs: int


class Gone(Message):
    type: Literal["GONE"] = "GONE"


class ReqFlower(Message):
    type: Literal["REQflower"] = "REQflower"


class AckFlower(Message):
    type: Literal["ACKflower"] = "ACKflower"
    req_ts: int  # the timestamp of the request it answers


CODEC = Codec(Token, Gone, ReqFlower, AckFlower)

ACK = on("ACK", "_ack")
GONE = on("mark gone", "_gone")
LATE = ignore("an ACK of an older request, or none asked", "_tick")
TOKEN = on("keep the token", "_keep")
OVER = ignore("gone: nothing more to do")
AFTER = {"TOKEN": OVER, "GONE": OVER, "REQflower": OVER, "ACKflower": OVER}


class ReedTokenBee(Protocol):
    final_states = frozenset({S.DEAD, S.RETIRED})
    TABLE = Table(
        S,
        {
            S.REST: {
                "TOKEN": TOKEN,
                "GONE": GONE,
                "REQflower": ACK,
                "ACKflower": LATE,
                "request": on("enter if I hold the token", "_ask_reed", to=(S.WAIT_REED, S.ON_REED)),
            },
            S.WAIT_REED: {
                "TOKEN": on("keep the token; enter", "_on_token", to=(S.ON_REED,)),
                "GONE": GONE,
                "REQflower": ACK,
                "ACKflower": LATE,
            },
            S.ON_REED: {
                "GONE": GONE,
                "REQflower": ACK,
                "ACKflower": LATE,
                "request": on("broadcast REQflower", "_ask_flower", to=(S.WAIT_FLOWER, S.ON_FLOWER)),
            },
            S.WAIT_FLOWER: {
                "GONE": on("mark gone; try flower", "_gone_try", to=(S.ON_FLOWER,)),
                "REQflower": on("ACK if it precedes mine, else defer", "_compete"),
                "ACKflower": on("count if it echoes my request; try flower", "_on_ack", to=(S.ON_FLOWER,)),
            },
            S.ON_FLOWER: {
                "GONE": GONE,
                "REQflower": on("defer", "_defer"),
                "ACKflower": LATE,
                "exit": on("leave; lay an egg; maybe die", "_leave_flower", to=(S.ON_REED, S.DEAD)),
            },
            S.DEAD: AFTER,
            S.RETIRED: AFTER,
        },
        never="a TOKEN comes once, to the next bee of a reed, before it holds the reed",
    )

    def __init__(
        self, pid: int, n: int, flowers: int, reeds: int, eggs: int, cocoons: int, clock: int
    ) -> None:
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.flowers, self.reeds, self.eggs, self.cocoons = flowers, reeds, eggs, cocoons
        self.reed = (pid - 1) % reeds + 1
        self.per_reed = cocoons // eggs
        turn = (pid - 1) // reeds
        # every bee knows who retires: a turn at or past cocoons div eggs
        self.alive = {j for j in range(1, n + 1) if j != pid and (j - 1) // reeds < self.per_reed}
        self.state = S.REST  # every bee starts at rest (the statement's first state)
        self.placed = turn < self.per_reed
        self.token = turn == 0  # the first bee of each reed starts with its token
        self.in_reed = 0  # eggs on my reed (known from the token)
        self.laid = 0
        self.request: int | None = None  # my flower request's timestamp
        self.acks: set[int] = set()
        self.deferred: list[tuple[int, int]] = []

    def start(self) -> list:
        if not self.placed:
            self.state = S.RETIRED
            return [Note("retire", {"would_be_reed": self.reed})]
        return [Schedule("request", "rest")]

    # -- reeds -------------------------------------------------------------------------
    def _tick(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        return []

    def _keep(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.token, self.in_reed = True, msg.eggs
        self.alive.discard(msg.sender)
        return []

    def _ask_reed(self, _action: str) -> list:
        self.state = S.WAIT_REED
        return self._enter_reed() if self.token else []

    def _on_token(self, msg: Token) -> list:
        return self._keep(msg) + self._enter_reed()

    def _enter_reed(self) -> list:
        self.state = S.ON_REED
        return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]

    def _gone(self, msg: Gone) -> list:
        self.clock.receive(msg.ts)
        self.alive.discard(msg.sender)
        self.deferred = [(j, ts) for j, ts in self.deferred if j != msg.sender]
        return []

    # -- flowers (Ricart–Agrawala for K) ---------------------------------------------------
    def _ask_flower(self, _action: str) -> list:
        self.state = S.WAIT_FLOWER
        self.request, self.acks = self.clock.tick(), set()
        asks = [Send(j, ReqFlower(sender=self.pid, ts=self.request)) for j in sorted(self.alive)]
        return asks + self._try_flower()

    def _try_flower(self) -> list:
        if len(self.acks & self.alive) < len(self.alive) - (self.flowers - 1):
            return []
        self.state = S.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _ack(self, msg: ReqFlower) -> list:
        self.clock.receive(msg.ts)
        return [Send(msg.sender, AckFlower(sender=self.pid, ts=self.clock.tick(), req_ts=msg.ts))]

    def _compete(self, msg: ReqFlower) -> list:
        assert self.request is not None
        if (msg.ts, msg.sender) < (self.request, self.pid):
            return self._ack(msg)
        return self._defer(msg)

    def _defer(self, msg: ReqFlower) -> list:
        self.clock.receive(msg.ts)
        self.deferred.append((msg.sender, msg.ts))
        return []

    def _on_ack(self, msg: AckFlower) -> list:
        self.clock.receive(msg.ts)
        if msg.req_ts == self.request:
            self.acks.add(msg.sender)
        return self._try_flower()

    def _gone_try(self, msg: Gone) -> list:
        return self._gone(msg) + self._try_flower()

    def _leave_flower(self, _action: str) -> list:
        deferred, self.deferred, self.request = self.deferred, [], None
        effects: list = [Exit("flower")]
        for j, ts in deferred:
            effects.append(Send(j, AckFlower(sender=self.pid, ts=self.clock.tick(), req_ts=ts)))
        self.laid += 1
        self.in_reed += 1
        effects.append(Note("egg", {"reed": self.reed, "count": self.laid}))
        if self.laid < self.eggs:
            self.state = S.ON_REED
            return effects + [Schedule("request", "reed")]
        self.state = S.DEAD
        if LEAVE_EARLY:  # the reed let go before the egg: the egg is laid on a reed not held
            effects.insert(-1, Exit(f"reed:{self.reed}"))
        else:
            effects.append(Exit(f"reed:{self.reed}"))
        heir = self.pid + self.reeds  # the next bee of my reed, if it gets a place
        for j in sorted(self.alive):
            ts = self.clock.tick()
            if j == heir:
                effects.append(Send(j, Token(sender=self.pid, ts=ts, reed=self.reed, eggs=self.in_reed)))
            else:
                effects.append(Send(j, Gone(sender=self.pid, ts=ts)))
        return effects + [Note("death", {"eggs": self.laid})]

    # -- what the tools ask ------------------------------------------------------------------
    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == S.WAIT_REED:
            return {"TOKEN": [self.pid - self.reeds]}
        if self.state == S.WAIT_FLOWER:
            return {"ACKflower": sorted(self.alive - self.acks)}
        return {}

    def snapshot(self) -> Any:
        if self.state in self.final_states:
            return (self.state, self.laid)
        return (
            self.state,
            self.clock.time,
            self.token,
            self.in_reed,
            self.laid,
            frozenset(self.alive),
            self.request,
            frozenset(self.acks),
            tuple(self.deferred),
        )


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    unknown = set(options) - set(SPEC.options)
    if unknown:
        raise ConfigError(f"{NAME} takes no option(s) {', '.join(sorted(unknown))}")
    flowers = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    if cocoons % eggs:
        raise ConfigError(f"cocoons per reed ({cocoons}) must be a multiple of eggs per bee ({eggs})")
    rng = random.Random(f"{NAME}:{seed}")
    bees = {
        pid: ReedTokenBee(pid, processes, flowers, reeds, eggs, cocoons, rng.randrange(10 * processes))
        for pid in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    names = {pid: f"bee-{pid}" for pid in bees}
    return Setup(NAME, bees, names, CODEC, {"reed:*": 1, "flower": flowers}, params)


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: a token per reed handed on at death, Ricart–Agrawala for the K flowers",
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
