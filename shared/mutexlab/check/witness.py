"""The runs reaching ``check --metrics``' figures, as scenarios, and their replay.

Each extreme (messages per entry min and max, synchronisation delay max, bypass max) is
written as a scenario in the replay format (``counterexample.py``), its ``finding`` the figure
in words. Writing it, the checker replays it (``sim/scripted.py``) and measures the replay's
*trace* on its own terms: the bypass (entries by others between a ``request`` event and the
process's ``enter``) and the synchronisation delay (the longest chain of ``send``/``recv``
events from an ``exit`` to the next ``enter`` while someone has requested) come from the trace
events alone; the charge of messages needs ``waiting_for()``, which a trace does not hold, so
that figure is measured by the run completing with every request served and its charge taken
again along the scenario's steps. A protocol that states its requests by ``wants()`` (a problem's
own processes) writes no ``request`` event: its bypass and delay are taken along the steps too, the
bypass counted on that one run.
"""

from __future__ import annotations

from pathlib import Path

from ..protocols.registry import Solution
from ..sim.driver import resource_kind
from ..sim.scripted import ScenarioError, replay_scenario
from .charges import NONE, Tracker
from .counterexample import scenario_of, write_scenario
from .metrics import Extreme, MetricsResult
from .model import LOCAL, Model
from .result import CheckFinding

WHAT = {
    "messages-max": "messages per entry, most",
    "messages-min": "messages per entry, fewest",
    "sync-max": "synchronisation delay (message hops), longest",
    "bypass-max": "bypass (entries by others while waiting), most",
}


def extremes(result: MetricsResult) -> list[tuple[str, str, Extreme]]:
    """(resource, kind, extreme) for every figure found."""
    out = []
    for resource, f in sorted(result.figures.items()):
        for kind, e in (
            ("messages-max", f.messages_max),
            ("messages-min", f.messages_min),
            ("sync-max", f.sync_max),
            ("bypass-max", f.bypass_max),
        ):
            if e is not None:
                out.append((resource, kind, e))
    return out


def trace_figures(events: list[dict], resource: str) -> dict[str, int | None]:
    """The bypass and the synchronisation delay (longest chain) of one replayed trace."""
    waiting: dict[str, int] = {}  # pid → entries by others since its request
    hops: dict[str, int] = {}  # pid → longest chain since the latest exit (absent: none)
    carried: dict[str, int] = {}  # message id → hops it carries
    measuring = False
    bypass: int | None = None
    sync: int | None = None
    for e in events:
        kind, pid = e.get("event"), str(e.get("pid"))
        if kind == "send" and e.get("to") != pid and pid in hops:
            carried[e["id"]] = hops[pid]
        elif kind == "recv" and e.get("from") != pid and e.get("id") in carried:
            hops[pid] = max(hops.get(pid, 0), carried[e["id"]] + 1)
        elif _kind(e) != resource:
            continue
        elif kind == "request":
            waiting[pid] = 0
        elif kind == "enter":
            if pid in waiting:
                bypass = max(bypass or 0, waiting.pop(pid))
            for other in waiting:
                waiting[other] += 1
            if measuring:
                sync = max(sync or 0, hops.get(pid, 0)) if pid in hops else sync
                measuring = False
        elif kind == "exit":
            hops, carried = {pid: 0}, {}
            measuring = bool(waiting)
    return {"bypass-max": bypass, "sync-max": sync}


def figures_along(model: Model, labels: list[tuple]) -> list[tuple[str, str, int, str]]:
    """Every figure taken along ``labels`` (carried to the end of the run), as (resource kind,
    figure, value, process): ``charge`` per request, ``bypass`` per entry after a request,
    ``sync``; walked with the search's own tracker, the bypass counted on this run alone."""
    tracker = Tracker(model)
    world, _ = model.initial()
    aux = tracker.initial(world)
    got: list[tuple[int, str, int, int]] = []
    waiting: dict[int, int] = {}  # process → entries by others since its request

    def seen(kd: int, what: str, value: int, i: int) -> None:
        got.append((kd, what, value, i))

    for label in labels:
        nxt, t, _ = model.step(world, label)
        if nxt is None:
            break
        i = label[1] if label[0] == LOCAL else model.link_to[label[1]]
        before = aux[1]
        aux = tracker.step(world, aux, label, nxt, t, seen)
        entered = [kd for kd, sign in tracker.moves(t.holds) if sign > 0] if t.holds else []
        for j, o in enumerate(before):
            if j != i and o[0] != NONE:
                waiting[j] = waiting.get(j, 0) + entered.count(o[1])
        mine = aux[1][i]
        if before[i][0] != NONE and mine[0] != before[i][0]:
            count = waiting.pop(i, 0)
            if before[i][1] in entered:
                got.append((before[i][1], "bypass", count, i))
        if mine[0] != NONE and mine[0] != before[i][0]:
            waiting[i] = 0
        world = nxt
    if not model.steps(world) and model.all_finished(world):
        tracker.final(aux, seen)
    return [(tracker.kinds[kd], what, value, model.names[model.pids[i]]) for kd, what, value, i in got]


