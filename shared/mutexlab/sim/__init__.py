"""The in-memory drivers: a seeded discrete-event simulator and a scripted replayer.

Their names are imported from here when first asked for: a process that needs only the driver
(``sim.driver``: every service of ``mutexlab run``) neither imports nor compiles the simulator
and the replayer."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .engine import SimConfig, SimResult, Simulation, simulate
    from .scripted import ScenarioError, replay_scenario

__all__ = ["SimConfig", "SimResult", "Simulation", "simulate", "ScenarioError", "replay_scenario"]
_MODULES = {
    "SimConfig": "engine",
    "SimResult": "engine",
    "Simulation": "engine",
    "simulate": "engine",
    "ScenarioError": "scripted",
    "replay_scenario": "scripted",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
