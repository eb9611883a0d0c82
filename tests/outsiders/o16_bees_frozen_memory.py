"""Mason bees, one frozen dataclass per bee's memory, replaced wholesale on every step
(``dataclasses.replace``), and one ``match`` on the message's class instead of a method per type.

Written from docs/your-bees.md. The reeds are planned as o15 does (a heap, most room first), so each
bee knows its reed and the bee after it on it; the first bee of a reed may enter at once, the next
one waits for the TOKEN its predecessor sends when it dies. The K flowers are Ricart–Agrawala for
K places: REQflower to all, on a flower once all but K − 1 of the others ACKed this request (an
ACK echoes the stamp of the request it answers), a bee ahead of the asker (or on a flower) defers.

``Memory.__post_init__`` checks what must always hold (acks only while asking); properties say
what the bee reads off it.

Planted bug (a module constant the tests edit):

* DROP_REPLACE = True: deferring a request, the bee builds the new memory with
  ``dataclasses.replace`` and forgets to keep it (the frozen dataclass was not changed): the
  deferred bee never gets its ACK.
"""

from __future__ import annotations

import dataclasses
import heapq
import random
from enum import StrEnum
from functools import total_ordering
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import ConfigError, Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "o16-bees-frozen-memory"
DROP_REPLACE = False


class Phase(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


@total_ordering
class Reed:
    """A reed in the planning heap: the one with the most room first, ties to the lower number."""

    __slots__ = ("number", "room")

    def __init__(self, number: int, room: int) -> None:
        self.number, self.room = number, room

    def key(self) -> tuple[int, int]:
        return (-self.room, self.number)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reed) and self.key() == other.key()

    def __lt__(self, other: Reed) -> bool:
        return self.key() < other.key()

    def __hash__(self) -> int:
        return hash(self.key())


def plan(bees: int, reeds: int, eggs: int, cocoons: int) -> dict[int, int | None]:
    """bee → its reed (None: it retires), the same in every bee."""
    heap = [Reed(r, cocoons) for r in range(1, reeds + 1)]
    heapq.heapify(heap)
    got: dict[int, int | None] = {}
    for bee in range(1, bees + 1):
        top = heap[0]
        if top.room < eggs:
            got[bee] = None
            continue
        got[bee] = top.number
        heapq.heapreplace(heap, Reed(top.number, top.room - eggs))
    return got


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    reed: int


class ReqFlower(Message):
    type: Literal["REQflower"] = "REQflower"


class AckFlower(Message):
    type: Literal["ACKflower"] = "ACKflower"
    req_ts: int


CODEC = Codec(Token, ReqFlower, AckFlower)


@dataclasses.dataclass(frozen=True)
class Memory:
    """All a bee remembers, never changed in place."""

    free: bool = False
    laid: int = 0
    asked: int | None = None  # the stamp of my REQflower, while I ask or sit on a flower
    acks: frozenset[int] = frozenset()
    deferred: tuple[tuple[int, int], ...] = ()  # (bee, its request's stamp)

    def __post_init__(self) -> None:
        if self.acks and self.asked is None:
            raise ValueError(f"ACKs {set(self.acks)} with no request of mine")

    @property
    def asking(self) -> bool:
        return self.asked is not None


EVERY = ("REQflower", "ACKflower", "TOKEN")
ON_MSG = on("match on the message", "_on_message")


