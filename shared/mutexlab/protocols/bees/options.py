"""A colony from its options: ``make_setup`` (bees, flowers K, reeds T, eggs, cocoons, clocks)."""

from __future__ import annotations

import random

from ...setup import ConfigError, Setup, positive_int
from ..classic import workload_options
from .machine import Bee
from .messages import CODEC, FLOWER, bee_name

OPTIONS = {
    "flowers": "flowers K (default 3)",
    "reeds": "reeds T (default 3)",
    "eggs": "eggs per bee (default 5)",
    "cocoons": "cocoons per reed, a multiple of eggs (default 15)",
    "initial_clocks": "Lamport clock per pid (default: random from the seed)",
}
CLOCK_RANGE = 100  # default initial clocks are drawn from 0 .. CLOCK_RANGE·P − 1


def random_clocks(processes: int, seed: int) -> dict[int, int]:
    """Random initial Lamport clocks, one per bee, drawn from the seed (ties are allowed: pid breaks them)."""
    rng = random.Random(f"bees-initial-clocks:{seed}")
    return {pid: rng.randrange(CLOCK_RANGE * processes) for pid in range(1, processes + 1)}


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
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
