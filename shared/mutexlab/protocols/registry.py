"""Algorithm name → module. Each module offers ``make_setup(processes, options, seed)``."""

from __future__ import annotations

import importlib
from types import ModuleType

from ..setup import ConfigError, Setup

ALGORITHMS: dict[str, str] = {
    "bees": "mutexlab.protocols.bees",
    "elves": "mutexlab.protocols.elves",
    "lamport": "mutexlab.protocols.lamport",
    "ricart-agrawala": "mutexlab.protocols.ricart_agrawala",
    "maekawa": "mutexlab.protocols.maekawa",
    "sanders": "mutexlab.protocols.sanders",
    "suzuki-kasami": "mutexlab.protocols.suzuki_kasami",
    "raymond": "mutexlab.protocols.raymond",
}

# The classic single-resource algorithms (resource ``cs``), in the order tables list them.
CLASSIC = ["lamport", "ricart-agrawala", "maekawa", "sanders", "suzuki-kasami", "raymond"]


def module(name: str) -> ModuleType:
    if name not in ALGORITHMS:
        raise ConfigError(f"unknown algorithm {name!r}; choose one of: {', '.join(ALGORITHMS)}")
    return importlib.import_module(ALGORITHMS[name])


def make_setup(name: str, processes: int, options: dict | None = None, seed: int = 0) -> Setup:
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ConfigError(f"the number of processes must be a whole number ≥ 1, got {processes!r}")
    return module(name).make_setup(processes, dict(options or {}), seed)
