"""How the commands present the mason bees (``simulate|run|check|explore bees``): their flags,
what ``simulate`` prints of a run, and a run's message estimate.

``simulate bees`` holds no trace (``streamed``): the audit is fed as the run goes, so a run of
a thousand bees fits in memory (docs/architecture.md#scaling).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..show import state_text
from ..spec import CheckText, Flag, Flags, Simulated
from .bees_rules import expected_eggs

REED_TYPES = ("REQreed", "ACKreed", "RELEASEreed")
FLOWER_TYPES = ("REQflower", "ACKflower")
DEFAULTS = {"algorithm": "bees", "bees": 10, "flowers": 3, "reeds": 3, "eggs": 5, "cocoons": 15}
# The simulator's defaults are far out of reach of an exhaustive search: check starts small.
SMALL = {"bees": 2, "flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}


def estimate_messages(bees: int, options: dict[str, Any]) -> float:
    """REQreed and ACKreed between every pair, RELEASEreed to about half the others (the rest are
    gone), and a REQflower broadcast with its ACKflowers per egg laid."""
    o = {**DEFAULTS, **options}
    laid: int = min(o["eggs"] * bees, o["cocoons"] * o["reeds"])
    return 2.5 * bees * (bees - 1) + 2 * laid * (bees - 1)


def estimate_intervals(bees: int, options: dict[str, Any]) -> float:
    """A flower visit per egg laid, and at most one stay on a reed per bee (a bee lays all its eggs
    on one reed)."""
    o = {**DEFAULTS, **options}
    laid: int = min(o["eggs"] * bees, o["cocoons"] * o["reeds"])
    return float(laid + bees)


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 2) if whole else None


def summarise(run: Simulated) -> dict[str, Any]:
    o, result = {**DEFAULTS, **run.options}, run.result
    per_reed: Counter[str] = Counter({f"reed:{r}": 0 for r in range(1, o["reeds"] + 1)})
    bees: list[Any] = list(run.setup.protocols.values())
    for bee in bees:  # a solution that keeps ``laid`` and ``reed`` (mutexlab's does) is counted by reed
        laid, reed = getattr(bee, "laid", 0), getattr(bee, "reed", 0)
        if laid and reed:
            per_reed[f"reed:{reed}"] += laid
    if not any(per_reed.values()) and result.notes.get("egg"):  # other solutions: the total only
        per_reed = Counter({"(by reed: not kept)": result.notes["egg"]})
    messages = result.messages
    reed_msgs = sum(messages.get(t, 0) for t in REED_TYPES)
    flower_msgs = sum(messages.get(t, 0) for t in FLOWER_TYPES)
    # Split by resource only when every message is of mutexlab's own kinds: another solution's
    # (a TOKEN, a GONE) would count for neither, and its per-entry figures would read 0.
    split = reed_msgs + flower_msgs == result.total_messages
    final = Counter(state_text(state) for state in result.states.values())
    return {
        "bees": run.processes,
        "flowers": o["flowers"],
        "reeds": o["reeds"],
        "eggs": o["eggs"],
        "cocoons": o["cocoons"],
        "seed": run.seed,
        "delay": run.delay,
        "initial_clocks": run.setup.params.get("initial_clocks"),
        "eggs_per_reed": dict(per_reed),
        "eggs_total": sum(per_reed.values()),
        "eggs_expected": expected_eggs(run.processes, o["reeds"], o["eggs"], o["cocoons"]),
        # mutexlab's own bees note each death and retirement; a solution that notes neither is
        # counted by its bees' final states (a bee ends DEAD or RETIRED: the problem's rule)
        "deaths": result.notes.get("death", final.get("DEAD", 0)),
        "retired": result.notes.get("retire", final.get("RETIRED", 0)),
        "final_states": dict(final),
        "states": result.states,
        "messages": messages,
        "messages_total": result.total_messages,
        "entries": result.entries,
        "messages_per_entry": _ratio(result.total_messages, sum(result.entries.values())),
        "messages_per_reed_entry": _ratio(reed_msgs, result.entries.get("reed", 0)) if split else None,
        "messages_per_flower_entry": _ratio(flower_msgs, result.entries.get("flower", 0)) if split else None,
        "virtual_duration": round(result.duration, 3),
        "events": result.events,
        "stalled": result.stalled,
        "truncated": result.truncated,
        "faults": run.common["faults"],
        "audit": run.common["audit"],
        **({"trace": run.common["trace"]} if run.common.get("trace") else {}),
    }


def render(_run: Simulated, s: dict[str, Any]) -> list[str]:
    return [
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
        + _per_entry(s),
        f"virtual duration: {s['virtual_duration']} (mean message delay 1), {s['events']} events",
    ]


def _per_entry(s: dict[str, Any]) -> str:
    if s["messages_per_reed_entry"] is None and s["messages_per_flower_entry"] is None:
        return (
            f"messages per entry {s['messages_per_entry']} "
            f"(not split by resource: not every message type is one of {', '.join(REED_TYPES + FLOWER_TYPES)})"
        )
    return f"messages per reed entry {s['messages_per_reed_entry']}, per flower entry {s['messages_per_flower_entry']}"


FLAGS = Flags(
    command="bees",
    title="the mason bees",
    sizes="P bees, K flowers, T reeds",
    description="""Simulate the mason bees in virtual time and audit the run. Exit 0 when every bee ends DEAD or RETIRED
    and the trace is safe, 1 on a safety violation, 2 on bad arguments, 3 when the run stalls without one.""",
    flags=(
        Flag("bees", "number of bees", "P", ("-P",)),
        Flag("flowers", "number of flowers", "K", ("-K",)),
        Flag("reeds", "number of reeds", "T", ("-T",)),
        Flag("eggs", "eggs per bee"),
        Flag("cocoons", "cocoons per reed, a multiple of --eggs"),
    ),
    summarise=summarise,
    render=render,
    defaults=DEFAULTS,
    per_command={"check": SMALL},
    check=CheckText(
        "the mason bees (defaults: 2 bees, 1 flower, 1 reed, 1 egg, 1 cocoon)",
        """Model-check the mason bees. Same configuration flags as `simulate bees`, with small defaults
            (the state space grows fast).""",
        "random seed of the initial clocks (default 0)",
        zero_clocks="every bee's clock starts at 0 (the pid breaks ties) instead of a random one",
    ),
    seed="random seed: delays, dwell times and initial clocks",
    smaller="fewer bees",
    streamed=True,
    estimate_intervals=estimate_intervals,
)
