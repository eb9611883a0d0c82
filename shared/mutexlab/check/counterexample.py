"""A finding as a scenario in the replay format (``sim/scripted.py``), and its replay.

The checker's path is a list of step labels on its compact worlds. To write it as a scenario
the path is walked again, keeping each link's messages in the order they were sent (what the
scripted replayer holds): a delivery of the oldest message is ``deliver``, of a younger one
(``--reorder``) ``overtake`` with its position, a duplicate ``duplicate``. A liveness finding's
cycle follows its path, and ``loop`` marks where the cycle begins.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..audit import numbered, verify_events
from ..findings import SAFETY
from ..protocol import HandlerError, ProtocolError
from ..protocols import registry
from ..protocols.registry import Solution
from ..sim.scripted import ScenarioError, replay_scenario
from ..waiting import cannot
from .model import DUPLICATE, LOCAL, Model
from .search import CheckFinding


def scenario_of(
    model: Model, finding: CheckFinding, algorithm: str, processes: int, options: dict, seed: int
) -> dict:
    labels = list(finding.path) + list(finding.cycle)
    try:
        world, _ = model.initial()
    except ProtocolError:  # a process that cannot start (its start raised): the finding, no step
        if labels:
            raise
        world = ()
    queues: dict[int, list[int]] = {k: [] for k in range(model.L)}
    for _, t in model.start_transitions:
        for k, mid in t.sends:
            queues[k].append(mid)
    steps: list[dict] = []
    texts: list[str] = []
    for label in labels:
        kind, x, y = label
        text = model.describe(label)
        if kind == LOCAL:
            action = model.actions[y]
            if action not in ("request", "exit"):
                raise ScenarioError(f"local action {action!r} has no scenario step")
            steps.append({"op": action, "pid": model.pids[x]})
        else:
            s, t = model.links[x]
            mid = y // (model.dup + 1) if model.dup else y
            # FIFO links: always the oldest (and clock shifts may renumber messages); reordering
            # links: the message's position in send order
            pos = queues[x].index(mid) if model.reorder else 0
            if kind == DUPLICATE:
                steps.append({"op": "duplicate", "from": s, "to": t, "index": pos})
            elif pos == 0:
                steps.append({"op": "deliver", "from": s, "to": t})
                del queues[x][0]
            else:
                steps.append({"op": "overtake", "from": s, "to": t, "index": pos})
                text = text.replace("deliver", "overtake:", 1) + f" (ahead of {pos} older)"
                del queues[x][pos]
        texts.append(text)
        nxt, tr, _ = model.step(world, label)
        if nxt is None:
            break  # the last step is the rejected input
        for k, m in tr.sends:
            queues[k].append(m)
        world = nxt
    out: dict[str, Any] = {
        "algorithm": algorithm,
        "processes": processes,
        "options": options,
        "seed": seed,
        "steps": steps,
    }
    if finding.cycle:
        out["loop"] = len(finding.path)
    about: dict = {"kind": finding.kind, "message": finding.message, "processes": finding.processes}
    if finding.resource:
        about["resource"] = finding.resource
    out["finding"] = about
    finding.texts = texts
    return out


def write_scenario(scenario: dict, path: str | Path) -> Path:
    """Write ``scenario`` to ``path``, an algorithm file beside or below it named relative to
    it (``registry.beside``): moved together, the scenario still finds its file."""
    target = Path(path)
    if isinstance(scenario.get("algorithm"), str):
        scenario = {**scenario, "algorithm": registry.beside(scenario["algorithm"], target)}
    target.write_text(json.dumps(scenario, indent=1) + "\n", encoding="utf-8")
    return target


def reproduces(scenario: dict, finding: CheckFinding, solution: Solution | None = None) -> tuple[bool, str]:
    """Replay ``scenario`` and audit its trace: does it show ``finding`` (same kind of failure,
    same resource, same processes)? Returns (yes/no, what the replay showed). ``solution``: the
    one the scenario names, as the check resolved it."""
    try:
        result = replay_scenario(scenario, solution=solution)
    except ScenarioError as exc:
        return False, f"the replay rejects the scenario: {exc}"
    except HandlerError as exc:  # a start that raises: before any step, as the search found it
        said = f"replay stops at the start: {exc}"
        return finding.kind == "error" and str(exc) in finding.message, said
    if result.refused:
        # a rejected input: the replay stops at the same step with the same refusal
        refusal = finding.message.split(": ", 1)[-1]
        return finding.kind == "error" and refusal in result.refused, f"replay stops: {result.refused}"
    if finding.kind == "error":  # a raise, a refusal: only the same refusal is the same finding
        return False, "the replay runs past it: no step is refused"
    events = numbered(result.events)
    verdict = verify_events(events)
    messages = [v.message for v in verdict.violations]
    if finding.kind == "liveness":
        loop = result.loop or {}
        unfair = loop.get("unfair")
        ok = (
            bool(loop.get("closes")) and set(finding.processes) <= set(loop.get("waiting", [])) and not unfair
        )
        up_to = f" (up to {loop['up_to']})" if loop.get("up_to") else ""
        if not loop.get("closes"):
            return False, "the cycle does not return to its start"
        if finding.unexplained is not None:  # not judged: the replay cannot judge it either
            said = f"{cannot('liveness')}: {result.unexplained}" if result.unexplained else "it is judged"
            return result.unexplained is not None, f"the cycle returns to its start{up_to}; {said}"
        if unfair:
            return (
                ok,
                f"the cycle is not weakly fair: {', '.join(unfair)} could move throughout and never does",
            )
        return (
            ok,
            f"the cycle returns to its start{up_to}; waiting throughout: {', '.join(loop.get('waiting', []))}",
        )
    if finding.kind == "capacity":
        resource = finding.resource
        if resource is None:
            raise ValueError(f"a capacity finding without its resource: {finding.message}")
        hits = [
            v
            for v in verdict.violations
            if v.rule == "capacity"
            and resource in v.message
            and all(p in v.message for p in finding.processes)
        ]
        return bool(hits), (hits[0].message if hits else "; ".join(messages) or "the audit finds it safe")
    if finding.kind == "deadlock":
        ok = bool(result.deadlock) and set(finding.processes) <= set(result.deadlock)
        shown = f"nothing can move; waiting: {result.waiting}" if result.deadlock else ""
        return ok, "; ".join(filter(None, [shown, *messages])) or "the audit finds it safe"
    # invariant: the family audit sees it in the trace (its own tallies ...) for the same processes,
    # a safety finding first (a holding rule's is the same rule the invariant applied)
    # (or the very sentence: a rule whose sentence names no bee, ``reed:1 got a 2nd egg``, is the
    # same finding when the trace's audit says it word for word)
    hits = sorted(
        (
            v
            for v in verdict.violations
            if v.rule != "capacity"
            and (
                all(p in v.message for p in finding.processes) or f"[{v.rule}] {v.message}" == finding.message
            )
        ),
        key=lambda v: (f"[{v.rule}] {v.message}" != finding.message, v.kind != SAFETY),
    )
    return bool(hits), (hits[0].message if hits else "; ".join(messages) or "the audit finds it safe")
