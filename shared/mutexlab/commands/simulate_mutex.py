"""``mutexlab simulate mutex``: one seeded run of a classic algorithm, measured and audited.

Every node asks for the critical section ``--requests`` times, each after a random think time,
and stays inside for a random time. The think and critical-section times come from one random
stream per node, derived from the seed and independent of the message delays, so every
algorithm run with the same seed sees the same per-node workload (``mutexlab compare``).

Exit 0 when every request was served and the audit finds the trace safe; 1 when the audit finds a
safety violation; 2 on bad arguments or options; 3 when the run stalls without one.
"""

from __future__ import annotations

import argparse
import heapq
import json
import random
from dataclasses import dataclass
from pathlib import Path

from ..audit import verify_events
from ..audit.verdict import Verdict
from ..metrics import LITERATURE, RunMetrics, measure
from ..protocols.registry import CLASSIC, make_setup
from ..setup import ConfigError
from ..sim import SimConfig, SimResult, Simulation
from ..sim.engine import _TIMER
from ..trace import TraceWriter
from ..words import count
from ..report.options import add_report_argument, write_report_if_asked
from ..sim import memory
from .longrun import add_memory_argument, check_memory, progress_bar
from .common import (add_fault_arguments, audit_summary, fail, fault_config, fault_line,
                     exit_code, non_negative, outcome_lines, positive, print_json, seconds)


class WorkloadSimulation(Simulation):
    """The simulator with one dwell-time stream per node, independent of the message delays."""

    def __init__(self, setup, config, trace=None) -> None:
        super().__init__(setup, config, trace)
        self._dwell_rng = {pid: random.Random(f"{config.seed}/workload/{pid}") for pid in setup.protocols}

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        mean = self.config.dwell.get(dwell, 1.0)
        at = self.now + (self._dwell_rng[pid].expovariate(1.0 / mean) if mean > 0 else 0.0)
        self._seq += 1
        heapq.heappush(self._queue, (at, self._seq, _TIMER, pid, action))


@dataclass
class ClassicRun:
    algorithm: str
    nodes: int
    setup: object
    result: SimResult
    events: list[dict]
    verdict: Verdict
    metrics: RunMetrics

    @property
    def ok(self) -> bool:
        return self.result.ok and self.verdict.ok


def run_classic(algorithm: str, nodes: int, requests: int, seed: int, options: dict | None = None,
                delay: str = "exp", think: float = 1.0, cs: float = 1.0, trace_path: str | None = None,
                faults: dict | None = None, progress=None) -> ClassicRun:
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
    events = [dict(e, _line=n) for n, e in enumerate(trace.events, 1)]
    verdict = verify_events(events)
    return ClassicRun(algorithm, nodes, setup, result, events, verdict, measure(events))


def make_setup_available(algorithm: str, nodes: int, options: dict, seed: int):
    try:
        return make_setup(algorithm, nodes, options, seed)
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("mutexlab.protocols"):
            raise ConfigError(f"algorithm {algorithm!r} is not available in this build ({exc.name} is missing)") \
                from None
        raise


