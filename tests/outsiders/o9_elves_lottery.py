"""The hamster killers: the mayor keeps the books, each elf draws the contract it asks for.

Written from the user docs only. A ``Townsfolk`` base class keeps what the mayor and the elves
share (a clock, the round); ``Mayor`` and ``Elf`` are its subclasses. An elf picks the contract
it asks for at random among those it believes free, with a ``random.Random`` of its own (seeded
by its pid, kept in its state, as the docs allow). The mayor grants it with its tools, says
which are still free when it is taken (the elf draws again), or keeps the asker in a
``collections.deque`` until the tools come back.
"""

import random
from collections import deque
from enum import StrEnum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o9-lottery"
MAYOR = 0
DRAW = "own"  # "module": draw with the module's random.choice instead of the elf's own generator
COUNT_TOOLS = True  # False: the mayor hands out pins without counting them


class S(StrEnum):
    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_DONE = "ELF_DONE"


class Init(Message):
    type: Literal["INIT_CONTRACTS"] = "INIT_CONTRACTS"
    round: int
    contracts: tuple[int, ...]


class Ask(Message):
    type: Literal["ASK"] = "ASK"
    round: int
    contract: int  # 0: any


class Grant(Message):
    type: Literal["GRANT"] = "GRANT"
    round: int
    contract: int
    hamsters: int
    pins: int
    poison: int


class Taken(Message):
    type: Literal["TAKEN"] = "TAKEN"
    round: int
    free: tuple[int, ...]


class NoWork(Message):
    type: Literal["NO_WORK"] = "NO_WORK"
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


CODEC = Codec(Init, Ask, Grant, Taken, NoWork, Done, Stop)


class Townsfolk(Protocol):
    """What everyone in town does: keep a Lamport clock and the round."""

    def __init__(self, pid: int) -> None:
        self.pid, self.clock, self.round = pid, LamportClock(0), 0

    @property
    def name(self) -> str:
        return elf_name(self.pid)

    def heard(self, msg: Message) -> None:
        self.clock.receive(msg.ts)

    def stamp(self) -> int:
        return self.clock.tick()

    def tick(self, msg: Message) -> list:
        self.heard(msg)
        return []


class Mayor(Townsfolk):
    final_states = frozenset({S.MAYOR_DONE})
    TABLE = Table(
        S,
        {
            S.MAYOR_WAITING: {
                "ASK": on("grant, queue, or say what is free", "on_ask"),
                "DONE": on("take the tools back; maybe STOP", "on_done", to=(S.MAYOR_DONE,)),
            },
            S.MAYOR_DONE: {"ASK": ignore("an ask of the last round, after it ended", "tick")},
        },
        never="elves speak only after INIT_CONTRACTS",
    )

    def __init__(self, elves: int, params: dict[str, Any]) -> None:
        super().__init__(MAYOR)
        self.n, self.state = elves, S.INITIAL
        self.plan = tuple(tuple(r) for r in params["plan"])
        self.per_elf, self.per_hamster = params["pins_per_elf"], params["poison_per_hamster"]
        self.pins, self.poison = params["pins"], params["poison"]
        self.contracts: tuple[int, ...] = ()
        self.taken: set[int] = set()
        self.done: set[int] = set()
        self.waiting: deque[tuple[int, int]] = deque()  # (elf, contract) until the tools are back

    def start(self) -> list:
        return self.begin()

    def begin(self) -> list:
        self.round += 1
        self.contracts, self.taken, self.done = self.plan[self.round - 1], set(), set()
        self.state = S.MAYOR_WAITING
        out: list = [Note("round", {"round": self.round, "contracts": list(self.contracts)})]
        init = [
            (e, Init(sender=MAYOR, ts=self.stamp(), round=self.round, contracts=self.contracts))
            for e in self.elves()
        ]
        return out + [Send(e, m) for e, m in init]

    def elves(self) -> range:
        return range(1, self.n + 1)

    def free(self) -> tuple[int, ...]:
        return tuple(c for c in range(1, len(self.contracts) + 1) if c not in self.taken)

    def serve(self, elf: int, contract: int) -> list:
        free = self.free()
        if not free:
            return [Send(elf, NoWork(sender=MAYOR, ts=self.stamp(), round=self.round))]
        if contract not in free:
            return [Send(elf, Taken(sender=MAYOR, ts=self.stamp(), round=self.round, free=free))]
        hamsters = self.contracts[contract - 1]
        pins, poison = self.per_elf, hamsters * self.per_hamster
        if COUNT_TOOLS and (self.pins < pins or self.poison < poison):
            self.waiting.append((elf, contract))
            return []
        self.taken.add(contract)
        self.pins, self.poison = self.pins - pins, self.poison - poison
        grant = Grant(
            sender=MAYOR,
            ts=self.stamp(),
            round=self.round,
            contract=contract,
            hamsters=hamsters,
            pins=pins,
            poison=poison,
        )
        return [Send(elf, grant)]

    def on_ask(self, msg: Ask) -> list:
        self.heard(msg)
        if msg.round != self.round:
            return []  # asked in a round that has ended
        return self.serve(msg.sender, msg.contract or (self.free() or (0,))[0])

    def on_done(self, msg: Done) -> list:
        self.heard(msg)
        self.done.add(msg.contract)
        self.pins, self.poison = self.pins + msg.pins, self.poison + msg.poison
        out: list = []
        for _ in range(len(self.waiting)):
            out += self.serve(*self.waiting.popleft())
        if len(self.done) < len(self.contracts):
            return out
        final = self.round == len(self.plan)
        out += [
            Send(e, Stop(sender=MAYOR, ts=self.stamp(), round=self.round, final=final)) for e in self.elves()
        ]
        if final:
            self.state = S.MAYOR_DONE
            return out
        return out + self.begin()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"DONE": []} if self.state is S.MAYOR_WAITING else {}

    def snapshot(self) -> Any:
        return (
            self.state,
            self.clock.time,
            self.round,
            frozenset(self.taken),
            frozenset(self.done),
            self.pins,
            self.poison,
            tuple(self.waiting),
        )


