"""hamster killers - my solution (mayor hands out the jobs)

Written from docs/problems-and-solutions.md and docs/elves.md. No table: every handler is one
if/elif chain on the state, which is a plain string, and the mayor keeps its books in a dict of
lists (who asks, who works, which contracts are left) the way I keep them in my other homework.

mayor: ROUND to everybody, then each ASK goes in the queue; a JOB (contract + pins + poison) goes
to the first in the queue while there is a free slot (pins // pins_per_elf jobs at once) and
enough poison. DONE gives the tools back; when every contract is done, STOP (final on the last
round) and the next ROUND.
elf: ROUND -> ASK; JOB -> take contract, pins, poison, work; exit -> give back, DONE, ASK again;
STOP -> wait for the next ROUND (or finish).

ONE_MORE = True is the bug I had first: `<=` where `<` goes, the mayor lets one job more out than
it has slots for, so one job too many holds pins.
"""

# ruff: noqa: RET505 - the style under test: every handler is one if/elif/else chain

from __future__ import annotations

from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o14-elves-ifelif"
ONE_MORE = False


class Round(Message):
    type: Literal["ROUND"] = "ROUND"
    round: int


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


class Stop(Message):
    type: Literal["STOP"] = "STOP"
    round: int
    final: bool


CODEC = Codec(Round, Ask, Job, Done, Stop)


class Mayor(Protocol):
    final_states = frozenset({"MAYOR_DONE"})

    def __init__(self, n, p):
        self.pid = 0
        self.n = n
        self.p = p
        self.clock = LamportClock(0)
        self.state = "IDLE"
        self.rnd = 0
        self.pins = p["pins"]
        self.poison = p["poison"]
        # my books: everything is a list
        self.book: dict[str, list] = {"asking": [], "working": [], "left": [], "done": []}

    def send(self, to, cls, **kw):
        return Send(to, cls(sender=0, ts=self.clock.tick(), **kw))

    def start(self):
        return self.new_round()

    def new_round(self):
        self.rnd += 1
        hamsters = self.p["plan"][self.rnd - 1]
        self.book = {"asking": [], "working": [], "left": list(enumerate(hamsters, 1)), "done": []}
        self.state = "HANDING_OUT"
        out: list = [Note("round", {"round": self.rnd, "contracts": list(hamsters)})]
        for e in range(1, self.n + 1):
            out.append(self.send(e, Round, round=self.rnd))
        return out

    def hand_out(self):
        out = []
        slots = self.pins // self.p["pins_per_elf"] + len(self.book["working"])  # all of them
        while self.book["asking"] and self.book["left"]:
            if ONE_MORE:
                if not len(self.book["working"]) <= slots:
                    break
            elif not len(self.book["working"]) < slots:
                break
            contract, hamsters = self.book["left"][0]
            poison = hamsters * self.p["poison_per_hamster"]
            if poison > self.poison:
                break
            self.book["left"].pop(0)
            elf = self.book["asking"].pop(0)
            self.book["working"].append(elf)
            self.pins -= self.p["pins_per_elf"]
            self.poison -= poison
            out.append(self.send(elf, Job, round=self.rnd, contract=contract, hamsters=hamsters,
                                 pins=self.p["pins_per_elf"], poison=poison))  # fmt: skip
        return out

    def on_message(self, msg):
        self.clock.receive(msg.ts)
        if self.state == "HANDING_OUT":
            if msg.type == "ASK":
                if msg.round == self.rnd and msg.sender not in self.book["asking"]:
                    self.book["asking"].append(msg.sender)
                return self.hand_out()
            elif msg.type == "DONE":
                if msg.round != self.rnd or msg.sender not in self.book["working"]:
                    raise self.refuse(msg, "a DONE for a job I never gave")
                self.book["working"].remove(msg.sender)
                self.book["done"].append(msg.contract)
                hamsters = self.p["plan"][self.rnd - 1][msg.contract - 1]
                self.pins += self.p["pins_per_elf"]
                self.poison += hamsters * self.p["poison_per_hamster"]
                if len(self.book["done"]) < len(self.p["plan"][self.rnd - 1]):
                    return self.hand_out()
                final = self.rnd == len(self.p["plan"])
                out = [self.send(e, Stop, round=self.rnd, final=final) for e in range(1, self.n + 1)]
                if final:
                    self.state = "MAYOR_DONE"
                    return out
                return out + self.new_round()
            else:
                raise self.refuse(msg)
        elif self.state == "MAYOR_DONE":
            if msg.type == "ASK":
                return []  # too late, no more work
            else:
                raise self.refuse(msg)
        else:
            raise self.refuse(msg)

    def on_local(self, action):
        raise self.refuse_local(action)

    def waiting_for(self):
        if self.state == "HANDING_OUT":
            return {"DONE": list(self.book["working"])}
        return {}

    def snapshot(self):
        return (self.state, self.clock.time, self.rnd, self.pins, self.poison,
                tuple((k, tuple(v)) for k, v in self.book.items()))  # fmt: skip


