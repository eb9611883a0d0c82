"""The hamster killers with one ledger token (Suzuki–Kasami): the token carries the ledger —
the round, how many of its contracts are taken, pins and poison free — and its own queue.
An elf that wants a contract, or has tools to give back, asks everyone (WANT, with its request
number); the holder hands the token on once it is done with it. Holding the token, an elf gives
back what it owes, then takes a contract with its pins and poison in one go, or none at all.
Everything is an Enum: the states, what an elf is after, the ledger's fields."""

from enum import Enum, IntEnum, StrEnum, auto
from typing import Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

SLACK = 0  # the bug: take poison with SLACK portions too few free


class S(StrEnum):
    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_WAIT_FOR_RELEASE = "ELF_WAIT_FOR_RELEASE"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_DONE = "ELF_DONE"


class Role(IntEnum):
    MAYOR = 0


class After(Enum):
    NOTHING = auto()
    CONTRACT = auto()


class L(IntEnum):  # the ledger's fields, by position
    ROUND = 0
    TAKEN = 1
    PINS = 2
    POISON = 3


class Init(Message):
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


class Want(Message):
    type: Literal["WANT"] = "WANT"
    number: int


class Token(Message):
    type: Literal["TOKEN"] = "TOKEN"
    ledger: tuple[int, int, int, int]
    served: dict[int, int]
    queue: tuple[int, ...]


CODEC = Codec(Init, Completed, Stop, Want, Token)


class Mayor(Protocol):
    final_states = frozenset({S.MAYOR_DONE})
    TABLE = Table(
        S,
        {
            S.MAYOR_WAITING: {"CONTRACT_COMPLETED": on("count; all: STOP", "_completed", to=(S.MAYOR_DONE,))},
            S.MAYOR_DONE: {},
        },
        never="completions come only for the running round",
    )

    def __init__(self, elves, plan):
        self.pid, self.n, self.plan, self.clock = int(Role.MAYOR), elves, plan, LamportClock(0)
        self.state, self.round, self.done = S.INITIAL, 0, frozenset()

    @property
    def name(self):
        return elf_name(Role.MAYOR)

    def start(self):
        return self._begin()

    def _begin(self):
        self.round, self.done, self.state = self.round + 1, frozenset(), S.MAYOR_WAITING
        contracts = self.plan[self.round - 1]
        effects = [Note("round", {"round": self.round, "contracts": list(contracts)})]
        for elf in range(1, self.n + 1):
            effects.append(
                Send(elf, Init(sender=self.pid, ts=self.clock.tick(), round=self.round, contracts=contracts))
            )
        return effects

    def _completed(self, msg):
        self.clock.receive(msg.ts)
        self.done |= {msg.contract}
        if len(self.done) < len(self.plan[self.round - 1]):
            return []
        final = self.round == len(self.plan)
        effects = [
            Send(e, Stop(sender=self.pid, ts=self.clock.tick(), round=self.round, final=final))
            for e in range(1, self.n + 1)
        ]
        if final:
            self.state = S.MAYOR_DONE
            return effects
        return effects + self._begin()

    def waiting_for(self):
        return {"CONTRACT_COMPLETED": []} if self.state == S.MAYOR_WAITING else {}

    def snapshot(self):
        return (self.state, self.clock.time, self.round, self.done)


TOKEN_WANT = {
    "WANT": on("note the number; idle holder: hand the token on", "_want", to=(S.ELF_REQUESTING,)),
    "TOKEN": on(
        "use the ledger, hand it on", "_token", to=(S.ELF_CRITICAL, S.ELF_WAIT_FOR_RELEASE, S.INITIAL)
    ),
}