class Elf(Townsfolk):
    final_states = frozenset({S.ELF_DONE})
    TABLE = Table(
        S,
        {
            S.INITIAL: {
                "INIT_CONTRACTS": on("draw a contract and ask for it", "on_init", to=(S.ELF_REQUESTING,)),
                "STOP": on("round over", "on_stop", to=(S.ELF_DONE,)),
            },
            S.ELF_REQUESTING: {
                "GRANT": on("take the contract and its tools", "on_grant", to=(S.ELF_CRITICAL,)),
                "TAKEN": on("draw again among the free", "on_taken"),
                "NO_WORK": on("wait for STOP", "on_no_work", to=(S.INITIAL,)),
                "STOP": on(
                    "round over (my ask came after my last DONE)", "on_stop", to=(S.INITIAL, S.ELF_DONE)
                ),
            },
            S.ELF_CRITICAL: {"exit": on("done: give back, draw again", "on_exit", to=(S.ELF_REQUESTING,))},
            S.ELF_DONE: {},
        },
        never="the mayor answers only an ask, and stops a round only when every contract is done",
    )

    def __init__(self, pid: int) -> None:
        super().__init__(pid)
        self.state = S.INITIAL
        self.rng = random.Random(pid)
        self.hopes: tuple[int, ...] = ()  # contracts I believe free
        self.job: tuple[int, int, int, int] | None = None  # contract, hamsters, pins, poison

    def start(self) -> list:
        return []

    def draw(self) -> int:
        if not self.hopes:
            return 0
        return random.choice(self.hopes) if DRAW == "module" else self.rng.choice(self.hopes)

    def ask(self) -> list:
        self.state = S.ELF_REQUESTING
        pick = self.draw()
        return [Send(MAYOR, Ask(sender=self.pid, ts=self.stamp(), round=self.round, contract=pick))]

    def on_init(self, msg: Init) -> list:
        self.heard(msg)
        self.round, self.hopes = msg.round, tuple(range(1, len(msg.contracts) + 1))
        return self.ask()

    def on_taken(self, msg: Taken) -> list:
        self.heard(msg)
        self.hopes = msg.free
        return self.ask()

    def on_no_work(self, msg: NoWork) -> list:
        self.heard(msg)
        self.state, self.hopes = S.INITIAL, ()
        return []

    def on_grant(self, msg: Grant) -> list:
        self.heard(msg)
        self.job = (msg.contract, msg.hamsters, msg.pins, msg.poison)
        self.state = S.ELF_CRITICAL
        return [
            Enter(contract_resource(msg.round, msg.contract)),
            Enter(PINS, msg.pins),
            Enter(POISON, msg.poison),
            Schedule("exit", "work"),
        ]

    def on_exit(self, _action: str) -> list:
        assert self.job is not None
        (contract, hamsters, pins, poison), self.job = self.job, None
        self.hopes = tuple(c for c in self.hopes if c != contract)
        done = Done(
            sender=self.pid, ts=self.stamp(), round=self.round, contract=contract, pins=pins, poison=poison
        )
        return [
            Note("contract_done", {"round": self.round, "contract": contract, "hamsters": hamsters}),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(self.round, contract)),
            Send(MAYOR, done),
            *self.ask(),
        ]

    def on_stop(self, msg: Stop) -> list:
        self.heard(msg)
        self.state = S.ELF_DONE if msg.final else S.INITIAL
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is S.ELF_REQUESTING:
            return {"GRANT": [MAYOR]}
        return {"INIT_CONTRACTS": [MAYOR]} if self.state is S.INITIAL else {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.round, self.hopes, self.job, self.rng.getstate())


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    params = town(processes, options, seed)
    town_folk: dict[int, Protocol] = {MAYOR: Mayor(processes, params)}
    town_folk.update({pid: Elf(pid) for pid in range(1, processes + 1)})
    names = {pid: elf_name(pid) for pid in town_folk}
    capacities = {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]}
    return Setup(NAME, town_folk, names, CODEC, capacities, params)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: a mayor keeping the books, elves drawing contracts at random",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
