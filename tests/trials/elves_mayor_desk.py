"""The hamster killers with the mayor as the only clerk: every elf asks the mayor's desk.

An elf asks (ASK); the desk hands out the next contract of the round together with the pins and
the poison it needs (JOB), in the order the elves asked, as soon as enough tools are back on the
desk; with no contract left in the round it says NOTHING. The elf works, then returns the tools
and reports (DONE); when every contract of the round is done the desk says STOP to every elf and
opens the next round (OPEN).
"""

from __future__ import annotations

import enum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

DESK = 0


class St(enum.StrEnum):
    MAYOR_OPEN = "MAYOR_OPEN"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_IDLE = "ELF_IDLE"
    ELF_ASKING = "ELF_ASKING"
    ELF_WORKING = "ELF_WORKING"
    ELF_DONE = "ELF_DONE"


class Open(Message):
    type: Literal["OPEN"] = "OPEN"
    round: int


class AskJob(Message):
    type: Literal["ASK"] = "ASK"


class Job(Message):
    type: Literal["JOB"] = "JOB"
    round: int
    contract: int
    hamsters: int
    pins: int
    poison: int


class Nothing(Message):
    type: Literal["NOTHING"] = "NOTHING"


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


WIRE = Codec(Open, AskJob, Job, Nothing, Done, Stop)


class Desk(Protocol):
    final_states = frozenset({St.MAYOR_DONE})
    TABLE = Table(
        St,
        {
            St.MAYOR_OPEN: {
                "ASK": on("queue; serve", "on_ask"),
                "DONE": on("tools back; all done: STOP and next round", "on_done", to=(St.MAYOR_DONE,)),
            },
            St.MAYOR_DONE: {"ASK": ignore("an elf that asked as the last round ended")},
        },
    )

    def __init__(self, elves: int, plan: list[tuple[int, ...]], tools: dict[str, int], need: tuple[int, int]):
        self.pid, self.n, self.clock, self.state = DESK, elves, LamportClock(0), St.MAYOR_OPEN
        self.plan, self.free, self.need = plan, dict(tools), need
        self.round = 0
        self.handed = 0  # contracts of the round handed out
        self.completed: set[int] = set()
        self.line: list[int] = []  # elves waiting, in order of asking

    @property
    def name(self) -> str:
        return elf_name(DESK)

    def start(self) -> list:
        return self.open_round()

    def open_round(self) -> list:
        self.round, self.handed, self.completed = self.round + 1, 0, set()
        note = Note("round", {"round": self.round, "contracts": list(self.plan[self.round - 1])})
        return [note] + [
            Send(e, Open(sender=DESK, ts=self.clock.tick(), round=self.round)) for e in range(1, self.n + 1)
        ]

    def tools_for(self, hamsters: int) -> tuple[int, int]:
        pins_per_elf, per_hamster = self.need
        return pins_per_elf, hamsters * per_hamster

    def serve(self) -> list:
        out: list = []
        contracts = self.plan[self.round - 1]
        while self.line:
            elf = self.line[0]
            if self.handed == len(contracts):
                self.line.pop(0)
                out.append(Send(elf, Nothing(sender=DESK, ts=self.clock.tick())))
                continue
            hamsters = contracts[self.handed]
            pins, poison = self.tools_for(hamsters)
            if self.free[PINS] < pins or self.free[POISON] < poison:
                break
            self.line.pop(0)
            self.handed += 1
            self.free[PINS] -= pins
            self.free[POISON] -= poison
            job = Job(
                sender=DESK,
                ts=self.clock.tick(),
                round=self.round,
                contract=self.handed,
                hamsters=hamsters,
                pins=pins,
                poison=poison,
            )
            out.append(Send(elf, job))
        return out

    def on_ask(self, msg: AskJob) -> list:
        self.clock.receive(msg.ts)
        self.line.append(msg.sender)
        return self.serve()

    def on_done(self, msg: Done) -> list:
        self.clock.receive(msg.ts)
        self.free[PINS] += msg.pins
        self.free[POISON] += msg.poison
        self.completed.add(msg.contract)
        if len(self.completed) < len(self.plan[self.round - 1]):
            return self.serve()
        final = self.round == len(self.plan)
        out: list = self.serve()
        out += [
            Send(e, Stop(sender=DESK, ts=self.clock.tick(), round=self.round, final=final))
            for e in range(1, self.n + 1)
        ]
        if final:
            self.state = St.MAYOR_DONE
            return out
        return out + self.open_round()

    def waiting_for(self) -> dict[str, list[int]]:
        return {"DONE": []} if self.state == St.MAYOR_OPEN else {}

    def snapshot(self) -> Any:
        return (
            self.state,
            self.clock.time,
            self.round,
            self.handed,
            frozenset(self.completed),
            tuple(self.line),
            tuple(sorted(self.free.items())),
        )


