"""The hamster killers, the mayor handing out work from a deque: its state is collections.deque
and frozen dataclasses.

Written from the user docs only (docs/elves.md, docs/problems-and-solutions.md). The mayor keeps
the round's contracts not yet given in a ``deque`` of frozen ``Contract``s, the elves waiting for
tools in a ``deque`` of pids (first come, first served: ``popleft``), and the town's store as a
frozen ``Store`` it replaces on every change. An elf keeps its job in a ``deque(maxlen=1)``.
An elf asks (WANT); the mayor answers GRANT (a contract with its tools), NONE (nothing left this
round) or nothing yet (the elf waits in the deque until tools come back with a DONE).

COUNT_TOOLS = False is its bug: the mayor grants without looking at its store, so more pins or
poison are out than the town has.
"""

from collections import deque
from dataclasses import dataclass, replace
from enum import Enum, StrEnum
from typing import Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o11-elves-deque"
COUNT_TOOLS = True  # False: grant whatever the store holds
MAYOR = 0


class S(StrEnum):
    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_DONE = "ELF_DONE"


class Answer(Enum):
    GRANT = "grant"
    NONE = "none"
    QUEUE = "queue"


class InitContracts(Message):
    type: Literal["INIT_CONTRACTS"] = "INIT_CONTRACTS"
    round: int
    contracts: tuple[int, ...]


class Want(Message):
    type: Literal["WANT"] = "WANT"
    round: int


class Grant(Message):
    type: Literal["GRANT"] = "GRANT"
    round: int
    contract: int
    hamsters: int
    pins: int
    poison: int


class NoWork(Message):
    type: Literal["NONE"] = "NONE"
    round: int


class Done(Message):
    type: Literal["DONE"] = "DONE"
    round: int
    contract: int
    pins: int
    poison: int


class Stop(Message):
    type: Literal["STOP"] = "STOP"
    round: int
    final: bool


CODEC = Codec(InitContracts, Want, Grant, NoWork, Done, Stop)


@dataclass(frozen=True)
class Contract:
    number: int
    hamsters: int


@dataclass(frozen=True)
class Store:
    pins: int
    poison: int

    def has(self, pins: int, poison: int) -> bool:
        return not COUNT_TOOLS or (self.pins >= pins and self.poison >= poison)


@dataclass(frozen=True)
class Rules:
    pins_per_elf: int
    poison_per_hamster: int
    plan: tuple


class Mayor(Protocol):
    final_states = frozenset({S.MAYOR_DONE})
    TABLE = Table(
        S,
        {
            S.MAYOR_WAITING: {
                "WANT": on("grant, keep waiting or say none", "on_want"),
                "DONE": on("tools back; serve the waiting; maybe STOP", "on_done", to=(S.MAYOR_DONE,)),
            },
            S.MAYOR_DONE: {"WANT": ignore("an ask of the last round, after it ended", "tick")},
        },
        never="elves speak only after INIT_CONTRACTS",
    )

    def __init__(self, elves: int, store: Store, rules: Rules) -> None:
        self.pid, self.n, self.clock = MAYOR, elves, LamportClock(0)
        self.state, self.rules, self.store = S.INITIAL, rules, store
        self.round = 0
        self.free: deque[Contract] = deque()
        self.waiting: deque[int] = deque()
        self.out: frozenset[int] = frozenset()

    @property
    def name(self):
        return elf_name(MAYOR)

    def start(self):
        return self.begin()

    def tick(self, msg):
        self.clock.receive(msg.ts)
        return []

    def begin(self):
        self.round += 1
        plan = self.rules.plan[self.round - 1]
        self.free = deque(Contract(i, h) for i, h in enumerate(plan, 1))
        self.state = S.MAYOR_WAITING
        fx = [Note("round", {"round": self.round, "contracts": list(plan)})]
        return fx + [
            Send(
                e, InitContracts(sender=MAYOR, ts=self.clock.tick(), round=self.round, contracts=tuple(plan))
            )
            for e in range(1, self.n + 1)
        ]

    def _tools(self, c: Contract) -> tuple[int, int]:
        return self.rules.pins_per_elf, c.hamsters * self.rules.poison_per_hamster

    def serve(self, elf: int) -> list:
        if not self.free:
            return [Send(elf, NoWork(sender=MAYOR, ts=self.clock.tick(), round=self.round))]
        fits = [c for c in self.free if self.store.has(*self._tools(c))]
        if not fits:
            self.waiting.append(elf)
            return []
        c = fits[0]
        self.free.remove(c)
        pins, poison = self._tools(c)
        self.store = replace(self.store, pins=self.store.pins - pins, poison=self.store.poison - poison)
        self.out = self.out | {c.number}
        grant = Grant(
            sender=MAYOR, ts=self.clock.tick(), round=self.round, contract=c.number,
            hamsters=c.hamsters, pins=pins, poison=poison,
        )  # fmt: skip
        return [Send(elf, grant)]

    def on_want(self, msg):
        self.clock.receive(msg.ts)
        return self.serve(msg.sender) if msg.round == self.round else []

    def on_done(self, msg):
        self.clock.receive(msg.ts)
        self.store = replace(
            self.store, pins=self.store.pins + msg.pins, poison=self.store.poison + msg.poison
        )
        self.out = self.out - {msg.contract}
        fx: list = []
        for _ in range(len(self.waiting)):
            fx += self.serve(self.waiting.popleft())
        if self.free or self.out:
            return fx
        final = self.round == len(self.rules.plan)
        fx += [
            Send(e, Stop(sender=MAYOR, ts=self.clock.tick(), round=self.round, final=final))
            for e in range(1, self.n + 1)
        ]
        if final:
            self.state = S.MAYOR_DONE
            return fx
        return fx + self.begin()

    def waiting_for(self):
        return {"DONE": []} if self.state == S.MAYOR_WAITING else {}

    def snapshot(self):
        return (
            self.state,
            self.clock.time,
            self.round,
            tuple(self.free),
            tuple(self.waiting),
            self.out,
            self.store,
        )


