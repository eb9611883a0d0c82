"""``mutexlab simulate bees|elves|mutex``: the group; each scenario registers itself."""

from __future__ import annotations

import importlib

from .common import add_scenario_command

SIMULATIONS: list[str] = []
SIMULATIONS.append("mutexlab.commands.simulate_bees")
SIMULATIONS.append("mutexlab.commands.simulate_elves")
SIMULATIONS.append("mutexlab.commands.simulate_mutex")


def register(sub) -> None:
    group = add_scenario_command(
        sub,
        "simulate",
        help="run a scenario in the deterministic simulator",
        description="Seeded, deterministic simulation in virtual time (mean message delay = 1).",
    )
    for name in SIMULATIONS:
        importlib.import_module(name).register(group)
