"""The mason bees (docs/architecture.md#the-mason-bees; decisions: docs/bees.md): T reeds, K flowers.

A bee asks once for a reed (a Lamport-style queue of ``REQreed``/``ACKreed``), then on its reed
repeats ON_REED → WAIT_FLOWER → ON_FLOWER → ON_REED ``eggs`` times (flowers: Ricart–Agrawala
for K places, ``REQflower``/``ACKflower``), laying one egg on each return to the reed. After its
last egg it leaves the reed with ``RELEASEreed`` and dies. A bee for which no reed will ever have
room (``cocoons // eggs`` bees fit on a reed) says so with ``RELEASEreed(status=NO_ROOM)`` and
retires. ``RELEASEreed`` is always the last message a bee sends: the sender is gone for good.

State table (state × input → action). ``ack`` means: answer the sender at once, echoing the
request's timestamp (``req_ts``); "gone" bees are the ones whose RELEASEreed arrived.

| state       | REQreed      | ACKreed               | REQflower            | ACKflower              | RELEASEreed            | request (local)         | exit (local)           |
|-------------|--------------|-----------------------|----------------------|------------------------|------------------------|-------------------------|------------------------|
| REST        | insert + ack | ignore (stale)        | ack                  | ignore (stale)         | mark sender gone       | broadcast REQreed       | error                  |
|             |              |                       |                      |                        |                        |   → WAIT_REED; try reed |                        |
|             |              |                       |                      |                        |                        |   (all others gone)     |                        |
|             |              |                       |                      |                        |                        |   → ON_REED / RETIRED   |                        |
| WAIT_REED   | insert + ack | count if it echoes my | ack                  | ignore (stale)         | mark gone; try reed    | error                   | error                  |
|             |              |   request; try reed   |                      |                        |   → ON_REED / RETIRED  |                         |                        |
|             |              |   → ON_REED / RETIRED |                      |                        |                        |                         |                        |
| ON_REED     | insert + ack | ignore (stale)        | ack                  | ignore (stale)         | mark gone              | broadcast REQflower     | error                  |
|             |              |                       |                      |                        |                        |   → WAIT_FLOWER; try    |                        |
|             |              |                       |                      |                        |                        |   flower → ON_FLOWER    |                        |
| WAIT_FLOWER | insert + ack | ignore (stale)        | ack if (ts, pid)     | count if it echoes my  | mark gone, drop its    | error                   | error                  |
|             |              |                       |   earlier than mine, |   current request; try |   deferral; try flower |                         |                        |
|             |              |                       |   else defer         |   flower → ON_FLOWER   |   → ON_FLOWER          |                         |                        |
| ON_FLOWER   | insert + ack | ignore (stale)        | defer                | ignore (late, for      | mark gone, drop its    | error                   | ack deferred; egg      |
|             |              |                       |                      |   this request)        |   deferral             |                         |   → ON_REED (last egg: |
|             |              |                       |                      |                        |                        |                         |   RELEASEreed → DEAD)  |
| DEAD        | ignore       | ignore                | ignore               | ignore                 | ignore                 | error                   | error                  |
| RETIRED     | ignore       | ignore                | ignore               | ignore                 | ignore                 | error                   | error                  |

"try reed" (→ ON_REED / RETIRED): with an ACKreed (for my request) from every other bee not
gone, my *rank* r is the number of reed requests ever made that precede mine in (ts, pid) order.
My reed is ``r mod T + 1`` and I am its ``r div T``-th bee; when that turn is ≥ ``cocoons // eggs``
the reed will be full before my turn → RETIRED (broadcast RELEASEreed NO_ROOM). Otherwise I
enter once every earlier request of the same reed (ranks r − T, r − 2T, ...) has sent its
RELEASEreed → ON_REED.
"try flower" (→ ON_FLOWER): enter when the ACKflowers for my current request from bees not gone
number at least (bees not gone, me excluded) − (K − 1).
Every message of the five types is accepted in every state (the table has no error cell for
them): late and stale ones are ignored as it says. A bee that is DEAD or RETIRED ignores them
all, without a clock step.

Invariants: at most one bee per reed; at most K bees on flowers; an ACKflower counts only for the
request whose timestamp it echoes; a gone bee is never waited for; a bee lays at most ``eggs``
eggs and a reed receives at most ``cocoons``.
"""

from __future__ import annotations

import importlib
import random
from enum import StrEnum
from typing import Literal

from pydantic import Field

