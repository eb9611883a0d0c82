"""A problem's checks of a trace: its own audit (``Problem.audit``) and its holding rules
(``Problem.rules``, problem.py), one ``Invariants``.

A holding rule is applied to every process at each of its ``enter`` and ``exit`` events, with
what it holds just after: a process's holdings are its own, so its local order decides them
exactly (no clocks read). The first event breaking a rule is reported per (rule, process); a
rule is a safety property. ``check`` applies the same rules in every world (check/properties.py).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..findings import SAFETY, Invariants, Violation
from ..problem import HoldingRule, Problem

EVENTS = frozenset({"enter", "exit"})


class RulesStream:
    """The rules fed one event at a time: per process its holdings, never the trace."""

    def __init__(self, rules: tuple[HoldingRule, ...], run: dict[str, Any]) -> None:
        self.rules = rules
        processes = run.get("processes") or {}
        self.pids = {name: int(pid) for pid, name in processes.items() if str(pid).isdigit()}
        self.params = run.get("params") or {}
        for rule in rules:
            lacking = rule.needs(self.params) if rule.needs is not None else None
            if lacking is not None:
                from ..trace import event_error

                raise event_error(run, lacking)
        self.held: dict[str, Counter[str]] = {}
        self.found: dict[tuple[str, str], Violation] = {}

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        if kind not in EVENTS:
            return
        name, resource = event.get("pid"), event.get("resource")
        if not isinstance(name, str) or not isinstance(resource, str) or name not in self.pids:
            return
        held = self.held.setdefault(name, Counter())
        units = event.get("units", 1)
        units = units if isinstance(units, int) and not isinstance(units, bool) else 1
        held[resource] += units if kind == "enter" else -units
        if held[resource] <= 0:
            del held[resource]
        for rule in self.rules:
            if (rule.name, name) in self.found:
                continue
            wrong = rule.broken(self.pids[name], held, self.params)
            if wrong is not None:
                self.found[(rule.name, name)] = Violation(rule.name, wrong, [event])

    def finish(self) -> list[Violation]:
        return list(self.found.values())


def rule_checks(rules: tuple[HoldingRule, ...]) -> Invariants:
    def check(events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
        stream = RulesStream(rules, run)
        for event in events:
            stream.feed(event)
        return stream.finish()

    return Invariants(
        tuple(r.what for r in rules),
        check,
        events=EVENTS,
        stream=lambda run: RulesStream(rules, run),
        rules={r.name: SAFETY for r in rules},
    )


class _Both:
    """Two streams fed alike, their findings together."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def feed(self, event: dict[str, Any]) -> None:
        self.first.feed(event)
        self.second.feed(event)

    def finish(self) -> list[Violation]:
        return [*self.first.finish(), *self.second.finish()]


def joined(first: Invariants, second: Invariants) -> Invariants:
    """Both checks, as one ``Invariants``."""
    events = None if first.events is None or second.events is None else first.events | second.events
    a, b = first.stream, second.stream
    return Invariants(
        (*first.checks, *second.checks),
        lambda events_, run: [*first.check(events_, run), *second.check(events_, run)],
        events=events,
        stream=(lambda run: _Both(a(run), b(run))) if a is not None and b is not None else None,
        rules={**first.rules, **second.rules},
        workload=first.workload or second.workload,
    )


def problem_checks(problem: Problem) -> Invariants | None:
    """The problem's own audit and its rules, one ``Invariants`` (None: it declares neither)."""
    own = problem.audit() if problem.audit is not None else None
    if not problem.rules:
        return own
    rules = rule_checks(problem.rules)
    return rules if own is None else joined(own, rules)
