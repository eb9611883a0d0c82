"""The mason bees (docs/architecture.md#the-mason-bees; decisions: docs/bees.md): T reeds, K flowers.

A bee asks once for a reed (a Lamport-style queue of ``REQreed``/``ACKreed``), then on its reed
repeats ON_REED → WAIT_FLOWER → ON_FLOWER → ON_REED ``eggs`` times (flowers: Ricart–Agrawala
for K places, ``REQflower``/``ACKflower``), laying one egg on each return to the reed. After its
last egg it leaves the reed with ``RELEASEreed`` and dies. A bee for which no reed will ever have
room (``cocoons // eggs`` bees fit on a reed) says so with ``RELEASEreed(status=NO_ROOM)`` and
retires. ``RELEASEreed`` is always the last message a bee sends: the sender is gone for good.

The state table is ``Bee.TABLE`` (machine.py): state × input → action, the data the dispatch
runs on. Every message of the five types is accepted in every state (the table has no refused
message): late and stale ones are ignored as it says. A bee that is DEAD or RETIRED ignores them
all, without a clock step.

"try reed" (→ ON_REED / RETIRED): with an ACKreed (for my request) from every other bee not
gone, my *rank* r is the number of reed requests ever made that precede mine in (ts, pid) order.
My reed is ``r mod T + 1`` and I am its ``r div T``-th bee; when that turn is ≥ ``cocoons // eggs``
the reed will be full before my turn → RETIRED (broadcast RELEASEreed NO_ROOM). Otherwise I
enter once every earlier request of the same reed (ranks r − T, r − 2T, ...) has sent its
RELEASEreed → ON_REED.
"try flower" (→ ON_FLOWER): enter when the ACKflowers for my current request from bees not gone
number at least (bees not gone, me excluded) − (K − 1).

Invariants: at most one bee per reed; at most K bees on flowers; an ACKflower counts only for the
request whose timestamp it echoes; a gone bee is never waited for; a bee lays at most ``eggs``
eggs and a reed receives at most ``cocoons``.

The package is one solution of the ``bees`` problem (problems/bees.py: the reeds and flowers,
the options and flags, the rules every solution keeps, which the audit and ``check`` apply):
``messages`` (states, messages, names), ``machine`` (``Bee``), ``options`` (what ``make_setup``,
here, takes), ``reductions`` (what ``check`` may reduce, loaded by ``SPEC.reductions``).
"""

from __future__ import annotations

from typing import Any

from ...problems.bees_flags import estimate_messages
from ...reduction import Reductions
from ...setups import ConfigError, Setup, positive_int
from ...spec import AlgorithmSpec
from ..classic import workload_options
from .machine import Bee
from .messages import (
    CODEC,
    FINAL_STATES,
    FLOWER,
    WAITING_STATES,
    ACKflower,
    ACKreed,
    BeeState,
    RELEASEreed,
    REQflower,
    REQreed,
    bee_name,
    expected_eggs,
    reed_name,
)
from .options import CLOCK_RANGE, OPTIONS, random_clocks


def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise ConfigError(
            f"bees do not take option(s) {', '.join(sorted(unknown))} (options: {', '.join(sorted(OPTIONS))})"
        )
    flowers = positive_int(options, "flowers", default=3)
    reeds = positive_int(options, "reeds", default=3)
    eggs = positive_int(options, "eggs", default=5)
    cocoons = positive_int(options, "cocoons", default=15)
    if cocoons % eggs:
        raise ConfigError(
            f"cocoons per reed ({cocoons}) must be a multiple of eggs per bee ({eggs}): "
            f"every bee lays all its eggs on one reed"
        )
    _, given = workload_options(processes, {"initial_clocks": options.get("initial_clocks") or {}})
    clocks = random_clocks(processes, seed)
    clocks.update(given)
    bees = {
        pid: Bee(pid, processes, flowers, reeds, eggs, cocoons, clocks[pid])
        for pid in range(1, processes + 1)
    }
    params = {
        "bees": processes,
        "flowers": flowers,
        "reeds": reeds,
        "eggs": eggs,
        "cocoons": cocoons,
        "initial_clocks": {str(p): c for p, c in clocks.items()},
    }
    return Setup(
        "bees", bees, {pid: bee_name(pid) for pid in bees}, CODEC, {"reed:*": 1, FLOWER: flowers}, params
    )


def check_reductions() -> Reductions:
    """What ``check`` may reduce for the exact classes (reductions.py), read when it asks."""
    from .reductions import REDUCTIONS

    return REDUCTIONS


SPEC = AlgorithmSpec(
    "bees",
    "bees",
    "the mason bees: a reed each (Lamport-style queue), K flowers shared (Ricart–Agrawala for K)",
    make_setup,
    CODEC,
    role="bee",
    options=OPTIONS,
    reductions=check_reductions,
    estimate_messages=estimate_messages,
    problem="bees",  # its flags, audit and rules: the problem's (problems/bees.py)
)

__all__ = [
    "CLOCK_RANGE",
    "CODEC",
    "FINAL_STATES",
    "FLOWER",
    "OPTIONS",
    "SPEC",
    "WAITING_STATES",
    "ACKflower",
    "ACKreed",
    "Bee",
    "BeeState",
    "RELEASEreed",
    "REQflower",
    "REQreed",
    "bee_name",
    "expected_eggs",
    "check_reductions",
    "make_setup",
    "random_clocks",
    "reed_name",
]
