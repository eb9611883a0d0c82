"""``mutexlab simulate bees|elves|mutex``: the group; each scenario is declared in its module."""

from __future__ import annotations

from . import simulate_bees, simulate_elves, simulate_mutex
from .registry import Command

COMMAND = Command(
    "simulate",
    "run a scenario in the deterministic simulator",
    "Seeded, deterministic simulation in virtual time (mean message delay = 1).",
    scenarios=(simulate_bees.COMMAND, simulate_elves.COMMAND, simulate_mutex.COMMAND),
)
