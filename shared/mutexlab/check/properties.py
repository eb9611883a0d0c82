"""What ``mutexlab check`` checks in every reachable world, besides capacity and deadlock.

* **State invariants of a problem**: a function of the world (process states, holdings) that
  returns a message when the invariant is broken: the problem's holding rules
  (``Problem.rules``, the same definition the audit applies to a trace: audit/rules.py) and its
  ``invariant`` (a family without a problem: its spec's ``world_invariant``; a problem's rules
  over what a trace records, ``mutexlab.rules``, e.g. a problem's in problems/<problem>_rules.py, which
  the audit applies to a trace too). Capacities are checked for every algorithm by the model itself.
* **Liveness** (``fair_starvation``): every request is eventually served under weak fairness.
  A run that starves a process is infinite, so in a finite state graph it ends in a cycle; the
  cycle is a counterexample when some process waits (``waiting_for()`` is not empty) in every
  world of it and the cycle is *weakly fair*: every step enabled in all of its worlds is taken
  in it. Inside one strongly connected component, the cycle through all its edges is fair iff
  any cycle in it is (a step enabled everywhere and never taken is so in every sub-cycle too),
  so checking each component of the graph restricted to "p waits" decides the property exactly.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from ..audit.stall import strongly_connected
from ..problem import HoldingRule, Problem
from ..spec import WorldInvariant
from ..waiting import WaitsRaised
from .model import Model

# An invariant returns None, or (what is wrong, the processes concerned by name).
Invariant = Callable[[Model, tuple], "tuple[str, list[str]] | None"]


def world_invariant(problem: Problem | None) -> WorldInvariant | None:
    """The state invariant of ``problem`` (the one the checked setup solves; None: a setup of an
    algorithm this process does not know): its holding rules and its ``invariant``."""
    if problem is None:
        return None
    declared = problem.invariant
    if not problem.rules:
        return declared
    rules = holding_invariant(problem.rules)
    if declared is None:
        return rules
    reads = declared.reads

    def both(model: Model, world: tuple) -> tuple[str, list[str]] | None:
        return rules.holds(model, world) or declared.holds(model, world)

    return WorldInvariant(both, f"{rules.what}; {declared.what}", reads, rules=declared.rules)


def holding_invariant(rules: tuple[HoldingRule, ...]) -> WorldInvariant:
    """The holding rules as a state invariant: each process's holdings in the world, against each
    rule (what it reads of a process: only its holdings)."""

    def holds(model: Model, world: tuple) -> tuple[str, list[str]] | None:
        held: dict[int, dict[str, int]] = {}
        for rid, i, units in model.holdings(world):
            mine = held.setdefault(i, {})
            resource = model.resources[rid]
            mine[resource] = mine.get(resource, 0) + units
        params = model.setup.params
        for i in range(model.n):
            pid = model.pids[i]
            for rule in rules:
                wrong = rule.broken(pid, held.get(i, {}), params)
                if wrong is not None:
                    return f"{rule.name}: {wrong}", [model.names[pid]]
        return None

    return WorldInvariant(holds, "; ".join(r.what for r in rules))


def invariant_for(model: Model) -> tuple[Invariant | None, str | None]:
    """The state invariant of the problem ``model`` checks (``Model.problem``), and its words."""
    found = world_invariant(model.problem)
    return (found.holds, found.what) if found is not None else (None, None)


# -- liveness ------------------------------------------------------------------------------
class WaitsUnknown(Exception):
    """``fair_starvation`` asked a process what it waits for in a world of a component and its
    ``waiting_for()`` raised (``raised``, the error; ``at``, that world's fingerprint): whether
    anyone starves in the component cannot be judged (``lasso.unjudged``, exit 2)."""

    def __init__(self, raised: WaitsRaised, at: int) -> None:
        super().__init__(str(raised))
        self.raised, self.at = raised, at


def _waiting(model: Model, worlds: dict[int, tuple], i: int) -> set[int]:
    """The worlds of ``worlds`` in which process ``i`` waits; ``WaitsUnknown`` when it cannot say."""
    out = set()
    for fp, w in worlds.items():
        try:
            if model.waiting(w[i]):
                out.add(fp)
        except WaitsRaised as exc:
            raise WaitsUnknown(exc, fp) from None
    return out


def fair_starvation(model: Model, worlds: dict[int, tuple]):
    """Look for a weakly fair cycle inside ``worlds`` (fingerprint → world, one strongly
    connected component of the state graph) in which some process waits throughout.

    Returns None or ``(name, waits_for, start fingerprint, cycle labels)``: the cycle starts and
    ends at the world ``start``, takes every step owed under weak fairness, and ``name`` waits in
    every world of it. ``WaitsUnknown`` when a process's ``waiting_for()`` raises in one of them."""
    edges: dict[int, list[tuple[tuple, int]]] = {}
    enabled: dict[int, set] = {}
    for fp, world in worlds.items():
        out = []
        fair = set()
        for label in model.steps(world):
            f = model.fairness_label(label)
            if f is not None:
                fair.add(f)
            nxt, t, overfull = model.step(world, label)
            if nxt is None:
                continue
            nfp = hash(nxt)
            if nfp in worlds:
                out.append((label, nfp))
        edges[fp] = out
        enabled[fp] = fair
    for i in range(model.n):
        waiting = _waiting(model, worlds, i)
        if not waiting:
            continue
        for comp in strongly_connected(waiting, lambda v: [w for _, w in edges[v]]):
            members = set(comp)
            inner = [(v, label, w) for v in comp for label, w in edges[v] if w in members]
            if not inner:
                continue  # one world, no self-loop: no cycle
            owed = set.intersection(*(enabled[v] for v in comp))
            taken = {model.fairness_label(label) for _, label, _ in inner}
            if owed - taken:
                continue  # some step is enabled throughout and never taken: not a fair cycle
            cycle = _tour(comp[0], inner, enabled, model)
            sid = worlds[comp[0]][i]
            return model.names[model.pids[i]], model.waiting(sid), comp[0], cycle
    return None


def _tour(start: int, inner: list, enabled: dict[int, set], model: Model) -> list[tuple]:
    """A weakly fair cycle from ``start`` back to it inside the component: every step enabled in
    all the worlds *the cycle passes* is taken in it. (Taking the steps owed in the whole
    component is not enough: a short cycle through a few of its worlds can leave a step enabled
    throughout and never taken.) Each round appends a detour through ``start`` to a world where
    a step left owed is disabled, or along an edge that takes it; a world added only shrinks
    what is owed, so at most one round per step. The component is fair (``fair_starvation``),
    so such a world or edge always exists."""
    adj: dict[int, list] = {}
    for v, label, w in inner:
        adj.setdefault(v, []).append((label, w))
    fair = model.fairness_label

    def path(src: int, goal: Callable[[tuple, int], bool]) -> tuple[list, list]:
        """Shortest path from src whose last edge satisfies goal (BFS): its labels and worlds."""
        seen = {src}
        queue: deque[tuple[int, list, list]] = deque([(src, [], [])])
        while queue:
            v, labels, worlds = queue.popleft()
            for label, w in adj.get(v, []):
                if goal(label, w):
                    return labels + [label], worlds + [w]
                if w not in seen:
                    seen.add(w)
                    queue.append((w, labels + [label], worlds + [w]))
        raise AssertionError("a strongly connected component lost its edges")

    labels: list = []
    owed = set(enabled[start])  # enabled in every world of the cycle so far
    taken: set = set()
    while True:
        left = owed - taken
        if not left and labels:
            return labels
        if left:
            need = min(left, key=repr)

            def serves(lb: tuple, w: int, need: Any = need) -> bool:
                return fair(lb) == need or need not in enabled[w]

            more, worlds = path(start, serves)
            if worlds[-1] != start:
                back, tail = path(worlds[-1], lambda lb, w: w == start)
                more, worlds = more + back, worlds + tail
        else:
            more, worlds = path(start, lambda lb, w: w == start)
        labels += more
        taken |= {fair(lb) for lb in more}
        for w in worlds:
            owed &= enabled[w]


def unfair_steps(model: Model, world: tuple, cycle: list[tuple]) -> set:
    """The steps (as ``Model.fairness_label`` names them) enabled in every world the ``cycle``
    passes from ``world`` and never taken in it: empty when the cycle is weakly fair."""
    owed: set | None = None
    for label in cycle:
        here = {f for f in map(model.fairness_label, model.steps(world)) if f is not None}
        owed = here if owed is None else owed & here
        nxt, t, _ = model.step(world, label)
        if nxt is None:
            raise ValueError(f"{model.describe(label)} is refused ({t.error}): not a cycle")
        world = nxt
    return (owed or set()) - {model.fairness_label(label) for label in cycle}
