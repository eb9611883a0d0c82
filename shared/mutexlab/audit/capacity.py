"""Capacity safety by happened-before (docs/architecture.md#audit).

A holding interval runs from a process's ``enter`` of a resource to its matching ``exit``.
Two intervals *overlap* unless one's exit happened-before the other's enter. A set of pairwise
overlapping intervals can all be inside at once in some consistent global state
(Garg & Waldecker's theorem for conjunctive predicates), so the resource is safe iff no set of
pairwise overlapping intervals holds more units than its capacity. Message delivery order
therefore can neither hide a violation nor invent one: only causality counts.

With per-process event counters in the vector clocks, e → f iff f.vc[e.pid] ≥ e.vc[e.pid],
an O(1) test; per process the overlap candidates form a contiguous run, found by bisection.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from ..setup import capacity_of
from .model import Violation

SEARCH_LIMIT = 200_000  # clique-search nodes per resource before the audit says it gave up


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


def collect_intervals(events: list[dict]) -> tuple[dict[str, list[Interval]], list[Violation]]:
    """Pair enters with exits per (process, resource); report unpaired or mismatched ones."""
    open_: dict[tuple[str, str], Interval] = {}
    by_resource: dict[str, list[Interval]] = {}
    problems: list[Violation] = []
    for event in events:
        kind = event["event"]
        if kind not in ("enter", "exit"):
            continue
        pid, resource = event["pid"], event.get("resource")
        if not isinstance(resource, str):
            problems.append(Violation("malformed", f"{kind} of {pid} names no resource", [event]))
            continue
        units = event.get("units", 1)
        key = (pid, resource)
        if kind == "enter":
            if key in open_:
                problems.append(Violation("reentry", f"{pid} entered {resource} again while holding it",
                                          [open_[key].enter, event]))
                continue
            interval = Interval(pid, resource, units, event, None)
            open_[key] = interval
            by_resource.setdefault(resource, []).append(interval)
        else:
            interval = open_.pop(key, None)
            if interval is None:
                problems.append(Violation("exit-without-enter", f"{pid} left {resource} it did not hold", [event]))
            elif units != interval.units:
                problems.append(Violation("units-mismatch", f"{pid} entered {resource} with {interval.units} "
                                          f"units but left with {units}", [interval.enter, event]))
                interval.exit = event
            else:
                interval.exit = event
    return by_resource, problems


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


def check_capacities(events: list[dict], capacities: dict[str, int], limit: int = 20) -> list[Violation]:
    by_resource, problems = collect_intervals(events)
    for resource, intervals in sorted(by_resource.items()):
        cap = capacity_of(capacities, resource)
        problems.extend(_check_resource(resource, cap, intervals, limit))
    return problems


def _check_resource(resource: str, cap: int, intervals: list[Interval], limit: int) -> list[Violation]:
    found: list[Violation] = []
    for iv in intervals:
        if iv.units > cap:
            found.append(Violation("capacity", f"{iv.pid} took {iv.units} units of {resource}, "
                                   f"more than its capacity {cap}", [iv.enter]))
    candidates = _Candidates(intervals)
    order = {id(iv): n for n, iv in enumerate(intervals)}
    budget = [SEARCH_LIMIT]

    def extend(clique: list[Interval], units: int, pool: list[Interval]) -> list[Interval] | None:
        if units > cap:
            return clique
        for n, nxt in enumerate(pool):
            budget[0] -= 1
            if budget[0] < 0:
                return None
            if all(overlap(nxt, member) for member in clique[1:]):
                hit = extend(clique + [nxt], units + nxt.units, pool[n + 1:])
                if hit:
                    return hit
        return None

    for iv in intervals:
        if len(found) >= limit or budget[0] < 0:
            break
        # Enumerate each overlapping set from its first member in trace order.
        pool = [b for b in candidates.overlapping(iv) if order[id(b)] > order[id(iv)]]
        if not pool:
            continue
        clique = extend([iv], iv.units, pool)
        if clique:
            holders = ", ".join(f"{m.pid} ({m.units} unit{'s' if m.units != 1 else ''}, line "
                                f"{m.enter.get('_line', '?')})" for m in clique)
            found.append(Violation(
                "capacity",
                f"{resource} (capacity {cap}) held by {holders} at once: no exit among them "
                f"happened-before another's enter",
                [m.enter for m in clique]))
    if budget[0] < 0:
        found.append(Violation("audit-incomplete", f"gave up searching {resource} after {SEARCH_LIMIT} steps", []))
    return found
