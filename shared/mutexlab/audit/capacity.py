"""Capacity safety by happened-before (docs/architecture.md#audit).

A holding interval runs from a process's ``enter`` of a resource to its matching ``exit``.
I ≺ J iff exit(I) happened-before enter(J): a strict partial order (transitive, because
enter(J) precedes exit(J) on J's own process). Two intervals *overlap* iff neither is ≺ the
other. A set of pairwise-overlapping intervals (an antichain) can all be inside at once in some
consistent global state (Garg & Waldecker's theorem for conjunctive predicates), so a resource
is safe iff no antichain holds more units than its capacity. Message delivery order therefore
can neither hide a violation nor invent one: only causality counts. An interval still held at
the end of the trace has no exit and is below nothing.

With per-process event counters in the vector clocks, e → f iff f.vc[e.pid] ≥ e.vc[e.pid],
an O(1) test; per process the intervals ≺ J form a prefix of its chain, found by bisection.

Capacity 1: any two overlapping holders are a violation, found pairwise by bisection (exact).

Capacity K: the largest simultaneous load is a *maximum-weight antichain* (weight = units),
computed exactly in polynomial time, with no search and no budget. By weighted Dilworth it
equals the least number of chains covering every interval v units(v) times (Chase & Garg
detect Possibly(x₁+…+xₙ > k) the same way). That is a min flow with lower bounds: start from
every interval its own chain (W chains, W = total units) and join as many as possible, i.e.
min flow = W − max flow in

    T ─units(v)→ out(v) ─∞→ in(u) ─units(u)→ S      for the generating edges v ≺ u,
                 in(u) ─∞→ out(u)                    (a chain may pass through u).

Why this formulation: because flow may pass through an interval, a *generating* set of edges
suffices, whereas a matching or max flow on the split graph without the pass-through edge
needs the transitive closure, Θ(n²) edges. The generating set (``generating_edges``): per
interval u and per process p, the latest interval of p whose exit happened-before enter(u),
read from enter(u)'s vector clock by bisection, kept only when later than what u's previous
interval on its own process already has — at most Σ min(n_p, n_q) edges over process pairs
(65,532 for the 1,000 flower visits of 200 bees, against 487,005 pairs in the closure).

Memory: ``generating_pairs`` reads only the entries an enter's clock has (an entry of 0 is below
every exit), so the network follows the clocks held, never intervals × processes (20,000 holders
of one resource under K = 19,999, each clock naming only its own process: 125 MB and 13 s, where
a dense intervals × processes matrix took 3.3 GB); the dense numpy version is kept for
local-event clocks, which are dense arrays already.

The witness comes from a minimum cut: the intervals v whose out(v) the source reaches in the
residual network and whose in(v) it does not. A finite cut crosses no ∞ edge, so none of them
is ≺ another, and their units are exactly W − max flow.

The flow of a large resource is scipy's ``maximum_flow`` (Dinic, compiled). On the 1,000 flower
visits of 200 bees flow and cut take 0.07 s, against 3.4 s for a pure-Python Dinic and 5.7 s for
networkx's preflow-push on the same network (measured side by side); building the edges (0.25 s)
costs more than solving them. Importing numpy and scipy is a fixed cost (1.4 s and 53 MB measured
on a busy 2-core machine), so up to ``SMALL`` intervals, and whenever scipy is not installed (it
is the optional ``fast`` extra), the flow is flow.py's pure-Python Dinic: same value, same cut. Before the flow, a greedy
cover by chains (``chain_cover_bound``) bounds the load from above: when the bound is within
the capacity the resource is safe and the flow is not needed (nor scipy imported).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..clock import ClockView
from ..findings import Violation
from ..setups import capacity_of
from ..trace import TraceError
from ..words import count

if TYPE_CHECKING:
    import numpy as np

_INF = 2**31 - 1  # an uncapacitated edge; scipy's flow works in int32, so the units must stay below


@dataclass
class Interval:
    pid: str
    resource: str
    units: int
    enter: dict
    exit: dict | None  # None: still held at the end of the trace

    @property
    def enter_own(self) -> int:
        return self.enter["vc"][self.pid]

    @property
    def exit_own(self) -> float:
        return self.exit["vc"][self.pid] if self.exit is not None else math.inf


def overlap(a: Interval, b: Interval) -> bool:
    """Neither interval's exit happened-before the other's enter."""
    a_before_b = a.exit is not None and b.enter["vc"].get(a.pid, 0) >= a.exit_own
    b_before_a = b.exit is not None and a.enter["vc"].get(b.pid, 0) >= b.exit_own
    return not a_before_b and not b_before_a


class Pairing:
    """Enters paired with exits per (process, resource) as the events come, and the problems found
    on the way (unpaired or mismatched ones, malformed units), in the order they arise."""

    def __init__(self) -> None:
        self.open: dict[tuple[str, str], Interval] = {}
        self.problems: list[Violation] = []

    def feed(self, event: dict) -> Interval | None:
        """Take one ``enter`` or ``exit``; the interval an enter opens, else None."""
        kind, pid, resource = event["event"], event["pid"], event.get("resource")
        problems = self.problems
        if not isinstance(resource, str):
            problems.append(Violation("malformed", f"{kind} of {pid} names no resource", [event]))
            return None
        units = event.get("units", 1)
        if type(units) is not int or units < 1:
            problems.append(
                Violation(
                    "malformed",
                    f"{kind} of {pid} on {resource} has units {units!r}, not a positive integer",
                    [event],
                )
            )
            return None
        key = (pid, resource)
        if kind == "enter":
            if key in self.open:
                problems.append(
                    Violation(
                        "reentry",
                        f"{pid} entered {resource} again while holding it",
                        [self.open[key].enter, event],
                    )
                )
                return None
            interval = Interval(pid, resource, units, event, None)
            self.open[key] = interval
            return interval
        held = self.open.pop(key, None)
        if held is None:
            problems.append(
                Violation("exit-without-enter", f"{pid} left {resource} it did not hold", [event])
            )
        else:
            if units != held.units:
                problems.append(
                    Violation(
                        "units-mismatch",
                        f"{pid} entered {resource} with {count(held.units, 'unit')} but left with {units}",
                        [held.enter, event],
                    )
                )
            held.exit = event
        return None


def collect_intervals(events: list[dict]) -> tuple[dict[str, list[Interval]], list[Violation]]:
    """Pair enters with exits per (process, resource); report unpaired or mismatched ones."""
    pairing = Pairing()
    by_resource: dict[str, list[Interval]] = {}
    for event in events:
        if event["event"] in ("enter", "exit"):
            interval = pairing.feed(event)
            if interval is not None:
                by_resource.setdefault(interval.resource, []).append(interval)
    return by_resource, pairing.problems


class _Candidates:
    """For each interval, the intervals of other processes that overlap it (by bisection)."""

    def __init__(self, intervals: list[Interval]) -> None:
        self.per_process: dict[str, list[Interval]] = {}
        for interval in sorted(intervals, key=lambda iv: iv.enter_own):
            self.per_process.setdefault(interval.pid, []).append(interval)
        self._enter_knows: dict[tuple[str, str], list[int]] = {}
        self._exit_own = {q: [iv.exit_own for iv in ivs] for q, ivs in self.per_process.items()}

    def _enters_knowing(self, q: str, p: str) -> list[int]:
        key = (q, p)
        if key not in self._enter_knows:
            self._enter_knows[key] = [iv.enter["vc"].get(p, 0) for iv in self.per_process[q]]
        return self._enter_knows[key]

    def overlapping(self, a: Interval) -> list[Interval]:
        found = []
        for q, ivs in self.per_process.items():
            if q == a.pid:
                continue
            # b with NOT(exit_a → enter_b): enter_b.vc[a.pid] < exit_a own — a prefix of q's list.
            end = len(ivs) if a.exit is None else bisect_left(self._enters_knowing(q, a.pid), a.exit_own)
            # b with NOT(exit_b → enter_a): exit_b own > enter_a.vc[q] — a suffix of q's list.
            start = bisect_right(self._exit_own[q], a.enter["vc"].get(q, 0))
            found.extend(ivs[start:end])
        return found


def generating_edges(intervals: list[Interval]) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (v, u) with v ≺ u whose transitive closure is the whole order ≺.

    For each interval u and each process p (its own included): the latest interval of p whose
    exit happened-before enter(u), kept only when later than the one u's own previous interval
    already has (otherwise it is ≺ that one, which is ≺ u). On u's own process that is u's
    previous interval. O(n·P) vector-clock reads, one row of a matrix per interval.
    """
    import numpy as np

    chains: dict[str, list[int]] = {}
    for i in sorted(range(len(intervals)), key=lambda i: intervals[i].enter_own):
        chains.setdefault(intervals[i].pid, []).append(i)
    pids = list(chains)
    chain_order = np.array([i for p in pids for i in chains[p]], dtype=np.int64)  # row r → interval
    starts = np.cumsum([0] + [len(chains[p]) for p in pids])[:-1]
    knows = _knows(intervals, chain_order, pids)
    below = np.empty(knows.shape, dtype=np.int64)  # how many of p's intervals are ≺ row r
    for k, p in enumerate(pids):
        exits = np.array([intervals[i].exit_own for i in chains[p]], dtype=np.float64)
        below[:, k] = np.searchsorted(exits, knows[:, k], side="right")
    has_prev = np.ones(len(chain_order), dtype=bool)
    has_prev[starts] = False
    already = np.zeros_like(below)
    already[has_prev] = below[np.nonzero(has_prev)[0] - 1]
    rows, ks = np.nonzero(below > already)
    return chain_order[starts[ks] + below[rows, ks] - 1], chain_order[rows]


