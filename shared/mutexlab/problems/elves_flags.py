"""How the commands present the hamster killers (``simulate|run|check|explore elves``): their
flags, what ``simulate`` prints of a run, and a run's message estimate.

What ``simulate`` prints of a run is read from its trace alone, whatever the solution: the
contracts each elf did (its ``contract_done`` notes), its waits for a release (each time it
turns to ELF_WAIT_FOR_RELEASE: for pins while it holds none, else for poison) and the time it
spent waiting, the plan (the run's parameters).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..spec import CheckText, Dwell, Flag, Flags, Simulated
from ..words import count
from .elves_options import DEFAULTS, hamster_range
from .elves_rules import ELF_PREFIX, PINS, POISON, WAIT_FOR_RELEASE

# The simulator's defaults are far out of reach of an exhaustive search: check starts small.
SMALL = {"elves": 2, "pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 2) if whole else None


def waiting_time(events: list[dict[str, Any]]) -> dict[str, float]:
    """Virtual time each elf spent in ELF_WAIT_FOR_RELEASE, from the trace's state events."""
    since: dict[str, float] = {}
    total: Counter[str] = Counter()
    for e in events:
        if e["event"] != "state" or not e["pid"].startswith(ELF_PREFIX):
            continue
        if e["pid"] in since:
            total[e["pid"]] += e["t"] - since.pop(e["pid"])
        if e["state"] == WAIT_FOR_RELEASE:
            since[e["pid"]] = e["t"]
    return {pid: round(total[pid], 3) for pid in sorted(total)}


def done_and_waits(
    events: list[dict[str, Any]], elves: list[str]
) -> tuple[dict[str, dict[int, list[int]]], dict[str, Counter[str]]]:
    """Per elf, from the trace: the contracts it did by round (``contract_done`` notes), and how
    many times it turned to ELF_WAIT_FOR_RELEASE waiting for pins (holding none) or poison."""
    done: dict[str, dict[int, list[int]]] = {name: {} for name in elves}
    waits: dict[str, Counter[str]] = {name: Counter() for name in elves}
    pins: Counter[str] = Counter()  # pins held, per elf
    state: dict[str, str] = {}
    for e in events:
        name, kind = e["pid"], e["event"]
        if name not in done:
            continue
        if kind == "contract_done":
            done[name].setdefault(e["round"], []).append(e["contract"])
        elif kind in ("enter", "exit") and e.get("resource") == PINS:
            pins[name] += 1 if kind == "enter" else -1
        elif kind == "state":
            if e["state"] == WAIT_FOR_RELEASE and state.get(name) != WAIT_FOR_RELEASE:
                waits[name][POISON if pins[name] > 0 else PINS] += 1
            state[name] = e["state"]
    return done, waits


def summarise(run: Simulated) -> dict[str, Any]:
    setup, result, params = run.setup, run.result, run.setup.params
    elves = [name for _, name in sorted(setup.names.items()) if name.startswith(ELF_PREFIX)]
    rounds = range(1, params["rounds"] + 1)
    events = run.events or []
    did, waited = done_and_waits(events, elves)
    done = {name: {str(r): sorted(did[name].get(r, [])) for r in rounds} for name in elves}
    wait_time = waiting_time(events)
    waits = {
        name: {PINS: waited[name][PINS], POISON: waited[name][POISON], "time": wait_time.get(name, 0.0)}
        for name in elves
    }
    messages = result.messages if result else {}
    entries = result.entries if result else {}
    acquisitions = sum(entries.values())
    total = sum(messages.values())
    return {
        "elves": params["elves"],
        "pins": params["pins"],
        "poison": params["poison"],
        "contracts": params["contracts"],
        "hamsters": params["hamsters"],
        "rounds": params["rounds"],
        "pins_per_elf": params["pins_per_elf"],
        "poison_per_hamster": params["poison_per_hamster"],
        "seed": run.seed,
        "delay": run.delay,
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
        "error": run.error,
        "faults": run.common["faults"],
        "audit": run.common["audit"],
        **({"trace": run.common["trace"]} if run.common.get("trace") else {}),
    }


def plan_lines(plan: list[list[int]]) -> list[str]:
    """The mayor's plan, a line a round: ``round 1 contracts (hamsters): 4 4 3``."""
    return [f"round {r} contracts (hamsters): " + " ".join(map(str, p)) for r, p in enumerate(plan, 1)]


