"""``mutexlab simulate mutex``: one seeded run of a classic algorithm, measured and audited.

Every node asks for the critical section ``--requests`` times, each after a random think time,
and stays inside for a random time, the same per-node workload for every algorithm run with the
same seed (``mutexlab.sim.workload``, also behind ``mutexlab compare``).

Exit 0 when every request was served and the audit finds the trace safe; 1 when the audit finds a
safety violation; 2 on bad arguments or options; 3 when the run stalls without one.
"""

from __future__ import annotations

from .. import memory
from ..metrics import literature
from ..runs import ClassicRun, run_classic
from ..setup import ConfigError
from ..words import count
from .common import add_trace_argument, fail, format_number, print_json
from .flags import add_workload_arguments, mutex_config
from .longrun import add_memory_argument, check_memory, progress_bar
from .registry import Command
from .reporting import add_report_argument, write_report_if_asked
from .simulating import add_fault_arguments, audit_summary, exit_code, fault_config, fault_line, outcome_lines


def arguments(p) -> None:
    add_workload_arguments(p)
    add_memory_argument(p)
    add_trace_argument(p)
    add_report_argument(p)
    add_fault_arguments(p)


# -- output ----------------------------------------------------------------------------------
def summary(run: ClassicRun, args) -> dict:
    m = run.metrics
    n, params = run.nodes, run.setup.params
    lit = literature(run.algorithm)
    out = {
        "algorithm": run.algorithm,
        "nodes": n,
        "requests_per_node": args.requests,
        "seed": args.seed,
        "delay": args.delay,
        "think": args.think,
        "cs": args.cs,
        "params": params,
        **m.as_dict(),
        "literature": {k: {"text": f.text, "range": f.range(n, params)} for k, f in lit.items()},
        "virtual_duration": round(run.result.duration, 3),
        "stalled": run.result.stalled,
        "truncated": run.result.truncated,
        "faults": fault_line(args, run.result.duplicates_dropped),
        "audit": audit_summary(run.verdict),
        "states": run.result.states,
    }
    if args.trace:
        out["trace"] = args.trace
    return out


def render(run: ClassicRun, args) -> str:
    m, n, params = run.metrics, run.nodes, run.setup.params
    lit = literature(run.algorithm)
    lines = [
        f"{run.algorithm}: N={n}, {count(args.requests, 'request')} per node, seed {args.seed}, delay {args.delay}, "
        f"think {args.think:g}, cs {args.cs:g}",
        f"entries:            {m.entries} of {m.requests} requests",
        "messages:           "
        + (", ".join(f"{t} {c}" for t, c in sorted(m.messages.items())) or "none")
        + f" (total {m.total_messages})",
        f"messages per entry: {format_number(m.per_entry)}"
        + (f"    literature: {lit['messages'].render(n, params)}" if "messages" in lit else ""),
        f"sync delay:         {format_number(m.sync_delay)} T ({count(len(m.sync_delays), 'handover')})"
        + (f"    literature: {lit['sync'].render(n, params)}" if "sync" in lit else ""),
        f"response time:      {format_number(m.response_time)} T "
        f"(request → enter, {count(len(m.response_times), 'sample')})",
        f"T (mean message delay, observed): {format_number(m.mean_delay, 3)}; virtual duration "
        f"{run.result.duration:.1f}",
    ]
    lines += outcome_lines(summary(run, args))
    return "\n".join(lines)


def run(args) -> int:
    try:
        scenario = mutex_config(args)
        options = dict(scenario.options)
        requests = options.pop("requests")
        messages = memory.classic_messages(scenario.algorithm, scenario.processes, requests, options)
        refused = check_memory(args, memory.predict(messages, scenario.processes), "fewer nodes or requests")
        if refused:
            return refused
        with progress_bar(args, messages, scenario.algorithm) as progress:
            outcome = run_classic(
                scenario.algorithm,
                scenario.processes,
                requests,
                args.seed,
                options,
                args.delay,
                args.think,
                args.cs,
                args.trace,
                fault_config(args),
                progress,
            )
    except ConfigError as exc:
        return fail(str(exc))
    except OSError as exc:
        return fail(f"cannot write trace {args.trace}: {exc.strerror}")
    if args.json:
        print_json(summary(outcome, args))
    else:
        print(render(outcome, args))
    return write_report_if_asked(
        args, outcome.events, outcome.result.stalled, outcome.result.states
    ) or exit_code(outcome.verdict, outcome.result.ok)


COMMAND = Command(
    "mutex",
    "a classic algorithm: N nodes, M requests each",
    """Simulate one classic mutual-exclusion algorithm, audit the trace and measure messages per entry,
    synchronization delay and response time (in units of the mean message delay T) beside the literature's
    figures. Exit 0 when every request is served and the trace is safe, 1 on a safety violation, 2 on bad
    arguments, 3 when the run stalls without a safety violation.""",
    run,
    arguments,
    family="mutex",
)