def _knows(intervals: list[Interval], rows: np.ndarray, pids: list[str]) -> np.ndarray:
    """Row r, column k: how many of ``pids[k]``'s events enter(``intervals[rows[r]]``) knows."""
    import numpy as np

    clocks = [intervals[i].enter["vc"] for i in rows]
    first = clocks[0] if clocks else None
    if isinstance(first, ClockView) and all(
        isinstance(vc, ClockView) and vc.index is first.index for vc in clocks
    ):  # local-event clocks (an audit fed by the run): one array each, read by column at once
        columns = [first.index[p] for p in pids]
        return np.stack([vc.counts for vc in clocks])[:, columns].astype(np.float64)
    return np.array([[vc.get(p, 0) for p in pids] for vc in clocks], dtype=np.float64).reshape(
        len(rows), len(pids)
    )


COVER_BUDGET = 2_000_000


def chain_cover_bound(intervals: list[Interval], cap: int) -> int | None:
    """An upper bound on the heaviest antichain from a greedy cover by chains, or None once the
    bound passes ``cap`` (then only the flow can tell).

    Each interval in turn extends the chain whose last interval is ≺ it and exited latest in the
    trace, or starts a chain. An antichain meets a chain at most once, so it weighs at most the
    sum over the chains of their heaviest interval. Exact when it is ≤ ``cap``: the resource is
    within its capacity, and no flow (nor scipy) is needed — the common case of a correct run.
    None too once it has looked at ``COVER_BUDGET`` + 8 per interval chains in all: many holders
    at once under a large capacity would make it quadratic (20,000 under K = 19,999: 2·10⁸ steps).
    """
    ends: list[Interval] = []  # the last interval of each chain
    heaviest: list[int] = []
    bound = 0
    budget = COVER_BUDGET + 8 * len(intervals)  # chains looked at in all, then the flow decides
    for u in intervals:
        knows = u.enter["vc"]
        best, best_exit = -1, -1
        budget -= len(ends)
        if budget < 0:
            return None
        for c, v in enumerate(ends):
            if v.exit is not None and knows.get(v.pid, 0) >= v.exit_own:
                line = v.exit.get("_line", 0)
                if line > best_exit:
                    best, best_exit = c, line
        if best < 0:
            ends.append(u)
            heaviest.append(u.units)
            bound += u.units
            if bound > cap:
                return None
        else:
            ends[best] = u
            if u.units > heaviest[best]:
                bound += u.units - heaviest[best]
                heaviest[best] = u.units
                if bound > cap:
                    return None
    return bound


