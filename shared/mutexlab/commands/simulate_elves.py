"""``mutexlab simulate elves``: one seeded run of the hamster killers, summarised and audited.

Exit 0 when the mayor and every elf end in their final state after the last round and the
audit finds the trace safe; 1 when a participant rejects an input or the audit finds a safety
violation; 2 on bad arguments or a configuration that could never finish; 3 when the run stalls
(or the audit finds it unfinished) without a safety violation.
"""

from __future__ import annotations

from collections import Counter

from .. import memory
from ..audit import numbered, verify_events
from ..protocol import ProtocolError
from ..protocols.elves import DEFAULTS as ELVES_DEFAULTS
from ..protocols.elves import ELF_WAIT_FOR_RELEASE, PINS, POISON, Elf, make_setup
from ..setup import ConfigError
from ..sim import SimConfig, Simulation
from ..trace import TraceWriter
from ..words import count
from .common import add_json_argument, add_trace_argument, fail, print_json
from .flags import add_dwell_arguments, add_simulator_arguments, elves_config
from .longrun import add_memory_argument, check_memory, progress_bar
from .registry import Command
from .reporting import add_report_argument, write_report_if_asked
from .simulating import add_fault_arguments, audit_summary, exit_code, fault_config, fault_line, outcome_lines


def arguments(p) -> None:
    add_simulator_arguments(p, "random seed: the mayor's contracts, delays, dwell times")
    add_dwell_arguments(
        p,
        {
            "work": "mean virtual time an elf works on a contract",
            "rest": "mean virtual time between a contract done and the next request",
            "pause": "mean virtual time the mayor waits between rounds",
        },
    )
    add_trace_argument(p)
    add_report_argument(p)
    add_fault_arguments(p)
    add_json_argument(p, "summary")
    add_memory_argument(p)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 2) if whole else None


def waiting_time(events: list[dict]) -> dict[str, float]:
    """Virtual time each elf spent in ELF_WAIT_FOR_RELEASE, from the trace's state events."""
    since: dict[str, float] = {}
    total: Counter[str] = Counter()
    for e in events:
        if e["event"] != "state" or not e["pid"].startswith("elf-"):
            continue
        if e["pid"] in since:
            total[e["pid"]] += e["t"] - since.pop(e["pid"])
        if e["state"] == ELF_WAIT_FOR_RELEASE:
            since[e["pid"]] = e["t"]
    return {pid: round(total[pid], 3) for pid in sorted(total)}


def summarise(setup, result, verdict, events, args, error: str | None) -> dict:
    params = setup.params
    elves = {
        setup.names[pid]: proto for pid, proto in sorted(setup.protocols.items()) if isinstance(proto, Elf)
    }
    rounds = range(1, params["rounds"] + 1)
    done = {name: {str(r): sorted(elf.done.get(r, [])) for r in rounds} for name, elf in elves.items()}
    wait_time = waiting_time(events)
    waits = {
        name: {PINS: elf.waits[PINS], POISON: elf.waits[POISON], "time": wait_time.get(name, 0.0)}
        for name, elf in elves.items()
    }
    messages = result.messages if result else {}
    entries = result.entries if result else {}
    acquisitions = sum(entries.values())
    total = sum(messages.values())
    summary = {
        "elves": params["elves"],
        "pins": params["pins"],
        "poison": params["poison"],
        "contracts": params["contracts"],
        "hamsters": params["hamsters"],
        "rounds": params["rounds"],
        "pins_per_elf": params["pins_per_elf"],
        "poison_per_hamster": params["poison_per_hamster"],
        "seed": args.seed,
        "delay": args.delay,
        "plan": params["plan"],
        "contracts_done": done,
        "contracts_done_total": sum(len(v) for per in done.values() for v in per.values()),
        "waits": waits,
        "messages": messages,
        "messages_total": total,
        "acquisitions": entries,
        "acquisitions_total": acquisitions,
        "messages_per_acquisition": _ratio(total, acquisitions),
        "virtual_duration": round(result.duration, 3) if result else None,
        "events": result.events if result else None,
        "final_states": result.states if result else {},
        "stalled": result.stalled if result else {},
        "truncated": result.truncated if result else False,
        "error": error,
        "faults": fault_line(args, result.duplicates_dropped if result else 0),
        "audit": audit_summary(verdict),
    }
    if args.trace:
        summary["trace"] = args.trace
    return summary