class Worker(Protocol):
    final_states = frozenset({St.ELF_DONE})
    TABLE = Table(
        St,
        {
            St.ELF_IDLE: {
                "OPEN": on("ask the desk", "on_open", to=(St.ELF_ASKING,)),
                "STOP": on("round over", "on_stop", to=(St.ELF_DONE,)),
            },
            St.ELF_ASKING: {
                "JOB": on("take contract, pins, poison; work", "on_job", to=(St.ELF_WORKING,)),
                "NOTHING": on("no contract left", "on_nothing", to=(St.ELF_IDLE,)),
                "STOP": on("round over; my ASK waits for the next", "on_stop", to=(St.ELF_DONE,)),
                "OPEN": ignore("my ASK is on its way"),
            },
            St.ELF_WORKING: {
                "exit": on("done: tools back, DONE; ask again", "on_finish", to=(St.ELF_ASKING,))
            },
            St.ELF_DONE: {},
        },
    )

    def __init__(self, pid: int) -> None:
        self.pid, self.clock, self.state = pid, LamportClock(0), St.ELF_IDLE
        self.job: tuple[int, int, int, int, int] | None = None  # round, contract, hamsters, pins, poison

    @property
    def name(self) -> str:
        return elf_name(self.pid)

    def start(self) -> list:
        return []

    def ask(self) -> list:
        self.state = St.ELF_ASKING
        return [Send(DESK, AskJob(sender=self.pid, ts=self.clock.tick()))]

    def on_open(self, msg: Open) -> list:
        self.clock.receive(msg.ts)
        return self.ask()

    def on_nothing(self, msg: Nothing) -> list:
        self.clock.receive(msg.ts)
        self.state = St.ELF_IDLE
        return []

    def on_stop(self, msg: Stop) -> list:
        self.clock.receive(msg.ts)
        if msg.final:
            self.state = St.ELF_DONE
        return []

    def on_job(self, msg: Job) -> list:
        self.clock.receive(msg.ts)
        self.job = (msg.round, msg.contract, msg.hamsters, msg.pins, msg.poison)
        self.state = St.ELF_WORKING
        return [
            Enter(contract_resource(msg.round, msg.contract)),
            Enter(PINS, msg.pins),
            Enter(POISON, msg.poison),
            Schedule("exit", "work"),
        ]

    def on_finish(self, _action: str) -> list:
        assert self.job is not None
        rnd, contract, hamsters, pins, poison = self.job
        self.job = None
        out: list = [
            Note("contract_done", {"round": rnd, "contract": contract, "hamsters": hamsters}),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(rnd, contract)),
            Send(
                DESK,
                Done(
                    sender=self.pid,
                    ts=self.clock.tick(),
                    round=rnd,
                    contract=contract,
                    pins=pins,
                    poison=poison,
                ),
            ),
        ]
        return out + self.ask()

    def wants(self) -> str | None:
        return "contract" if self.state == St.ELF_ASKING else None

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == St.ELF_ASKING:
            return {"JOB": [DESK]}
        if self.state == St.ELF_IDLE:
            return {"OPEN": [DESK]}
        return {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, self.job)


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    params = town(processes, options, seed)
    plan = [tuple(r) for r in params["plan"]]
    tools = {PINS: params["pins"], POISON: params["poison"]}
    need = (params["pins_per_elf"], params["poison_per_hamster"])
    procs: dict[int, Protocol] = {DESK: Desk(processes, plan, tools, need)}
    procs.update({pid: Worker(pid) for pid in range(1, processes + 1)})
    return Setup(
        "elves-mayor-desk",
        procs,
        {p: elf_name(p) for p in procs},
        WIRE,
        {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]},
        params,
    )


SPEC = AlgorithmSpec(
    "elves-mayor-desk",
    "elves",
    "hamster killers with the mayor as the only clerk: contracts and tools handed out in asking order",
    make_setup,
    WIRE,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
