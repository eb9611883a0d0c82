"""Mason bees with one Suzuki–Kasami token that carries the whole hive's ledger.

The token holds, for every reed, (its occupant or 0, eggs reserved on it), the number of flowers
busy, and the bees waiting for a flower or for a reed. A bee that must change the ledger (take a
reed, take a flower, give one back) broadcasts REQUEST(n); the token goes to requesters in
Suzuki–Kasami order (RN / LN / queue). A bee that finds no flower or no reed free waits on the
token's lists; giving a flower or a reed back moves the waiters into the token's queue.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import ConfigError, Setup, positive_int
from mutexlab.spec import AlgorithmSpec

ALGO = "bees-one-token"


class Bee(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"
    n: int


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    ln: tuple[int, ...]  # index pid − 1
    queue: tuple[int, ...]
    busy: int
    reeds: tuple[tuple[int, int], ...]  # reed r at index r − 1: (occupant or 0, eggs reserved)
    flower_waiters: tuple[int, ...]
    reed_waiters: tuple[int, ...]


CODEC = Codec(Request, Token)


@dataclass(frozen=True)
class Ledger:
    """The token's contents, as the holder edits them."""

    ln: tuple[int, ...]
    queue: tuple[int, ...]
    busy: int
    reeds: tuple[tuple[int, int], ...]
    flower_waiters: tuple[int, ...] = ()
    reed_waiters: tuple[int, ...] = ()

    @staticmethod
    def of(t: Token) -> Ledger:
        return Ledger(t.ln, t.queue, t.busy, t.reeds, t.flower_waiters, t.reed_waiters)


def enqueue(led: Ledger, pids: tuple[int, ...]) -> Ledger:
    return replace(led, queue=led.queue + tuple(p for p in pids if p not in led.queue))


REQ = on("RN; idle holder: pass the token", "on_request")
TOK = on("use the ledger; pass it on", "on_token", to=tuple(Bee))
FINAL_ROW = {"REQUEST": REQ}


