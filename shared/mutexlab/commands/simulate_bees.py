"""``mutexlab simulate bees``: one seeded run of the mason bees, summarised and audited.

Exit 0 when the run ends with every bee DEAD or RETIRED and the audit finds the trace safe;
1 when the audit finds a safety violation; 2 on bad arguments; 3 when the run stalls (or the audit
finds it unfinished) without a safety violation.
"""

from __future__ import annotations

from collections import Counter

from .. import memory
from ..protocols.bees import expected_eggs, make_setup
from ..setup import ConfigError
from ..sim import SimConfig, Simulation
from .common import add_json_argument, add_trace_argument, fail, print_json
from .flags import add_simulator_arguments, bees_config
from .longrun import add_memory_argument, audit_trace, check_memory, progress_bar
from .registry import Command
from .reporting import add_report_argument, write_report_if_asked
from .simulating import add_fault_arguments, audit_summary, exit_code, fault_config, fault_line, outcome_lines

REED_TYPES = ("REQreed", "ACKreed", "RELEASEreed")
FLOWER_TYPES = ("REQflower", "ACKflower")


def arguments(p) -> None:
    add_simulator_arguments(p, "random seed: delays, dwell times and initial clocks")
    add_trace_argument(p)
    p.add_argument(
        "--no-audit",
        action="store_true",
        help="do not audit the run (the audit is fed as the run goes and holds no trace; "
        "ignored with --trace or --report)",
    )
    add_json_argument(p, "summary")
    add_report_argument(p)
    add_fault_arguments(p)
    add_memory_argument(p)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 2) if whole else None


def summarise(setup, result, verdict, args) -> dict:
    per_reed: Counter[str] = Counter({f"reed:{r}": 0 for r in range(1, args.reeds + 1)})
    for bee in setup.protocols.values():
        if bee.laid:
            per_reed[f"reed:{bee.reed}"] += bee.laid
    messages = result.messages
    reed_msgs = sum(messages.get(t, 0) for t in REED_TYPES)
    flower_msgs = sum(messages.get(t, 0) for t in FLOWER_TYPES)
    summary = {
        "bees": args.bees,
        "flowers": args.flowers,
        "reeds": args.reeds,
        "eggs": args.eggs,
        "cocoons": args.cocoons,
        "seed": args.seed,
        "delay": args.delay,
        "initial_clocks": setup.params["initial_clocks"],
        "eggs_per_reed": dict(per_reed),
        "eggs_total": sum(per_reed.values()),
        "eggs_expected": expected_eggs(args.bees, args.reeds, args.eggs, args.cocoons),
        "deaths": result.notes.get("death", 0),
        "retired": result.notes.get("retire", 0),
        "final_states": dict(Counter(result.states.values())),
        "states": result.states,
        "messages": messages,
        "messages_total": result.total_messages,
        "entries": result.entries,
        "messages_per_reed_entry": _ratio(reed_msgs, result.entries.get("reed", 0)),
        "messages_per_flower_entry": _ratio(flower_msgs, result.entries.get("flower", 0)),
        "virtual_duration": round(result.duration, 3),
        "events": result.events,
        "stalled": result.stalled,
        "truncated": result.truncated,
        "faults": fault_line(args, result.duplicates_dropped),
        "audit": audit_summary(verdict),
    }
    if args.trace:
        summary["trace"] = args.trace
    return summary


def render(s: dict) -> str:
    lines = [
        f"mason bees: P={s['bees']} K={s['flowers']} T={s['reeds']} eggs={s['eggs']} cocoons={s['cocoons']} "
        f"seed={s['seed']} delay={s['delay']}",
        "eggs per reed: "
        + ", ".join(f"{r} {n}" for r, n in s["eggs_per_reed"].items())
        + f" (total {s['eggs_total']}, expected {s['eggs_expected']})",
        f"bees: {s['deaths']} dead, {s['retired']} retired (no room left)"
        + "".join(
            f", {n} {state}" for state, n in s["final_states"].items() if state not in ("DEAD", "RETIRED")
        ),
        "messages: "
        + (", ".join(f"{t} {n}" for t, n in s["messages"].items()) or "none")
        + f" (total {s['messages_total']})",
        f"entries: reed {s['entries'].get('reed', 0)}, flower {s['entries'].get('flower', 0)}; "
        f"messages per reed entry {s['messages_per_reed_entry']}, "
        f"per flower entry {s['messages_per_flower_entry']}",
        f"virtual duration: {s['virtual_duration']} (mean message delay 1), {s['events']} events",
    ]
    lines += outcome_lines(s)
    return "\n".join(lines)


def run(args) -> int:
    scenario = bees_config(args)
    o = scenario.options
    audit = bool(args.trace) or bool(args.report) or not args.no_audit
    messages = memory.bees_messages(scenario.processes, o["reeds"], o["eggs"], o["cocoons"])
    # Nothing holds the trace: the audit is fed as the run goes (docs/architecture.md#scaling), and
    # --report keeps only the window its page draws (report/window.py).
    refused = check_memory(args, memory.predict(messages, scenario.processes, audited=False), "fewer bees")
    if refused:  # before the setup: P bees already hold P² of state
        return refused
    try:
        setup = make_setup(scenario.processes, scenario.options, args.seed)
        # The livelock guard grows with the run: at P = 1000 (334 reeds, 100 flowers) a healthy run
        # takes 9,247,872 events (BENCHMARKS.md §6), past the default 5M, and would end TRUNCATED.
        guard = max(SimConfig.max_events, int(3 * messages))
        config = SimConfig(seed=args.seed, delay=args.delay, max_events=guard, **fault_config(args))
    except ConfigError as exc:
        return fail(str(exc))
    window = None
    if args.report:
        from ..report import WindowFeed  # the page's code is imported only for a page

        window = WindowFeed()
    trace, auditor = audit_trace(setup, args.trace, window) if audit else (None, None)
    if isinstance(trace, str):
        return fail(trace)
    try:
        with progress_bar(args, messages, "bees") as progress:
            # Without a written trace the bees' audit reads no message bodies: none are made.
            simulation = Simulation(setup, config, trace, trace_bodies=bool(args.trace or args.report))
            simulation.progress = progress
            result = simulation.run()
    finally:
        if trace is not None:
            trace.close()
    verdict = auditor.verdict() if auditor is not None else None
    summary = summarise(setup, result, verdict, args)
    if args.json:
        print_json(summary)
    else:
        print(render(summary))
    code = exit_code(verdict, result.ok)
    shown = window.window_of(verdict) if window is not None and verdict is not None else None
    return write_report_if_asked(args, shown, result.stalled, result.states) or code


COMMAND = Command(
    "bees",
    "the mason bees: P bees, K flowers, T reeds",
    """Simulate the mason bees in virtual time and audit the run. Exit 0 when every bee ends DEAD or RETIRED
    and the trace is safe, 1 on a safety violation, 2 on bad arguments, 3 when the run stalls without one.""",
    run,
    arguments,
    family="bees",
)