# Up to this many intervals the flow is solved in pure Python (flow.py): faster than importing
# numpy and scipy (about 1.4 s), and the only way when they are not installed.
SMALL = 400


def scipy_available() -> bool:
    from importlib.util import find_spec

    return find_spec("scipy") is not None and find_spec("numpy") is not None


def max_antichain(
    intervals: list[Interval], weights: list[int] | None = None, engine: str = "auto"
) -> tuple[int, list[Interval]]:
    """The largest weight (default: units) of pairwise-overlapping intervals, and one such set.

    Exact, by max flow on the network of the module docstring; the set comes from a min cut.
    ``engine``: "python" (flow.py), "scipy", or "auto" (python up to ``SMALL`` intervals or
    without scipy, else scipy).
    """
    if not intervals:
        return 0, []
    w = [iv.units for iv in intervals] if weights is None else list(weights)
    if sum(w) >= _INF:
        raise TraceError(f"{intervals[0].resource}: {sum(w)} units in all, too many for the audit's flow")
    if engine == "auto":
        engine = "python" if len(intervals) <= SMALL or not scipy_available() else "scipy"
    solve = _cut_python if engine == "python" else _cut_scipy
    flow_value, cut = solve(intervals, w)
    load = sum(w) - flow_value
    # Weighted Dilworth: the cut's antichain weighs exactly W − max flow.
    assert sum(w[i] for i in cut) == load
    return load, [intervals[i] for i in cut]