class TokenBee(Protocol):
    final_states = frozenset({Bee.DEAD, Bee.RETIRED})
    TABLE = Table(
        Bee,
        {
            Bee.REST: {
                "REQUEST": REQ,
                "request": on("want a reed", "want_reed", to=(Bee.WAIT_REED, Bee.ON_REED, Bee.RETIRED)),
            },
            Bee.WAIT_REED: {"REQUEST": REQ, "TOKEN": TOK},
            Bee.ON_REED: {
                "REQUEST": REQ,
                "TOKEN": TOK,
                "request": on("want a flower", "want_flower", to=(Bee.WAIT_FLOWER, Bee.ON_FLOWER)),
            },
            Bee.WAIT_FLOWER: {"REQUEST": REQ, "TOKEN": TOK},
            Bee.ON_FLOWER: {
                "REQUEST": REQ,
                "TOKEN": TOK,
                "exit": on("egg; give the flower back", "leave_flower", to=(Bee.ON_REED, Bee.DEAD)),
            },
            Bee.DEAD: {"REQUEST": REQ, "TOKEN": TOK},
            Bee.RETIRED: FINAL_ROW,
        },
        never="a TOKEN comes only to a bee that asked for it",
    )

    def __init__(
        self, pid: int, n: int, flowers: int, reeds: int, eggs: int, cocoons: int, clock: int
    ) -> None:
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.cfg = (flowers, reeds, eggs, cocoons)
        self.state = Bee.REST
        self.rn = [0] * n
        self.ledger: Ledger | None = (
            Ledger(ln=(0,) * n, queue=(), busy=0, reeds=((0, 0),) * reeds) if pid == 1 else None
        )
        self.reed = 0
        self.laid = 0
        self.owes: tuple[str, ...] = ()  # what I gave back but the ledger does not know yet
        self.asked = False

    def start(self) -> list:
        return [Schedule("request", "rest")]

    # -- the token ----------------------------------------------------------------------------
    def ask(self) -> list:
        if self.ledger is not None:
            return self.use()
        if self.asked:
            return []
        self.asked = True
        self.rn[self.pid - 1] += 1
        n = self.rn[self.pid - 1]
        ts = self.clock.tick()
        return [Send(j, Request(sender=self.pid, ts=ts, n=n)) for j in range(1, self.n + 1) if j != self.pid]

    def on_request(self, msg: Request) -> list:
        self.clock.receive(msg.ts)
        self.rn[msg.sender - 1] = max(self.rn[msg.sender - 1], msg.n)
        if self.ledger is not None and not self.busy_with_token():
            return self.pass_on()
        return []

    def busy_with_token(self) -> bool:
        return False  # I use the token only inside a step

    def on_token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.ledger, self.asked = Ledger.of(msg), False
        return self.use()

    def use(self) -> list:
        """Holding the ledger: settle what I owe, take what I wait for, pass it on."""
        assert self.ledger is not None
        led, out = self.ledger, []
        flowers, _reeds, eggs, cocoons = self.cfg
        for owed in self.owes:
            if owed == "flower":
                led = replace(led, busy=led.busy - 1, flower_waiters=led.flower_waiters[1:])
                led = enqueue(led, self.ledger.flower_waiters[:1])
            else:
                reeds = list(led.reeds)
                reeds[self.reed - 1] = (0, reeds[self.reed - 1][1])
                led = enqueue(replace(led, reeds=tuple(reeds), reed_waiters=()), led.reed_waiters)
        self.owes = ()
        if self.state == Bee.WAIT_REED:
            free = [r for r, (occ, res) in enumerate(led.reeds, 1) if occ == 0 and res + eggs <= cocoons]
            later = [r for r, (occ, res) in enumerate(led.reeds, 1) if res + eggs <= cocoons]
            if free:
                self.reed = free[0]
                reeds = list(led.reeds)
                reeds[self.reed - 1] = (self.pid, reeds[self.reed - 1][1] + eggs)
                led = replace(led, reeds=tuple(reeds))
                self.state = Bee.ON_REED
                out += [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]
            elif later:
                led = replace(led, reed_waiters=led.reed_waiters + (self.pid,))
            else:
                self.state = Bee.RETIRED
                out.append(Note("retire", {}))
        elif self.state == Bee.WAIT_FLOWER:
            if led.busy < flowers:
                led = replace(led, busy=led.busy + 1)
                self.state = Bee.ON_FLOWER
                out += [Enter("flower"), Schedule("exit", "flower")]
            else:
                led = replace(led, flower_waiters=led.flower_waiters + (self.pid,))
        ln = list(led.ln)
        ln[self.pid - 1] = self.rn[self.pid - 1]
        self.ledger = replace(led, ln=tuple(ln))
        return out + self.pass_on()

    def pass_on(self) -> list:
        led = self.ledger
        assert led is not None
        waiting = led.flower_waiters + led.reed_waiters
        fresh = tuple(
            j
            for j in range(1, self.n + 1)
            if j != self.pid and self.rn[j - 1] == led.ln[j - 1] + 1 and j not in waiting
        )
        led = enqueue(led, fresh)
        if not led.queue:
            self.ledger = led
            return []
        head, rest = led.queue[0], led.queue[1:]
        self.ledger = None
        token = Token(
            sender=self.pid,
            ts=self.clock.tick(),
            ln=led.ln,
            queue=rest,
            busy=led.busy,
            reeds=led.reeds,
            flower_waiters=led.flower_waiters,
            reed_waiters=led.reed_waiters,
        )
        return [Send(head, token)]

    # -- the bee's life -----------------------------------------------------------------------
    def want_reed(self, _action: str) -> list:
        self.state = Bee.WAIT_REED
        return self.ask()

    def want_flower(self, _action: str) -> list:
        self.state = Bee.WAIT_FLOWER
        return self.ask()

    def leave_flower(self, _action: str) -> list:
        _flowers, _reeds, eggs, _cocoons = self.cfg
        self.laid += 1
        out: list = [Exit("flower"), Note("egg", {"reed": self.reed, "count": self.laid})]
        self.owes = self.owes + ("flower",)
        if self.laid < eggs:
            self.state = Bee.ON_REED
            out.append(Schedule("request", "reed"))
        else:
            self.state = Bee.DEAD
            self.owes = self.owes + ("reed",)
            out += [Exit(f"reed:{self.reed}"), Note("death", {"eggs": self.laid})]
        return out + self.ask()

    # -- what the tools ask -------------------------------------------------------------------
    def waiting_for(self) -> dict[str, list[int]]:
        return {"TOKEN": []} if self.state in (Bee.WAIT_REED, Bee.WAIT_FLOWER) else {}

    def snapshot(self) -> Any:
        return (
            self.state,
            self.clock.time,
            tuple(self.rn),
            self.ledger,
            self.reed,
            self.laid,
            self.owes,
            self.asked,
        )


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    unknown = set(options) - set(SPEC.options)
    if unknown:
        raise ConfigError(f"{ALGO} takes no option(s) {', '.join(sorted(unknown))}")
    flowers = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    if cocoons % eggs:
        raise ConfigError(f"cocoons ({cocoons}) must be a multiple of eggs ({eggs})")
    bees = {
        pid: TokenBee(pid, processes, flowers, reeds, eggs, cocoons, 0) for pid in range(1, processes + 1)
    }
    params = {"bees": processes, "flowers": flowers, "reeds": reeds, "eggs": eggs, "cocoons": cocoons}
    return Setup(ALGO, bees, {p: f"bee-{p}" for p in bees}, CODEC, {"reed:*": 1, "flower": flowers}, params)


SPEC = AlgorithmSpec(
    ALGO,
    "bees",
    "mason bees with one Suzuki–Kasami token carrying the hive's ledger",
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
