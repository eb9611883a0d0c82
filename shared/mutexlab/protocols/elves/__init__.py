"""The hamster killers (docs/architecture.md#the-hamster-killers): a mayor hands out contracts, elves compete
for contracts, then safety pins, then poison, with Lamport's algorithm generalised to
multi-unit resources.

Participants: the mayor (pid 0, ``mayor``) and elves 1..N (``elf-i``). Every message carries
the ``round`` it belongs to.

**The core rule** (per resource, per round). Each elf keeps every request it knows, ordered by
``(ts, pid)``. An elf with a REPLY from every other elf for its current request sums the units
of the requests *ahead* of its own; it gets the resource when ``total − ahead ≥ its units``.
A RELEASE removes the sender's request. Contract requests are never removed (contracts are
one-shot) and the contract an elf gets is the position of its request in that order
(``contract:<round>.<position>``); a position past the last contract means "none left".

The state tables are ``Mayor.TABLE`` (mayor.py: ``INITIAL → MAYOR_WAITING → INITIAL ... →
MAYOR_DONE``) and ``Elf.TABLE`` (elf.py, with the round gate every elf message passes first,
the next-contract shortcut and the check): state × input → action, the data the dispatch runs
on. The mayor and an elf have their own states (``MayorState``, ``ElfState``; INITIAL is both's).

Rounds: an elf message of a later round is buffered (clock updated) and replayed, in arrival
order, when that round's INIT_CONTRACTS arrives; one of an earlier round, or of the round this
elf has already seen stopped, is dropped as if never received (no clock step). Queues are
fresh each round. The mayor → elf link is FIFO, so STOP(r) always precedes INIT(r+1); STOP(r)
is sent only once every contract of r is completed, so nobody holds pins or poison then.

Invariants: an elf holds pins only while holding a contract, and poison only while holding
pins (order contract → pins → poison, never the reverse); it replies to each request of its
running round exactly once, at once; it has at most one request per resource outstanding.

The package is one solution of the ``elves`` problem (problems/elves.py: the resources, the
options and the mayor's plan, the flags, the rules every solution keeps and the audit of a
trace): ``messages`` (states, messages, names), ``mayor``, ``core`` and ``elf``, ``audit`` (this
solution's own checks of a trace, run after the problem's: loaded by ``SPEC.audit``),
``reductions`` (what ``check`` may reduce, loaded by ``SPEC.reductions``).
"""

from __future__ import annotations

from typing import Any

from ...findings import Invariants
from ...problems.elves_flags import estimate_messages
from ...problems.elves_options import DEFAULTS, OPTIONS, hamster_range, make_plan, town
from ...protocol import Protocol
from ...reduction import Reductions
from ...setups import Setup
from ...spec import AlgorithmSpec
from .elf import Elf
from .mayor import Mayor
from .messages import (
    CODEC,
    CONTRACT,
    ELF_MESSAGES,
    KINDS,
    MAYOR,
    PINS,
    POISON,
    RELEASE,
    REPLY,
    REQUEST,
    UNITS_REQUEST,
    ContractCompleted,
    ContractReply,
    ContractRequest,
    ElfState,
    InitContracts,
    MayorState,
    PinsRelease,
    PinsReply,
    PinsRequest,
    PoisonRelease,
    PoisonReply,
    PoisonRequest,
    RoundMessage,
    Stop,
    XRelease,
    XReply,
    XRequest,
    contract_resource,
    elf_name,
)

# The states by their plain names, as the tests name them.
INITIAL, MAYOR_WAITING, MAYOR_DONE = ElfState.INITIAL, MayorState.MAYOR_WAITING, MayorState.MAYOR_DONE
ELF_REQUESTING, ELF_CRITICAL = ElfState.ELF_REQUESTING, ElfState.ELF_CRITICAL
ELF_WAIT_FOR_RELEASE, ELF_FINISHED, ELF_DONE = (
    ElfState.ELF_WAIT_FOR_RELEASE,
    ElfState.ELF_FINISHED,
    ElfState.ELF_DONE,
)


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    """``processes`` elves and a mayor, for the town ``town`` checks and plans (the problem's:
    it refuses, up front, any configuration that could never finish)."""
    params = town(processes, options, seed)
    plan = [tuple(r) for r in params["plan"]]
    protocols: dict[int, Protocol] = {MAYOR: Mayor(processes, plan)}
    for pid in range(1, processes + 1):
        protocols[pid] = Elf(
            pid,
            processes,
            params["pins"],
            params["poison"],
            params["pins_per_elf"],
            params["poison_per_hamster"],
        )
    return Setup(
        "elves",
        protocols,
        {pid: elf_name(pid) for pid in protocols},
        CODEC,
        {"contract:*": 1, PINS: params["pins"], POISON: params["poison"]},
        params,
    )


def invariants() -> Invariants:
    """This solution's own checks of a trace (audit.py: its rounds' replies and contract
    positions), run after the problem's; imported on the verdict's first call."""
    from .audit import INVARIANTS

    return INVARIANTS


def check_reductions() -> Reductions:
    """What ``check`` may reduce for the exact classes (reductions.py), read when it asks."""
    from .reductions import REDUCTIONS

    return REDUCTIONS


SPEC = AlgorithmSpec(
    "elves",
    "elves",
    "the hamster killers: a mayor hands out contracts, elves share pins and poison",
    make_setup,
    CODEC,
    invariants,
    role="elf",
    fixed_roles=("mayor",),
    options=OPTIONS,
    reductions=check_reductions,
    estimate_messages=estimate_messages,
    problem="elves",  # its flags, rules and audit: the problem's (problems/elves.py)
)

__all__ = [
    "CODEC",
    "CONTRACT",
    "DEFAULTS",
    "ELF_CRITICAL",
    "ELF_DONE",
    "ELF_FINISHED",
    "ELF_MESSAGES",
    "ELF_REQUESTING",
    "ELF_WAIT_FOR_RELEASE",
    "INITIAL",
    "KINDS",
    "MAYOR",
    "MAYOR_DONE",
    "MAYOR_WAITING",
    "OPTIONS",
    "PINS",
    "POISON",
    "RELEASE",
    "REPLY",
    "REQUEST",
    "SPEC",
    "UNITS_REQUEST",
    "ContractCompleted",
    "ContractReply",
    "ContractRequest",
    "Elf",
    "ElfState",
    "InitContracts",
    "Mayor",
    "MayorState",
    "PinsRelease",
    "PinsReply",
    "PinsRequest",
    "PoisonRelease",
    "PoisonReply",
    "PoisonRequest",
    "RoundMessage",
    "Stop",
    "XRelease",
    "XReply",
    "XRequest",
    "contract_resource",
    "elf_name",
    "hamster_range",
    "check_reductions",
    "invariants",
    "make_plan",
    "make_setup",
]
