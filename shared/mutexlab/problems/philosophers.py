"""The ``philosophers`` problem (the dining philosophers): N philosophers round a table, N forks.

Philosopher i (pid 1..N, named ``philosopher-<i>``) needs fork i and fork i+1 (fork N+1 is
fork 1): its left fork is ``fork:<i>``, its right ``fork:<i mod N + 1>``. Each fork is a
resource of capacity 1. Eating is holding ``meal`` (capacity N: anyone may eat at once, if it
holds its forks). Each philosopher thinks, gets hungry (a ``request`` of ``meal``), eats once
it holds both its forks, and does so ``meals`` times (flag ``--meals``/``-M``). N ≥ 2.

The rule every solution keeps, one definition (``EATS_WITH_FORKS``, a ``HoldingRule``): a
philosopher holds ``meal`` only while it holds both its forks. The audit applies it at every
``enter`` and ``exit`` of a trace, ``check`` in every reachable world. The audit also checks
every hunger satisfied, no meal without hunger, every philosopher ends ``THINKING`` having
eaten ``meals`` times (mutex_audit.py's checks, for ``meal``); a fork held by two at once is
every trace's capacity audit.

The workload (thinking, hunger, meals) is ``philosopher.Philosopher``'s, the base of a
solution's node: a solution says only how forks are obtained.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..findings import Invariants
from ..problem import HoldingRule, Problem
from ..setups import ConfigError, positive_int
from ..spec import Dwell, Flag, Flags, Simulated
from ..words import count

MEAL = "meal"
IDLE = "THINKING"
OPTIONS = {
    "meals": "meals per philosopher",
    "initial_clocks": "Lamport clock per pid (default 0)",
}


def fork(i: int) -> str:
    return f"fork:{i}"


def forks_of(pid: int, n: int) -> tuple[int, int]:
    """Philosopher ``pid``'s left and right forks (of ``n``): ``pid`` and ``pid mod n + 1``."""
    return pid, pid % n + 1


def eats_with_forks(pid: int, held: Mapping[str, int], params: Mapping[str, Any]) -> str | None:
    if not held.get(MEAL):
        return None
    n = params.get("philosophers")
    if not isinstance(n, int) or n < 2:
        return f"the run's params name no number of philosophers (got {n!r})"
    missing = [fork(f) for f in forks_of(pid, n) if not held.get(fork(f))]
    if not missing:
        return None
    return f"philosopher-{pid} eats without {' and '.join(missing)}"


def _needs_philosophers(params: Mapping[str, Any]) -> str | None:
    n = params.get("philosophers")
    if isinstance(n, int) and not isinstance(n, bool) and n >= 2:
        return None
    return f"the run header's params.philosophers must be a whole number ≥ 2 (got {n!r}): each one's forks follow from it"


EATS_WITH_FORKS = HoldingRule(
    "eats-without-forks",
    "a philosopher eats only holding both its forks",
    eats_with_forks,
    needs=_needs_philosophers,
)


def resources(processes: int, options: Mapping[str, Any]) -> dict[str, int]:
    if processes < 2:
        raise ConfigError(f"the dining philosophers need at least 2 philosophers, got {processes}")
    positive_int(dict(options), "meals", default=0, minimum=0)
    return {"fork:*": 1, MEAL: processes}


def audit() -> Invariants:
    """Every hunger satisfied, none without, each ends THINKING after its meals (mutex_audit.py
    for ``meal``)."""
    from .mutex_audit import EVENTS, Stream

    def stream(run: dict[str, Any]) -> Stream:
        return Stream(run, MEAL, IDLE, "meals")

    def check(events: list[dict[str, Any]], run: dict[str, Any]) -> list:
        s = stream(run)
        for event in events:
            s.feed(event)
        return s.finish()

    return Invariants(CHECKS, check, events=EVENTS, stream=stream, workload="meals")


CHECKS = ("every hungry philosopher eats", "no meal without hunger", "every philosopher ends thinking")


def summarise(run: Simulated) -> dict[str, Any]:
    result = run.result
    return {
        "algorithm": run.spec.name,
        "philosophers": run.processes,
        "meals_per_philosopher": run.options.get("meals", 0),
        "seed": run.seed,
        "delay": run.delay,
        "params": run.setup.params,
        "meals": result.entries.get(MEAL, 0) if result is not None else 0,
        "messages": result.messages if result is not None else {},
        "messages_total": result.total_messages if result is not None else 0,
        "virtual_duration": round(result.duration, 3) if result is not None else None,
        "states": result.states if result is not None else {},
        "stalled": result.stalled if result is not None else None,
        "truncated": result.truncated if result is not None else None,
        "faults": run.common["faults"],
        "audit": run.common["audit"],
        **({"trace": run.common["trace"]} if run.common.get("trace") else {}),
    }


def render(run: Simulated, s: dict[str, Any]) -> list[str]:
    messages = ", ".join(f"{t} {c}" for t, c in sorted(s["messages"].items())) or "none"
    return [
        f"{s['algorithm']}: {s['philosophers']} philosophers, {count(s['meals_per_philosopher'], 'meal')} each, "
        f"seed {s['seed']}, delay {s['delay']}",
        f"meals eaten: {s['meals']} of {s['philosophers'] * s['meals_per_philosopher']}",
        f"messages:    {messages} (total {s['messages_total']})",
    ]


FLAGS = Flags(
    command="philosophers",
    title="the dining philosophers",
    sizes="N philosophers, N forks, M meals each",
    description="""Simulate one solution of the dining philosophers (N philosophers, fork i and i+1 for
    philosopher i), audit the trace: no fork held by two, nobody eats without both forks, every philosopher
    eats its meals. Exit 0 when safe and complete, 1 on a safety violation, 2 on bad arguments, 3 when the run
    stalls without a safety violation.""",
    flags=(
        Flag("philosophers", "number of philosophers (and forks)", "N", ("-N",)),
        Flag("meals", "meals per philosopher", "M", ("-M",)),
    ),
    summarise=summarise,
    render=render,
    defaults={"philosophers": 5, "meals": 2},
    per_command={"check": {"philosophers": 3, "meals": 1}, "explore": {"philosophers": 3, "algorithm": None}},
    free_options=True,
    dwell=(
        Dwell("think", "mean think time before each meal, in message delays", "before each meal"),
        Dwell("eat", "mean time eating, in message delays", "eating"),
    ),
    smaller="fewer philosophers or meals",
)

PROBLEM = Problem(
    "philosophers",
    "the dining philosophers: N philosophers, N forks, a philosopher eats holding both its forks",
    FLAGS,
    OPTIONS,
    resources,
    audit,
    rules=(EATS_WITH_FORKS,),
    endless="meals",
    requested=MEAL,
    process="philosopher",
    states=(IDLE, "HUNGRY", "EATING"),
)
