"""The hamster killers, quartermaster style: the mayor runs the town's store, and every message is
dispatched through a dict (``ORDERS``: message type → the function handling it) — the way our
quartermaster service at work routes its requests.

Written from docs/problems-and-solutions.md and docs/elves.md.

* ROUND(r) to every elf; each elf asks for work (WANT).
* The quartermaster hands out the round's contracts in order to the elves that WANT
  (CONTRACT: the contract and its hamsters). An elf takes the contract and indents for its kit
  (KIT: pins_per_elf pins, hamsters × poison_per_hamster poison).
* The kit requests wait in one FIFO line at the store; the first is issued (ISSUE) once the
  store holds its kit, the next only after it — nobody jumps the line, nobody starves.
* The elf takes the pins and the poison, does the job, puts everything back and RETURNs the kit
  with the contract (the store takes the kit back), then WANTs again.
* Every contract of the round returned: STOP(r, final) to everyone, then the next ROUND.

Each side's table sends every message to one method, ``dispatch``, which looks the type up in
the class's ``ORDERS`` and calls what it finds there.

Planted bug (a module constant the tests edit):

* ONE_EXTRA_POISON = True: the store issues a kit when it is one poison portion short (the
  quartermaster "rounds in the town's favour"): more poison out than there is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from enum import StrEnum
from typing import Any, ClassVar, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o18-elves-quartermaster"
QUARTERMASTER = 0
ONE_EXTRA_POISON = False


class Round(Message):
    type: Literal["ROUND"] = "ROUND"
    round: int


class Want(Message):
    type: Literal["WANT"] = "WANT"
    round: int


class Contract(Message):
    type: Literal["CONTRACT"] = "CONTRACT"
    round: int
    contract: int
    hamsters: int


class Kit(Message):
    type: Literal["KIT"] = "KIT"
    round: int
    pins: int
    poison: int


class Issue(Message):
    type: Literal["ISSUE"] = "ISSUE"
    round: int
    pins: int
    poison: int


class Return(Message):
    type: Literal["RETURN"] = "RETURN"
    round: int
    contract: int
    pins: int
    poison: int


class Stop(Message):
    type: Literal["STOP"] = "STOP"
    round: int
    final: bool


CODEC = Codec(Round, Want, Contract, Kit, Issue, Return, Stop)
Handler = Callable[[Any, Any], list]


class Post(StrEnum):
    MAYOR_BUSY = "MAYOR_BUSY"
    MAYOR_DONE = "MAYOR_DONE"
    WAITING = "WAITING"
    ASKING = "ASKING"
    KITTING = "KITTING"
    WORKING = "WORKING"
    ELF_DONE = "ELF_DONE"


class Townsman(Protocol):
    ORDERS: ClassVar[dict[str, Handler]]

    def dispatch(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        return self.ORDERS[msg.type](self, msg)

    def send(self, to: int, model: type[Message], **fields: Any) -> Send:
        return Send(to, model(sender=self.pid, ts=self.clock.tick(), **fields))


class Quartermaster(Townsman):
    TABLE = Table(
        Post,
        {
            Post.MAYOR_BUSY: {
                "WANT": on("hand out a contract", "dispatch"),
                "KIT": on("line up for the store", "dispatch"),
                "RETURN": on("kit back; all back: STOP, next ROUND", "dispatch", to=[Post.MAYOR_DONE]),
            },
            Post.MAYOR_DONE: {"WANT": on("nothing left", "dispatch")},
        },
        never="KIT and RETURN come from an elf holding a contract, and the town ends only after all returned",
    )
    final_states = frozenset({Post.MAYOR_DONE})

    def __init__(self, elves: int, town: dict[str, Any]) -> None:
        self.pid, self.clock, self.state = QUARTERMASTER, LamportClock(0), Post.MAYOR_BUSY
        self.elves = elves
        self.plan: tuple[tuple[int, ...], ...] = tuple(tuple(r) for r in town["plan"])
        self.per_elf, self.per_hamster = town["pins_per_elf"], town["poison_per_hamster"]
        self.store = {"pins": town["pins"], "poison": town["poison"]}
        self.round = 0
        self.next_contract = 1
        self.returned = 0
        self.wanting: deque[int] = deque()
        self.line: deque[tuple[int, int, int]] = deque()  # (elf, pins, poison)

    def start(self) -> list:
        return self.begin_round()

    def begin_round(self) -> list:
        self.round += 1
        self.next_contract, self.returned, self.wanting = 1, 0, deque()
        contracts = self.plan[self.round - 1]
        return [Note("round", {"round": self.round, "contracts": list(contracts)})] + [
            self.send(elf, Round, round=self.round) for elf in range(1, self.elves + 1)
        ]

    def hand_out(self) -> list:
        out: list = []
        contracts = self.plan[self.round - 1]
        while self.wanting and self.next_contract <= len(contracts):
            c = self.next_contract
            self.next_contract += 1
            out.append(self.send(self.wanting.popleft(), Contract, round=self.round, contract=c,
                                 hamsters=contracts[c - 1]))  # fmt: skip
        return out

    def fits(self, pins: int, poison: int) -> bool:
        slack = 1 if ONE_EXTRA_POISON else 0
        return pins <= self.store["pins"] and poison <= self.store["poison"] + slack

    def issue(self) -> list:
        out: list = []
        while self.line and self.fits(*self.line[0][1:]):
            elf, pins, poison = self.line.popleft()
            self.store["pins"] -= pins
            self.store["poison"] -= poison
            out.append(self.send(elf, Issue, round=self.round, pins=pins, poison=poison))
        return out

    def on_want(self, msg: Want) -> list:
        if self.state == Post.MAYOR_DONE or msg.round != self.round or msg.sender in self.wanting:
            return []
        self.wanting.append(msg.sender)
        return self.hand_out()

    def on_kit(self, msg: Kit) -> list:
        self.line.append((msg.sender, msg.pins, msg.poison))
        return self.issue()

    def on_return(self, msg: Return) -> list:
        self.store["pins"] += msg.pins
        self.store["poison"] += msg.poison
        self.returned += 1
        out = self.issue()
        if self.returned < len(self.plan[self.round - 1]):
            return out
        final = self.round == len(self.plan)
        out += [self.send(elf, Stop, round=self.round, final=final) for elf in range(1, self.elves + 1)]
        if final:
            self.state = Post.MAYOR_DONE
            return out
        return out + self.begin_round()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"RETURN": []} if self.state == Post.MAYOR_BUSY else {}

    def snapshot(self) -> tuple:
        store = (self.store["pins"], self.store["poison"])
        return (self.state, self.clock.time, self.round, self.next_contract, self.returned,
                tuple(self.wanting), tuple(self.line), store)  # fmt: skip


Quartermaster.ORDERS = {
    "WANT": Quartermaster.on_want,
    "KIT": Quartermaster.on_kit,
    "RETURN": Quartermaster.on_return,
}


class Elf(Townsman):
    TABLE = Table(
        Post,
        {
            Post.WAITING: {"ROUND": on("WANT work", "dispatch", to=[Post.ASKING])},
            Post.ASKING: {
                "CONTRACT": on("take it; KIT", "dispatch", to=[Post.KITTING]),
                "STOP": on("round over", "dispatch", to=[Post.WAITING, Post.ELF_DONE]),
            },
            Post.KITTING: {"ISSUE": on("take the kit; work", "dispatch", to=[Post.WORKING])},
            Post.WORKING: {"exit": on("all back; RETURN; WANT", "finish", to=[Post.ASKING])},
        },
        never="nothing comes while I hold a contract but my kit, and a round ends only after my RETURN",
    )
    final_states = frozenset({Post.ELF_DONE})

    def __init__(self, pid: int, per_elf: int, per_hamster: int) -> None:
        self.pid, self.clock, self.state = pid, LamportClock(0), Post.WAITING
        self.per_elf, self.per_hamster = per_elf, per_hamster
        self.round = 0
        self.job: tuple[int, int, int, int] | None = None  # contract, hamsters, pins, poison

    def on_round(self, msg: Round) -> list:
        self.round, self.state = msg.round, Post.ASKING
        return [self.send(QUARTERMASTER, Want, round=msg.round)]

    def on_contract(self, msg: Contract) -> list:
        pins, poison = self.per_elf, msg.hamsters * self.per_hamster
        self.job, self.state = (msg.contract, msg.hamsters, pins, poison), Post.KITTING
        return [Enter(contract_resource(msg.round, msg.contract)),
                self.send(QUARTERMASTER, Kit, round=msg.round, pins=pins, poison=poison)]  # fmt: skip

    def on_issue(self, msg: Issue) -> list:
        self.state = Post.WORKING
        return [Enter(PINS, msg.pins), Enter(POISON, msg.poison), Schedule("exit", "work")]

    def finish(self, _action: str) -> list:
        assert self.job is not None
        contract, hamsters, pins, poison = self.job
        self.job, self.state = None, Post.ASKING
        return [
            Note("contract_done", {"round": self.round, "contract": contract, "hamsters": hamsters}),
            Exit(POISON, poison), Exit(PINS, pins), Exit(contract_resource(self.round, contract)),
            self.send(QUARTERMASTER, Return, round=self.round, contract=contract, pins=pins, poison=poison),
            self.send(QUARTERMASTER, Want, round=self.round),
        ]  # fmt: skip

    def on_stop(self, msg: Stop) -> list:
        if msg.round == self.round:
            self.state = Post.ELF_DONE if msg.final else Post.WAITING
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        return {
            Post.WAITING: {"ROUND": [QUARTERMASTER]},
            Post.ASKING: {"CONTRACT": [QUARTERMASTER], "STOP": [QUARTERMASTER]},
            Post.KITTING: {"ISSUE": [QUARTERMASTER]},
        }.get(self.state, {})

    def snapshot(self) -> tuple:
        return (self.state, self.clock.time, self.round, self.job)


Elf.ORDERS = {"ROUND": Elf.on_round, "CONTRACT": Elf.on_contract, "ISSUE": Elf.on_issue, "STOP": Elf.on_stop}


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    t = town(processes, options, seed)
    folk: dict[int, Protocol] = {QUARTERMASTER: Quartermaster(processes, t)}
    folk.update(
        {pid: Elf(pid, t["pins_per_elf"], t["poison_per_hamster"]) for pid in range(1, processes + 1)}
    )
    capacities = {"contract:*": 1, PINS: t["pins"], POISON: t["poison"]}
    return Setup(NAME, folk, {pid: elf_name(pid) for pid in folk}, CODEC, capacities, t)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: the mayor a quartermaster, every message dispatched through a dict",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
