"""The hamster killers with handlers registered by a decorator: ``@handles("WANT", in_=...)`` marks
a method, and my base class ``Townsfolk.__init_subclass__`` gathers the marks into the class's
``TABLE`` (I did not want to write the table by hand, and keep it next to each handler).

Written from docs/problems-and-solutions.md and docs/elves.md. The mayor is a quartermaster:

* a round: ROUND to every elf; each elf answers WANT.
* the mayor queues the elves that WANT (a ``collections.deque``) and, while the first contract's
  tools are free (pins_per_elf pins, hamsters × poison_per_hamster poison), gives the first elf in
  the queue a JOB: the contract and its tools at once.
* the elf takes the contract, the pins and the poison, works, puts them back, says DONE (the mayor
  frees the tools) and WANTs again.
* every contract of the round done: STOP to everyone (final on the last round), next ROUND.

The mayor's counts of the tools in store are a ``collections.Counter``; the plan is ``TypedDict``.

Planted bugs (module constants the tests edit):

* PINS_ONLY = True: the mayor checks the pins in store, not the poison, before handing out a job
  (more poison out than there is).
* CLASS_JOURNAL = True: every townsfolk appends what it did to ``journal``, a list kept in the
  class body (my Java habit): one list for all of them.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from enum import StrEnum
from typing import Any, ClassVar, Literal, TypedDict

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o16-elves-registry"
PINS_ONLY = False
CLASS_JOURNAL = False


class Round(Message):
    type: Literal["ROUND"] = "ROUND"
    round: int


class Want(Message):
    type: Literal["WANT"] = "WANT"
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
    pins: int
    poison: int


class Stop(Message):
    type: Literal["STOP"] = "STOP"
    round: int
    final: bool


CODEC = Codec(Round, Want, Job, Done, Stop)


class Town(TypedDict):
    plan: list[list[int]]
    pins: int
    poison: int
    pins_per_elf: int
    poison_per_hamster: int


def handles(what: str, *, in_: tuple[str, ...], to: tuple[str, ...] = (), says: str = "") -> Callable:
    """Mark a method as the handler of ``what`` in the states ``in_``."""

    def mark(fn: Callable) -> Callable:
        fn.__dict__.setdefault("marks", []).append((what, in_, to, says or fn.__name__))
        return fn

    return mark


class Townsfolk(Protocol):
    STATES: ClassVar[type[StrEnum]]
    NEVER: ClassVar[str] = ""
    journal: list[str] = []  # noqa: RUF012 - the planted bug's list, used only when CLASS_JOURNAL

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        rows: dict[StrEnum, dict[str, Any]] = {s: {} for s in cls.STATES}
        for name, fn in vars(cls).items():
            for what, in_, to, says in getattr(fn, "marks", ()):
                for state in in_:
                    rows[cls.STATES(state)][what] = on(says, name, to=tuple(cls.STATES(t) for t in to))
        cls.TABLE = Table(cls.STATES, {s: r for s, r in rows.items() if r}, never=cls.NEVER)

    def note(self, what: str) -> None:
        if CLASS_JOURNAL:
            self.journal.append(f"{self.pid}: {what}")

    def say(self, to: int, kind: type[Message], **fields: Any) -> Send:
        return Send(to, kind(sender=self.pid, ts=self.clock.tick(), **fields))


class MayorState(StrEnum):
    MAYOR_BUSY = "MAYOR_BUSY"
    MAYOR_DONE = "MAYOR_DONE"


class ElfState(StrEnum):
    WAITING = "WAITING"
    ASKING = "ASKING"
    WORKING = "WORKING"
    ELF_DONE = "ELF_DONE"


class Mayor(Townsfolk):
    STATES = MayorState
    NEVER = "a DONE answers a JOB of the round, and every JOB's DONE comes before the round ends"
    final_states = frozenset({MayorState.MAYOR_DONE})

    def __init__(self, elves: int, plan: Town) -> None:
        self.pid, self.elves, self.plan, self.clock = 0, elves, plan, LamportClock(0)
        self.state = MayorState.MAYOR_BUSY
        self.round = 0
        self.left: deque[tuple[int, int]] = deque()
        self.queue: deque[int] = deque()
        self.store = Counter(pins=plan["pins"], poison=plan["poison"])
        self.done = 0

    def start(self) -> list:
        return self._next_round()

    def _next_round(self) -> list:
        self.round += 1
        hamsters = self.plan["plan"][self.round - 1]
        self.left, self.queue, self.done = deque(enumerate(hamsters, 1)), deque(), 0
        out: list = [Note("round", {"round": self.round, "contracts": list(hamsters)})]
        return out + [self.say(e, Round, round=self.round) for e in range(1, self.elves + 1)]

    def _hand_out(self) -> list:
        out: list = []
        while self.queue and self.left:
            contract, hamsters = self.left[0]
            need = Counter(pins=self.plan["pins_per_elf"], poison=hamsters * self.plan["poison_per_hamster"])
            short = need["pins"] > self.store["pins"] if PINS_ONLY else not need <= self.store
            if short:
                break
            self.left.popleft()
            self.store -= need
            out.append(self.say(self.queue.popleft(), Job, round=self.round, contract=contract,
                                hamsters=hamsters, pins=need["pins"], poison=need["poison"]))  # fmt: skip
        return out

    @handles("WANT", in_=("MAYOR_BUSY",), says="queue the elf; hand out")
    def _want(self, msg: Want) -> list:
        self.clock.receive(msg.ts)
        self.note(f"WANT from {msg.sender}")
        if msg.round != self.round or msg.sender in self.queue:
            return []
        self.queue.append(msg.sender)
        return self._hand_out()

    @handles("WANT", in_=("MAYOR_DONE",), says="no work left")
    def _late(self, msg: Want) -> list:
        self.clock.receive(msg.ts)
        return []

    @handles("DONE", in_=("MAYOR_BUSY",), to=("MAYOR_DONE",), says="tools back; all done: STOP, next ROUND")
    def _done(self, msg: Done) -> list:
        self.clock.receive(msg.ts)
        self.store += Counter(pins=msg.pins, poison=msg.poison)
        self.done += 1
        if self.done < len(self.plan["plan"][self.round - 1]):
            return self._hand_out()
        final = self.round == len(self.plan["plan"])
        out = [self.say(e, Stop, round=self.round, final=final) for e in range(1, self.elves + 1)]
        if final:
            self.state = MayorState.MAYOR_DONE
            return out
        return out + self._next_round()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"DONE": []} if self.state == MayorState.MAYOR_BUSY else {}

    def snapshot(self) -> tuple:
        store = tuple(sorted(self.store.items()))
        return (
            self.state,
            self.clock.time,
            self.round,
            tuple(self.left),
            tuple(self.queue),
            store,
            self.done,
        )


class Elf(Townsfolk):
    STATES = ElfState
    NEVER = "no JOB, ROUND or STOP while I work: the round waits for my DONE"
    final_states = frozenset({ElfState.ELF_DONE})

    def __init__(self, pid: int) -> None:
        self.pid, self.clock = pid, LamportClock(0)
        self.state = ElfState.WAITING
        self.round = 0
        self.job: tuple[int, int, int, int] | None = None  # contract, hamsters, pins, poison

    @handles("ROUND", in_=("WAITING", "ASKING"), to=("ASKING",), says="WANT work")
    def _round(self, msg: Round) -> list:
        self.clock.receive(msg.ts)
        self.round, self.state = msg.round, ElfState.ASKING
        return [self.say(0, Want, round=msg.round)]

    @handles("JOB", in_=("ASKING",), to=("WORKING",), says="take the contract and its tools")
    def _job(self, msg: Job) -> list:
        self.clock.receive(msg.ts)
        self.note(f"JOB {msg.contract}")
        self.job, self.state = (msg.contract, msg.hamsters, msg.pins, msg.poison), ElfState.WORKING
        return [Enter(contract_resource(msg.round, msg.contract)), Enter(PINS, msg.pins), Enter(POISON, msg.poison),
                Schedule("exit", "work")]  # fmt: skip

    @handles("exit", in_=("WORKING",), to=("ASKING",), says="tools back; DONE; WANT again")
    def _finish(self, _action: str) -> list:
        assert self.job is not None
        contract, hamsters, pins, poison = self.job
        self.job, self.state = None, ElfState.ASKING
        return [
            Note("contract_done", {"round": self.round, "contract": contract, "hamsters": hamsters}),
            Exit(POISON, poison), Exit(PINS, pins), Exit(contract_resource(self.round, contract)),
            self.say(0, Done, round=self.round, pins=pins, poison=poison), self.say(0, Want, round=self.round),
        ]  # fmt: skip

    @handles("STOP", in_=("WAITING", "ASKING", "ELF_DONE"), to=("WAITING", "ELF_DONE"), says="round over")
    def _stop(self, msg: Stop) -> list:
        self.clock.receive(msg.ts)
        if msg.round == self.round and self.state != ElfState.ELF_DONE:
            self.state = ElfState.ELF_DONE if msg.final else ElfState.WAITING
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == ElfState.ASKING:
            return {"JOB": [0]}
        return {"ROUND": [0]} if self.state == ElfState.WAITING else {}

    def snapshot(self) -> tuple:
        return (self.state, self.clock.time, self.round, self.job)


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    t = town(processes, options, seed)
    plan = Town(plan=t["plan"], pins=t["pins"], poison=t["poison"], pins_per_elf=t["pins_per_elf"],
                poison_per_hamster=t["poison_per_hamster"])  # fmt: skip
    folk: dict[int, Protocol] = {0: Mayor(processes, plan)}
    folk.update({pid: Elf(pid) for pid in range(1, processes + 1)})
    capacities = {"contract:*": 1, PINS: t["pins"], POISON: t["poison"]}
    return Setup(NAME, folk, {pid: elf_name(pid) for pid in folk}, CODEC, capacities, t)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: handlers registered by a decorator, the table gathered in __init_subclass__",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