# -- options from the command line ------------------------------------------------------------
def option_pair(text: str) -> tuple[str, object]:
    """``key=JSON`` → (key, value); a value that is not JSON is taken as a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected key=JSON, got {text!r}")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


def collect_options(args) -> dict:
    """``--options FILE`` first, then each ``--option key=JSON`` on top. Raises ConfigError."""
    options: dict = {}
    if getattr(args, "options", None):
        try:
            loaded = json.loads(Path(args.options).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ConfigError(f"cannot read options file {args.options}: {exc.strerror}") from None
        except json.JSONDecodeError as exc:
            raise ConfigError(f"options file {args.options} is not JSON: {exc}") from None
        if not isinstance(loaded, dict):
            raise ConfigError(f"options file {args.options} must hold a JSON object")
        options.update(loaded)
    for key, value in getattr(args, "option", None) or []:
        options[key] = value
    return options


def add_workload_arguments(p) -> None:
    p.add_argument("--nodes", "-N", type=positive, required=True, metavar="N", help="number of nodes")
    p.add_argument("--requests", "-M", type=positive, default=3, metavar="M",
                   help="critical-section requests per node (default 3)")
    p.add_argument("--seed", type=non_negative, default=0, help="random seed (default 0)")
    p.add_argument("--delay", choices=("exp", "uniform", "fixed"), default="exp",
                   help="message delay model, mean 1 (default exp)")
    p.add_argument("--think", type=seconds, default=1.0, metavar="MEAN",
                   help="mean think time before each request, in message delays (default 1)")
    p.add_argument("--cs", type=seconds, default=1.0, metavar="MEAN",
                   help="mean time inside the critical section, in message delays (default 1)")
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")


def register(sub) -> None:
    p = sub.add_parser("mutex", help="a classic algorithm: N nodes, M requests each",
                       description="Simulate one classic mutual-exclusion algorithm, audit the trace and measure "
                                   "messages per entry, synchronization delay and response time (in units of the "
                                   "mean message delay T) beside the literature's figures. Exit 0 when every "
                                   "request is served and the trace is safe, 1 on a safety violation, 2 on bad "
                                   "arguments, 3 when the run stalls without a safety violation.")
    p.add_argument("--algorithm", "-a", required=True, choices=CLASSIC, metavar="NAME",
                   help="one of: " + ", ".join(CLASSIC))
    add_workload_arguments(p)
    p.add_argument("--option", "-o", type=option_pair, action="append", metavar="KEY=JSON",
                   help="an algorithm option, repeatable, e.g. -o token_holder=2 or "
                        "-o 'parents={\"2\": 1, \"3\": 2}'")
    p.add_argument("--options", metavar="FILE.json", help="algorithm options from a JSON object file")
    p.add_argument("--trace", metavar="FILE", help="write the trace (JSON Lines) here")
    add_report_argument(p)
    add_fault_arguments(p)
    add_memory_argument(p)
    p.set_defaults(func=run)


# -- output ----------------------------------------------------------------------------------
def summary(run: ClassicRun, args) -> dict:
    m = run.metrics
    n, params = run.nodes, run.setup.params
    lit = LITERATURE.get(run.algorithm, {})
    out = {"algorithm": run.algorithm, "nodes": n, "requests_per_node": args.requests, "seed": args.seed,
           "delay": args.delay, "think": args.think, "cs": args.cs, "params": params, **m.as_dict(),
           "literature": {k: {"text": f.text, "range": f.range(n, params)} for k, f in lit.items()},
           "virtual_duration": round(run.result.duration, 3),
           "stalled": run.result.stalled, "truncated": run.result.truncated,
           "faults": fault_line(args, run.result.duplicates_dropped),
           "audit": audit_summary(run.verdict), "states": run.result.states}
    if args.trace:
        out["trace"] = args.trace
    return out


def _fmt(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def render(run: ClassicRun, args) -> str:
    m, n, params = run.metrics, run.nodes, run.setup.params
    lit = LITERATURE.get(run.algorithm, {})
    lines = [f"{run.algorithm}: N={n}, {count(args.requests, 'request')} per node, seed {args.seed}, delay {args.delay}, "
             f"think {args.think:g}, cs {args.cs:g}",
             f"entries:            {m.entries} of {m.requests} requests",
             "messages:           " + (", ".join(f"{t} {c}" for t, c in sorted(m.messages.items())) or "none")
             + f" (total {m.total_messages})",
             f"messages per entry: {_fmt(m.per_entry)}"
             + (f"    literature: {lit['messages'].render(n, params)}" if "messages" in lit else ""),
             f"sync delay:         {_fmt(m.sync_delay)} T ({count(len(m.sync_delays), 'handover')})"
             + (f"    literature: {lit['sync'].render(n, params)}" if "sync" in lit else ""),
             f"response time:      {_fmt(m.response_time)} T (request → enter, {count(len(m.response_times), 'sample')})",
             f"T (mean message delay, observed): {_fmt(m.mean_delay, 3)}; virtual duration "
             f"{run.result.duration:.1f}"]
    lines += outcome_lines(summary(run, args))
    return "\n".join(lines)


def run(args) -> int:
    try:
        options = collect_options(args)
        messages = memory.classic_messages(args.algorithm, args.nodes, args.requests, options)
        refused = check_memory(args, memory.predict(messages, args.nodes), "fewer nodes or requests")
        if refused:
            return refused
        with progress_bar(args, messages, args.algorithm) as progress:
            outcome = run_classic(args.algorithm, args.nodes, args.requests, args.seed, options,
                                  args.delay, args.think, args.cs, args.trace, fault_config(args), progress)
    except ConfigError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write trace {args.trace}: {exc.strerror}")
    if args.json:
        print_json(summary(outcome, args))
    else:
        print(render(outcome, args))
    return write_report_if_asked(args, outcome.events, outcome.result.stalled, outcome.result.states) or \
        exit_code(outcome.verdict, outcome.result.ok)
