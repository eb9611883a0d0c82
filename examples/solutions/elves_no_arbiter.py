"""The hamster killers with a shared ledger: a solution of the ``elves`` problem written as a user would.

The mayor only hands out each round's list of contracts and stops the round once all are done;
it arbitrates nothing. The elves keep, each, a copy of one *ledger*: how many contracts of each
round are taken, how many pins and poison portions are free. Changing it takes the ledger's
lock, Ricart–Agrawala style: LEDGER_REQUEST to every other elf, each answers LEDGER_REPLY at
once unless its own request comes first in ``(ts, pid)`` order (then after its turn). With every
reply in, the elf takes in one step all it can: the next contract of its round, then its pins
if enough are free, then its poison if enough is free; it tells every other elf what it took
(LEDGER_UPDATE, sent before the replies it deferred: links are FIFO) and gives the lock on at
once. Giving back needs no lock (RELEASE to every elf): a copy that has not heard of a release
yet only sees too few units free, never too many. An elf that lacks units waits in
ELF_WAIT_FOR_RELEASE until a RELEASE makes enough free in its copy, then asks again.

Safe: every taking holds the lock, whose holder has heard of every earlier taking (its UPDATE
went out before its reply), so its copy never counts more free than there are; contract numbers
come from the ledger's count of the round, so each is taken once. Order contract → pins →
poison, and a poison holder always finishes: no deadlock.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, never, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "elves-no-arbiter"
MAYOR = 0


class S(StrEnum):
    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_WAIT_FOR_RELEASE = "ELF_WAIT_FOR_RELEASE"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_DONE = "ELF_DONE"


class InitContracts(Message):
    type: Literal["INIT_CONTRACTS"] = "INIT_CONTRACTS"
    round: int
    contracts: tuple[int, ...]


class Completed(Message):
    type: Literal["CONTRACT_COMPLETED"] = "CONTRACT_COMPLETED"
    round: int
    contract: int


class Stop(Message):
    type: Literal["STOP"] = "STOP"
    round: int
    final: bool


class Ask(Message):
    type: Literal["LEDGER_REQUEST"] = "LEDGER_REQUEST"


class Grant(Message):
    type: Literal["LEDGER_REPLY"] = "LEDGER_REPLY"
    answers: int  # the timestamp of the request it answers


class Update(Message):
    """What the sender took with the lock: contract ``contract`` of ``round`` (0: none), units."""

    type: Literal["LEDGER_UPDATE"] = "LEDGER_UPDATE"
    round: int
    contract: int
    pins: int
    poison: int


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"
    pins: int
    poison: int


CODEC = Codec(InitContracts, Completed, Stop, Ask, Grant, Update, Release)


class Mayor(Protocol):
    """Hands out ``plan[r − 1]`` in round r; once every contract of it is done, STOP to every elf
    and, unless it was the last round, the next round at once (FIFO: STOP arrives first)."""

    final_states = frozenset({S.MAYOR_DONE})
    TABLE = Table(
        S,
        {
            S.MAYOR_WAITING: {
                "CONTRACT_COMPLETED": on(
                    "count; all done: STOP, next round or MAYOR_DONE", "_completed", to=(S.MAYOR_DONE,)
                )
            },
            S.MAYOR_DONE: {},
        },
        never="a CONTRACT_COMPLETED comes only for a contract of the running round",
    )

    def __init__(self, elves: int, plan: list[tuple[int, ...]]) -> None:
        self.pid, self.n, self.plan, self.clock = MAYOR, elves, plan, LamportClock(0)
        self.state, self.round, self.done = S.INITIAL, 0, frozenset[int]()

    @property
    def name(self) -> str:
        return elf_name(MAYOR)

    def start(self) -> list:
        return self._begin()

    def _begin(self) -> list:
        self.round, self.done, self.state = self.round + 1, frozenset(), S.MAYOR_WAITING
        contracts = self.plan[self.round - 1]
        effects: list = [Note("round", {"round": self.round, "contracts": list(contracts)})]
        for elf in range(1, self.n + 1):
            ts = self.clock.tick()
            effects.append(
                Send(elf, InitContracts(sender=MAYOR, ts=ts, round=self.round, contracts=contracts))
            )
        return effects

    def _completed(self, msg: Completed) -> list:
        self.clock.receive(msg.ts)
        self.done |= {msg.contract}
        if len(self.done) < len(self.plan[self.round - 1]):
            return []
        final = self.round == len(self.plan)
        effects: list = [
            Send(elf, Stop(sender=MAYOR, ts=self.clock.tick(), round=self.round, final=final))
            for elf in range(1, self.n + 1)
        ]
        if final:
            self.state = S.MAYOR_DONE
            return effects
        return effects + self._begin()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"CONTRACT_COMPLETED": []} if self.state == S.MAYOR_WAITING else {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.round, self.done)


BUSY = (S.INITIAL, S.ELF_REQUESTING, S.ELF_WAIT_FOR_RELEASE, S.ELF_CRITICAL)  # an elf's states but DONE
LEDGER = {
    "LEDGER_REQUEST": on("answer, or defer if my request comes first", "_ask"),
    "LEDGER_REPLY": on("count; all in: take what I can", "_grant", to=BUSY),
    "LEDGER_UPDATE": on("note what was taken", "_update"),
    "RELEASE": on("note what was given back; enough now: ask", "_release", to=(S.ELF_REQUESTING,)),
}
STOPPED = on("round over (final: ELF_DONE)", "_stop", to=(S.INITIAL, S.ELF_DONE))


class Elf(Protocol):
    final_states = frozenset({S.ELF_DONE})
    TABLE = Table(
        S,
        {
            S.INITIAL: {
                **LEDGER,
                "INIT_CONTRACTS": on("a new round: ask", "_init", to=(S.ELF_REQUESTING,)),
                "STOP": STOPPED,
            },
            S.ELF_REQUESTING: {
                **LEDGER,
                "INIT_CONTRACTS": on("a new round (my request still runs)", "_init"),
                "STOP": STOPPED,
            },
            S.ELF_WAIT_FOR_RELEASE: {**LEDGER, "STOP": never("I hold a contract of the round")},
            S.ELF_CRITICAL: {
                **LEDGER,
                "STOP": never("I hold a contract of the round"),
                "exit": on("done: release to all, COMPLETED; ask again", "_finish", to=BUSY),
            },
            S.ELF_DONE: {**LEDGER, "STOP": ignore("cannot come: the last STOP was")},
        },
        never="INIT_CONTRACTS comes after the round's STOP (FIFO from the mayor)",
    )

    def __init__(self, pid: int, n: int, pins: int, poison: int, pins_per_elf: int, per_hamster: int) -> None:
        self.pid, self.n, self.clock, self.state = pid, n, LamportClock(0), S.INITIAL
        self.pins_per_elf, self.per_hamster = pins_per_elf, per_hamster
        self.round, self.active, self.contracts = 0, False, ()
        self.taken: dict[int, int] = {}  # the ledger: round → contracts taken,
        self.free = {PINS: pins, POISON: poison}  # and units free, as far as I know
        self.holding: tuple[int, int] | None = None  # (contract, hamsters) of my round
        self.has = {PINS: 0, POISON: 0}
        self.asking: int | None = None  # my request's timestamp
        self.replies: set[int] = set()
        self.deferred: list[tuple[int, int]] = []

    @property
    def name(self) -> str:
        return elf_name(self.pid)

    @property
    def finished(self) -> bool:
        return self.state == S.ELF_DONE and self.asking is None

    def _others(self) -> list[int]:
        return [j for j in range(1, self.n + 1) if j != self.pid]

    def _need(self) -> tuple[str, int] | None:
        """What I take next and how many: None when I hold all I need or nothing is left."""
        if self.holding is None:
            left = self.active and self.taken.get(self.round, 0) < len(self.contracts)
            return ("contract", 1) if left else None
        if not self.has[PINS]:
            return PINS, self.pins_per_elf
        return (POISON, self.holding[1] * self.per_hamster) if not self.has[POISON] else None

    def _go_on(self) -> list:
        """Ask for the lock when what I need next may be there; else wait or idle."""
        need = self._need()
        if self.asking is not None:
            self.state = S.ELF_REQUESTING
            return []
        if need is None:
            self.state = S.ELF_CRITICAL if self.has[POISON] else S.INITIAL
            return []
        kind, units = need
        if kind != "contract" and self.free[kind] < units:
            self.state = S.ELF_WAIT_FOR_RELEASE
            return []
        self.state, self.asking, self.replies = S.ELF_REQUESTING, self.clock.tick(), set()
        effects: list = [Send(j, Ask(sender=self.pid, ts=self.asking)) for j in self._others()]
        return effects + (self._critical() if not self._others() else [])

    # -- the lock (Ricart–Agrawala) ---------------------------------------------------------------
    def _ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        if self.asking is not None and (self.asking, self.pid) < (msg.ts, msg.sender):
            self.deferred.append((msg.sender, msg.ts))
            return []
        return [Send(msg.sender, Grant(sender=self.pid, ts=self.clock.tick(), answers=msg.ts))]

    def _grant(self, msg: Grant) -> list:
        self.clock.receive(msg.ts)
        if msg.answers == self.asking:
            self.replies.add(msg.sender)
        return self._critical() if len(self.replies) == self.n - 1 else []

    def _critical(self) -> list:
        """Holding the lock: take the next contract, pins, poison while there are enough; tell
        everyone; give the lock on."""
        effects: list = []
        took = {"contract": 0, PINS: 0, POISON: 0}
        while (need := self._need()) is not None:
            kind, units = need
            if kind == "contract":
                index = self.taken[self.round] = self.taken.get(self.round, 0) + 1
                self.holding, took["contract"] = (index, self.contracts[index - 1]), index
                effects.append(Enter(contract_resource(self.round, index)))
            elif self.free[kind] >= units:
                self.free[kind] -= units
                self.has[kind] = took[kind] = units
                effects.append(Enter(kind, units))
            else:
                break
        for j in self._others() if any(took.values()) else []:  # took: contract, pins, poison
            effects.append(Send(j, Update(sender=self.pid, ts=self.clock.tick(), round=self.round, **took)))
        for j, ts in self.deferred:
            effects.append(Send(j, Grant(sender=self.pid, ts=self.clock.tick(), answers=ts)))
        self.asking, self.replies, self.deferred = None, set(), []
        if self.state == S.ELF_DONE:
            return effects
        effects += self._go_on()
        if self.state == S.ELF_CRITICAL:
            effects.append(Schedule("exit", "work"))
        return effects

    def _update(self, msg: Update) -> list:
        self.clock.receive(msg.ts)
        if msg.contract:
            self.taken[msg.round] = max(self.taken.get(msg.round, 0), msg.contract)
        self.free[PINS] -= msg.pins
        self.free[POISON] -= msg.poison
        return []

    def _release(self, msg: Release) -> list:
        self.clock.receive(msg.ts)
        self.free[PINS] += msg.pins
        self.free[POISON] += msg.poison
        return self._go_on() if self.state == S.ELF_WAIT_FOR_RELEASE else []

    # -- the mayor's rounds and the work ----------------------------------------------------------
    def _init(self, msg: InitContracts) -> list:
        self.clock.receive(msg.ts)
        self.round, self.contracts, self.active = msg.round, msg.contracts, True
        return self._go_on()

    def _stop(self, msg: Stop) -> list:
        self.clock.receive(msg.ts)
        self.active = False
        if msg.final:
            self.state = S.ELF_DONE
        elif self.asking is None:
            self.state = S.INITIAL
        return []

    def _finish(self, _action: str) -> list:
        index, hamsters = self.holding  # type: ignore[misc]
        pins, poison = self.has[PINS], self.has[POISON]
        effects: list = [
            Note("contract_done", {"round": self.round, "contract": index, "hamsters": hamsters}),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(self.round, index)),
        ]
        self.free[PINS] += pins
        self.free[POISON] += poison
        self.holding, self.has = None, {PINS: 0, POISON: 0}
        for j in self._others():
            effects.append(Send(j, Release(sender=self.pid, ts=self.clock.tick(), pins=pins, poison=poison)))
        done = Completed(sender=self.pid, ts=self.clock.tick(), round=self.round, contract=index)
        return effects + [Send(MAYOR, done)] + self._go_on()

    # -- what the tools ask -----------------------------------------------------------------------
    def wants(self) -> str | None:
        need = self._need() if self.state in (S.ELF_REQUESTING, S.ELF_WAIT_FOR_RELEASE) else None
        return need[0] if need else None

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == S.ELF_REQUESTING:
            return {"LEDGER_REPLY": [j for j in self._others() if j not in self.replies]}
        if self.state == S.ELF_WAIT_FOR_RELEASE:
            return {"RELEASE": []}
        if self.state == S.INITIAL:
            return {"STOP" if self.active else "INIT_CONTRACTS": [MAYOR]}
        return {}

    def snapshot(self) -> Any:
        return (
            self.state,
            self.clock.time,
            self.round,
            self.active,
            self.contracts,
            tuple(sorted(self.taken.items())),
            self.free[PINS],
            self.free[POISON],
            self.holding,
            self.has[PINS],
            self.has[POISON],
            self.asking,
            frozenset(self.replies),
            tuple(self.deferred),
        )


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    params = town(processes, options, seed)  # the problem's: refuses what could never finish
    plan = [tuple(r) for r in params["plan"]]
    protocols: dict[int, Protocol] = {MAYOR: Mayor(processes, plan)}
    for pid in range(1, processes + 1):
        protocols[pid] = Elf(
            pid,
            processes,
            params["pins"],
            params["poison"],
            params["pins_per_elf"],
            params["poison_per_hamster"],
        )
    names = {pid: elf_name(pid) for pid in protocols}
    capacities = {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]}
    return Setup(NAME, protocols, names, CODEC, capacities, params)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers without an arbiter: a ledger every elf keeps, changed under a Ricart–Agrawala lock",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
