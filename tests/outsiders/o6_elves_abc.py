"""The hamster killers, mayor-arbitrated, as a class hierarchy: an abstract ``Townsfolk`` (ABC)
keeps the pid, the clock and the state behind a ``@property`` with a setter, and names what the
mayor and an elf must each say (``snapshot``, ``awaits``, abstract). The mayor keeps the whole
ledger (a frozen dataclass); an elf asks it for work and gets a contract with its tools in one
GRANT, or NONE.
LAX_PINS = True is its bug: the mayor hands out a contract without looking at the pins left."""

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from enum import Enum, StrEnum
from typing import Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o6-elves-abc"
LAX_PINS = False
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
class Ledger:
    round: int = 0
    contracts: tuple = ()
    taken: frozenset = frozenset()
    done: frozenset = frozenset()
    pins: int = 0
    poison: int = 0
    queue: tuple = ()


@dataclass
class Rules:
    pins_per_elf: int
    poison_per_hamster: int
    plan: tuple = field(default_factory=tuple)


def decide(ledger, rules):
    """What the mayor can give the next asker: (Answer, contract index or None)."""
    free = [i for i in range(1, len(ledger.contracts) + 1) if i not in ledger.taken]
    if not free:
        return Answer.NONE, None
    if ledger.pins < rules.pins_per_elf and not LAX_PINS:
        return Answer.QUEUE, None
    for i in free:
        if ledger.contracts[i - 1] * rules.poison_per_hamster <= ledger.poison:
            return Answer.GRANT, i
    return Answer.QUEUE, None


class Townsfolk(Protocol, ABC):
    """What the mayor and the elves share."""

    def __init__(self, pid):
        self.pid, self.clock, self._state = pid, LamportClock(0), S.INITIAL

    @property
    def state(self):
        return self._state

    @state.setter
    def state(self, value):
        self._state = S(value)

    @property
    def name(self):
        return elf_name(self.pid)

    @property
    @abstractmethod
    def awaits(self):
        """What I wait for now, from whom: ``waiting_for()``'s answer."""

    @abstractmethod
    def snapshot(self): ...

    def waiting_for(self):
        return self.awaits

    def tick(self, msg):
        self.clock.receive(msg.ts)
        return []


class Mayor(Townsfolk):
    final_states = frozenset({S.MAYOR_DONE})
    TABLE = Table(
        S,
        {
            S.MAYOR_WAITING: {
                "WANT": on("grant, queue or say none", "on_want"),
                "DONE": on("free the tools; maybe STOP", "on_done", to=(S.MAYOR_DONE,)),
            },
            S.MAYOR_DONE: {"WANT": ignore("an ask of the last round, after it ended", "tick")},
        },
        never="elves speak only after INIT_CONTRACTS",
    )

    def __init__(self, elves, plan, pins, poison, rules):
        super().__init__(MAYOR)
        self.n, self.rules = elves, rules
        self.ledger = Ledger(pins=pins, poison=poison)

    def start(self):
        return self.begin()

    def begin(self):
        r = self.ledger.round + 1
        contracts = tuple(self.rules.plan[r - 1])
        self.ledger = replace(self.ledger, round=r, contracts=contracts, taken=frozenset(), done=frozenset())
        self.state = S.MAYOR_WAITING
        fx = [Note("round", {"round": r, "contracts": list(contracts)})]
        return fx + [
            Send(e, InitContracts(sender=MAYOR, ts=self.clock.tick(), round=r, contracts=contracts))
            for e in range(1, self.n + 1)
        ]

    def serve(self, elf):
        answer, i = decide(self.ledger, self.rules)
        r = self.ledger.round
        if answer is Answer.NONE:
            return [Send(elf, NoWork(sender=MAYOR, ts=self.clock.tick(), round=r))]
        if answer is Answer.QUEUE:
            self.ledger = replace(self.ledger, queue=self.ledger.queue + (elf,))
            return []
        hamsters = self.ledger.contracts[i - 1]
        pins, poison = self.rules.pins_per_elf, hamsters * self.rules.poison_per_hamster
        self.ledger = replace(
            self.ledger,
            taken=self.ledger.taken | {i},
            pins=self.ledger.pins - pins,
            poison=self.ledger.poison - poison,
        )
        return [
            Send(
                elf,
                Grant(
                    sender=MAYOR,
                    ts=self.clock.tick(),
                    round=r,
                    contract=i,
                    hamsters=hamsters,
                    pins=pins,
                    poison=poison,
                ),
            )
        ]

    def on_want(self, msg):
        self.clock.receive(msg.ts)
        if msg.round != self.ledger.round:
            return []  # an ask of a round that ended
        return self.serve(msg.sender)

    def on_done(self, msg):
        self.clock.receive(msg.ts)
        led = self.ledger
        self.ledger = replace(
            led,
            done=led.done | {msg.contract},
            pins=led.pins + msg.pins,
            poison=led.poison + msg.poison,
            queue=(),
        )
        fx = []
        for elf in led.queue:
            fx += self.serve(elf)
        if len(self.ledger.done) < len(self.ledger.contracts):
            return fx
        final = self.ledger.round == len(self.rules.plan)
        fx += [
            Send(e, Stop(sender=MAYOR, ts=self.clock.tick(), round=self.ledger.round, final=final))
            for e in range(1, self.n + 1)
        ]
        if final:
            self.state = S.MAYOR_DONE
            return fx
        return fx + self.begin()

    @property
    def awaits(self):
        return {"DONE": []} if self.state == S.MAYOR_WAITING else {}

    def snapshot(self):
        return (self.state, self.clock.time, self.ledger)


@dataclass(frozen=True)
class Job:
    round: int
    contract: int
    hamsters: int
    pins: int
    poison: int


class Elf(Townsfolk):
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
        super().__init__(pid)
        self.round, self.job = 0, None

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
        self.job = Job(msg.round, msg.contract, msg.hamsters, msg.pins, msg.poison)
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
        j, self.job = self.job, None
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

    @property
    def awaits(self):
        if self.state == S.ELF_REQUESTING:
            return {"GRANT": [MAYOR]}
        if self.state == S.INITIAL:
            return {"INIT_CONTRACTS": [MAYOR]}
        return {}

    def snapshot(self):
        return (self.state, self.clock.time, self.round, self.job)


def make_setup(processes, options, seed=0):
    params = town(processes, options, seed)
    rules = Rules(
        params["pins_per_elf"], params["poison_per_hamster"], tuple(tuple(r) for r in params["plan"])
    )
    protocols = {MAYOR: Mayor(processes, rules.plan, params["pins"], params["poison"], rules)}
    for pid in range(1, processes + 1):
        protocols[pid] = Elf(pid)
    names = {pid: elf_name(pid) for pid in protocols}
    return Setup(
        NAME,
        protocols,
        names,
        CODEC,
        {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]},
        params,
    )


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: townsfolk of an abstract base; the mayor keeps the ledger",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