@dataclass(frozen=True)
class Job:
    round: int
    contract: int
    hamsters: int
    pins: int
    poison: int


class Elf(Protocol):
    final_states = frozenset({S.ELF_DONE})
    TABLE = Table(
        S,
        {
            S.INITIAL: {
                "INIT_CONTRACTS": on("ask the mayor for work", "on_init", to=(S.ELF_REQUESTING,)),
                "STOP": on("round over", "on_stop", to=(S.ELF_DONE,)),
            },
            S.ELF_REQUESTING: {
                "GRANT": on("take the contract and the tools", "on_grant", to=(S.ELF_CRITICAL,)),
                "NONE": on("nothing left: wait for STOP", "on_none", to=(S.INITIAL,)),
                "STOP": on("round over (my ask was late)", "on_stop", to=(S.INITIAL, S.ELF_DONE)),
            },
            S.ELF_CRITICAL: {
                "exit": on("contract done: give back, ask again", "on_exit", to=(S.ELF_REQUESTING,))
            },
            S.ELF_DONE: {},
        },
        never="the mayor answers only an ask",
    )

    def __init__(self, pid):
        self.pid, self.clock, self.state = pid, LamportClock(0), S.INITIAL
        self.round, self.job = 0, deque(maxlen=1)

    def start(self):
        return []

    def ask(self):
        self.state = S.ELF_REQUESTING
        return [Send(MAYOR, Want(sender=self.pid, ts=self.clock.tick(), round=self.round))]

    def on_init(self, msg):
        self.clock.receive(msg.ts)
        self.round = msg.round
        return self.ask()

    def on_grant(self, msg):
        self.clock.receive(msg.ts)
        self.job.append(Job(msg.round, msg.contract, msg.hamsters, msg.pins, msg.poison))
        self.state = S.ELF_CRITICAL
        return [
            Enter(contract_resource(msg.round, msg.contract)),
            Enter(PINS, msg.pins),
            Enter(POISON, msg.poison),
            Schedule("exit", "work"),
        ]

    def on_none(self, msg):
        self.clock.receive(msg.ts)
        self.state = S.INITIAL
        return []

    def on_stop(self, msg):
        self.clock.receive(msg.ts)
        self.state = S.ELF_DONE if msg.final else S.INITIAL
        return []

    def on_exit(self, _action):
        j = self.job.popleft()
        fx = [
            Note("contract_done", {"round": j.round, "contract": j.contract, "hamsters": j.hamsters}),
            Exit(POISON, j.poison),
            Exit(PINS, j.pins),
            Exit(contract_resource(j.round, j.contract)),
            Send(
                MAYOR,
                Done(
                    sender=self.pid,
                    ts=self.clock.tick(),
                    round=j.round,
                    contract=j.contract,
                    pins=j.pins,
                    poison=j.poison,
                ),
            ),
        ]
        return fx + self.ask()

    def waiting_for(self):
        if self.state == S.ELF_REQUESTING:
            return {"GRANT": [MAYOR]}
        if self.state == S.INITIAL:
            return {"INIT_CONTRACTS": [MAYOR]}
        return {}

    def snapshot(self):
        return (self.state, self.clock.time, self.round, tuple(self.job))


def make_setup(processes, options, seed=0):
    params = town(processes, options, seed)
    rules = Rules(
        params["pins_per_elf"], params["poison_per_hamster"], tuple(tuple(r) for r in params["plan"])
    )
    protocols = {MAYOR: Mayor(processes, Store(params["pins"], params["poison"]), rules)}
    for pid in range(1, processes + 1):
        protocols[pid] = Elf(pid)
    names = {pid: elf_name(pid) for pid in protocols}
    capacities = {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]}
    return Setup(NAME, protocols, names, CODEC, capacities, params)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: the mayor hands out work from a deque, its store a frozen dataclass",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
