"""The hamster killers with a quartermaster: the mayor hands out contracts, pins and poison.

Written from the user docs only. Every elf asks the mayor: a contract (CONTRACT_REQUEST, answered
CONTRACT_REPLY with its number, or 0 when the round has none left), then pins, then poison
(PINS_REQUEST / POISON_REQUEST with the units). The mayor keeps the free units and, per tool, a
heap of waiting elves ordered by (units, pid): the smallest need first. Giving back is one
RELEASE with both tools; the mayor then serves every waiter that now fits. All the mayor's
messages go through one handler and a dispatch dict of functools.partial; a message it has no
routine for raises.
"""

from __future__ import annotations

import heapq
from enum import Enum, StrEnum
from functools import partial
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o8-quartermaster"
MAYOR = 0
SERVE = "all"  # "head": on a RELEASE serve only the first waiter that fits (a lost grant)
SLACK = 0  # units the mayor may hand out beyond what is free (1: capacity off by one)


class S(StrEnum):
    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_WAIT_FOR_RELEASE = "ELF_WAIT_FOR_RELEASE"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_DONE = "ELF_DONE"


class Tool(Enum):
    PINS = PINS
    POISON = POISON


class Init(Message):
    type: Literal["INIT_CONTRACTS"] = "INIT_CONTRACTS"
    round: int
    contracts: tuple[int, ...]


class Stop(Message):
    type: Literal["STOP"] = "STOP"
    round: int
    final: bool


class AskContract(Message):
    type: Literal["CONTRACT_REQUEST"] = "CONTRACT_REQUEST"
    round: int


class GotContract(Message):
    type: Literal["CONTRACT_REPLY"] = "CONTRACT_REPLY"
    round: int
    contract: int  # 0: none left
    hamsters: int


class AskPins(Message):
    type: Literal["PINS_REQUEST"] = "PINS_REQUEST"
    units: int


class AskPoison(Message):
    type: Literal["POISON_REQUEST"] = "POISON_REQUEST"
    units: int


class GotTool(Message):
    type: Literal["TOOL_REPLY"] = "TOOL_REPLY"
    tool: str
    units: int


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"
    pins: int
    poison: int


class Completed(Message):
    type: Literal["CONTRACT_COMPLETED"] = "CONTRACT_COMPLETED"
    round: int
    contract: int


CODEC = Codec(Init, Stop, AskContract, GotContract, AskPins, AskPoison, GotTool, Release, Completed)
TO_MAYOR = ("CONTRACT_REQUEST", "PINS_REQUEST", "POISON_REQUEST", "RELEASE", "CONTRACT_COMPLETED")
SERVE_CELL = on("the routine of its dispatch dict", "_dispatch", to=(S.MAYOR_DONE,))


