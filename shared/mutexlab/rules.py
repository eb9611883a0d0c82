"""A problem's rules, defined once: what every solution must keep, judged alike by ``check`` in
every world it reaches and by the audit on every trace (``audit/verdict.py``: simulate, replay,
run, verify).

The rules see what a trace records of a process, in that process's own order: its ``enter`` and
``exit`` of a resource, its notes (a problem's scenario events) and its ``state``. They
fold these *observed events* into one small hashable *observation* per process (``observe``) and
judge three things:

* an event — ``observe`` returns the rules the event breaks (``Broken``);
* tallies summed over every process at any moment — ``tallies`` of an observation, each total
  held to ``limit`` (units per resource at most a capacity): a total only grows, so a sum over the
  processes' observations in one world and a running sum over a trace find the same excess;
* the end of a whole run — ``end``, given every process's observation and last state.

The audit folds each process's events in its own order and keeps running totals
(``Rules.invariants``). ``check`` folds each step's observed events into the stepping process's
observation, kept with its state (``sim/world.py``: a world thus carries every process's
observation), and judges every world and, in a final one, the end (``Rules.world_invariant``).
Core layer: plain data and two adapters.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from .findings import Invariants, Violation
from .spec import WorldInvariant

SEEN = "_mutexlab_seen"  # the attribute ``check`` keeps a process's (observation, first break) in

Observation = Hashable


@dataclass(frozen=True)
class Broken:
    """A rule broken: its name, what happened, and the processes concerned (by name)."""

    rule: str
    message: str
    who: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rules:
    """One problem's rules (see the module docstring). ``params(params, names)`` reads a run's
    parameters (a setup's ``params`` or a trace header's) into what the others take, raising
    ValueError naming a malformed one; ``observed``: the event kinds ``observe`` reads."""

    checks: tuple[str, ...]  # what the rules check, one phrase each ("checked:")
    kinds: Mapping[str, str]  # rule → findings.SAFETY | PROGRESS
    observed: frozenset[str]
    params: Callable[[Mapping[str, Any], list[str]], Any]
    start: Callable[[Any], Observation]
    observe: Callable[[Any, str, Observation, str, Mapping[str, Any]], tuple[Observation, tuple[Broken, ...]]]
    tallies: Callable[[Observation], Iterable[tuple[Hashable, int]]]
    limit: Callable[[Any, Hashable, int], Broken | None]  # (params, key, total): over the limit?
    end: Callable[[Any, Mapping[str, tuple[Observation, str | None]]], list[Broken]]

    # -- the audit: a trace ----------------------------------------------------------------------
    def judge_trace(self, events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
        """Every rule on a whole trace: each process's events in its own (vector-clock) order."""
        names = [str(n) for n in (run.get("processes") or {}).values()]
        try:
            params = self.params(run.get("params") or {}, names)
        except ValueError as exc:
            from .trace import event_error

            raise event_error(run, str(exc)) from None
        per: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
        for event in events:
            per.setdefault(event["pid"], []).append(event)
        found: list[Violation] = []
        totals: dict[Hashable, int] = {}
        over: set[Hashable] = set()
        ends: dict[str, tuple[Observation, str | None]] = {}
        last: dict[str, dict[str, Any]] = {}
        for name, own in per.items():
            own.sort(key=lambda e: int(e["vc"].get(name, 0)))  # noqa: B023 - used at once
            seen = self.start(params)
            state = None
            for event in own:
                kind = event["event"]
                if kind == "state":
                    state, last[name] = event["state"], event
                    continue
                before = dict(self.tallies(seen))
                seen, broken = self.observe(params, name, seen, kind, event)
                found += [Violation(b.rule, b.message, [event]) for b in broken]
                for key, n in self.tallies(seen):
                    if n == before.get(key, 0):
                        continue
                    totals[key] = totals.get(key, 0) + n - before.get(key, 0)
                    excess = None if key in over else self.limit(params, key, totals[key])
                    if excess is not None:
                        over.add(key)
                        found.append(Violation(excess.rule, excess.message, [event]))
            ends[name] = (seen, state)
        for b in self.end(params, ends):
            found.append(Violation(b.rule, b.message, [last[n] for n in b.who if n in last]))
        return found

    def invariants(self, beside: Invariants | None = None) -> Invariants:
        """The audit's form of the rules (a spec's ``audit`` hook returns it), with ``beside``: the
        checks of a trace that only the audit makes (they run first: they may refuse the trace)."""
        if beside is None:
            return Invariants(
                self.checks, self.judge_trace, events=self.observed | {"state"}, rules=self.kinds
            )
        other = beside

        def both(events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
            first = other.check(events, run)
            return [*self.judge_trace(events, run), *first]

        wanted = None if other.events is None else other.events | self.observed | {"state"}
        return Invariants(
            (*self.checks, *other.checks), both, events=wanted, rules={**self.kinds, **other.rules}
        )

    # -- check: a world --------------------------------------------------------------------------
    def step(self, proto: Any, params: Any, name: str, was: Any, events: list[tuple[str, dict]]) -> None:
        """Fold one step's observed events into ``proto`` (the stepped process's new state),
        starting from ``was``'s observation (its state before the step)."""
        seen, first = getattr(was, SEEN, None) or (self.start(params), None)
        for kind, fields in events:
            if kind in self.observed:
                seen, broken = self.observe(params, name, seen, kind, fields)
                first = first or (broken[0] if broken else None)
        setattr(proto, SEEN, (seen, first))

    def judge_world(self, model: Any, world: tuple[Any, ...]) -> tuple[str, list[str]] | None:
        """Every rule on one world of ``check`` (None: all kept): a rule broken by a step that led
        here, a total over its limit, and in a final world the end."""
        params = model.rule_params
        ends: dict[str, tuple[Observation, str | None]] = {}
        totals: dict[Hashable, int] = {}
        by: dict[Hashable, list[str]] = {}  # who adds to each total
        for i in range(model.n):
            proto = model.objects[world[i]]
            name = model.names[model.pids[i]]
            seen, first = getattr(proto, SEEN, None) or (self.start(params), None)
            if first is not None:
                return f"[{first.rule}] {first.message}", [name]
            for key, n in self.tallies(seen):
                totals[key] = totals.get(key, 0) + n
                by.setdefault(key, []).append(name)
            ends[name] = (seen, proto.state)
        for key, total in totals.items():
            excess = self.limit(params, key, total)
            if excess is not None:
                return f"[{excess.rule}] {excess.message}", list(excess.who or by[key])
        if model.all_finished(world):
            for b in self.end(params, ends):
                return f"[{b.rule}] {b.message}", list(b.who)
        return None

    def world_invariant(self) -> WorldInvariant:
        """``check``'s form of the rules (a spec's ``world_invariant``): it reads a process's
        observation only, so partial-order reduction postpones the steps that leave it alone."""
        return WorldInvariant(
            self.judge_world, ", ".join(self.checks), lambda proto: getattr(proto, SEEN, None), rules=self
        )
