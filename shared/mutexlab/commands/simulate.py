"""``mutexlab simulate bees|elves|mutex``: the group; each scenario registers itself."""

from __future__ import annotations

import importlib

SIMULATIONS: list[str] = []
SIMULATIONS.append("mutexlab.commands.simulate_bees")
SIMULATIONS.append("mutexlab.commands.simulate_elves")
SIMULATIONS.append("mutexlab.commands.simulate_mutex")


def register(sub) -> None:
    p = sub.add_parser(
        "simulate",
        help="run a scenario in the deterministic simulator",
        description="Seeded, deterministic simulation in virtual time (mean message delay = 1).",
    )
    group = p.add_subparsers(dest="scenario", metavar="SCENARIO", required=True)
    for name in SIMULATIONS:
        importlib.import_module(name).register(group)
