"""The classic algorithms' workload: every node asks for the critical section ``requests``
times, each after a random think time, and stays inside for a random time.

The think and critical-section times come from one random stream per node, derived from the
seed and independent of the message delays, so every algorithm run with the same seed sees
the same per-node workload (``mutexlab simulate mutex``, ``mutexlab compare``, ``bench/``).
``mutexlab.runs.run_classic`` builds, simulates, audits and measures one such run.
"""

from __future__ import annotations

import random

from ..protocols.registry import Solution, build_setup
from ..setups import ConfigError
from .engine import _TIMER, Simulation


class WorkloadSimulation(Simulation):
    """The simulator with one dwell-time stream per node, independent of the message delays."""

    def __init__(self, setup, config, trace=None) -> None:
        super().__init__(setup, config, trace)
        self._dwell_rng = {pid: random.Random(f"{config.seed}/workload/{pid}") for pid in setup.protocols}

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        mean = self.config.dwell.get(dwell, 1.0)
        at = self.now + (self._dwell_rng[pid].expovariate(1.0 / mean) if mean > 0 else 0.0)
        self.push((at, _TIMER, pid, action))


def make_setup_available(algorithm: str | Solution, nodes: int, options: dict, seed: int):
    """``build_setup``, with a clear error when a built-in protocol module is missing."""
    try:
        return build_setup(algorithm, nodes, options, seed)
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("mutexlab.protocols"):
            named = algorithm.named if isinstance(algorithm, Solution) else algorithm
            raise ConfigError(
                f"algorithm {named!r} is not available in this build ({exc.name} is missing)"
            ) from None
        raise
