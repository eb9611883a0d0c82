"""A simulated classic run, audited and measured: what ``simulate mutex``, ``compare`` and
``bench/`` share.

It composes the simulator (``sim/``), the audit (``audit/``) and the metrics, which are
independent of each other, so it sits one layer above them (docs/architecture.md#layering).
"""

from __future__ import annotations

from dataclasses import dataclass

from .audit import numbered, verify_events
from .audit.verdict import Verdict
from .metrics import RunMetrics, measure
from .setup import ConfigError, Setup
from .sim.engine import SimConfig, SimResult
from .sim.workload import WorkloadSimulation, make_setup_available
from .trace import TraceWriter


@dataclass
class ClassicRun:
    algorithm: str
    nodes: int
    setup: Setup
    result: SimResult
    events: list[dict]
    verdict: Verdict
    metrics: RunMetrics

    @property
    def ok(self) -> bool:
        return self.result.ok and self.verdict.ok


def run_classic(
    algorithm: str,
    nodes: int,
    requests: int,
    seed: int,
    options: dict | None = None,
    delay: str = "exp",
    think: float = 1.0,
    cs: float = 1.0,
    trace_path: str | None = None,
    faults: dict | None = None,
    progress=None,
) -> ClassicRun:
    """Build, simulate, audit and measure one run. Raises ConfigError on bad options, OSError
    when the trace cannot be written. ``progress``: see ``Simulation.progress``."""
    options = dict(options or {})
    if "requests" in options:
        raise ConfigError("give the number of requests with --requests, not as an option")
    options["requests"] = requests
    setup = make_setup_available(algorithm, nodes, options, seed)
    config = SimConfig(seed=seed, delay=delay, dwell={"think": think, "cs": cs}, **(faults or {}))
    trace = TraceWriter(trace_path, keep=True)
    try:
        simulation = WorkloadSimulation(setup, config, trace)
        simulation.progress = progress
        result = simulation.run()
    finally:
        trace.close()
    events = numbered(trace.kept)
    verdict = verify_events(events)
    return ClassicRun(algorithm, nodes, setup, result, events, verdict, measure(events))
