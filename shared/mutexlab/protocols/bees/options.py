"""The options a colony takes, and its random initial clocks (``make_setup`` is the package's)."""

from __future__ import annotations

import random

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
