"""``mutexlab compare`` for the solutions of a problem not measured against the literature (every
problem whose flags are not ``measured``: a built-in one, or one a solution file names): each
solution simulated on the same configuration (``--nodes`` processes, the ``--option`` values, the
seed and the delay model; every dwell time of the problem 1), its trace audited by the problem's
rules, one table of what every run shows — messages, entries, messages per entry, virtual
duration, verdict. ``--requests`` and the dwell flags are the measured problem's: refused here
(``not_taken``) rather than ignored. Exit codes as compare.py's.
"""

from __future__ import annotations

from typing import Any

from .. import memory
from ..audit import numbered, verify_events
from ..protocol import ProtocolError
from ..protocols import registry
from ..setups import ConfigError
from ..sim import SimConfig, Simulation
from ..spec import AlgorithmSpec, Flags
from ..trace import TraceWriter
from .common import format_number, print_json
from .longrun import check_memory, event_limit, growth_watch, limit_reached
from .simulating import exit_code, stopped_row

COLUMNS = ("algorithm", "messages", "entries", "per entry", "duration", "verdict")


def _simulated(
    name: str, spec: AlgorithmSpec, args, options: dict[str, Any], dwell: dict, allowance: int | None
) -> tuple[dict, int]:
    """One solution's row and exit code; the run is cut where simulate's would be (an event
    limit, ``allowance`` bytes of growth), incomplete (exit 3) when it was."""
    guard = event_limit(args, False, memory.messages(spec, args.nodes, options), 0, args.nodes)
    try:
        setup = registry.build_setup(registry.canonical(name), args.nodes, dict(options), args.seed)
        config = SimConfig(seed=args.seed, delay=args.delay, dwell=dwell, max_events=guard)
    except ConfigError as exc:
        return {"algorithm": spec.name, "error": str(exc)}, 2
    trace = TraceWriter(None, keep=True)
    try:
        simulation = Simulation(setup, config, trace)
        simulation.watch = growth_watch(allowance)
        result = simulation.run()
    except (ProtocolError, ConfigError) as exc:  # a handler raised, an input or a state refused
        return stopped_row(spec.name, exc, trace.kept)
    finally:
        trace.close()
    verdict = verify_events(numbered(trace.kept))
    code = exit_code(verdict, result.ok)
    entries = sum(result.entries.values())
    return {
        "algorithm": spec.name,
        "messages": result.total_messages,
        "messages_by_type": result.messages,
        "entries": entries,
        "entries_by_resource": result.entries,
        "messages_per_entry": round(result.total_messages / entries, 2) if entries else None,
        "virtual_duration": round(result.duration, 3),
        "verdict": {
            0: "ok",
            1: "UNSAFE",
            3: "INCOMPLETE" if result.truncated or result.ok else "STALLED",
        }.get(code, "?"),
        "stalled": result.stalled,
        "violations": [v.describe() for v in verdict.violations],
        "incomplete": limit_reached(result, guard, allowance),
    }, code


def not_taken(given: list[str], flags: Flags, measured: str) -> str:
    """The refusal of the measured problem's flags (``given``: their dests; ``measured``: what that
    problem's solutions are called) for the solutions of ``flags``'s problem."""
    named = ", ".join(f"--{dest.replace('_', '-')}" for dest in given)
    options = ", ".join(f.key for f in flags.flags[1:])
    return (
        f"{named}: the solutions of {flags.title} are compared on --nodes and -o KEY=VALUE only "
        f"(their options: {options}; every dwell time 1); {named} "
        f"{'is' if len(given) == 1 else 'are'} the workload of the {measured}, not read here"
    )


def render(rows: list[dict], args, flags: Flags) -> str:
    table = [COLUMNS]
    for r in rows:
        if r.get("error"):
            table.append((r["algorithm"], "—", "—", "—", "—", r["error"]))
            continue
        per = r["messages_per_entry"]
        cells = (str(r["messages"]), str(r["entries"]), "—" if per is None else format_number(per))
        table.append((r["algorithm"], *cells, f"{r['virtual_duration']:g}", r["verdict"]))
    widths = [max(len(row[i]) for row in table) for i in range(len(COLUMNS))]
    lines = [
        f"{flags.title}: {args.nodes} processes, seed {args.seed}, delay {args.delay}"
        + "".join(f", {key}={value}" for key, value in workload(flags, args.option or []).items()),
        "duration in units of the mean message delay; per entry: messages per entry of any resource",
    ]
    for k, row in enumerate(table):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def workload(flags: Flags, given: list[tuple[str, Any]]) -> dict[str, Any]:
    """The options every solution runs with: ``simulate``'s defaults of the problem's flags (the
    philosophers' 2 meals: without them a philosopher never gets hungry, and a run with no entry
    would compare nothing), then the ``-o`` values given."""
    defaults: dict[str, Any] = {}
    for flag in flags.flags[1:]:
        has, value = flags.default("simulate", flag.key)
        if has and value is not None:
            defaults[flag.key] = value
    return {**defaults, **dict(given)}


def run(args, names: list[str], specs: list[AlgorithmSpec], flags: Flags) -> int:
    options = workload(flags, args.option or [])
    dwell = {d.kind: 1.0 for d in flags.dwell}
    need = max(
        (memory.predict(memory.messages(s, args.nodes, options), args.nodes) for s in specs),
        key=lambda p: p.bytes,
    )
    refused = check_memory(args, need, flags.smaller)
    if refused:
        return refused
    rows, codes = [], set()
    allowance = None if args.ignore_memory else memory.growth_allowance(need, memory.available_bytes())
    for name, spec in zip(names, specs):
        row, code = _simulated(name, spec, args, options, dwell, allowance)
        rows.append(row)
        codes.add(code)
    if args.json:
        print_json(
            {
                "problem": flags.command,
                "processes": args.nodes,
                "seed": args.seed,
                "delay": args.delay,
                "options": options,
                "runs": rows,
            }
        )
    else:
        print(render(rows, args, flags))
        for r in rows:
            for v in r.get("violations", []):
                print(f"{r['algorithm']}: {v}")
            for who, what in (r.get("stalled") or {}).items():
                print(f"{r['algorithm']}: STALLED {who} waits for {what}")
            if r.get("incomplete"):
                print(f"{r['algorithm']}: incomplete: {r['incomplete']}")
    return next((code for code in (1, 2, 3) if code in codes), 0)
