"""The hamster killers, functional style: every handler is a module-level function of (process,
message) that reads and writes one dict, ``proc.s``; the classes only bind the functions into
their tables (``want = mayor_want``). I find the logic easier to test that way.

Written from docs/problems-and-solutions.md and docs/elves.md. The mayor is the quartermaster:

* a round: ROUND to every elf; each elf answers WANT.
* the mayor keeps the elves who want work in a queue and the round's contracts in order; while
  the first contract's tools are free (pins_per_elf pins, hamsters × poison_per_hamster poison),
  the first elf of the queue gets a JOB: the contract and its tools at once.
* the elf takes contract, pins and poison, works, puts them back, says DONE (the mayor frees the
  tools) and WANTs again.
* every contract of the round done: STOP to everyone (final on the last round), next ROUND.

A WANT or STOP of an older round is ignored (a round's number travels with every message).

Planted bug (module constant, edited by the tests):

* KEEP_CONTRACT = True: the mayor hands out the first contract without taking it off its list,
  so two elves get the same contract.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from mutexlab.clock import LamportClock
from mutexlab.machine import Table, ignore, on
from mutexlab.messages import Codec, Message
from mutexlab.problems.elves import OPTIONS, PINS, POISON, contract_resource, elf_name, town
from mutexlab.protocol import Enter, Exit, Note, Protocol, Schedule, Send
from mutexlab.setups import Setup
from mutexlab.spec import AlgorithmSpec

NAME = "o15-elves-functional"
KEEP_CONTRACT = False


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
    contract: int
    pins: int
    poison: int


class Stop(Message):
    type: Literal["STOP"] = "STOP"
    round: int
    final: bool


CODEC = Codec(Round, Want, Job, Done, Stop)


def say(proc: Any, to: int, kind: type[Message], **fields: Any) -> Send:
    return Send(to, kind(sender=proc.pid, ts=proc.clock.tick(), **fields))


# -- the mayor ---------------------------------------------------------------------------------------
def mayor_round(m: Any) -> list:
    s = m.s
    s["round"] += 1
    hamsters = m.town["plan"][s["round"] - 1]
    s.update(left=tuple(enumerate(hamsters, 1)), queue=(), done=0)
    out: list = [Note("round", {"round": s["round"], "contracts": list(hamsters)})]
    return out + [say(m, e, Round, round=s["round"]) for e in range(1, m.elves + 1)]


def mayor_hand_out(m: Any) -> list:
    s, t = m.s, m.town
    out: list = []
    while s["queue"] and s["left"]:
        contract, hamsters = s["left"][0]
        poison = hamsters * t["poison_per_hamster"]
        if s["pins"] < t["pins_per_elf"] or s["poison"] < poison:
            break
        elf, s["queue"] = s["queue"][0], s["queue"][1:]
        if not KEEP_CONTRACT:
            s["left"] = s["left"][1:]
        s["pins"] -= t["pins_per_elf"]
        s["poison"] -= poison
        out.append(say(m, elf, Job, round=s["round"], contract=contract, hamsters=hamsters,
                       pins=t["pins_per_elf"], poison=poison))  # fmt: skip
    return out


def mayor_want(m: Any, msg: Want) -> list:
    m.clock.receive(msg.ts)
    s = m.s
    if msg.round != s["round"] or msg.sender in s["queue"]:
        return []
    s["queue"] = (*s["queue"], msg.sender)
    return mayor_hand_out(m)


def mayor_done(m: Any, msg: Done) -> list:
    m.clock.receive(msg.ts)
    s = m.s
    s["pins"] += msg.pins
    s["poison"] += msg.poison
    s["done"] += 1
    if s["done"] < len(m.town["plan"][s["round"] - 1]):
        return mayor_hand_out(m)
    final = s["round"] == len(m.town["plan"])
    out = [say(m, e, Stop, round=s["round"], final=final) for e in range(1, m.elves + 1)]
    if final:
        m.state = MayorState.MAYOR_DONE
        return out
    return out + mayor_round(m)


def late(proc: Any, msg: Message) -> list:
    proc.clock.receive(msg.ts)
    return []


# -- an elf --------------------------------------------------------------------------------------------
def elf_round(e: Any, msg: Round) -> list:
    e.clock.receive(msg.ts)
    e.s["round"] = msg.round
    e.state = ElfState.ASKING
    return [say(e, 0, Want, round=msg.round)]


def elf_job(e: Any, msg: Job) -> list:
    e.clock.receive(msg.ts)
    e.s["job"] = (msg.contract, msg.hamsters, msg.pins, msg.poison)
    e.state = ElfState.WORKING
    return [
        Enter(contract_resource(msg.round, msg.contract)),
        Enter(PINS, msg.pins),
        Enter(POISON, msg.poison),
        Schedule("exit", "work"),
    ]


def elf_finish(e: Any, _action: str) -> list:
    contract, hamsters, pins, poison = e.s["job"]
    r = e.s["round"]
    e.s["job"] = ()
    e.state = ElfState.ASKING
    return [
        Note("contract_done", {"round": r, "contract": contract, "hamsters": hamsters}),
        Exit(POISON, poison),
        Exit(PINS, pins),
        Exit(contract_resource(r, contract)),
        say(e, 0, Done, round=r, contract=contract, pins=pins, poison=poison),
        say(e, 0, Want, round=r),
    ]


def elf_stop(e: Any, msg: Stop) -> list:
    e.clock.receive(msg.ts)
    if msg.round == e.s["round"]:
        e.state = ElfState.ELF_DONE if msg.final else ElfState.WAITING
    return []


class MayorState(StrEnum):
    MAYOR_BUSY = "MAYOR_BUSY"
    MAYOR_DONE = "MAYOR_DONE"


class ElfState(StrEnum):
    WAITING = "WAITING"
    ASKING = "ASKING"
    WORKING = "WORKING"
    ELF_DONE = "ELF_DONE"


class Mayor(Protocol):
    final_states = frozenset({MayorState.MAYOR_DONE})
    TABLE = Table(
        MayorState,
        {
            MayorState.MAYOR_BUSY: {
                "WANT": on("queue the elf; hand out", "want"),
                "DONE": on("free the tools; all done: STOP, next ROUND", "done", to=(MayorState.MAYOR_DONE,)),
            },
            MayorState.MAYOR_DONE: {"WANT": ignore("no work left", "late")},
        },
        never="a DONE answers a JOB of the round, and every JOB's DONE comes before the round ends",
    )
    want, done, late = mayor_want, mayor_done, late

    def __init__(self, elves: int, town: dict[str, Any]) -> None:
        self.pid, self.elves, self.town, self.clock = 0, elves, town, LamportClock(0)
        self.state = MayorState.MAYOR_BUSY
        self.s: dict[str, Any] = {"round": 0, "left": (), "queue": (), "done": 0,
                                  "pins": town["pins"], "poison": town["poison"]}  # fmt: skip

    def start(self) -> list:
        return mayor_round(self)

    def waiting_for(self) -> dict[str, list[int]]:
        return {"DONE": []} if self.state == MayorState.MAYOR_BUSY else {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, tuple(self.s.items()))


class Elf(Protocol):
    final_states = frozenset({ElfState.ELF_DONE})
    TABLE = Table(
        ElfState,
        {
            ElfState.WAITING: {
                "ROUND": on("WANT work", "round_", to=(ElfState.ASKING,)),
                "STOP": on("an older round's: ignored", "stop"),
            },
            ElfState.ASKING: {
                "JOB": on("take the contract and its tools; work", "job", to=(ElfState.WORKING,)),
                "STOP": on("the round is over", "stop", to=(ElfState.WAITING, ElfState.ELF_DONE)),
                "ROUND": on("a new round", "round_"),
            },
            ElfState.WORKING: {
                "exit": on("put the tools back; DONE; WANT again", "finish", to=(ElfState.ASKING,)),
            },
            ElfState.ELF_DONE: {"STOP": ignore("an older round's", "stop")},
        },
        never="no JOB, ROUND or STOP while I work: the round waits for my DONE",
    )
    round_, job, finish, stop = elf_round, elf_job, elf_finish, elf_stop

    def __init__(self, pid: int) -> None:
        self.pid, self.clock = pid, LamportClock(0)
        self.state = ElfState.WAITING
        self.s: dict[str, Any] = {"round": 0, "job": ()}

    def start(self) -> list:
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state == ElfState.ASKING:
            return {"JOB": [0]}
        return {"ROUND": [0]} if self.state == ElfState.WAITING else {}

    def snapshot(self) -> Any:
        return (self.state, self.clock.time, tuple(self.s.items()))


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    t = town(processes, options, seed)
    folk: dict[int, Protocol] = {0: Mayor(processes, t)}
    folk.update({pid: Elf(pid) for pid in range(1, processes + 1)})
    capacities = {"contract:*": 1, PINS: t["pins"], POISON: t["poison"]}
    return Setup(NAME, folk, {pid: elf_name(pid) for pid in folk}, CODEC, capacities, t)


SPEC = AlgorithmSpec(
    NAME,
    "elves",
    "hamster killers: handlers as module-level functions over one dict, the mayor a quartermaster",
    make_setup,
    CODEC,
    role="elf",
    fixed_roles=("mayor",),
    options=dict(OPTIONS),
    problem="elves",
)
