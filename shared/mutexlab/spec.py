"""What an algorithm is, declared once: each protocol module ends with ``SPEC = AlgorithmSpec(...)``.

``protocols/registry.py`` collects the specs; everything that looks an algorithm up (simulate,
run, services, membership, monitor, verify, report, compare, bench) reads it from there.
Core layer: plain data, no imports from higher layers (a family's trace checks are reached
through the ``audit`` hook, which imports them when ``audit/verdict.py`` first calls it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from .findings import Invariants
from .messages import Codec
from .reduction import Reductions
from .setup import Setup

Family = Literal["classic", "bees", "elves"]


@dataclass(frozen=True)
class Figure:
    """A cost the literature quotes, as it writes it, and its value for N processes (and the run's params)."""

    text: str  # as the literature writes it
    value: Callable[[int, dict], tuple[float, float] | None]  # (low, high) for N and the run's params

    def range(self, n: int, params: dict | None = None) -> tuple[float, float] | None:
        return self.value(n, params or {})

    def render(self, n: int, params: dict | None = None) -> str:
        span = self.range(n, params)
        if span is None:
            return self.text
        low, high = span
        number = f"{low:.3g}" if math.isclose(low, high) else f"{low:.3g}–{high:.3g}"
        return f"{self.text} = {number}"


@dataclass(frozen=True)
class AlgorithmSpec:
    """One algorithm. Invariants: ``make_setup`` builds processes named ``<role>-<pid>`` for the
    scalable role (pids 1..P) plus one process per fixed role; its Setup's codec is ``codec``;
    it refuses any option not in ``options``."""

    name: str
    family: Family
    summary: str
    make_setup: Callable[[int, dict, int], Setup]
    codec: Codec
    audit: Callable[[], Invariants] | None = None  # the family's own trace checks (None: capacity only)
    role: str = "node"  # the scalable role: pids 1..P
    fixed_roles: tuple[str, ...] = ()  # one member each, outside P (the elves' mayor)
    options: dict[str, str] = field(default_factory=dict)  # --option key → one-line help
    literature: dict[str, Figure] = field(default_factory=dict)  # "messages", "sync" → figure
    # what ``check`` may reduce, for exact classes only (reduction.py); a function returning it
    # when the declaration's module imports the protocol's
    reductions: Reductions | Callable[[], Reductions] | None = None

    def declared_reductions(self) -> Reductions | None:
        found = self.reductions
        return found() if callable(found) else found

    @property
    def roles(self) -> tuple[str, ...]:
        return (self.role, *self.fixed_roles)
