"""``mutexlab compare``: the algorithms of the measured family on the same workload, one table.

The family whose flags are ``measured`` (its algorithms run one workload and are measured against
the literature): every registered one by default, or those ``--algorithms`` names (registered
names, dotted modules, ``.py`` files). Same N, requests per node, seed, delay model and per-process
dwell times for all (see ``mutexlab.runs`` and ``mutexlab.sim.workload``). Exit 0 when every run serves every request and is
safe; 1 when any run has a safety violation or a handler raised (the row names it); 2 on bad
arguments (or options an algorithm refuses);
3 when a run stalls, or is cut short by the limits ``simulate`` has (``--max-events``, the memory it
may grow by: ``longrun.event_limit``), without a safety violation. The first of 1, 2, 3 that applies wins.
The solutions of another problem (``--algorithms elves,FILE``) are simulated and audited alike and
tabled by what every run shows (compare_solutions.py).
"""

from __future__ import annotations

from .. import memory, problems
from ..protocol import ProtocolError
from ..protocols import registry
from ..runs import run_measured
from ..setups import ConfigError
from ..spec import AlgorithmSpec
from ..words import count, plural
from .common import fail, format_number, print_json
from .flags import add_dwell_arguments, add_simulator_arguments, as_option, option_pair
from .longrun import (
    add_events_argument,
    add_memory_argument,
    check_memory,
    event_limit,
    growth_watch,
    limit_reached,
)
from .registry import Command
from .simulating import NO_TRACE_NOTE, exit_code, stopped_row

MEASURED = next(f for f in registry.families() if f.measured)
NAMES = registry.members(MEASURED)
KIND = plural(
    MEASURED.title.split(" ", 1)[-1] if MEASURED.title.startswith(("a ", "an ")) else MEASURED.title
)

COLUMNS = (
    "algorithm",
    "entries",
    "messages",
    "per entry",
    "literature",
    "sync (T)",
    "literature",
    "resp. (T)",
    "verdict",
)

# The measured problem's workload and dwell flags (--requests, --think, --cs): another problem's
# solutions run on --nodes and -o alone (compare_solutions), so there they are refused when given.
MEASURED_ONLY = (*(f.key for f in MEASURED.flags[1:]), *(d.kind for d in MEASURED.dwell))


def _value(figure: str | None) -> str:
    """The number of a rendered figure ("2(N−1) = 8" → "8"); the formulas go under the table, so
    it fits 100 columns."""
    return "" if not figure else figure.rpartition(" = ")[2]


def arguments(p) -> None:
    add_simulator_arguments(p, "random seed")
    add_dwell_arguments(p, {d.kind: d.simulated for d in MEASURED.dwell})
    p.add_argument("--json", action="store_true", help="print the outcome as JSON")
    add_memory_argument(p)
    add_events_argument(p)
    p.add_argument(
        "--algorithms",
        metavar="A,B,...",
        default=",".join(NAMES),
        help=f"a comma-separated subset, or other algorithms by module or .py file (default: all {len(NAMES)}); "
        "all of one problem (mutex, or kmutex ...); another problem's solutions are simulated alike and "
        "tabled by messages, entries and duration (--nodes and --option only)",
    )
    p.add_argument(
        "--option",
        "-o",
        type=option_pair,
        action="append",
        metavar="KEY=JSON",
        help="an option given to every algorithm, repeatable (kmutex: -o k=3; an algorithm that does not "
        "take it says so, exit 2)",
    )
    # None when not given (what another problem refuses); the measured problem takes the defaults
    p.set_defaults(
        unknown_hint=as_option,
        measured_defaults={dest: p.get_default(dest) for dest in MEASURED_ONLY},
        **dict.fromkeys(MEASURED_ONLY),
    )


def _row(spec: AlgorithmSpec, outcome, n: int) -> dict:
    lit, name = spec.literature, spec.name
    params = outcome.setup.params
    m = outcome.metrics
    verdict = (
        "ok"
        if outcome.ok
        else (
            "UNSAFE"
            if not outcome.verdict.safe
            else "INCOMPLETE"
            if outcome.result.truncated
            else "STALLED"
            if not outcome.result.ok
            else "INCOMPLETE"
        )
    )
    return {
        "algorithm": name,
        **m.as_dict(),
        "literature_messages": lit["messages"].render(n, params) if "messages" in lit else None,
        "literature_sync": lit["sync"].render(n, params) if "sync" in lit else None,
        "verdict": verdict,
        "stalled": outcome.result.stalled,
        "violations": [v.describe() for v in outcome.verdict.violations],
    }


def render(rows: list[dict], args) -> str:
    table = [COLUMNS]
    for r in rows:
        if r.get("error"):
            table.append((r["algorithm"], "—", "—", "—", "—", "—", "—", "—", r["error"]))
            continue
        table.append(
            (
                r["algorithm"],
                f"{r['entries']}/{r['requests']}",
                str(r["total_messages"]),
                format_number(r["messages_per_entry"]),
                _value(r["literature_messages"]),
                format_number(r["sync_delay"]),
                _value(r["literature_sync"]),
                format_number(r["response_time"]),
                r["verdict"],
            )
        )
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = [
        f"N={args.nodes}, {count(args.requests, 'request')} per node, seed {args.seed}, delay {args.delay}"
        + "".join(f", {d.kind} {getattr(args, d.kind):g}" for d in MEASURED.dwell)
        + "".join(f", {key}={value}" for key, value in args.option or []),
        "times in units of the observed mean message delay T",
    ]
    for k, row in enumerate(table):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    formulas = [
        f"  {r['algorithm']}: messages {r['literature_messages'] or '—'}; sync {r['literature_sync'] or '—'}"
        for r in rows
        if not r.get("error")
    ]
    if formulas:
        lines += ["the literature's figures (messages per entry; synchronization delay in T):", *formulas]
    return "\n".join(lines)


