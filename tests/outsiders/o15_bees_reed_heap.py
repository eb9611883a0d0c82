"""Mason bees: the reeds planned with a priority queue (heapq over a functools.total_ordering
class), the flowers shared by Ricart–Agrawala for K places.

Written from docs/your-bees.md. Every bee computes the same plan at the start, with no message:
the reeds go in a heap ordered by room left (most room first, then the lower number); bee 1, 2,
… in turn takes the top reed if it has room for its eggs (the reed's room goes down by them),
else retires. So each bee knows its reed, the bee before it on that reed and the bee after it.

* reed: the first bee of each reed may enter at once; any other waits for the TOKEN the bee
  before it sends when it dies.
* flower: Ricart–Agrawala for K — a bee broadcasts REQflower and goes on a flower once all but
  K − 1 of the others ACKed its current request (an ACK echoes the request's stamp). A bee with
  an older request (or on a flower) defers its ACK until it leaves the flower. A bee that has
  died or retired answers every request at once, so nobody needs to know who is gone.

States are a ``class Phase(str, Enum)``, which docs/your-bees.md says reads as its values.

Planted bug (module constant, edited by the tests):

* ME_TOO = True: a bee counts its own request as one ACK, so it goes on a flower one ACK early
  (two bees on one flower with K = 1).
"""

from __future__ import annotations

import heapq
import random
from enum import Enum
from functools import total_ordering
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import ConfigError, Setup, positive_int
from mutexlab.spec import AlgorithmSpec

NAME = "o15-bees-reed-heap"
ME_TOO = False


class Phase(str, Enum):  # noqa: UP042 - the style under test: docs say it reads as its values
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

ANSWER = on("ACK at once", "_answer")
STALE = on("an ACK of no request of mine", "_stale")
GONE_ROW = {"REQflower": ANSWER, "ACKflower": STALE}


