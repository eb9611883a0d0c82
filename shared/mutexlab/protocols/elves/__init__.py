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

The package: ``messages`` (states, messages, names), ``mayor``, ``core`` and ``elf``, ``options``
(what ``make_setup``, here, takes), ``audit`` (the invariants checked on a trace, loaded by ``SPEC.audit``),
``reductions`` (what ``check`` may reduce, loaded by ``SPEC.reductions``).
"""

from __future__ import annotations

from ...findings import Invariants
from ...protocol import Protocol
from ...reduction import Reductions
from ...setups import ConfigError, Setup, positive_int
from ...spec import AlgorithmSpec
from . import flags, world
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
from .options import DEFAULTS, OPTIONS, hamster_range, make_plan

# The states by their plain names, as the tests name them.
INITIAL, MAYOR_WAITING, MAYOR_DONE = ElfState.INITIAL, MayorState.MAYOR_WAITING, MayorState.MAYOR_DONE
ELF_REQUESTING, ELF_CRITICAL = ElfState.ELF_REQUESTING, ElfState.ELF_CRITICAL
ELF_WAIT_FOR_RELEASE, ELF_FINISHED, ELF_DONE = (
    ElfState.ELF_WAIT_FOR_RELEASE,
    ElfState.ELF_FINISHED,
    ElfState.ELF_DONE,
)


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    """``processes`` elves and a mayor. Refuses, up front, any configuration that could never finish."""
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ConfigError(f"the hamster killers need at least one elf, got {processes!r}")
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise ConfigError(
            f"elves do not take option(s) {', '.join(sorted(unknown))}; "
            f"they take {', '.join(sorted(OPTIONS))}"
        )
    opts = {**DEFAULTS, **options}
    pins = positive_int(opts, "pins")
    poison = positive_int(opts, "poison")
    contracts = positive_int(opts, "contracts")
    rounds = positive_int(opts, "rounds")
    pins_per_elf = positive_int(opts, "pins_per_elf")
    per_hamster = positive_int(opts, "poison_per_hamster")
    low, high = hamster_range(opts["hamsters"])
    if pins_per_elf > pins:
        raise ConfigError(
            f"an elf needs {pins_per_elf} pins but only {pins} exist: no contract could ever be done"
        )
    if high * per_hamster > poison:
        raise ConfigError(
            f"a contract of {high} hamsters needs {high * per_hamster} poison portions "
            f"({per_hamster} per hamster) but only {poison} exist: it could never be done; "
            f"lower the hamster maximum or add poison"
        )
    plan = make_plan(rounds, contracts, (low, high), seed)
    protocols: dict[int, Protocol] = {MAYOR: Mayor(processes, plan)}
    for pid in range(1, processes + 1):
        protocols[pid] = Elf(pid, processes, pins, poison, pins_per_elf, per_hamster)
    params = {
        "elves": processes,
        "pins": pins,
        "poison": poison,
        "contracts": contracts,
        "hamsters": [low, high],
        "rounds": rounds,
        "pins_per_elf": pins_per_elf,
        "poison_per_hamster": per_hamster,
        "plan": [list(p) for p in plan],
        "seed": seed,
    }
    return Setup(
        "elves",
        protocols,
        {pid: elf_name(pid) for pid in protocols},
        CODEC,
        {"contract:*": 1, PINS: pins, POISON: poison},
        params,
    )


def invariants() -> Invariants:
    """The hamster killers' own checks of a trace (audit.py), imported on the verdict's first call."""
    from .audit import INVARIANTS

    return INVARIANTS


def check_reductions() -> Reductions:
    """What ``check`` may reduce for the exact classes (reductions.py), read when it asks."""
    from .reductions import REDUCTIONS

    return REDUCTIONS


# how the commands present the elves (flags, summary) and a run's messages: flags.py
FLAGS, estimate_messages = flags.flags(DEFAULTS, hamster_range)

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
    flags=FLAGS,
    estimate_messages=estimate_messages,
    world_invariant=world.INVARIANT,
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
