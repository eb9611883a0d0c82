"""The liveness finding of ``mutexlab check``: a lasso (``properties.fair_starvation``) inside one
strongly connected component of the state graph, as the steps that reach it and repeat."""

from __future__ import annotations

from collections import deque
from typing import Any

from ..words import lacks
from .model import Model
from .properties import WaitsUnknown, unfair_steps
from .result import CheckFinding


def witness(model: Model, lasso: tuple, comp: dict, prefix: list) -> CheckFinding:
    """The liveness finding: the path to the component's root, on to the cycle's start, and
    the cycle."""
    name, waits, start, cycle = lasso
    worlds = {hash(w): w for w in comp.values()}
    inner = _path_inside(model, worlds, hash(_walk(model, prefix)), start)
    unfair = unfair_steps(model, _walk(model, prefix + inner), cycle)
    if unfair:  # properties._tour builds fair cycles: this is a bug, not a verdict to print
        raise AssertionError(
            f"a liveness witness that is not weakly fair: {sorted(unfair, key=repr)} never taken"
        )
    names = model.names
    what = lacks({k: [names.get(p, str(p)) for p in v] for k, v in waits.items()})
    return CheckFinding(
        "liveness",
        f"{name} waits forever ({what}) in a cycle that is fair to every "
        f"other step: {len(prefix) + len(inner)} steps, then {len(cycle)} "
        f"repeated forever",
        prefix + inner,
        cycle=cycle,
        processes=[name],
    )


def unjudged(model: Model, unknown: WaitsUnknown, comp: dict, prefix: list) -> CheckFinding:
    """A component whose liveness cannot be judged, a process's ``waiting_for()`` having raised in
    one of its worlds: the path to that world and a shortest cycle back to it, not judged (the
    error as ``unexplained``, exit 2), as a deadlock such a process leaves unexplained is."""
    worlds = {hash(w): w for w in comp.values()}
    inner = _path_inside(model, worlds, hash(_walk(model, prefix)), unknown.at)
    cycle = _cycle(model, worlds, unknown.at)
    raised = unknown.raised
    return CheckFinding(
        "liveness",
        f"{raised.process} cannot say what it waits for in a cycle of the state graph "
        f"({len(worlds):,} worlds): {len(prefix) + len(inner)} steps, then {len(cycle)} repeated",
        prefix + inner,
        cycle=cycle,
        processes=[raised.process],
        unexplained=raised.short,
    )


def _cycle(model: Model, worlds: dict, at: int) -> list:
    """A shortest cycle from the world ``at`` back to it inside the component ``worlds``."""
    best: list | None = None
    for label in model.steps(worlds[at]):
        nxt, _, _ = model.step(worlds[at], label)
        if nxt is not None and hash(nxt) in worlds:
            back = [label, *_path_inside(model, worlds, hash(nxt), at)]
            best = back if best is None or len(back) < len(best) else best
    if best is None:
        raise AssertionError("a world of a strongly connected component without a cycle")
    return best


def _walk(model: Model, labels: list) -> tuple:
    world, _ = model.initial()
    for label in labels:
        nxt, t, _ = model.step(world, label)
        if nxt is None:  # the path was walked before: each of its steps was taken then
            raise RuntimeError(f"replaying a path: {model.describe(label)} is refused now ({t.error})")
        world = nxt
    return world


def _path_inside(model: Model, worlds: dict, src: int, dst: int) -> list:
    if src == dst:
        return []
    queue: deque[tuple[Any, list]] = deque([(src, [])])
    seen = {src}
    while queue:
        v, labels = queue.popleft()
        world = worlds[v]
        for label in model.steps(world):
            nxt, _, _ = model.step(world, label)
            if nxt is None:
                continue
            h = hash(nxt)
            if h in worlds and h not in seen:
                if h == dst:
                    return labels + [label]
                seen.add(h)
                queue.append((h, labels + [label]))
    raise AssertionError("no path inside a strongly connected component")
