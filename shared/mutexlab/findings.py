"""What an audit reports: findings, each either a safety violation or a progress finding.

* **safety** — something happened that must never happen (two holders at once, a unit held
  beyond its capacity, a task done twice). What the trace shows already breaks the property; no
  continuation of the trace can repair it.
* **progress** — something that should have happened has not, by the end of the trace: a request
  unserved, a holder or a waiter left, a process not in its final state, a problem's
  work missing. A trace that was cut short and a run that stalled look exactly alike here, so a
  progress finding says "unfinished", never "unsafe".
* **undecided** — the audit could not decide (it gave up searching, or the trace lacks what a
  check needs); it is never reported as safe nor as a violation.

Every rule an audit reports has exactly one class (a test holds them to it): the capacity
audit's and the classic family's are listed below; a protocol's own audit declares its rules'
classes with its ``Invariants`` (``rules``). A rule classified nowhere counts as safety.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

SAFETY, PROGRESS, UNDECIDED = "safety", "progress", "undecided"

SAFETY_RULES = frozenset(
    {
        # capacity.py (happened-before)
        "capacity",
        "reentry",
        "exit-without-enter",
        "units-mismatch",
        "malformed",
        # integrity.py (every trace)
        "recv-without-send",
        "unknown-resource",
        # classic.py
        "enter-without-request",
    }
)
PROGRESS_RULES = frozenset(
    {
        # classic.py
        "request-unserved",
        "held-at-end",
        "not-idle-at-end",
        "workload-short",
        # director/runner.py: a replay whose schedule ended before its run did
        "steps-left",
    }
)
STEPS_LEFT = "steps-left"
UNDECIDED_RULES = frozenset({"audit-incomplete", "algorithm-unknown", "no-entries", "line-cut-off"})


CORE_RULES = {
    **dict.fromkeys(SAFETY_RULES, SAFETY),
    **dict.fromkeys(PROGRESS_RULES, PROGRESS),
    **dict.fromkeys(UNDECIDED_RULES, UNDECIDED),
}
_DECLARED: dict[str, str] = {}  # rule → kind, from the Invariants built so far (``declare``)


def declare(rules: Mapping[str, str]) -> None:
    """Record the classes of a protocol audit's own rules; a rule classified otherwise already
    (here, or by another audit) is a ValueError."""
    for rule, kind in rules.items():
        if kind not in (SAFETY, PROGRESS, UNDECIDED):
            raise ValueError(f"rule {rule!r}: {kind!r} is not safety, progress or undecided")
        known = CORE_RULES.get(rule) or _DECLARED.get(rule)
        if known is not None and known != kind:
            raise ValueError(f"rule {rule!r} is {known} already, not {kind}")
        _DECLARED[rule] = kind


def rules_of(kind: str) -> frozenset[str]:
    """Every rule known to be of ``kind``: the core ones and those declared so far."""
    return frozenset(r for r, k in {**CORE_RULES, **_DECLARED}.items() if k == kind)


def kind_of(rule: str) -> str:
    return CORE_RULES.get(rule) or _DECLARED.get(rule, SAFETY)


@dataclass
class Violation:
    rule: str  # short name: capacity, eggs-per-bee, contract-twice ...
    message: str  # one readable sentence naming processes and resources
    events: list[dict[str, Any]] = field(default_factory=list)  # the events involved

    @property
    def kind(self) -> str:
        """safety, progress or undecided (see the module docstring)."""
        return kind_of(self.rule)

    def describe(self) -> str:
        where = ", ".join(f"line {e['_line']} ({e['pid']} {e['event']})" for e in self.events if "_line" in e)
        return f"[{self.rule}] {self.message}" + (f" — {where}" if where else "")


class FamilyStream(Protocol):
    """A family's checks fed one event at a time: ``feed`` each event, then ``finish``."""

    def feed(self, event: dict[str, Any]) -> None: ...

    def finish(self) -> list[Violation]: ...


@dataclass(frozen=True)
class Invariants:
    """A family's own checks of a trace, beside the capacity audit: what ``AlgorithmSpec.audit``
    gives ``audit/verdict.py``.

    ``check(events, run header)`` → findings; ``checks`` names what they check (the verdict's
    "checked:" line); ``events``: the event kinds ``check`` reads, each by its own clock entry (a
    streamed audit keeps no others) — None: every kind, with whole vector clocks; ``stream(run
    header)``: the same checks fed event by event, when the family has them; ``rules``: the class
    of each rule they report that is not a core one (declared when the Invariants are built)."""

    checks: tuple[str, ...]
    check: Callable[[list[dict[str, Any]], dict[str, Any]], list[Violation]]
    events: frozenset[str] | None = None
    stream: Callable[[dict[str, Any]], FamilyStream] | None = None
    rules: Mapping[str, str] = field(default_factory=dict)
    # the run header's params key stating each process's workload, which ``check`` counts: a
    # header without it leaves the workload unchecked, and the verdict says so
    workload: str | None = None

    def __post_init__(self) -> None:
        declare(self.rules)


# What stalled processes lack, by name: waiter → {message kind: [peers]} (``Protocol.waiting_for``).
Stalled = Mapping[str, Mapping[str, Sequence[str]]]


class Stall(dict[str, dict[str, list[str]]]):
    """A ``Stalled`` mapping (a plain dict in JSON) that also carries what the driver knew of the
    resources at the stall: ``holding`` (resource → its holders' names, in entry order) and
    ``wants`` (waiter → the resources or kinds it waits to enter); ``explain_stall`` reads them."""

    def __init__(
        self,
        stalled: Stalled,
        holding: Mapping[str, Sequence[str]] | None = None,
        wants: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        super().__init__({w: {k: list(who) for k, who in lacks.items()} for w, lacks in stalled.items()})
        self.holding = {r: list(hs) for r, hs in (holding or {}).items() if hs}
        self.wants = {w: list(rs) for w, rs in (wants or {}).items() if rs}