def measured_along(model: Model, labels: list[tuple], resource: str, kind: str, who: str) -> int | None:
    """The figure ``kind`` of ``resource`` along ``labels``: ``who``'s most (or fewest) messages
    per entry, ``who``'s largest bypass, the longest synchronisation delay."""
    found = figures_along(model, labels)
    if kind.startswith("messages"):
        values = [v for r, what, v, p in found if r == resource and what == "charge" and p == who]
        return (min(values) if kind == "messages-min" else max(values)) if values else None
    if kind == "bypass-max":
        values = [v for r, what, v, p in found if r == resource and what == "bypass" and p == who]
    else:
        values = [v for r, what, v, _ in found if r == resource and what == "sync" and v != NONE]
    return max(values) if values else None


def completed(model: Model, labels: list[tuple]) -> list[tuple]:
    """``labels`` carried on to the end of a run (the first step each time: every bounded run ends),
    so the scenario replays as a whole run."""
    world, _ = model.initial()
    for label in labels:
        reached = model.step(world, label)[0]
        if reached is None:
            return list(labels)
        world = reached
    out = list(labels)
    steps = model.steps(world)
    while steps and len(out) < 100_000:
        for label in steps:
            nxt = model.step(world, label)[0]
            if nxt is not None:
                break
        else:
            break
        out.append(label)
        world = nxt
        steps = model.steps(world)
    return out


def write_witnesses(
    model: Model,
    result: MetricsResult,
    algorithm: str,
    processes: int,
    options: dict,
    seed: int,
    directory: str,
    solution: Solution | None = None,
) -> list[dict]:
    """Write one scenario per extreme into ``directory``; replay each and say what it shows
    (``solution``: the one they name, as the check resolved it)."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for resource, kind, e in extremes(result):
        message = f"{WHAT[kind]} on {resource}: {e.value} ({e.who})"
        finding = CheckFinding(
            "metric", message, completed(model, e.path), processes=[e.who], resource=resource
        )
        scenario = scenario_of(model, finding, algorithm, processes, options, seed)
        path = write_scenario(scenario, target / f"{resource.replace(':', '-')}-{kind}.json")
        shown = _replayed(model, scenario, resource, kind, e, solution)
        written.append(
            {"resource": resource, "figure": kind, "value": e.value, "file": str(path), "reproduced": shown}
        )
    return written


def _replayed(
    model: Model, scenario: dict, resource: str, kind: str, e: Extreme, solution: Solution | None
) -> list:
    """[yes/no, what the replay showed]."""
    try:
        replay = replay_scenario(scenario, solution=solution)
    except ScenarioError as exc:
        return [False, f"the replay rejects the scenario: {exc}"]
    if replay.refused or replay.deadlock:
        return [False, f"the replay stops: {replay.refused or 'deadlock'}"]
    labels = completed(model, list(e.path))
    if kind.startswith("messages"):
        got = measured_along(model, labels, resource, kind, e.who)
        served = not any(p.waiting_for() for p in replay.protocols.values())
        ok = served and got == e.value
        return [ok, f"every request served: {'yes' if served else 'no'}; {e.who}'s charge along it: {got}"]
    if any(ev.get("event") == "request" and _kind(ev) == resource for ev in replay.events):
        got = trace_figures(replay.events, resource)[kind]
        return [got == e.value and got != NONE, f"measured on the replay's trace: {got}"]
    # requests the protocol states by wants(), not in its trace: measured along the run's steps
    got = measured_along(model, labels, resource, kind, e.who)
    return [got == e.value and got is not None, f"measured along the scenario's steps: {got}"]


def _kind(event: dict) -> str:
    return resource_kind(str(event.get("resource")))
