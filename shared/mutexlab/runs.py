"""A simulated classic run, audited and measured: what ``simulate mutex``, ``compare`` and
``bench/`` share.

It composes the simulator (``sim/``), the audit (``audit/``) and the metrics, which are
independent of each other, so it sits one layer above them (docs/architecture.md#layering).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .audit import numbered, verify_events
from .audit.seen import note_seen
from .audit.verdict import Verdict
from .metrics import RunMetrics, measure
from .protocol import ProtocolError
from .protocols.registry import Solution
from .setups import ConfigError, Setup
from .sim.engine import SimConfig, SimResult
from .sim.workload import WorkloadSimulation, make_setup_available
from .trace import TraceWriter
from .waiting import WaitsRaised


@dataclass
class ClassicRun:
    algorithm: str
    nodes: int
    setup: Setup
    result: SimResult
    events: list[dict[str, Any]]
    verdict: Verdict
    metrics: RunMetrics

    @property
    def ok(self) -> bool:
        return self.result.ok and self.verdict.ok


def run_classic(
    algorithm: str | Solution,
    nodes: int,
    requests: int,
    seed: int,
    options: dict[str, Any] | None = None,
    delay: str = "exp",
    think: float = 1.0,
    cs: float = 1.0,
    trace_path: str | None = None,
    faults: dict[str, Any] | None = None,
    progress: Callable[[int, float], None] | None = None,
) -> ClassicRun:
    """``run_measured`` with ``requests`` per node and the think and critical-section dwells."""
    options = dict(options or {})
    if "requests" in options:
        raise ConfigError("give the number of requests with --requests, not as an option")
    options["requests"] = requests
    dwell = {"think": think, "cs": cs}
    return run_measured(algorithm, nodes, options, seed, delay, dwell, trace_path, faults, progress)


def run_measured(
    algorithm: str | Solution,
    processes: int,
    options: dict[str, Any],
    seed: int,
    delay: str = "exp",
    dwell: dict[str, float] | None = None,
    trace_path: str | None = None,
    faults: dict[str, Any] | None = None,
    progress: Callable[[int, float], None] | None = None,
    watch: Callable[[], str | None] | None = None,
) -> ClassicRun:
    """Build (``algorithm``: the solution a command resolved, or what ``registry.solution`` takes),
    simulate with one dwell stream per process, audit and measure one run. Raises ConfigError on
    bad options, OSError when the trace cannot be written. ``progress``, ``watch``: see
    ``Simulation``'s; ``faults`` may carry ``max_events`` too (any ``SimConfig`` keyword). A stall
    a process's ``waiting_for()`` cannot explain (it raised): ``WaitsRaised``, the audited run as
    its ``result``."""
    setup = make_setup_available(algorithm, processes, dict(options), seed)
    config = SimConfig(seed=seed, delay=delay, dwell=dict(dwell or {}), **(faults or {}))
    trace = TraceWriter(trace_path, keep=True)
    raised: WaitsRaised | None = None
    try:
        simulation = WorkloadSimulation(setup, config, trace)
        simulation.progress = progress
        simulation.watch = watch
        try:
            result = simulation.run()
        except WaitsRaised as exc:  # the run ended, its stall unexplained: audited all the same
            if exc.result is None:
                raise
            result, raised = exc.result, exc
        except (ProtocolError, ConfigError) as exc:  # stopped midway: what it broke before, said too
            raise note_seen(exc, trace.kept) from None
        trace.close(ended=True)
    finally:
        trace.close()
    events = numbered(trace.kept)
    verdict = verify_events(events)
    named = algorithm.named if isinstance(algorithm, Solution) else algorithm
    run = ClassicRun(named, processes, setup, result, events, verdict, measure(events))
    if raised is not None:  # still an error to every caller; ``simulate`` shows the run with it
        raised.result = run
        raise raised
    return run