from ..clock import LamportClock, priority
from ..messages import Codec, Message
from ..protocol import Enter, Exit, Note, Protocol, Schedule, Send
from ..setup import ConfigError, Setup, positive_int
from ..show import counted, fmt
from ..spec import AlgorithmSpec
from . import bees_flags
from .classic import expect, workload_options


class BeeState(StrEnum):
    REST = "REST"
    WAIT_REED = "WAIT_REED"
    ON_REED = "ON_REED"
    WAIT_FLOWER = "WAIT_FLOWER"
    ON_FLOWER = "ON_FLOWER"
    DEAD = "DEAD"
    RETIRED = "RETIRED"


# The members as plain names: on Python 3.11 every ``BeeState.X`` goes through
# ``EnumType.__getattr__`` (a Python call), and the handlers compare states on every message.
REST, WAIT_REED, ON_REED, WAIT_FLOWER, ON_FLOWER, DEAD, RETIRED = BeeState
STATES = tuple(BeeState)
FINAL_STATES = (DEAD, RETIRED)
WAITING_STATES = (WAIT_REED, WAIT_FLOWER)
FLOWER = "flower"


class REQreed(Message):
    type: Literal["REQreed"] = "REQreed"


class ACKreed(Message):
    type: Literal["ACKreed"] = "ACKreed"
    req_ts: int = Field(ge=0)  # timestamp of the REQreed this answers


class REQflower(Message):
    type: Literal["REQflower"] = "REQflower"


class ACKflower(Message):
    type: Literal["ACKflower"] = "ACKflower"
    req_ts: int = Field(ge=0)  # timestamp of the REQflower this answers


class RELEASEreed(Message):
    """The sender leaves for good: it left ``reed`` holding ``cocoons`` eggs (``reed`` 0: it
    held none, status NO_ROOM)."""

    type: Literal["RELEASEreed"] = "RELEASEreed"
    reed: int = Field(ge=0)
    status: Literal["FULL", "AVAILABLE", "NO_ROOM"]
    cocoons: int = Field(ge=0)


CODEC = Codec(REQreed, ACKreed, REQflower, ACKflower, RELEASEreed)


def bee_name(pid: int) -> str:
    return f"bee-{pid}"


def reed_name(reed: int) -> str:
    return f"reed:{reed}"