def _cut_python(intervals: list[Interval], w: list[int]) -> tuple[int, list[int]]:
    from .flow import INF, Network

    n = len(intervals)
    source, sink = 2 * n, 2 * n + 1  # out(v) = v, in(v) = n + v
    net = Network(2 * n + 2)
    for v in range(n):
        net.add(source, v, w[v])
        net.add(n + v, sink, w[v])
        net.add(n + v, v, INF)
    for v, u in generating_pairs(intervals):
        net.add(v, n + u, INF)
    value = net.max_flow(source, sink)
    reached = net.reached(source)
    return value, [v for v in range(n) if reached[v] and not reached[n + v]]


def generating_pairs(intervals: list[Interval]) -> list[tuple[int, int]]:
    """``generating_edges`` without numpy: the same pairs (v, u), v ≺ u. Sparse: only the processes
    an enter's clock names are read (an entry of 0 is below every exit), so time and memory follow
    the clocks held, never intervals × processes."""
    chains: dict[str, list[int]] = {}
    for i in sorted(range(len(intervals)), key=lambda i: intervals[i].enter_own):
        chains.setdefault(intervals[i].pid, []).append(i)
    exits = {p: [intervals[i].exit_own for i in chain] for p, chain in chains.items()}
    pairs: list[tuple[int, int]] = []
    for chain in chains.values():
        already: dict[str, int] = {}  # per process: how many are ≺ the previous interval
        for u in chain:
            for p, known in intervals[u].enter["vc"].items():
                exits_p = exits.get(p)
                if exits_p is None:
                    continue
                below = bisect_right(exits_p, known)
                if below > already.get(p, 0):
                    pairs.append((chains[p][below - 1], u))
                    already[p] = below
    return pairs


