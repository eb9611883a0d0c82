"""Mason bees, every input taken by one ``functools.singledispatchmethod`` on its class.

Written from the user docs only (docs/your-bees.md): the reed tokens and Ricart–Agrawala for K
flowers, as a bee keeps them in a frozen dataclass replaced, never changed; but where a ``match``
would look at (state, input), ``_on`` dispatches on the input's class — one registered function
per message model and one for ``str`` (the local actions ``request`` and ``exit``) — and each
looks at the state itself. EAGER = True is its bug: a bee takes a flower one ACK too early.

Reeds: bee i lays on reed ``(i − 1) mod T + 1``; the first bee of each reed holds its token, a
bee that dies hands it (with the reed's eggs) to the next bee of its reed and says GONE to the
others; a bee whose turn is at or past ``cocoons div eggs`` retires at once.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from enum import StrEnum
from functools import singledispatchmethod
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import ConfigError, Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "o11-bees-dispatch"
EAGER = False


class S(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


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


@dataclass(frozen=True, slots=True)
class Flowers:
    """My flower request: its timestamp, who answered it, whose requests wait for my exit."""

    request: int | None = None
    acks: frozenset[int] = frozenset()
    deferred: tuple[tuple[int, int], ...] = ()


ACK = on("ACK", "_on")
GONE = on("mark gone", "_on")
LATE = ignore("an ACK of an older request, or none asked", "_on")
TOKEN = on("keep the token", "_on")
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
                "request": on("enter if I hold the token", "_on", to=(S.WAIT_REED, S.ON_REED)),
            },
            S.WAIT_REED: {
                "TOKEN": on("keep the token; enter", "_on", to=(S.ON_REED,)),
                "GONE": GONE,
                "REQflower": ACK,
                "ACKflower": LATE,
            },
            S.ON_REED: {
                "GONE": GONE,
                "REQflower": ACK,
                "ACKflower": LATE,
                "request": on("broadcast REQflower", "_on", to=(S.WAIT_FLOWER, S.ON_FLOWER)),
            },
            S.WAIT_FLOWER: {
                "GONE": on("mark gone; try flower", "_on", to=(S.ON_FLOWER,)),
                "REQflower": on("ACK if it precedes mine, else defer", "_on"),
                "ACKflower": on("count if it echoes my request; try flower", "_on", to=(S.ON_FLOWER,)),
            },
            S.ON_FLOWER: {
                "GONE": GONE,
                "REQflower": on("defer", "_on"),
                "ACKflower": LATE,
                "exit": on("leave; lay an egg; maybe die", "_on", to=(S.ON_REED, S.DEAD)),
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
        self.fl = Flowers()

    def start(self) -> list:
        if not self.placed:
            self.state = S.RETIRED
            return [Note("retire", {"would_be_reed": self.reed})]
        return [Schedule("request", "rest")]

    # Every input goes to ``_on``, one function per kind of input (functools.singledispatchmethod
    # on the input's class: a message model, or ``str`` for a local action); each looks at the
    # state itself.
    @singledispatchmethod
    def _on(self, got: object) -> list:
        raise TypeError(f"no handler for {type(got).__name__} in {self.state}")

    @_on.register
    def _(self, got: ReqFlower) -> list:
        if self.state == S.ON_FLOWER:
            return self._defer(got)
        if self.state == S.WAIT_FLOWER and (self.fl.request, self.pid) < (got.ts, got.sender):
            return self._defer(got)
        return self._ack(got)

    @_on.register
    def _(self, got: AckFlower) -> list:
        return self._on_ack(got) if self.state == S.WAIT_FLOWER else self._tick(got)

    @_on.register
    def _(self, got: Gone) -> list:
        return self._gone(got) + (self._try_flower() if self.state == S.WAIT_FLOWER else [])

    @_on.register
    def _(self, got: Token) -> list:
        return self._keep(got) + (self._enter_reed() if self.state == S.WAIT_REED else [])

    @_on.register
    def _(self, got: str) -> list:
        actions = {
            (S.REST, "request"): self._ask_reed,
            (S.ON_REED, "request"): self._ask_flower,
            (S.ON_FLOWER, "exit"): self._leave_flower,
        }
        return actions[(self.state, got)](got)

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

    def _enter_reed(self) -> list:
        self.state = S.ON_REED
        return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]

    def _gone(self, msg: Gone) -> list:
        self.clock.receive(msg.ts)
        self.alive.discard(msg.sender)
        self.fl = replace(self.fl, deferred=tuple((j, ts) for j, ts in self.fl.deferred if j != msg.sender))
        return []

    # -- flowers (Ricart–Agrawala for K) ---------------------------------------------------
    def _ask_flower(self, _action: str) -> list:
        self.state = S.WAIT_FLOWER
        self.fl = replace(self.fl, request=self.clock.tick(), acks=frozenset())
        asks = [Send(j, ReqFlower(sender=self.pid, ts=self.fl.request)) for j in sorted(self.alive)]
        return asks + self._try_flower()

    def _try_flower(self) -> list:
        if len(self.fl.acks & self.alive) < len(self.alive) - (self.flowers - 1) - EAGER:
            return []
        self.state = S.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _ack(self, msg: ReqFlower) -> list:
        self.clock.receive(msg.ts)
        return [Send(msg.sender, AckFlower(sender=self.pid, ts=self.clock.tick(), req_ts=msg.ts))]

    def _defer(self, msg: ReqFlower) -> list:
        self.clock.receive(msg.ts)
        self.fl = replace(self.fl, deferred=(*self.fl.deferred, (msg.sender, msg.ts)))
        return []

    def _on_ack(self, msg: AckFlower) -> list:
        self.clock.receive(msg.ts)
        if msg.req_ts == self.fl.request:
            self.fl = replace(self.fl, acks=self.fl.acks | {msg.sender})
        return self._try_flower()

    def _leave_flower(self, _action: str) -> list:
        deferred, self.fl = self.fl.deferred, Flowers()
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
            return {"ACKflower": sorted(self.alive - self.fl.acks)}
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
            self.fl,
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
    "mason bees: reed tokens and Ricart–Agrawala for K flowers, inputs by singledispatchmethod",
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
