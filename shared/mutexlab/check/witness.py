"""The runs reaching ``check --metrics``' figures, as scenarios, and their replay.

Each extreme (messages per entry min and max, synchronisation delay max, bypass max) is
written as a scenario in the replay format (``counterexample.py``), its ``finding`` the figure
in words. Writing it, the checker replays it (``sim/scripted.py``) and measures the replay's
*trace* on its own terms: the bypass (entries by others between a ``request`` event and the
process's ``enter``) and the synchronisation delay (the longest chain of ``send``/``recv``
events from an ``exit`` to the next ``enter`` while someone has requested) come from the trace
events alone; the charge of messages needs ``waiting_for()``, which a trace does not hold, so
that figure is measured by the run completing with every request served and its charge taken
again along the scenario's steps.
"""

from __future__ import annotations

from pathlib import Path

from ..sim.scripted import ScenarioError, replay_scenario
from .counterexample import scenario_of, write_scenario
from .metrics import NONE, Extreme, MetricsResult, Tracker
from .model import Model
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
        elif e.get("resource") != resource:
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


def charge_along(model: Model, labels: list[tuple], who: str, best: bool) -> int | None:
    """The charge of ``who``'s requests along ``labels`` (the most, or with ``best`` the fewest)."""
    tracker = Tracker(model)
    world, _ = model.initial()
    aux = tracker.initial(world)
    for label in labels:
        nxt, t, _ = model.step(world, label)
        if nxt is None:
            return None
        aux = tracker.step(world, aux, label, nxt, t, lambda *a: None)
        world = nxt
    mine = [c for c, (_, i) in zip(aux[2], aux[3]) if model.names[model.pids[i]] == who]
    return (min(mine) if best else max(mine)) if mine else None


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
) -> list[dict]:
    """Write one scenario per extreme into ``directory``; replay each and say what it shows."""
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
        shown = _replayed(model, scenario, resource, kind, e)
        written.append(
            {"resource": resource, "figure": kind, "value": e.value, "file": str(path), "reproduced": shown}
        )
    return written


def _replayed(model: Model, scenario: dict, resource: str, kind: str, e: Extreme) -> list:
    """[yes/no, what the replay showed]."""
    try:
        replay = replay_scenario(scenario)
    except ScenarioError as exc:
        return [False, f"the replay rejects the scenario: {exc}"]
    if replay.refused or replay.deadlock:
        return [False, f"the replay stops: {replay.refused or 'deadlock'}"]
    if kind.startswith("messages"):
        got = charge_along(model, list(e.path), e.who, kind == "messages-min")
        served = not any(p.waiting_for() for p in replay.protocols.values())
        ok = served and got == e.value
        return [ok, f"every request served: {'yes' if served else 'no'}; {e.who}'s charge along it: {got}"]
    got = trace_figures(replay.events, resource)[kind]
    return [got == e.value and got != NONE, f"measured on the replay's trace: {got}"]