def render(s: dict) -> str:
    rounds = [str(r) for r in range(1, s["rounds"] + 1)]
    lines = [
        f"hamster killers: {count(s['elves'], 'elf')}, {count(s['rounds'], 'round')} × "
        f"{count(s['contracts'], 'contract')} "
        f"(hamsters {s['hamsters'][0]}-{s['hamsters'][1]}), pins {s['pins']} ({s['pins_per_elf']} per elf), "
        f"poison {s['poison']} ({s['poison_per_hamster']} per hamster), seed {s['seed']}, delay {s['delay']}"
    ]
    lines += [
        f"round {r} contracts (hamsters): " + " ".join(map(str, plan)) for r, plan in zip(rounds, s["plan"])
    ]
    header = ["elf"] + [f"round {r}" for r in rounds] + ["total", "pin waits", "poison waits", "time waiting"]
    rows = []
    for name, per in s["contracts_done"].items():
        w = s["waits"][name]
        rows.append(
            [name]
            + [f"{len(per[r])} [" + ",".join(map(str, per[r])) + "]" for r in rounds]
            + [str(sum(len(v) for v in per.values())), str(w["pins"]), str(w["poison"]), str(w["time"])]
        )
    widths = [max(len(row[c]) for row in [header] + rows) for c in range(len(header))]
    lines.append("contracts done per elf and round [contract numbers], waits for a release:")
    lines += [
        "  " + "  ".join(cell.ljust(widths[c]) for c, cell in enumerate(row)).rstrip()
        for row in [header] + rows
    ]
    lines.append(f"contracts done: {s['contracts_done_total']} of {s['contracts'] * s['rounds']}")
    lines.append(
        "messages: "
        + (", ".join(f"{t} {n}" for t, n in s["messages"].items()) or "none")
        + f" (total {s['messages_total']})"
    )
    lines.append(
        "acquisitions: "
        + (", ".join(f"{k} {n}" for k, n in s["acquisitions"].items()) or "none")
        + f" (total {s['acquisitions_total']}); messages per acquisition {s['messages_per_acquisition']}"
    )
    if s["virtual_duration"] is not None:
        lines.append(
            f"virtual duration: {s['virtual_duration']} (mean message delay 1), {s['events']} events"
        )
    if s["error"]:
        lines.append(f"FAILED: {s['error']}")
    lines += outcome_lines(s)
    return "\n".join(lines)


def run(args) -> int:
    scenario = elves_config(args)
    sized = {**ELVES_DEFAULTS, **scenario.options}
    messages = memory.elves_messages(scenario.processes, sized["contracts"], sized["rounds"])
    refused = check_memory(
        args, memory.predict(messages, scenario.processes + 1), "fewer elves, contracts or rounds"
    )
    if refused:  # before the setup
        return refused
    try:
        setup = make_setup(scenario.processes, scenario.options, args.seed)
        config = SimConfig(
            seed=args.seed,
            delay=args.delay,
            dwell={"work": args.work, "rest": args.rest, "pause": args.pause},
            **fault_config(args),
        )
    except ConfigError as exc:
        return fail(str(exc))
    try:
        trace = TraceWriter(args.trace, keep=True)
    except OSError as exc:
        return fail(f"cannot write trace {args.trace}: {exc.strerror}")
    result, error = None, None
    try:
        with progress_bar(args, messages, "elves") as progress:
            simulation = Simulation(setup, config, trace)
            simulation.progress = progress
            result = simulation.run()
    except ProtocolError as exc:
        error = str(exc)
    finally:
        trace.close()
    events = numbered(trace.kept)
    verdict = verify_events(events)
    summary = summarise(setup, result, verdict, events, args, error)
    if args.json:
        print_json(summary)
    else:
        print(render(summary))
    code = exit_code(verdict, result is not None and result.ok, failed=error is not None)
    return (
        write_report_if_asked(
            args, trace, result.stalled if result else None, result.states if result else None
        )
        or code
    )


COMMAND = Command(
    "elves",
    "the hamster killers: a mayor, N elves, pins and poison",
    """Simulate the hamster killers in virtual time and audit the run. Exit 0 when every round is finished and
    the trace is safe, 1 on a safety violation, 2 on bad arguments or a configuration that could never
    finish, 3 when the run stalls without a safety violation.""",
    run,
    arguments,
    family="elves",
)