class Mayor(Protocol):
    final_states = frozenset({S.MAYOR_DONE})
    TABLE = Table(
        S,
        {
            S.MAYOR_WAITING: dict.fromkeys(TO_MAYOR, SERVE_CELL),
            S.MAYOR_DONE: dict.fromkeys(TO_MAYOR, SERVE_CELL),
        },
    )

    def __init__(self, elves: int, plan: list[tuple[int, ...]], pins: int, poison: int) -> None:
        self.pid, self.n, self.plan, self.clock = MAYOR, elves, plan, LamportClock(0)
        self.state, self.round, self.given, self.done = S.INITIAL, 0, 0, 0
        self.free = {Tool.PINS: pins, Tool.POISON: poison}
        self.waiting: dict[Tool, list[tuple[int, int]]] = {Tool.PINS: [], Tool.POISON: []}
        self.routines = {
            "CONTRACT_REQUEST": partial(self._contract),
            "PINS_REQUEST": partial(self._tool, Tool.PINS),
            "POISON_REQUEST": partial(self._tool, Tool.POISON),
            "RELEASE": partial(self._release),
            "CONTRACT_COMPLETED": partial(self._completed),
        }

    @property
    def name(self) -> str:
        return elf_name(MAYOR)

    def start(self) -> list:
        return self._begin()

    def _begin(self) -> list:
        self.round, self.given, self.done, self.state = self.round + 1, 0, 0, S.MAYOR_WAITING
        contracts = self.plan[self.round - 1]
        out: list = [Note("round", {"round": self.round, "contracts": list(contracts)})]
        return out + [
            Send(e, Init(sender=MAYOR, ts=self.clock.tick(), round=self.round, contracts=contracts))
            for e in range(1, self.n + 1)
        ]

    def _dispatch(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        routine = self.routines.get(msg.type)
        if routine is None:
            raise LookupError(f"the mayor has no routine for {msg.type}")
        return routine(msg)

    def _send(self, to: int, kind: type[Message], **fields: Any) -> Send:
        return Send(to, kind(sender=MAYOR, ts=self.clock.tick(), **fields))

    def _contract(self, msg: AskContract) -> list:
        contracts = self.plan[self.round - 1]
        if msg.round != self.round or self.state is S.MAYOR_DONE or self.given == len(contracts):
            return [self._send(msg.sender, GotContract, round=msg.round, contract=0, hamsters=0)]
        self.given += 1
        hamsters = contracts[self.given - 1]
        return [self._send(msg.sender, GotContract, round=msg.round, contract=self.given, hamsters=hamsters)]

    def _tool(self, tool: Tool, msg: AskPins | AskPoison) -> list:
        heapq.heappush(self.waiting[tool], (msg.units, msg.sender))
        return self._serve(tool)

    def _serve(self, tool: Tool) -> list:
        out: list = []
        heap, kept = self.waiting[tool], []
        while heap:
            units, elf = heapq.heappop(heap)
            if units <= self.free[tool] + SLACK:
                self.free[tool] -= units
                out.append(self._send(elf, GotTool, tool=tool.value, units=units))
                if SERVE == "head":
                    break
            else:
                kept.append((units, elf))
        for item in kept:
            heapq.heappush(heap, item)
        return out

    def _release(self, msg: Release) -> list:
        self.free[Tool.PINS] += msg.pins
        self.free[Tool.POISON] += msg.poison
        return self._serve(Tool.PINS) + self._serve(Tool.POISON)

    def _completed(self, msg: Completed) -> list:
        self.done += 1
        if self.done < len(self.plan[self.round - 1]):
            return []
        final = self.round == len(self.plan)
        out = [self._send(e, Stop, round=self.round, final=final) for e in range(1, self.n + 1)]
        if final:
            self.state = S.MAYOR_DONE
            return out
        return out + self._begin()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"CONTRACT_COMPLETED": []} if self.state is S.MAYOR_WAITING else {}

    def snapshot(self) -> Any:
        return (
            self.state,
            self.clock.time,
            self.round,
            self.given,
            self.done,
            tuple(self.free.items()),
            tuple((t, tuple(sorted(h))) for t, h in self.waiting.items()),
        )


ASKING = (S.ELF_REQUESTING, S.ELF_WAIT_FOR_RELEASE, S.ELF_CRITICAL, S.INITIAL)


