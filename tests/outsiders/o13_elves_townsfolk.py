"""The hamster killers with the mayor as the arbiter, written by an OO enthusiast: a ``Townsfolk``
base class (the name, the peers, one ``_say`` for every send) and a ``Mayor`` and an ``Elf`` below
it, whose decisions read as properties (``mayor.can_hand_out``, ``elf.on_the_job``).

Written from docs/problems-and-solutions.md and docs/elves.md only. Each round the mayor sends
its contracts (ROUND); an elf asks for work (ASK); the mayor, oldest asker first, hands out the
next contract of the round with its pins and poison (JOB) once the town has enough of both; the
elf takes the contract, the pins, the poison, works, gives all back (DONE) and asks again. With
every contract of the round done the mayor says STOP (final on the last round) and starts the next.

Planted bug (module constant, edited by the tests):

* COUNT_POISON = False: the mayor counts the pins it hands out but not the poison: two jobs at once
  can hold more poison than the town has.
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

NAME = "o13-elves-townsfolk"
COUNT_POISON = True
MAYOR = 0


class S(StrEnum):
    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_DONE = "ELF_DONE"


class Round(Message):
    type: Literal["ROUND"] = "ROUND"
    round: int
    contracts: tuple[int, ...]


class Ask(Message):
    type: Literal["ASK"] = "ASK"
    round: int


class Job(Message):
    type: Literal["JOB"] = "JOB"
    round: int
    contract: int
    hamsters: int
    pins: int
    poison: int


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


CODEC = Codec(Round, Ask, Job, Done, Stop)


class Townsfolk(Protocol):
    """What the mayor and an elf share: who they are, who else lives in town, how they speak."""

    def __init__(self, pid: int, elves: int) -> None:
        self.pid, self.elves, self.clock, self.state = pid, elves, LamportClock(0), S.INITIAL

    @property
    def name(self) -> str:
        return elf_name(self.pid)

    @property
    def all_elves(self) -> range:
        return range(1, self.elves + 1)

    def _say(self, to: int, kind: type[Message], **fields: Any) -> Send:
        return Send(to, kind(sender=self.pid, ts=self.clock.tick(), **fields))

    def _heard(self, msg: Message) -> None:
        self.clock.receive(msg.ts)


class Mayor(Townsfolk):
    final_states = frozenset({S.MAYOR_DONE})
    TABLE = Table(
        S,
        {
            S.MAYOR_WAITING: {
                "ASK": on("queue the elf; hand out what the town has", "_on_ask"),
                "DONE": on("take the tools back; all done: STOP, next round", "_on_done", to=(S.MAYOR_DONE,)),
            },
            S.MAYOR_DONE: {"ASK": ignore("an elf asking after the last contract: no more work")},
        },
        never="a DONE comes only for a job of the running round",
    )

    def __init__(
        self, elves: int, plan: list[tuple[int, ...]], pins: int, poison: int, per_elf: int, per_hamster: int
    ) -> None:
        super().__init__(MAYOR, elves)
        self.plan, self.per_elf, self.per_hamster = plan, per_elf, per_hamster
        self.pins, self.poison = pins, poison
        self.round, self.next, self.done = 0, 0, 0
        self.askers: tuple[int, ...] = ()

    @property
    def contracts(self) -> tuple[int, ...]:
        return self.plan[self.round - 1]

    @property
    def round_over(self) -> bool:
        return self.done == len(self.contracts)

    @property
    def can_hand_out(self) -> bool:
        if not self.askers or self.next >= len(self.contracts):
            return False
        poison = self.contracts[self.next] * self.per_hamster
        return self.pins >= self.per_elf and (not COUNT_POISON or self.poison >= poison)

    def start(self) -> list:
        return self._begin()

    def _begin(self) -> list:
        self.round, self.next, self.done, self.askers = self.round + 1, 0, 0, ()
        self.state = S.MAYOR_WAITING
        out: list = [Note("round", {"round": self.round, "contracts": list(self.contracts)})]
        return out + [self._say(e, Round, round=self.round, contracts=self.contracts) for e in self.all_elves]

    def _hand_out(self) -> list:
        out = []
        while self.can_hand_out:
            elf, self.askers = self.askers[0], self.askers[1:]
            hamsters = self.contracts[self.next]
            self.next += 1
            poison = hamsters * self.per_hamster
            self.pins -= self.per_elf
            self.poison -= poison if COUNT_POISON else 0
            out.append(self._say(elf, Job, round=self.round, contract=self.next, hamsters=hamsters,
                                 pins=self.per_elf, poison=poison))  # fmt: skip
        return out

    def _on_ask(self, msg: Ask) -> list:
        self._heard(msg)
        if msg.round == self.round and msg.sender not in self.askers:
            self.askers += (msg.sender,)
        return self._hand_out()

    def _on_done(self, msg: Done) -> list:
        self._heard(msg)
        self.pins += msg.pins
        self.poison += msg.poison if COUNT_POISON else 0
        self.done += 1
        if not self.round_over:
            return self._hand_out()
        final = self.round == len(self.plan)
        out = [self._say(e, Stop, round=self.round, final=final) for e in self.all_elves]
        if final:
            self.state = S.MAYOR_DONE
            return out
        return out + self._begin()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"DONE": []} if self.state == S.MAYOR_WAITING else {}

    def snapshot(self) -> Any:
        return (
            self.state,
            self.clock.time,
            self.round,
            self.next,
            self.done,
            self.pins,
            self.poison,
            self.askers,
        )


STOPPED = on("round over (final: ELF_DONE)", "_on_stop", to=(S.INITIAL, S.ELF_DONE))


class Elf(Townsfolk):
    final_states = frozenset({S.ELF_DONE})
    TABLE = Table(
        S,
        {
            S.INITIAL: {"ROUND": on("ask for work", "_on_round", to=(S.ELF_REQUESTING,)), "STOP": STOPPED},
            S.ELF_REQUESTING: {
                "JOB": on("take contract, pins, poison; work", "_on_job", to=(S.ELF_CRITICAL,)),
                "STOP": STOPPED,
            },
            S.ELF_CRITICAL: {
                "STOP": never("the mayor waits for my DONE before it stops the round"),
                "exit": on("done: give all back, DONE, ask again", "_finish", to=(S.ELF_REQUESTING,)),
            },
            S.ELF_DONE: {},
        },
        never="a JOB answers my ASK; a ROUND comes after the STOP before it",
    )

    def __init__(self, pid: int, elves: int) -> None:
        super().__init__(pid, elves)
        self.round = 0
        self.job: tuple[int, int, int, int] | None = None  # contract, hamsters, pins, poison

    @property
    def on_the_job(self) -> bool:
        return self.job is not None

    def _ask(self) -> list:
        self.state = S.ELF_REQUESTING
        return [self._say(MAYOR, Ask, round=self.round)]

    def _on_round(self, msg: Round) -> list:
        self._heard(msg)
        self.round = msg.round
        return self._ask()

    def _on_job(self, msg: Job) -> list:
        self._heard(msg)
        self.job, self.state = (msg.contract, msg.hamsters, msg.pins, msg.poison), S.ELF_CRITICAL
        return [
            Enter(contract_resource(msg.round, msg.contract)),
            Enter(PINS, msg.pins),
            Enter(POISON, msg.poison),
            Schedule("exit", "work"),
        ]

    def _finish(self, _: str) -> list:
        assert self.job is not None
        contract, hamsters, pins, poison = self.job
        self.job = None
        return [
            Note("contract_done", {"round": self.round, "contract": contract, "hamsters": hamsters}),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(self.round, contract)),
            self._say(MAYOR, Done, round=self.round, contract=contract, pins=pins, poison=poison),
            *self._ask(),
        ]

    def _on_stop(self, msg: Stop) -> list:
        self._heard(msg)
        self.state = S.ELF_DONE if msg.final else S.INITIAL
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == S.ELF_REQUESTING:
            return {"JOB": [MAYOR]}
        if self.state == S.INITIAL:
            return {"ROUND": [MAYOR]}
        return {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.round, self.job)


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    params = town(processes, options, seed)
    plan = [tuple(r) for r in params["plan"]]
    folk: dict[int, Protocol] = {
        MAYOR: Mayor(
            processes,
            plan,
            params["pins"],
            params["poison"],
            params["pins_per_elf"],
            params["poison_per_hamster"],
        )
    }
    folk.update({pid: Elf(pid, processes) for pid in range(1, processes + 1)})
    capacities = {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]}
    return Setup(NAME, folk, {pid: elf_name(pid) for pid in folk}, CODEC, capacities, params)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: the mayor hands out each job with its tools; townsfolk as a class hierarchy",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