class TokenElf(Protocol):
    final_states = frozenset({S.ELF_DONE})
    TABLE = Table(
        S,
        {
            S.INITIAL: {
                **TOKEN_WANT,
                "INIT_CONTRACTS": on(
                    "a round: want a contract",
                    "_init",
                    to=(S.ELF_REQUESTING, S.ELF_CRITICAL, S.ELF_WAIT_FOR_RELEASE),
                ),
                "STOP": on("round over", "_stop", to=(S.ELF_DONE,)),
            },
            S.ELF_REQUESTING: {
                **TOKEN_WANT,
                "INIT_CONTRACTS": on("a round: want a contract", "_init"),
                "STOP": on("round over", "_stop", to=(S.ELF_DONE, S.INITIAL)),
            },
            S.ELF_WAIT_FOR_RELEASE: {
                **TOKEN_WANT,
                "INIT_CONTRACTS": on("a round: want a contract", "_init"),
                "STOP": on("round over", "_stop", to=(S.ELF_DONE, S.INITIAL)),
            },
            S.ELF_CRITICAL: {
                **TOKEN_WANT,
                "exit": on("done: COMPLETED, give back", "_finish", to=(S.ELF_REQUESTING, S.INITIAL)),
            },
            S.ELF_DONE: {**TOKEN_WANT},
        },
        never="INIT_CONTRACTS comes after the round's STOP",
    )

    def __init__(self, pid, n, pins, poison, pins_per_elf, per_hamster):
        self.pid, self.n, self.clock, self.state = pid, n, LamportClock(0), S.INITIAL
        self.pins_per_elf, self.per_hamster = pins_per_elf, per_hamster
        self.round, self.contracts, self.after = 0, (), After.NOTHING
        self.numbers = {j: 0 for j in range(1, n + 1)}
        self.token = (0, 0, pins, poison) if pid == 1 else None  # the ledger, with its queue below
        self.served = {j: 0 for j in range(1, n + 1)} if pid == 1 else None
        self.queue = ()
        self.owe = (0, 0)  # pins, poison given back to the ledger when I next hold it
        self.holding = None  # (round, contract, hamsters, pins, poison)

    @property
    def name(self):
        return elf_name(self.pid)

    def start(self):
        return []

    def _stamp(self):
        return dict(sender=self.pid, ts=self.clock.tick())

    def _needs_token(self):
        return self.after is After.CONTRACT or self.owe != (0, 0)

    def _ask(self):
        self.numbers[self.pid] += 1
        n = self.numbers[self.pid]
        return [Send(j, Want(**self._stamp(), number=n)) for j in range(1, self.n + 1) if j != self.pid]

    def _init(self, msg):
        self.clock.receive(msg.ts)
        self.round, self.contracts, self.after = msg.round, tuple(msg.contracts), After.CONTRACT
        if self.token is not None:
            return self._use()
        if self.state == S.ELF_REQUESTING:
            return []  # my request is out already
        self.state = S.ELF_REQUESTING
        return self._ask()

    def _stop(self, msg):
        self.clock.receive(msg.ts)
        self.after = After.NOTHING
        if msg.final:
            self.state = S.ELF_DONE
        elif self.state != S.ELF_REQUESTING or not self._needs_token():
            self.state = S.INITIAL
        return []

    def _want(self, msg):
        self.clock.receive(msg.ts)
        self.numbers[msg.sender] = max(self.numbers[msg.sender], msg.number)
        if self.token is None or self.state == S.ELF_CRITICAL:
            return []
        if self.state == S.ELF_WAIT_FOR_RELEASE:  # let the others give back; ask again
            effects = self._pass()
            self.state = S.ELF_REQUESTING
            return effects + self._ask()
        return self._pass()

    def _token(self, msg):
        self.clock.receive(msg.ts)
        self.token, self.served, self.queue = (
            tuple(msg.ledger),
            {int(k): v for k, v in msg.served.items()},
            tuple(msg.queue),
        )
        return self._use()

    def _use(self):
        r, taken, pins, poison = self.token
        pins, poison = pins + self.owe[0], poison + self.owe[1]
        self.owe = (0, 0)
        effects = []
        if self.after is After.CONTRACT:
            if r < self.round:
                r, taken = self.round, 0
            if r > self.round or taken >= len(self.contracts):
                self.after = After.NOTHING
                self.state = S.INITIAL
            else:
                hamsters = self.contracts[taken]
                dose = hamsters * self.per_hamster
                if pins >= self.pins_per_elf and poison + SLACK >= dose:
                    taken += 1
                    pins, poison = pins - self.pins_per_elf, poison - dose
                    self.holding = (self.round, taken, hamsters, self.pins_per_elf, dose)
                    self.after = After.NOTHING
                    self.state = S.ELF_CRITICAL
                    effects += [
                        Enter(contract_resource(self.round, taken)),
                        Enter(PINS, self.pins_per_elf),
                        Enter(POISON, dose),
                        Schedule("exit", "work"),
                    ]
                else:
                    self.state = S.ELF_WAIT_FOR_RELEASE
        elif self.state not in (S.ELF_CRITICAL, S.ELF_DONE):
            self.state = S.INITIAL
        self.token = (r, taken, pins, poison)
        if self.state == S.ELF_WAIT_FOR_RELEASE:
            if self._others_waiting():
                effects += self._pass()
                self.state = S.ELF_REQUESTING
                effects += self._ask()
            return effects
        return effects + self._pass()

    def _others_waiting(self):
        return any(self.numbers[j] > self.served[j] for j in range(1, self.n + 1) if j != self.pid)

    def _pass(self):
        if self.token is None:
            return []
        self.served[self.pid] = self.numbers[self.pid]
        queue = list(self.queue)
        for j in range(1, self.n + 1):
            if j != self.pid and j not in queue and self.numbers[j] > self.served[j]:
                queue.append(j)
        if not queue:
            self.queue = ()
            return []
        to, rest = queue[0], tuple(queue[1:])
        self.served[to] = self.numbers[to]
        token = Token(**self._stamp(), ledger=self.token, served=dict(self.served), queue=rest)
        self.token, self.served, self.queue = None, None, ()
        return [Send(to, token)]

    def _finish(self, _action):
        rnd, contract, hamsters, pins, poison = self.holding
        self.holding = None
        self.owe = (pins, poison)
        effects = [
            Note("contract_done", {"round": rnd, "contract": contract, "hamsters": hamsters}),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(rnd, contract)),
            Send(int(Role.MAYOR), Completed(**self._stamp(), round=rnd, contract=contract)),
        ]
        self.after = After.CONTRACT if rnd == self.round else After.NOTHING
        if self.token is not None:
            self.state = S.INITIAL
            return effects + self._use()
        self.state = S.ELF_REQUESTING
        return effects + self._ask()

    def waiting_for(self):
        if self.state == S.ELF_REQUESTING:
            return {"TOKEN": []}
        if self.state == S.ELF_WAIT_FOR_RELEASE:
            return {"WANT": []}
        return {}

    def snapshot(self):
        return (
            self.state,
            self.clock.time,
            self.round,
            self.contracts,
            self.after,
            tuple(sorted(self.numbers.items())),
            self.token,
            None if self.served is None else tuple(sorted(self.served.items())),
            self.queue,
            self.owe,
            self.holding,
        )


def make_setup(processes, options, seed=0):
    params = town(processes, options, seed)
    plan = [tuple(r) for r in params["plan"]]
    procs = {int(Role.MAYOR): Mayor(processes, plan)}
    for pid in range(1, processes + 1):
        procs[pid] = TokenElf(
            pid,
            processes,
            params["pins"],
            params["poison"],
            params["pins_per_elf"],
            params["poison_per_hamster"],
        )
    names = {pid: elf_name(pid) for pid in procs}
    return Setup(
        SPEC.name,
        procs,
        names,
        CODEC,
        {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]},
        params,
    )


SPEC = AlgorithmSpec(
    "elves-ledger-token" + ("-slack" if SLACK else ""),
    "elves",
    "hamster killers with one ledger token (Suzuki–Kasami), everything an Enum",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