class HeapBee(Protocol):
    final_states = frozenset({Phase.DEAD, Phase.RETIRED})
    TABLE = Table(
        Phase,
        {
            Phase.REST: {
                "request": on(
                    "to my reed: enter if it is free", "_want_reed", to=(Phase.WAIT_REED, Phase.ON_REED)
                ),
                "TOKEN": on("the reed is mine", "_token"),
                **GONE_ROW,
            },
            Phase.WAIT_REED: {
                "TOKEN": on("the reed is mine: enter", "_token", to=(Phase.ON_REED,)),
                **GONE_ROW,
            },
            Phase.ON_REED: {
                "request": on("broadcast REQflower", "_want_flower", to=(Phase.WAIT_FLOWER, Phase.ON_FLOWER)),
                **GONE_ROW,
            },
            Phase.WAIT_FLOWER: {
                "REQflower": on("older than mine: ACK; else defer", "_compete"),
                "ACKflower": on("count it; enough: the flower", "_ack", to=(Phase.ON_FLOWER,)),
            },
            Phase.ON_FLOWER: {
                "REQflower": on("defer", "_defer"),
                "ACKflower": STALE,
                "exit": on("leave, lay an egg; the last: die", "_leave", to=(Phase.ON_REED, Phase.DEAD)),
            },
            Phase.DEAD: GONE_ROW,
            Phase.RETIRED: GONE_ROW,
        },
        never="the TOKEN of my reed comes once, from the bee before me on it, before I hold it",
    )

    def __init__(self, pid: int, n: int, opts: dict[str, int], clock: int) -> None:
        self.pid, self.n, self.clock = pid, n, LamportClock(clock)
        self.k, self.eggs = opts["flowers"], opts["eggs"]
        mine = plan(n, opts["reeds"], opts["eggs"], opts["cocoons"])
        self.reed = mine[pid]
        same = [b for b, r in mine.items() if r == self.reed and self.reed is not None]
        at = same.index(pid) if self.reed is not None else 0
        self.after = same[at + 1] if at + 1 < len(same) else None
        self.free = at == 0  # the first bee of a reed finds it free
        self.state = Phase.REST
        self.laid = 0
        self.asked: int | None = None
        self.acks: frozenset[int] = frozenset()
        self.deferred: tuple[tuple[int, int], ...] = ()

    def start(self) -> list:
        if self.reed is None:
            self.state = Phase.RETIRED
            return [Note("retire", {})]
        return [Schedule("request", "rest")]

    def _send(self, to: int, msg: type[Message], **fields: Any) -> Send:
        return Send(to, msg(sender=self.pid, ts=self.clock.tick(), **fields))

    # reeds
    def _want_reed(self, _action: str) -> list:
        if not self.free:
            self.state = Phase.WAIT_REED
            return []
        return self._on_reed()

    def _on_reed(self) -> list:
        self.state = Phase.ON_REED
        return [Enter(f"reed:{self.reed}"), Schedule("request", "reed")]

    def _token(self, msg: Token) -> list:
        self.clock.receive(msg.ts)
        self.free = True
        return self._on_reed() if self.state == Phase.WAIT_REED else []

    # flowers
    def _want_flower(self, _action: str) -> list:
        self.state = Phase.WAIT_FLOWER
        self.asked = self.clock.tick()
        self.acks = frozenset({self.pid}) if ME_TOO else frozenset()
        out: list = [
            Send(j, ReqFlower(sender=self.pid, ts=self.asked)) for j in range(1, self.n + 1) if j != self.pid
        ]
        return out + self._try()

    def _try(self) -> list:
        if len(self.acks) < (self.n - 1) - (self.k - 1):
            return []
        self.state = Phase.ON_FLOWER
        return [Enter("flower"), Schedule("exit", "flower")]

    def _answer(self, msg: ReqFlower) -> list:
        self.clock.receive(msg.ts)
        return [self._send(msg.sender, AckFlower, req_ts=msg.ts)]

    def _stale(self, msg: AckFlower) -> list:
        self.clock.receive(msg.ts)
        return []

    def _compete(self, msg: ReqFlower) -> list:
        assert self.asked is not None
        if (msg.ts, msg.sender) < (self.asked, self.pid):
            return self._answer(msg)
        return self._defer(msg)

    def _defer(self, msg: ReqFlower) -> list:
        self.clock.receive(msg.ts)
        self.deferred += ((msg.sender, msg.ts),)
        return []

    def _ack(self, msg: AckFlower) -> list:
        self.clock.receive(msg.ts)
        if msg.req_ts == self.asked:
            self.acks |= {msg.sender}
        return self._try()

    def _leave(self, _action: str) -> list:
        out: list = [Exit("flower")]
        out += [self._send(j, AckFlower, req_ts=ts) for j, ts in self.deferred]
        self.deferred, self.asked, self.acks = (), None, frozenset()
        self.laid += 1
        out.append(Note("egg", {"reed": self.reed, "count": self.laid}))
        if self.laid < self.eggs:
            self.state = Phase.ON_REED
            return out + [Schedule("request", "reed")]
        self.state = Phase.DEAD
        out.append(Exit(f"reed:{self.reed}"))
        if self.after is not None:
            out.append(self._send(self.after, Token, reed=self.reed))
        return out + [Note("death", {"eggs": self.laid})]

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == Phase.WAIT_REED:
            return {"TOKEN": []}
        if self.state == Phase.WAIT_FLOWER:
            return {"ACKflower": [j for j in range(1, self.n + 1) if j != self.pid and j not in self.acks]}
        return {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.free, self.laid, self.asked, self.acks, self.deferred)


OPTIONS = {"flowers": 3, "reeds": 3, "eggs": 5, "cocoons": 15}


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    extra = set(options) - set(OPTIONS)
    if extra:
        raise ConfigError(f"{NAME} takes no option {', '.join(sorted(extra))}")
    opts = {name: positive_int(options, name, default=d) for name, d in OPTIONS.items()}
    rng = random.Random(f"{NAME}/{seed}")
    bees = {
        pid: HeapBee(pid, processes, opts, rng.randrange(5 * processes)) for pid in range(1, processes + 1)
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
    "mason bees: reeds planned by a heap of total-ordered reeds, Ricart–Agrawala for the K flowers",
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
