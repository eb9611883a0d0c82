"""What a scenario asks of real participants (``mutexlab replay --over-rabbitmq``, directed.py).

The scenario is first played by the simulator (``sim.scripted``); its trace says, for every step,
which events every process must record. ``compile_script`` cuts it into the director's actions,
each done when its events have come: the start of every process, each local decision (``request``,
``exit``), and each delivery — a ``drain`` is one delivery per message it delivers, in the
simulator's order, naming the message by its id. Message ids (``<sender>#<n>``) are the same in
both drivers (``sim/driver.py``), so the real run follows the scenario exactly when every process
records the same events in the same order (``signature``: kind, id, resource, state, type; the
times and clocks of a real run are its own).

A ``duplicate`` step is a release of a copy of the held message, which stays held: the copy is
renumbered in its link's release order as any released message, so the receiver's inbox takes it
as a new one (the fault ``check --duplicate`` explores: a network that delivers a message twice,
above the links' own de-duplication of a broker's redeliveries). A scenario with a ``loop`` is
played unrolled (``unroll``): its stem, then its cycle a bounded number of times, each round
checked against the simulator's replay of the same unrolled steps.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..sim.scripted import (
    DeliverStep,
    DrainStep,
    DuplicateStep,
    ExitStep,
    OvertakeStep,
    ReplayResult,
    RequestStep,
    Scenario,
    ScenarioError,
)


@dataclass
class Action:
    """One thing the director does, then waits for: ``expect`` is how many events each process
    must have recorded once it is done (counted from the start of the run)."""

    step: int  # the scenario's step number (0: the start)
    kind: str  # start | request | exit | deliver | duplicate
    pid: int = 0  # who acts: the deciding process, or the receiver
    frm: int = 0  # a delivery's sender
    index: int | None = None  # a deliver or overtake step: the position on the link (0: the oldest)
    msg_id: str | None = None  # the message the simulator delivered (a drain's are named so)
    refused: bool = False  # the simulator's protocol refused this input (or raised): the replay ends here
    keep: bool = False  # a duplicate: a copy is released, the message stays held
    expect: dict[str, int] = field(default_factory=dict)


@dataclass
class Script:
    actions: list[Action]
    expected: dict[str, list[tuple]]  # every process's events (``signature``), in order
    steps: dict[str, list[int]]  # the step number of each of them
    played: int  # the scenario's steps the simulator played (up to a refused one)
    cycle_from: int | None = None  # an unrolled loop: the step number its first round begins at


def unroll(scenario: Scenario, rounds: int) -> tuple[Scenario, int]:
    """``scenario`` without its loop: the stem, then the cycle ``rounds`` times; and the step
    number (from 1) the first round begins at."""
    if scenario.loop is None:
        raise ScenarioError("the scenario has no loop to unroll")
    stem, cycle = scenario.steps[: scenario.loop], scenario.steps[scenario.loop :]
    steps = [*stem, *(cycle * rounds)]
    return scenario.model_copy(update={"steps": steps, "loop": None}), len(stem) + 1


def signature(event: dict[str, Any]) -> tuple:
    """What two runs of the same schedule must record alike (not times, not clocks)."""
    return tuple(event.get(k) for k in ("event", "id", "resource", "state", "type", "to", "from"))


def compile_script(scenario: Scenario, result: ReplayResult) -> Script:
    """The director's actions for ``scenario``, whose simulated replay is ``result``; ScenarioError
    for what cannot be replayed over RabbitMQ (module doc)."""
    if scenario.loop is not None:
        raise ScenarioError("a scenario with a loop is played unrolled (script.unroll)")
    events = [e for e in result.events if e.get("event") != "run"]
    by_step: dict[int, list[dict]] = {}
    for event in events:
        by_step.setdefault(round(float(event.get("t", 0))), []).append(event)
    refused_at = _refused_step(result.refused)
    actions: list[Action] = [Action(0, "start")]
    groups: list[list[dict]] = [by_step.get(0, [])]
    for number, step in enumerate(scenario.steps, 1):
        if refused_at is not None and number > refused_at:
            break  # the simulator stopped at the refused step
        mine = by_step.get(number, [])
        if isinstance(step, (RequestStep, ExitStep)):
            # refused: a handler raised on it (a refused local decision is an invalid scenario, exit 2)
            actions.append(Action(number, step.op, pid=step.pid, refused=number == refused_at))
            groups.append(mine)
        elif isinstance(step, (DeliverStep, OvertakeStep, DuplicateStep)):
            recv = next((e for e in mine if e.get("event") == "recv"), None)
            index = 0 if isinstance(step, DeliverStep) else step.index
            actions.append(
                Action(
                    number,
                    step.op if isinstance(step, DuplicateStep) else "deliver",
                    pid=step.to,
                    frm=step.frm,
                    index=index,
                    msg_id=recv.get("id") if recv else None,
                    refused=number == refused_at,
                    keep=isinstance(step, DuplicateStep),
                )
            )
            groups.append(mine)
        elif isinstance(step, DrainStep):
            for group in _deliveries(mine):
                to = _pid(result, group[0]["pid"])
                frm = _pid(result, group[0]["from"])
                actions.append(Action(number, "deliver", pid=to, frm=frm, msg_id=group[0].get("id")))
                groups.append(group)
    expected: dict[str, list[tuple]] = {name: [] for name in result.setup.names.values()}
    steps: dict[str, list[int]] = {name: [] for name in expected}
    seen: Counter[str] = Counter()
    for action, group in zip(actions, groups):
        for event in group:
            expected[event["pid"]].append(signature(event))
            steps[event["pid"]].append(action.step)
            seen[event["pid"]] += 1
        action.expect = dict(seen)
    played = refused_at if refused_at is not None else len(scenario.steps)
    return Script(actions, expected, steps, played)


def _deliveries(events: list[dict]) -> list[list[dict]]:
    """A drain's events cut into one group per delivery, each beginning with its ``recv``."""
    groups: list[list[dict]] = []
    for event in events:
        if event.get("event") == "recv" or not groups:
            groups.append([event])
        else:
            groups[-1].append(event)
    return [g for g in groups if g[0].get("event") == "recv"]


def _pid(result: ReplayResult, name: str) -> int:
    return next(pid for pid, n in result.setup.names.items() if n == name)


def _refused_step(refused: str | None) -> int | None:
    """The step number a refusal names (``step 5 (deliver): ...``)."""
    if not refused or not refused.startswith("step "):
        return None
    number = refused[5:].split(" ", 1)[0]
    return int(number) if number.isdigit() else None