class MemoryBee(Protocol):
    final_states = frozenset({Phase.DEAD, Phase.RETIRED})
    TABLE = Table(
        Phase,
        {
            Phase.REST: {"request": on("to my reed", "_want_reed", to=(Phase.WAIT_REED, Phase.ON_REED)),
                         **dict.fromkeys(EVERY, ON_MSG)},
            Phase.WAIT_REED: {**dict.fromkeys(EVERY, on("match", "_on_message", to=(Phase.ON_REED,)))},
            Phase.ON_REED: {"request": on("ask for a flower", "_want_flower", to=(Phase.WAIT_FLOWER, Phase.ON_FLOWER)),
                            "REQflower": ON_MSG, "ACKflower": ON_MSG},
            Phase.WAIT_FLOWER: {"REQflower": ON_MSG, "ACKflower": on("match", "_on_message", to=(Phase.ON_FLOWER,))},
            Phase.ON_FLOWER: {"REQflower": ON_MSG, "ACKflower": ON_MSG,
                              "exit": on("leave, lay; the last egg: die", "_leave", to=(Phase.ON_REED, Phase.DEAD))},
            Phase.DEAD: {"REQflower": ON_MSG, "ACKflower": ON_MSG},
            Phase.RETIRED: {"REQflower": ON_MSG, "ACKflower": ON_MSG},
        },
        never="the TOKEN of my reed comes once, from the bee before me, before I hold the reed",
    )  # fmt: skip

    def __init__(self, pid: int, n: int, opts: dict[str, int], clock: int) -> None:
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.k, self.eggs = opts["flowers"], opts["eggs"]
        mine = plan(n, opts["reeds"], opts["eggs"], opts["cocoons"])
        self.reed = mine[pid]
        same = [b for b, r in mine.items() if r == self.reed and self.reed is not None]
        at = same.index(pid) if self.reed is not None else 0
        self.after = same[at + 1] if at + 1 < len(same) else None
        self.state = Phase.REST
        self.mem = Memory(free=at == 0)

    def start(self) -> list:
        if self.reed is None:
            self.state = Phase.RETIRED
            return [Note("retire", {})]
        return [Schedule("request", "rest")]

    def _send(self, to: int, kind: type[Message], **fields: Any) -> Send:
        return Send(to, kind(sender=self.pid, ts=self.clock.tick(), **fields))

    def _on_reed(self) -> list:
        self.state = Phase.ON_REED
        return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]

    def _want_reed(self, _action: str) -> list:
        if self.mem.free:
            return self._on_reed()
        self.state = Phase.WAIT_REED
        return []

    def _want_flower(self, _action: str) -> list:
        stamp = self.clock.tick()
        self.mem = dataclasses.replace(self.mem, asked=stamp, acks=frozenset())
        self.state = Phase.WAIT_FLOWER
        asks = [Send(j, ReqFlower(sender=self.pid, ts=stamp)) for j in range(1, self.n + 1) if j != self.pid]
        return asks + self._maybe_flower()

    def _maybe_flower(self) -> list:
        if self.state != Phase.WAIT_FLOWER or len(self.mem.acks) < self.n - self.k:
            return []
        self.state = Phase.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _on_message(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        match msg:
            case Token():
                self.mem = dataclasses.replace(self.mem, free=True)
                return self._on_reed() if self.state == Phase.WAIT_REED else []
            case AckFlower(sender=who, req_ts=echo):
                if self.mem.asking and echo == self.mem.asked:
                    self.mem = dataclasses.replace(self.mem, acks=self.mem.acks | {who})
                return self._maybe_flower()
            case ReqFlower(sender=who, ts=stamp):
                mine = (self.mem.asked, self.pid) if self.mem.asking else None
                if self.state == Phase.ON_FLOWER or (self.state == Phase.WAIT_FLOWER and mine < (stamp, who)):
                    later = dataclasses.replace(self.mem, deferred=(*self.mem.deferred, (who, stamp)))
                    if not DROP_REPLACE:
                        self.mem = later
                    return []
                return [self._send(who, AckFlower, req_ts=stamp)]
        raise self.refuse(msg)

    def _leave(self, _action: str) -> list:
        out: list = [Exit("flower")]
        out += [self._send(j, AckFlower, req_ts=ts) for j, ts in self.mem.deferred]
        laid = self.mem.laid + 1
        self.mem = dataclasses.replace(self.mem, laid=laid, asked=None, acks=frozenset(), deferred=())
        out.append(Note("egg", {"reed": self.reed, "count": laid}))
        if laid < self.eggs:
            self.state = Phase.ON_REED
            return out + [Schedule("request", "reed")]
        self.state = Phase.DEAD
        out.append(Exit(f"reed:{self.reed}"))
        if self.after is not None:
            out.append(self._send(self.after, Token, reed=self.reed))
        return out + [Note("death", {"eggs": laid})]

    @property
    def laid(self) -> int:
        return self.mem.laid

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == Phase.WAIT_REED:
            return {"TOKEN": []}
        if self.state == Phase.WAIT_FLOWER:
            return {
                "ACKflower": [j for j in range(1, self.n + 1) if j != self.pid and j not in self.mem.acks]
            }
        return {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.mem)


OPTIONS = {"flowers": 3, "reeds": 3, "eggs": 5, "cocoons": 15}


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    extra = set(options) - set(OPTIONS)
    if extra:
        raise ConfigError(f"{NAME} takes no option {', '.join(sorted(extra))}")
    opts = {name: positive_int(options, name, default=d) for name, d in OPTIONS.items()}
    rng = random.Random(f"{NAME}/{seed}")
    bees = {
        pid: MemoryBee(pid, processes, opts, rng.randrange(5 * processes)) for pid in range(1, processes + 1)
    }
    return Setup(
        NAME,
        bees,
        {pid: f"bee-{pid}" for pid in bees},
        CODEC,
        {"reed:*": 1, "flower": opts["flowers"]},
        {"bees": processes, **opts},
    )


SPEC = AlgorithmSpec(
    NAME,
    "bees",
    "mason bees: a frozen memory replaced wholesale, one match on the message class",
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
