"""The capacity-1 check fed event by event, forgetting what can no longer matter: what ``mutexlab
verify`` uses on a trace file, so its memory follows the intervals still open to question, not the
length of the trace (docs/architecture.md#scaling).

It reports exactly what the whole-trace check (``capacity.check_capacities``) reports on a
capacity-1 resource: the interval problems as they arise (``capacity.Pairing``), every holder over
the capacity, then, for each interval in the order of its enter, the first later-entered interval
of another process that overlaps it — up to the limit.

Why it may forget. The file's order must be a linearization of happened-before, as every writer
makes it (checked as it goes: each process's own count rises from one event to its next, and no
enter or exit knows of an event the file has not shown yet). Then for an interval b entered after
iv, exit(b) → enter(iv) is impossible, so b overlaps iv iff iv is still held at enter(b) or enter(b)
does not know iv's exit. An interval that has found its partner is done; a left interval whose exit
every other process already knew at its latest enter or exit can overlap no later enter. Both are
forgotten. Should a later enter not know a forgotten exit after all (a process not heard of
before), or the order not be causal, the check raises ``InexactStream`` and the caller decides the
whole trace the old way.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable

from ..findings import Violation
from .capacity import Interval, Pairing, held_by, over_capacity


class InexactStream(Exception):
    """The streamed check cannot decide this trace exactly: decide it whole instead."""


class ExclusiveStream:
    """Feed the run's events in order (``saw`` every one, ``feed`` the enters and exits of
    capacity-1 resources), then ask for ``findings``."""

    def __init__(self, names: Iterable[str], limit: int = 20) -> None:
        self.limit = limit
        self.names = set(names)
        self.pairing = Pairing()
        self.own: dict[str, int] = {}  # process → its own count at its latest event in the file
        self.knows: dict[str, dict] = {}  # process → the clock of its latest enter or exit
        self.forgotten: dict[str, int] = {}  # process → its latest exit forgotten without a partner
        self.live: dict[str, list[tuple[int, Interval]]] = {}  # (order, interval) still unpartnered
        self.entered: dict[str, int] = {}  # intervals per resource so far: the next one's order
        self.over: dict[str, list[Violation]] = {}
        self.pairs: dict[str, list[tuple[int, int, Violation]]] = {}  # the first ``limit`` by order
        self._prune_at = 64  # live intervals (all resources) at which to forget again
        self._kept = 0  # live intervals, all resources: counted, never summed per event
        self.peak_live = 0  # the most intervals kept at once (what the memory follows)

    def saw(self, pid: str, vc: dict) -> None:
        """Every event of the trace, in order: its process's own count must rise."""
        own = vc.get(pid)
        if type(own) is not int or own <= self.own.get(pid, 0):
            raise InexactStream(f"{pid}'s events are not in their own order")
        self.own[pid] = own

    def feed(self, event: dict) -> None:
        """An ``enter`` or ``exit`` of a capacity-1 resource (after ``saw``)."""
        vc, own = event["vc"], self.own
        for name, count in vc.items():
            if count > own.get(name, 0):
                raise InexactStream(f"line {event['_line']} knows an event the trace has not shown yet")
        self.knows[event["pid"]] = vc
        interval = self.pairing.feed(event)
        if interval is not None:
            self._enter(interval)

    def _enter(self, b: Interval) -> None:
        resource, knows, q = b.resource, b.enter["vc"], b.pid
        for p, latest in self.forgotten.items():
            if p != q and knows.get(p, 0) < latest:
                raise InexactStream(f"{q} enters without knowing an exit already forgotten")
        order = self.entered.get(resource, 0)
        self.entered[resource] = order + 1
        if b.units > 1:
            self.over.setdefault(resource, []).append(over_capacity(b, 1))
        live = self.live.setdefault(resource, [])
        kept = []
        for entry in live:
            _, a = entry
            if a.pid != q and (a.exit is None or knows.get(a.pid, 0) < a.exit_own):
                self._pair(entry, b)  # b is the first later interval overlapping a
            else:
                kept.append(entry)
        kept.append((order, b))
        self._kept += len(kept) - len(live)
        self.live[resource] = kept
        self.peak_live = max(self.peak_live, self._kept)
        if self._kept >= self._prune_at:
            self._kept = self._prune()
            self._prune_at = 2 * self._kept + 64

    def _pair(self, entry: tuple[int, Interval], b: Interval) -> None:
        order, a = entry
        pairs = self.pairs.setdefault(a.resource, [])
        if len(pairs) < self.limit or order < pairs[-1][0]:
            insort(pairs, (order, id(a), held_by(a.resource, 1, [a, b])), key=lambda x: x[0])
            del pairs[self.limit :]

    def _prune(self) -> int:
        """Forget the left intervals every other process knows the exit of; the number kept."""
        processes = self.names | set(self.knows)
        # floor[p]: the least any other process knows of p — 0 unless every other one has heard of
        # p. Read from the entries there are (never processes × processes: a header may name
        # 300,000 processes).
        heard: dict[str, int] = {}
        least: dict[str, int] = {}
        for q, vc in self.knows.items():
            if q not in processes:
                continue
            for p, count in vc.items():
                if p != q and count > 0:
                    heard[p] = heard.get(p, 0) + 1
                    least[p] = min(least.get(p, count), count)
        others = len(processes) - 1
        floor = {p: least[p] for p, n in heard.items() if n >= others and p in processes}
        if others == 0:  # the only process so far: no other's later enter can overlap its exits
            floor = {p: self.own.get(p, 0) for p in processes}  # (one heard of later: InexactStream)
        total = 0
        for resource, live in list(self.live.items()):
            kept = []
            for entry in live:
                a = entry[1]
                if a.exit is not None and a.exit_own <= floor.get(a.pid, 0):
                    self.forgotten[a.pid] = max(self.forgotten.get(a.pid, 0), int(a.exit_own))
                else:
                    kept.append(entry)
            if kept:
                self.live[resource] = kept
            else:  # a resource no longer held in question costs nothing (200,000 of them, one each)
                del self.live[resource]
            total += len(kept)
        return total

    def findings(self) -> tuple[list[Violation], dict[str, list[Violation]]]:
        """The interval problems in trace order, and each resource's findings (as
        ``capacity.check_capacities`` takes them)."""
        found: dict[str, list[Violation]] = {}
        for resource in self.entered:
            mine = list(self.over.get(resource, []))
            room = self.limit - len(mine)
            if room > 0:
                mine += [v for _, _, v in self.pairs.get(resource, [])[:room]]
            found[resource] = mine
        return self.pairing.problems, found