class Elf(Protocol):
    final_states = frozenset({S.ELF_DONE})
    TABLE = Table(
        S,
        {
            S.INITIAL: {
                "INIT_CONTRACTS": on("ask for a contract", "_init", to=(S.ELF_REQUESTING,)),
                "STOP": on("round over", "_stop", to=(S.ELF_DONE,)),
                "CONTRACT_REPLY": ignore("an answer of an older round", "_tick"),
            },
            S.ELF_REQUESTING: {
                "CONTRACT_REPLY": on("a contract: ask pins; none: idle", "_contract", to=ASKING),
                "STOP": on("round over", "_stop", to=(S.ELF_DONE, S.INITIAL)),
                "INIT_CONTRACTS": on("a new round (my request still runs)", "_init"),
            },
            S.ELF_WAIT_FOR_RELEASE: {"TOOL_REPLY": on("pins: ask poison; poison: work", "_tool", to=ASKING)},
            S.ELF_CRITICAL: {"exit": on("done: RELEASE, COMPLETED; ask again", "_finish", to=ASKING)},
            S.ELF_DONE: {"CONTRACT_REPLY": ignore("an answer of an older round", "_tick")},
        },
    )

    def __init__(self, pid: int, n: int, pins_per_elf: int, per_hamster: int) -> None:
        self.pid, self.n, self.clock, self.state = pid, n, LamportClock(0), S.INITIAL
        self.pins_per_elf, self.per_hamster = pins_per_elf, per_hamster
        self.round, self.contract, self.hamsters = 0, 0, 0
        self.has = {PINS: 0, POISON: 0}

    @property
    def name(self) -> str:
        return elf_name(self.pid)

    def _tick(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        return []

    def _ask(self, kind: type[Message], **fields: Any) -> Send:
        return Send(MAYOR, kind(sender=self.pid, ts=self.clock.tick(), **fields))

    def _init(self, msg: Init) -> list:
        self.clock.receive(msg.ts)
        self.round = msg.round
        if self.state is S.ELF_REQUESTING:
            return [self._ask(AskContract, round=self.round)]
        self.state = S.ELF_REQUESTING
        return [self._ask(AskContract, round=self.round)]

    def _contract(self, msg: GotContract) -> list:
        self.clock.receive(msg.ts)
        if msg.round != self.round:
            return []
        if not msg.contract:
            self.state = S.INITIAL
            return []
        self.contract, self.hamsters, self.state = msg.contract, msg.hamsters, S.ELF_WAIT_FOR_RELEASE
        return [
            Enter(contract_resource(self.round, self.contract)),
            self._ask(AskPins, units=self.pins_per_elf),
        ]

    def _tool(self, msg: GotTool) -> list:
        self.clock.receive(msg.ts)
        self.has[msg.tool] = msg.units
        if msg.tool == PINS:
            return [Enter(PINS, msg.units), self._ask(AskPoison, units=self.hamsters * self.per_hamster)]
        self.state = S.ELF_CRITICAL
        return [Enter(POISON, msg.units), Schedule("exit", "work")]

    def _finish(self, _a: str) -> list:
        pins, poison = self.has[PINS], self.has[POISON]
        out: list = [
            Note(
                "contract_done", {"round": self.round, "contract": self.contract, "hamsters": self.hamsters}
            ),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(self.round, self.contract)),
            self._ask(Release, pins=pins, poison=poison),
            self._ask(Completed, round=self.round, contract=self.contract),
        ]
        self.contract, self.hamsters, self.has = 0, 0, {PINS: 0, POISON: 0}
        self.state = S.ELF_REQUESTING
        return out + [self._ask(AskContract, round=self.round)]

    def _stop(self, msg: Stop) -> list:
        self.clock.receive(msg.ts)
        if msg.final:
            self.state = S.ELF_DONE
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        wait = {S.ELF_REQUESTING: "CONTRACT_REPLY", S.ELF_WAIT_FOR_RELEASE: "TOOL_REPLY", S.INITIAL: "STOP"}
        return {wait[self.state]: [MAYOR]} if self.state in wait else {}

    def snapshot(self) -> Any:
        return (
            self.state,
            self.clock.time,
            self.round,
            self.contract,
            self.hamsters,
            self.has[PINS],
            self.has[POISON],
        )


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    params = town(processes, options, seed)
    plan = [tuple(r) for r in params["plan"]]
    protocols: dict[int, Protocol] = {MAYOR: Mayor(processes, plan, params["pins"], params["poison"])}
    for pid in range(1, processes + 1):
        protocols[pid] = Elf(pid, processes, params["pins_per_elf"], params["poison_per_hamster"])
    names = {pid: elf_name(pid) for pid in protocols}
    capacities = {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]}
    return Setup(NAME, protocols, names, CODEC, capacities, params)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: the mayor as quartermaster, tools by smallest need first (heapq)",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
