"""The ``elves`` problem (the hamster killers): a mayor, N elves, contracts, pins and poison.

Each round the mayor draws its contracts (a number of hamsters each) and gives them to the
elves; an elf takes a contract, then ``pins_per_elf`` safety pins, then ``hamsters ×
poison_per_hamster`` poison portions, does the contract and gives the pins and the poison back.
Contracts are one-shot: each is done exactly once, by one elf. Once every contract of a round
is done the mayor stops it (``STOP`` to every elf) and begins the next; after the last round
everyone ends. Decisions the statement leaves open: docs/elves.md.

What every solution keeps is this problem's, not a solution's:

* the resources: ``contract:<round>.<i>`` of capacity 1, ``pins`` and ``poison`` of capacity
  the town's totals (``resources``);
* the workload: its options and their defaults, the configurations refused up front and the
  mayor's plan, drawn from the seed (``elves_options.town``: a solution's ``make_setup``
  starts from it and puts what it returns in its setup's ``params``), and its flags
  (``elves_flags.py``);
* the rules (``elves_rules.py``: one definition, judged by the audit on every trace and by
  ``check`` in every world) and the audit of several processes' events (``elves_audit.py``).

A solution's processes are the mayor (pid 0, ``mayor``) and the elves (``elf-<i>``); its trace
shows the mayor's ``round`` note at the start of each round and its ``STOP`` (a body with the
``round``) to every elf at the end, an elf's ``contract_done`` note (``round``, ``contract``,
``hamsters``) while it holds the contract, its pins and its poison; the mayor ends
``MAYOR_DONE`` and every elf ``ELF_DONE``; an elf waiting for a release is in
``ELF_WAIT_FOR_RELEASE`` (what ``simulate`` counts as a wait). A solution (mutexlab's own:
protocols/elves/) holds only its coordination and names ``problem="elves"``. A program written in any language
plays the mayor (node 0) and the elves under ``mutexlab test elves --node`` and ``run elves
--node`` (``role``, ``draw``: the town; judged by these rules and audit alone).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..findings import Invariants
from ..problem import Problem
from .elves_flags import FLAGS
from .elves_options import DEFAULTS, OPTIONS, feasible, town
from .elves_rules import (
    CONTRACT_PREFIX,
    ELF_DONE,
    MAYOR_DONE,
    MAYOR_NAME,
    PINS,
    POISON,
    RULES,
    contract_resource,
    elf_name,
)

__all__ = ["DEFAULTS", "OPTIONS", "PINS", "POISON", "PROBLEM", "contract_resource", "elf_name", "town"]


def resources(processes: int, options: Mapping[str, Any]) -> dict[str, int]:
    pins, poison, *_ = feasible({**DEFAULTS, **options})  # what could never finish: refused
    return {f"{CONTRACT_PREFIX}*": 1, PINS: pins, POISON: poison}


def audit() -> Invariants:
    """The rules and the audit of several processes' events (elves_audit.py), imported on the
    verdict's first call."""
    from .elves_audit import INVARIANTS

    return INVARIANTS


PROBLEM = Problem(
    "elves",
    "the hamster killers: a mayor's contracts, each done once by an elf holding pins and poison",
    FLAGS,
    OPTIONS,
    resources,
    audit,
    invariant=RULES.world_invariant(),
    process="elf",
    role=MAYOR_NAME,
    draw=town,
    reported=("plan",),
    finals=(MAYOR_DONE, ELF_DONE),
    messages={"STOP": {"round": int}, "*": {"round": int}},  # what the audit reads (elves_audit)
)
