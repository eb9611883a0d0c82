"""The ``bees`` problem (the mason bees): P bees, T reeds of one bee each, K flowers shared.

A bee rests, takes a reed for good, then ``eggs`` times visits a flower and lays an egg on its
reed on each return; after its last egg it leaves the reed and dies. A reed receives at most
``cocoons`` eggs (a multiple of ``eggs``: every bee lays all of its eggs on one reed), so a bee
for which no reed will have room retires. Decisions the statement leaves open: docs/bees.md.

What every solution keeps is this problem's, not a solution's: the resources (``reed:1`` ..
``reed:T`` of capacity 1, ``flower`` of capacity K), the workload's options and flags
(``bees_flags.py``) and the rules (``bees_rules.py``: one definition, judged by the audit on
every trace and by ``check`` in every world). A solution (mutexlab's own: protocols/bees/)
holds only its coordination and names ``problem="bees"``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ..problem import Problem
from ..setups import ConfigError, positive_int
from .bees_flags import FLAGS
from .bees_rules import FLOWER, RULES

OPTIONS = {
    "flowers": "flowers K (default 3)",
    "reeds": "reeds T (default 3)",
    "eggs": "eggs per bee (default 5)",
    "cocoons": "cocoons per reed, a multiple of eggs (default 15)",
}


def resources(processes: int, options: Mapping[str, Any]) -> dict[str, int]:
    """The statement's resources; a configuration outside the statement is refused here, for
    every solution (one whose ``make_setup`` forgot to would be judged by rules it cannot meet)."""
    given = dict(options)
    eggs = positive_int(given, "eggs", default=5)
    cocoons = positive_int(given, "cocoons", default=15)
    if cocoons % eggs:
        raise ConfigError(
            f"cocoons per reed ({cocoons}) must be a multiple of eggs per bee ({eggs}): "
            f"every bee lays all its eggs on one reed"
        )
    return {"reed:*": 1, FLOWER: positive_int(given, "flowers", default=3)}


PROBLEM = Problem(
    "bees",
    "the mason bees: T reeds of one bee each, K flowers shared, eggs laid on the reed after a flower",
    FLAGS,
    OPTIONS,
    resources,
    functools.cache(RULES.invariants),  # one Invariants, built when a trace is first decided
    invariant=RULES.world_invariant(),
)