def _solutions(names: list[str]) -> list[registry.Solution] | str:
    """The solution each name names (resolved once, here, and passed down), or the error to print."""
    unknown = [
        a for a in names if a not in registry.SPECS and not (registry.is_module(a) or registry.is_file(a))
    ]
    builtin = {a for a in unknown if problems.find(a) is not None}  # a problem without a built-in solution
    if builtin:
        return (
            f"{', '.join(sorted(builtin))}: a problem, and mutexlab has no solution of it by that name; "
            "name the solutions' files (--algorithms ./a.py,./b.py)"
        )
    if unknown or not names:
        return (
            f"unknown algorithm(s) {', '.join(unknown) or '(none given)'}; choose from "
            f"{', '.join(sorted(registry.SPECS))}, or a solution's .py file or module"
        )
    solutions: list[registry.Solution] = []
    try:
        for name in names:
            solution = registry.solution(name)  # errors name the file as typed
            flags = registry.flags_of(solution.spec)
            first = registry.flags_of(solutions[0].spec) if solutions else flags
            if flags is not first:
                return (
                    f"{name} solves {flags.command}, {names[0]} {first.command}: compare the solutions of one "
                    "problem at a time"
                )
            solutions.append(solution)
    except ConfigError as exc:
        return str(exc)
    return solutions


MAX_NODES = 10_000  # beyond, even predicting a run's memory (quorums, N² links) does not fit


def run(args) -> int:
    if args.nodes > MAX_NODES:  # refused before anything is computed for it
        return fail(f"--nodes {args.nodes:,}: at most {MAX_NODES:,} (a run's memory grows with N²)")
    names = [a.strip() for a in args.algorithms.split(",") if a.strip()]
    solutions = _solutions(names)
    if isinstance(solutions, str):
        return fail(solutions)
    specs = [s.spec for s in solutions]
    flags = registry.flags_of(specs[0])
    given = [dest for dest in MEASURED_ONLY if getattr(args, dest) is not None]
    if not flags.measured:  # another problem's solutions: simulated and audited alike
        from . import compare_solutions

        if given:
            return fail(compare_solutions.not_taken(given, flags, KIND))
        return compare_solutions.run(args, names, specs, flags)
    for dest in MEASURED_ONLY:
        if getattr(args, dest) is None:
            setattr(args, dest, args.measured_defaults[dest])
    workload = {f.key: getattr(args, f.key) for f in MEASURED.flags[1:]}
    for key, value in args.option or []:
        if key in workload:
            return fail(f"give the number of {key} with --{key.replace('_', '-')}, not as an option")
        workload[key] = value
    dwell = {d.kind: getattr(args, d.kind) for d in MEASURED.dwell}
    # One run at a time: the largest of them must fit.
    need = max(
        (memory.predict(memory.messages(s, args.nodes, workload), args.nodes) for s in specs),
        key=lambda p: p.bytes,
    )
    refused = check_memory(args, need, MEASURED.smaller)
    if refused:
        return refused
    rows: list[dict] = []
    codes = set()
    available = memory.available_bytes()
    for solution in solutions:
        spec = solution.spec
        # each run is cut where a run that never ends would be, as in simulate (docs/exit-codes.md#limits)
        messages = memory.messages(spec, args.nodes, workload)
        guard = event_limit(args, False, messages, 0, args.nodes)
        allowance = None if args.ignore_memory else memory.growth_allowance(need, available)
        try:
            outcome = run_measured(
                solution,
                args.nodes,
                workload,
                args.seed,
                args.delay,
                dwell,
                faults={"max_events": guard},
                watch=growth_watch(allowance),
            )
        except (ProtocolError, ConfigError) as exc:  # refused, or stopped midway: in its row
            row, code = stopped_row(spec.name, exc, None)  # run_measured noted what it had seen
            rows.append(row)
            codes.add(code)
            continue
        row = _row(spec, outcome, args.nodes)
        row["incomplete"] = limit_reached(outcome.result, guard, allowance)
        codes.add(exit_code(outcome.verdict, outcome.result.ok))
        rows.append(row)
    if args.json:
        print_json(
            {
                "nodes": args.nodes,
                "requests_per_node": args.requests,
                "seed": args.seed,
                "delay": args.delay,
                **dwell,
                "runs": rows,
            }
        )
    else:
        print(render(rows, args))
        for r in rows:
            for v in r.get("violations", []):
                print(f"{r['algorithm']}: {v}")
            for who, what in (r.get("stalled") or {}).items():
                print(f"{r['algorithm']}: STALLED {who} waits for {what}")
            if r.get("incomplete"):
                print(f"{r['algorithm']}: incomplete: {r['incomplete']}")
        if any(r.get("violations") for r in rows):
            print(NO_TRACE_NOTE)
    return next((code for code in (1, 2, 3) if code in codes), 0)


COMMAND = Command(
    "compare",
    f"all {len(NAMES)} {KIND} on the same workload, one table",
    f"""Run {", ".join(NAMES[:-1])} and {NAMES[-1]} (or --algorithms) on the same workload (default options)
    and print one table: messages per entry, synchronization delay and response time in units of the
    mean message delay T, beside the literature's figures. Exit 0 when every run is safe and serves every
    request, 1 when any run has a safety violation or a handler raised, 2 on bad arguments, 3 when a run
    stalls or hits its event or memory limit without one.""",
    run,
    arguments,
    flags=MEASURED,
    family_options={"choose": False},
)