class Bee(Protocol):
    """One mason bee. ``n`` bees, ``flowers`` (K), ``reeds`` (T), ``eggs`` per bee, ``cocoons`` per reed."""

    CONFIG_FIELDS = frozenset(
        {
            "flowers",
            "reeds",
            "eggs",
            "cocoons",
            "per_reed",
            "totals",
            "pins_per_elf",
            "poison_per_hamster",
            "plan",
        }
    )

    state: BeeState
    final_states = frozenset(FINAL_STATES)

    def __init__(
        self, pid: int, n: int, flowers: int, reeds: int, eggs: int = 5, cocoons: int = 15, clock: int = 0
    ) -> None:
        self.pid = pid
        self.n = n
        self.flowers = flowers
        self.reeds = reeds
        self.eggs = eggs
        self.cocoons = cocoons
        self.per_reed = cocoons // eggs
        self.clock = LamportClock(clock)
        self.state = REST
        self.alive: set[int] = {j for j in range(1, n + 1) if j != pid}  # others not known gone
        self.requests: dict[int, tuple[int, int]] = {}  # every reed request ever seen: pid → (ts, pid)
        # Speed (the one shortcut of this class, measured with bench/ at P = 200: without it the
        # simulation takes ×1.26 the time): every ACKreed, ACKflower and RELEASEreed would rescan
        # O(P) state (re-sort the requests, intersect the ACKs with ``alive``). Instead the sorted
        # order is cached until a request arrives (``_ordered``), and the ACKs from bees still alive
        # are counted as they arrive and as bees go (``*_live_acks``, always
        # ``len(*_acks & alive)``). Neither is part of ``snapshot()``.
        self._order: tuple[list, int] | None = None  # (sorted requests, my rank); None: stale
        self.reed_acks: set[int] = set()
        self.reed_live_acks = 0  # always len(reed_acks & alive)
        self.reed = 0  # my reed while ON_REED/WAIT_FLOWER/ON_FLOWER
        self.reed_eggs: dict[int, int] = {}  # eggs per reed, as RELEASEreed reports them
        self.flower_request: tuple[int, int] | None = None
        self.flower_acks: set[int] = set()
        self.flower_live_acks = 0  # always len(flower_acks & alive)
        self.deferred: list[tuple[int, int]] = []  # (pid, req_ts) of REQflowers to answer on exit
        self.laid = 0

    def __deepcopy__(self, memo) -> Bee:
        """Speed (the model checker and the explorer copy a process per transition): the
        containers are copied, their contents are immutable and shared. Measured: the generic
        ``Protocol.__deepcopy__`` takes ×4–×8 the time per bee (P = 3 and 10, mid-run)."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.clock = LamportClock(self.clock.time)
        twin.alive, twin.reed_acks, twin.flower_acks = (
            set(self.alive),
            set(self.reed_acks),
            set(self.flower_acks),
        )
        twin.requests, twin.reed_eggs, twin.deferred = (
            dict(self.requests),
            dict(self.reed_eggs),
            list(self.deferred),
        )
        return twin

    # -- helpers -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return bee_name(self.pid)

    @property
    def gone(self) -> set[int]:
        return {j for j in range(1, self.n + 1) if j != self.pid} - self.alive

    def _broadcast(self, msg: Message) -> list:
        return [Send(j, msg) for j in sorted(self.alive)]

    def flower_threshold(self) -> int:
        """ACKflowers needed: the other live bees minus the K − 1 that may be on flowers."""
        return max(0, len(self.alive) - (self.flowers - 1))

    def rank(self) -> int:
        return self._ordered()[1]

    def _ordered(self) -> tuple[list, int]:
        """``(sorted(self.requests.values()), my rank)``, sorted again only when a request was added."""
        if self._order is None:
            order = sorted(self.requests.values())
            self._order = (order, order.index(self.requests[self.pid]))
        return self._order

    # -- inputs --------------------------------------------------------------------------
    def start(self) -> list:
        return [Schedule("request", "rest")]

    def on_local(self, action: str) -> list:
        match action:
            case "request" if self.state is REST:
                return self._ask_reed()
            case "request" if self.state is ON_REED:
                return self._ask_flower()
            case "request":
                raise self.refuse("request", "a bee asks for a reed in REST and for a flower in ON_REED")
            case "exit" if self.state is ON_FLOWER:
                return self._leave_flower()
            case "exit":
                raise self.refuse("exit", "it is not on a flower")
            case _:
                raise self.refuse(f"local action {action!r}", "unknown action")

    def on_message(self, msg) -> list:
        state = self.state
        if state is DEAD or state is RETIRED:
            return []
        self.clock.receive(msg.ts)
        sender = msg.sender
        match msg.type:  # by the type tag (protocol.py: dispatch)
            case "ACKflower":
                if (
                    state is WAIT_FLOWER
                    and msg.req_ts == expect(self, self.flower_request, "flower request")[0]
                ):
                    if sender not in self.flower_acks:
                        self.flower_acks.add(sender)
                        self.flower_live_acks += sender in self.alive
                    return self._try_flower()
                return []  # late: for an earlier flower request
            case "REQflower":
                if state is ON_FLOWER or (
                    state is WAIT_FLOWER
                    and expect(self, self.flower_request, "flower request") < priority(msg.ts, sender)
                ):
                    self.deferred.append((sender, msg.ts))
                    return []
                return [self._ack_flower(sender, msg.ts)]
            case "REQreed":
                self.requests[sender] = priority(msg.ts, sender)
                self._order = None
                return [
                    Send(sender, ACKreed.trusted(self.pid, self.clock.tick(), msg.ts))
                ]  # (sender, ts, req_ts)
            case "ACKreed":
                if state is WAIT_REED and msg.req_ts == self.requests[self.pid][0]:
                    if sender not in self.reed_acks:
                        self.reed_acks.add(sender)
                        self.reed_live_acks += sender in self.alive
                    return self._try_reed()
                return []  # stale: for a request of mine that is over
            case "RELEASEreed":  # the sender is gone for good
                if sender in self.alive:
                    self.alive.discard(sender)
                    self.reed_live_acks -= sender in self.reed_acks
                    self.flower_live_acks -= sender in self.flower_acks
                if msg.reed:
                    self.reed_eggs[msg.reed] = msg.cocoons
                if self.deferred:
                    self.deferred = [(j, ts) for j, ts in self.deferred if j != sender]
                if state is WAIT_REED:
                    return self._try_reed()
                if state is WAIT_FLOWER:
                    return self._try_flower()
                return []
            case _:
                raise self.refuse(msg)

    # -- reeds ---------------------------------------------------------------------------
    def _ask_reed(self) -> list:
        ts = self.clock.tick()
        self.requests[self.pid] = priority(ts, self.pid)
        self._order = None
        self.reed_acks = set()
        self.reed_live_acks = 0
        self.state = WAIT_REED
        return self._broadcast(REQreed(sender=self.pid, ts=ts)) + self._try_reed()

    def predecessors(self, rank: int, order: list | None = None) -> list[int]:
        """The bees whose requests come earlier on the same reed (ranks rank − T, rank − 2T ...).
        ``order``: ``sorted(self.requests.values())`` when the caller has it already."""
        if order is None:
            order = sorted(self.requests.values())
        return [order[r][1] for r in range(rank % self.reeds, rank, self.reeds)]

    def _try_reed(self) -> list:
        # Every live bee acked: ``alive <= reed_acks``, counted as the acks are.
        if self.state is not WAIT_REED or self.reed_live_acks != len(self.alive):
            return []
        order, rank = self._ordered()
        reed, turn = rank % self.reeds + 1, rank // self.reeds
        if turn >= self.per_reed:
            return self._retire(reed, rank)
        if any(j in self.alive for j in self.predecessors(rank, order)):
            return []
        self.state = ON_REED
        self.reed = reed
        self.reed_eggs[reed] = turn * self.eggs
        return [Enter(reed_name(reed)), Schedule("request", "reed")]

    def _retire(self, reed: int, rank: int) -> list:
        self.state = RETIRED
        msg = RELEASEreed(sender=self.pid, ts=self.clock.tick(), reed=0, status="NO_ROOM", cocoons=0)
        return [Note("retire", {"rank": rank, "would_be_reed": reed})] + self._broadcast(msg)

    # -- flowers -------------------------------------------------------------------------
    def _ask_flower(self) -> list:
        ts = self.clock.tick()
        self.flower_request = priority(ts, self.pid)
        self.flower_acks = set()
        self.flower_live_acks = 0
        self.state = WAIT_FLOWER
        return self._broadcast(REQflower(sender=self.pid, ts=ts)) + self._try_flower()

    def _try_flower(self) -> list:
        if self.state is not WAIT_FLOWER or self.flower_live_acks < self.flower_threshold():
            return []
        self.state = ON_FLOWER
        return [Enter(FLOWER), Schedule("exit", "flower")]

    def _ack_flower(self, to: int, req_ts: int) -> Send:
        # The ACKs are most of the traffic: built from known-valid ints, without validation.
        return Send(to, ACKflower.trusted(self.pid, self.clock.tick(), req_ts))  # (sender, ts, req_ts)

    def _leave_flower(self) -> list:
        deferred, self.deferred = self.deferred, []
        self.flower_request = None
        self.flower_acks = set()
        self.flower_live_acks = 0
        self.state = ON_REED
        effects: list = [Exit(FLOWER)] + [self._ack_flower(j, ts) for j, ts in deferred]
        self.laid += 1
        self.reed_eggs[self.reed] = self.reed_eggs.get(self.reed, 0) + 1
        effects.append(
            Note("egg", {"reed": self.reed, "count": self.laid, "in_reed": self.reed_eggs[self.reed]})
        )
        if self.laid < self.eggs:
            return effects + [Schedule("request", "reed")]
        # The last egg: leave the reed and die.
        cocoons = self.reed_eggs[self.reed]
        msg = RELEASEreed(
            sender=self.pid,
            ts=self.clock.tick(),
            reed=self.reed,
            status="FULL" if cocoons >= self.cocoons else "AVAILABLE",
            cocoons=cocoons,
        )
        effects += [Exit(reed_name(self.reed))] + self._broadcast(msg) + [Note("death", {"eggs": self.laid})]
        self.state = DEAD
        return effects

    # -- the driver's questions ----------------------------------------------------------
    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is WAIT_REED:
            lacks = {"ACKreed": sorted(self.alive - self.reed_acks)}
            if not lacks["ACKreed"]:
                lacks = {"RELEASEreed": [j for j in self.predecessors(self.rank()) if j in self.alive]}
            return lacks
        if self.state is WAIT_FLOWER:
            return {"ACKflower": sorted(self.alive - self.flower_acks)}
        return {}

    def card(self) -> list[tuple[str, str]]:
        return [
            ("reed", "—" if not self.reed else f"reed:{self.reed}"),
            ("eggs laid", f"{self.laid} of {self.eggs}"),
            ("my reed request", fmt(self.requests.get(self.pid))),
            ("ACKreed", f"{counted(self.reed_acks)}; live {self.reed_live_acks} of {len(self.alive)} needed"),
            ("my flower request", fmt(self.flower_request)),
            (
                "ACKflower",
                f"{counted(self.flower_acks)}; live {self.flower_live_acks}, needed {self.flower_threshold()}",
            ),
            ("deferred REQflower", fmt([f"{j}@ts{ts}" for j, ts in self.deferred])),
            ("not gone", fmt(self.alive)),
            ("reed requests seen", fmt(sorted(self.requests.values()))),
            ("eggs per reed (from RELEASEreed)", fmt(self.reed_eggs)),
        ]

    def snapshot(self):
        """The state that decides this bee's future behaviour, and nothing else.

        Two bees with equal snapshots react identically to every input from now on, so exhaustive
        exploration may merge them: the request history and reed ACKs matter only until the bee has
        its reed (its rank is then fixed), the flower request and ACKs only while it waits for a
        flower, the deferred requests only while it competes or sits on a flower, the reeds' egg
        counts never (its own reed's count follows from its rank and its eggs). A gone bee ignores
        everything.
        """
        state = self.state
        if state in FINAL_STATES:
            return (state, self.reed, self.laid)
        common = (state, self.clock.time, frozenset(self.alive), self.reed, self.laid)
        if state in (REST, WAIT_REED):
            return common + (frozenset(self.requests.values()), frozenset(self.reed_acks))
        if state is WAIT_FLOWER:
            return common + (self.flower_request, frozenset(self.flower_acks), tuple(self.deferred))
        if state is ON_FLOWER:
            return common + (tuple(self.deferred),)
        return common


CLOCK_RANGE = 100  # default initial clocks are drawn from 0 .. CLOCK_RANGE·P − 1


def random_clocks(processes: int, seed: int) -> dict[int, int]:
    """Random initial Lamport clocks, one per bee, drawn from the seed (ties are allowed: pid breaks them)."""
    rng = random.Random(f"bees-initial-clocks:{seed}")
    return {pid: rng.randrange(CLOCK_RANGE * processes) for pid in range(1, processes + 1)}


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    unknown = set(options) - set(SPEC.options)
    if unknown:
        raise ConfigError(
            f"bees do not take option(s) {', '.join(sorted(unknown))} "
            f"(options: {', '.join(sorted(SPEC.options))})"
        )
    flowers = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    if cocoons % eggs:
        raise ConfigError(
            f"cocoons per reed ({cocoons}) must be a multiple of eggs per bee ({eggs}): "
            f"every bee lays all its eggs on one reed"
        )
    _, given = workload_options(processes, {"initial_clocks": options.get("initial_clocks") or {}})
    clocks = random_clocks(processes, seed)
    clocks.update(given)
    bees = {
        pid: Bee(pid, processes, flowers, reeds, eggs, cocoons, clocks[pid])
        for pid in range(1, processes + 1)
    }
    params = {
        "bees": processes,
        "flowers": flowers,
        "reeds": reeds,
        "eggs": eggs,
        "cocoons": cocoons,
        "initial_clocks": {str(p): c for p, c in clocks.items()},
    }
    return Setup(
        "bees", bees, {pid: bee_name(pid) for pid in bees}, CODEC, {"reed:*": 1, FLOWER: flowers}, params
    )


def expected_eggs(bees: int, reeds: int, eggs: int = 5, cocoons: int = 15) -> int:
    """Eggs a complete run lays: every bee that fits on a reed lays all of its eggs."""
    return min(eggs * bees, cocoons * reeds)


SPEC = AlgorithmSpec(
    "bees",
    "bees",
    "the mason bees: a reed each (Lamport-style queue), K flowers shared (Ricart–Agrawala for K)",
    make_setup,
    CODEC,
    "mutexlab.audit.bees",
    role="bee",
    options={
        "flowers": "flowers K (default 3)",
        "reeds": "reeds T (default 3)",
        "eggs": "eggs per bee (default 5)",
        "cocoons": "cocoons per reed, a multiple of eggs (default 15)",
        "initial_clocks": "Lamport clock per pid (default: random from the seed)",
    },
    reductions=lambda: importlib.import_module(f"{__package__}.bees_reductions").REDUCTIONS,  # reads Bee
    # -- how the commands present the bees (flags, summary) and a run's messages: bees_flags.py --
    flags=bees_flags.FLAGS,
    estimate_messages=bees_flags.estimate_messages,
)