def render(_run: Simulated, s: dict[str, Any]) -> list[str]:
    rounds = [str(r) for r in range(1, s["rounds"] + 1)]
    lines = [
        f"hamster killers: {count(s['elves'], 'elf')}, {count(s['rounds'], 'round')} × "
        f"{count(s['contracts'], 'contract')} "
        f"(hamsters {s['hamsters'][0]}-{s['hamsters'][1]}), pins {s['pins']} ({s['pins_per_elf']} per elf), "
        f"poison {s['poison']} ({s['poison_per_hamster']} per hamster), seed {s['seed']}, delay {s['delay']}"
    ]
    lines += plan_lines(s["plan"])
    header = ["elf"] + [f"round {r}" for r in rounds] + ["total", "pin waits", "poison waits", "time waiting"]
    rows = []
    for name, per in s["contracts_done"].items():
        w = s["waits"][name]
        rows.append(
            [name]
            + [f"{len(per[r])} [" + _numbers(per[r], s["contracts"]) + "]" for r in rounds]
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
    return lines


def _numbers(done: list[int], contracts: int) -> str:
    """The contract numbers an elf did in a round, the first ``contracts`` of them: more is a
    contract done twice (the audit says so), and a run that loops on one would print a line of
    every number it did (24,000 in a run cut at its event limit)."""
    shown = ",".join(map(str, done[:contracts]))
    return shown if len(done) <= contracts else f"{shown},… {len(done) - contracts} more"


def hamsters(text: str) -> list[int]:
    """``MIN-MAX`` (or one number) hamsters per contract → [min, max]."""
    low, high = hamster_range(text)
    return [low, high]


def estimate_messages(elves: int, options: dict[str, Any]) -> float:
    """Three acquisitions per contract (contract, pins, poison), each a request, reply and
    release with every other elf; plus the mayor's INIT_CONTRACTS and STOP per elf and round."""
    o = {**DEFAULTS, **options}
    contracts: int = o["contracts"]
    rounds: int = o["rounds"]
    return 3 * contracts * rounds * 3 * max(elves - 1, 0) + contracts * rounds + 2 * elves * rounds


# Every flag but --elves defaults to None: make_setup's default (the help's) applies.
optional = dict.fromkeys(DEFAULTS)
FLAGS = Flags(
    command="elves",
    title="the hamster killers",
    sizes="a mayor, N elves, pins and poison",
    description="""Simulate the hamster killers in virtual time and audit the run. Exit 0 when every round is finished and
    the trace is safe, 1 on a safety violation, 2 on bad arguments or a configuration that could never
    finish, 3 when the run stalls without a safety violation.""",
    flags=(
        Flag("elves", "number of elves", "N", ("-N",)),
        Flag("pins", "safety pins in town", "A"),
        Flag("poison", "poison portions", "B"),
        Flag("contracts", "contracts per round", "C"),
        Flag("hamsters", "hamsters per contract, drawn by the mayor", "MIN-MAX", parse=hamsters),
        Flag("rounds", "rounds", "R"),
        Flag("pins_per_elf", "pins an elf needs for any contract", "K"),
        Flag("poison_per_hamster", "poison portions per hamster", "K"),
    ),
    summarise=summarise,
    render=render,
    defaults={**optional, "algorithm": "elves", "elves": 4},
    per_command={"check": SMALL},
    check=CheckText(
        "the hamster killers (defaults: 2 elves, 1 round of 2 contracts)",
        """Model-check the hamster killers. Same configuration flags as `simulate elves` (timing flags
            aside), with small defaults.""",
        "random seed of the mayor's contracts (default 0)",
    ),
    shown=DEFAULTS,
    dwell=(
        Dwell("work", "mean virtual time an elf works on a contract", "an elf works on a contract"),
        Dwell(
            "rest",
            "mean virtual time between a contract done and the next request",
            "between a contract done and the next request",
        ),
        Dwell("pause", "mean virtual time the mayor waits between rounds", "the mayor waits between rounds"),
    ),
    seed="random seed: the mayor's contracts, delays, dwell times",
    smaller="fewer elves, contracts or rounds",
    partial=True,
)