class Elf(Protocol):
    final_states = frozenset({"ELF_DONE"})

    def __init__(self, pid, n):
        self.pid = pid
        self.n = n
        self.clock = LamportClock(0)
        self.state = "WAITING_ROUND"
        self.rnd = 0
        self.job: list = []  # [contract, hamsters, pins, poison] while I work

    def send(self, cls, **kw):
        return Send(0, cls(sender=self.pid, ts=self.clock.tick(), **kw))

    def on_message(self, msg):
        self.clock.receive(msg.ts)
        if self.state == "WAITING_ROUND":
            if msg.type == "ROUND":
                self.rnd = msg.round
                self.state = "ASKING"
                return [self.send(Ask, round=self.rnd)]
            elif msg.type == "STOP":
                return self.stopped(msg)
            else:
                raise self.refuse(msg)
        elif self.state == "ASKING":
            if msg.type == "JOB":
                self.job = [msg.contract, msg.hamsters, msg.pins, msg.poison]
                self.state = "WORKING"
                return [
                    Enter(contract_resource(msg.round, msg.contract)),
                    Enter(PINS, msg.pins),
                    Enter(POISON, msg.poison),
                    Schedule("exit", "work"),
                ]
            elif msg.type == "STOP":
                return self.stopped(msg)
            else:
                raise self.refuse(msg)
        elif self.state == "WORKING":
            raise self.refuse(msg, "the mayor waits for my DONE")
        else:
            raise self.refuse(msg)

    def stopped(self, msg):
        self.state = "ELF_DONE" if msg.final else "WAITING_ROUND"
        return []

    def on_local(self, action):
        if self.state == "WORKING" and action == "exit":
            contract, hamsters, pins, poison = self.job
            self.job = []
            self.state = "ASKING"
            return [
                Note("contract_done", {"round": self.rnd, "contract": contract, "hamsters": hamsters}),
                Exit(POISON, poison),
                Exit(PINS, pins),
                Exit(contract_resource(self.rnd, contract)),
                self.send(Done, round=self.rnd, contract=contract),
                self.send(Ask, round=self.rnd),
            ]
        else:
            raise self.refuse_local(action)

    def waiting_for(self):
        if self.state == "ASKING":
            return {"JOB": [0]}
        elif self.state == "WAITING_ROUND":
            return {"ROUND": [0]}
        else:
            return {}

    def snapshot(self):
        return (self.state, self.clock.time, self.rnd, tuple(self.job))


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    p = town(processes, options, seed)
    folk: dict[int, Protocol] = {0: Mayor(processes, p)}
    for pid in range(1, processes + 1):
        folk[pid] = Elf(pid, processes)
    capacities = {"contract:*": 1, PINS: p["pins"], POISON: p["poison"]}
    return Setup(NAME, folk, {pid: elf_name(pid) for pid in folk}, CODEC, capacities, p)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: every handler an if/elif chain on string states, the mayor's books a dict of lists",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
