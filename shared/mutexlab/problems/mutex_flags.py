"""How the commands present the ``mutex`` problem (``simulate|run|check|explore mutex``,
``compare``): their flags, what ``simulate`` prints of a run, and a run's message estimate.

Every node asks for the critical section ``--requests`` times, each after a random think time,
and stays inside for a random time, the same per-node workload for every algorithm run with the
same seed (``measured``), so ``compare`` tables them side by side.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..spec import Dwell, Figure, Flag, Flags, Simulated
from ..words import count


def _number(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def summarise(run: Simulated) -> dict[str, Any]:
    m, n, params = run.metrics, run.processes, run.setup.params
    lit = run.spec.literature
    return {
        "algorithm": run.spec.name,
        "nodes": n,
        "requests_per_node": run.options["requests"],
        "seed": run.seed,
        "delay": run.delay,
        "think": run.dwell["think"],
        "cs": run.dwell["cs"],
        "params": params,
        **m.as_dict(),
        "literature": {k: {"text": f.text, "range": f.range(n, params)} for k, f in lit.items()},
        "virtual_duration": round(run.result.duration, 3),
        "stalled": run.result.stalled,
        "truncated": run.result.truncated,
        "faults": run.common["faults"],
        "audit": run.common["audit"],
        "states": run.result.states,
        **({"trace": run.common["trace"]} if run.common.get("trace") else {}),
    }


def render(run: Simulated, s: dict[str, Any]) -> list[str]:
    m, n, params, lit = run.metrics, s["nodes"], s["params"], run.spec.literature
    return [
        f"{s['algorithm']}: N={n}, {count(s['requests_per_node'], 'request')} per node, seed {s['seed']}, "
        f"delay {s['delay']}, think {s['think']:g}, cs {s['cs']:g}",
        f"entries:            {m.entries} of {m.requests} requests",
        "messages:           "
        + (", ".join(f"{t} {c}" for t, c in sorted(m.messages.items())) or "none")
        + f" (total {m.total_messages})",
        f"messages per entry: {_number(m.per_entry)}"
        + (f"    literature: {lit['messages'].render(n, params)}" if "messages" in lit else ""),
        f"sync delay:         {_number(m.sync_delay)} T ({count(len(m.sync_delays), 'handover')})"
        + (f"    literature: {lit['sync'].render(n, params)}" if "sync" in lit else ""),
        f"response time:      {_number(m.response_time)} T "
        f"(request → enter, {count(len(m.response_times), 'sample')})",
        f"T (mean message delay, observed): {_number(m.mean_delay, 3)}; virtual duration "
        f"{run.result.duration:.1f}",
    ]


def workload_estimate(
    literature: dict[str, Figure], per_entry: Callable[[int], float] | None = None
) -> Callable[[int, dict[str, Any]], float]:
    """Entries × the literature's messages per entry (its upper figure), else ``per_entry(N)``
    (default 3(N−1))."""

    def estimate(processes: int, options: dict[str, Any]) -> float:
        requests = options.get("requests", 0)
        requests = requests if isinstance(requests, int) and not isinstance(requests, bool) else 0
        params = {k: v for k, v in options.items() if k != "requests"}
        figure = literature.get("messages")
        span = None
        if figure is not None:
            try:
                span = figure.range(processes, params)
            except (TypeError, ValueError, KeyError, AttributeError):
                span = None
        fallback = per_entry(processes) if per_entry is not None else 3 * (processes - 1)
        return processes * requests * max(span[1] if span else fallback, 1.0)

    return estimate


FLAGS = Flags(
    command="mutex",
    title="a classic algorithm",
    sizes="N nodes, M requests each",
    description="""Simulate one classic mutual-exclusion algorithm, audit the trace and measure messages per entry,
    synchronization delay and response time (in units of the mean message delay T) beside the literature's
    figures. Exit 0 when every request is served and the trace is safe, 1 on a safety violation, 2 on bad
    arguments, 3 when the run stalls without a safety violation.""",
    flags=(
        Flag("nodes", "number of nodes", "N", ("-N",)),
        Flag("requests", "critical-section requests per node", "M", ("-M", "-r")),
    ),
    summarise=summarise,
    render=render,
    defaults={"requests": 3},
    per_command={
        # run and explore take the solution that declares itself their default (default_for)
        "run": {"nodes": 5},
        "explore": {"nodes": 3},
        "compare": {"nodes": 5},
        "check": {"requests": 1},
    },
    free_options=True,
    dwell=(
        Dwell("think", "mean think time before each request, in message delays", "before each request"),
        Dwell(
            "cs", "mean time inside the critical section, in message delays", "inside the critical section"
        ),
    ),
    smaller="fewer nodes or requests",
    measured=True,
)