def _cut_scipy(intervals: list[Interval], w_list: list[int]) -> tuple[int, list[int]]:
    # Loaded here, not with the module: only a large resource of capacity K ≥ 2 needs them.
    import numpy as np
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import breadth_first_order, maximum_flow

    n = len(intervals)
    w = np.array(w_list, dtype=np.int64)
    if isinstance(intervals[0].enter["vc"], ClockView):  # local-event clocks: dense already
        src, dst = generating_edges(intervals)
    else:  # clocks as dicts, maybe of many processes each naming few: never intervals × processes
        pairs = generating_pairs(intervals)
        src = np.array([v for v, _ in pairs], dtype=np.int64)
        dst = np.array([u for _, u in pairs], dtype=np.int64)
    source, sink = 2 * n, 2 * n + 1  # out(v) = v, in(v) = n + v
    ids = np.arange(n)
    rows = np.concatenate([np.full(n, source), n + ids, n + ids, src])
    cols = np.concatenate([ids, np.full(n, sink), ids, n + dst])
    caps = np.concatenate([w, w, np.full(n + len(src), _INF)]).astype(np.int32)
    network = csr_array((caps, (rows, cols)), shape=(2 * n + 2, 2 * n + 2))
    result = maximum_flow(network, source, sink, method="dinic")
    residual = csr_array(network - result.flow)  # the flow is skew-symmetric: reverse edges get f
    residual.eliminate_zeros()  # csgraph counts explicit zeros as edges
    reached = np.zeros(2 * n + 2, dtype=bool)
    reached[breadth_first_order(residual, source, directed=True, return_predecessors=False)] = True
    cut = np.nonzero(reached[:n] & ~reached[n : 2 * n])[0]
    return int(result.flow_value), [int(i) for i in cut]


def check_capacities(
    events: list[dict],
    capacities: dict[str, int],
    limit: int = 20,
    streamed: tuple[list[Violation], dict[str, list[Violation]]] | None = None,
) -> list[Violation]:
    """The findings on every resource held in ``events``: the interval problems in trace order,
    then each resource's, by name. ``streamed``: the problems and findings of the resources
    checked as the events came (``exclusive.ExclusiveStream``), whose events are not in ``events``."""
    by_resource, problems = collect_intervals(events)
    found: dict[str, list[Violation]] = {}
    for resource, intervals in by_resource.items():
        found[resource] = _check_resource(resource, capacity_of(capacities, resource), intervals, limit)
    if streamed is not None:
        more, streamed_found = streamed
        problems = sorted(problems + more, key=lambda v: v.events[-1].get("_line", 0))  # trace order
        found.update(streamed_found)
    for resource in sorted(found):
        problems.extend(found[resource])
    return problems


def over_capacity(iv: Interval, cap: int) -> Violation:
    """One holder alone over the capacity of its resource."""
    return Violation(
        "capacity",
        f"{iv.pid} took {count(iv.units, 'unit')} of {iv.resource}, more than its capacity {cap}",
        [iv.enter],
    )


def held_by(resource: str, cap: int, holders: list[Interval]) -> Violation:
    names = ", ".join(
        f"{m.pid} ({m.units} unit{'s' if m.units != 1 else ''}, line {m.enter.get('_line', '?')})"
        for m in holders
    )
    return Violation(
        "capacity",
        f"{resource} (capacity {cap}) held by {names} at once: no exit among them "
        f"happened-before another's enter",
        [m.enter for m in holders],
    )


def _check_resource(resource: str, cap: int, intervals: list[Interval], limit: int) -> list[Violation]:
    found = [over_capacity(iv, cap) for iv in intervals if iv.units > cap]
    order = {id(iv): n for n, iv in enumerate(intervals)}
    if cap == 1:
        # Units are ≥ 1, so every overlapping pair is over capacity: pair each interval with
        # the first overlapping interval that entered after it in the trace.
        candidates = _Candidates(intervals)
        for iv in intervals:
            if len(found) >= limit:
                break
            later = [b for b in candidates.overlapping(iv) if order[id(b)] > order[id(iv)]]
            if later:
                found.append(held_by(resource, cap, [iv, min(later, key=lambda b: order[id(b)])]))
        return found
    # Holders alone over the capacity are reported above; the search is for sets of holders
    # each within it that together exceed it. A greedy chain cover proves most correct runs safe
    # at once; the flow decides the rest.
    within = [iv for iv in intervals if iv.units <= cap]
    if chain_cover_bound(within, cap) is not None:
        return found
    load, holders = max_antichain(within)
    if load > cap:
        found.append(held_by(resource, cap, sorted(holders, key=lambda m: order[id(m)])))
    return found
