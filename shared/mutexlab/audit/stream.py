"""The audit fed one event at a time: what ``mutexlab verify`` and the simulators use, so a trace
is never held whole (docs/architecture.md#scaling).

``StreamAudit.feed(event)`` takes the events in trace order (the run header first) and keeps only
what the checks need: every ``enter`` with its vector clock (the capacity audit reads it), the
other events the family's checks read (its ``Invariants.events``; all of them, with whole
vector clocks, when it declares none), each with its own clock entry only. ``send`` and ``recv``
events are counted, paired (``integrity.py``: only the unpaired are held) and dropped unless the
family reads them. ``verdict()`` then decides exactly as ``verify_events`` does on the whole trace.

Events may carry full vector clocks (a trace file, a run writing its trace) or local-event
clocks (``clock.LocalEventClocks``: a run audited without writing its trace): the audit's
happened-before tests are the same on both (see there).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..clock import ClockView, is_token
from ..setups import capacity_of
from ..trace import TraceError
from .exclusive import ExclusiveStream, InexactStream
from .integrity import KINDS as _INTEGRITY_KINDS
from .integrity import Integrity
from .verdict import Verdict, checks_of, decide

_CAPACITY_KINDS = frozenset({"enter", "exit"})
_HOLDING_FIELDS = ("event", "pid", "resource", "units", "_line")


class StreamAudit:
    """Feed events (``feed``), then ask for the ``verdict``. Memory: the kept events only.

    ``bounded`` (events with full vector clocks, in a causal order: a trace file): the capacity-1
    resources are checked as the events come (``exclusive.ExclusiveStream``) and their intervals
    forgotten once settled, when the family does not read enters and exits from the kept events
    (no family, or one that checks event by event). ``feed`` then raises ``InexactStream`` for a
    trace it cannot decide that way; decide it with an audit that is not bounded.
    """

    def __init__(self, index: dict[str, int] | None = None, bounded: bool = False) -> None:
        self.run: dict | None = None
        self.counts: Counter[str] = Counter()
        self.kept: list[dict] = []
        self._line = 0
        self._kinds: frozenset[str] | None = None  # None: keep every kind
        self._whole = True
        self.index = index  # name → position in local-event clocks, when the events carry them
        self._family: Any = None  # the family's ``Invariants.stream``, when it checks event by event
        self.bounded = bounded
        self.exclusive: ExclusiveStream | None = None  # the capacity-1 check, when bounded
        self.integrity: Integrity | None = None  # fed every send, recv and enter

    def feed(self, event: dict) -> None:
        self._line += 1
        kind = event["event"]
        if kind == "run":
            if self.run is None:
                self.run = event if "_line" in event else dict(event, _line=self._line)
                self.integrity = Integrity(self.run)
                self._configure(event.get("algorithm"), event.get("problem"))
            return
        self.counts[kind] += 1
        if kind in _INTEGRITY_KINDS and self.integrity is not None:
            self.integrity.feed(event, self._line)
        exclusive = self.exclusive
        if exclusive is not None:
            vc = event.get("vc")
            if not isinstance(vc, dict):
                raise InexactStream("events without full vector clocks")
            exclusive.saw(event["pid"], vc)
        kinds = self._kinds
        if kinds is not None and kind not in kinds:
            return
        if self._family is not None:
            if "_line" not in event:
                event = dict(event, _line=self._line)
            self._family.feed(event)
            if kind not in _CAPACITY_KINDS:
                return
        if exclusive is not None and kind in _CAPACITY_KINDS:
            resource = event.get("resource")
            assert self.run is not None
            if isinstance(resource, str) and capacity_of(self.run["capacities"], resource) == 1:
                held = {k: event[k] for k in _HOLDING_FIELDS if k in event}
                held["vc"] = event["vc"]
                held.setdefault("_line", self._line)
                exclusive.feed(held)
                return
        vc = event.get("vc")
        if is_token(vc):  # a local-event clock token: (serial, counts, sender index)
            assert self.index is not None
            if self._whole or kind == "enter":
                vc = ClockView(self.index, vc[1])
            else:
                vc = {event["pid"]: int(vc[1][vc[2]])}
        elif not (self._whole or kind == "enter") and isinstance(vc, dict):
            pid = event["pid"]
            vc = {pid: vc[pid]} if pid in vc else {}
        if kind in _CAPACITY_KINDS and kinds is not None:  # all that capacity and the families read
            kept = {k: event[k] for k in _HOLDING_FIELDS if k in event}
            kept["vc"] = vc
        else:
            kept = dict(event, vc=vc)
        if "_line" not in kept:
            kept["_line"] = self._line
        self.kept.append(kept)

    def reads(self, kind: str) -> bool:
        """Whether the checks read events of ``kind`` (before the run header: every kind)."""
        return self._kinds is None or kind in self._kinds

    def skip(self, kind: str, count: int = 1) -> None:
        """``count`` events of a kind the checks do not read, counted and numbered without being
        built (``trace.Tally``: the simulator's sends and receives)."""
        if self._kinds is None or kind in self._kinds:
            raise ValueError(f"the audit reads {kind} events: they cannot be skipped")
        self._line += count
        self.counts[kind] += count

    def feed_all(self, events: Iterable[dict]) -> StreamAudit:
        for event in events:
            self.feed(event)
        return self

    def _configure(self, algorithm: Any, problem: Any = None) -> None:
        named = algorithm is None or isinstance(algorithm, str)  # a header's problem counts beside these
        checker = checks_of(algorithm if isinstance(algorithm, str) else None, problem if named else None)
        wanted = checker.events
        self._kinds = None if wanted is None else _CAPACITY_KINDS | wanted
        self._whole = wanted is None
        if checker.stream is not None and self.run is not None:
            self._family = checker.stream(self.run)
            self._bound()

    def _bound(self) -> None:
        """Check the capacity-1 resources as the events come, when bounded and the header allows."""
        run = self.run
        if self.bounded and run is not None and isinstance(run.get("capacities"), dict):
            names = run.get("processes")
            self.exclusive = ExclusiveStream(names.values() if isinstance(names, dict) else ())

    def verdict(self) -> Verdict:
        if self.run is None:
            raise TraceError("the trace has no 'run' header: its algorithm and capacities are unknown")
        family = self._family.finish() if self._family is not None else None
        streamed = self.exclusive.findings() if self.exclusive is not None else None
        integrity = self.integrity.findings() if self.integrity is not None else None
        return decide(self.run, self.kept, dict(self.counts), family, streamed, integrity)
