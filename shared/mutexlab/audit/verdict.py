"""``mutexlab verify``: decide a whole trace.

Every trace gets the capacity audit (capacity.py). A trace whose ``run`` header names an
algorithm with its own invariants also gets that family's checks: each family module offers
``check(events, run) -> list[Violation]``.
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..trace import TraceError, read_trace
from .capacity import check_capacities
from .model import Violation

# Algorithm → module with that family's invariants. Classic algorithms share one.
FAMILY_CHECKS: dict[str, str] = {}
# The six classic algorithms (resource ``cs``) share the progress checks of audit/classic.py.
FAMILY_CHECKS.update(dict.fromkeys(["lamport", "ricart-agrawala", "maekawa", "sanders", "suzuki-kasami", "raymond"],
                                   "mutexlab.audit.classic"))
FAMILY_CHECKS["bees"] = "mutexlab.audit.bees"
FAMILY_CHECKS["elves"] = "mutexlab.audit.elves"


@dataclass
class Verdict:
    algorithm: str | None
    violations: list[Violation]
    checks: list[str]
    counts: dict[str, int] = field(default_factory=dict)   # events by kind

    @property
    def safe(self) -> bool:
        return not self.violations

    def render(self) -> str:
        head = f"{self.algorithm or 'unknown algorithm'}: " + (
            "SAFE" if self.safe else f"VIOLATION ({len(self.violations)})")
        lines = [head, "checked: " + ", ".join(self.checks),
                 "events: " + ", ".join(f"{k} {v}" for k, v in sorted(self.counts.items()))]
        lines += ["  " + v.describe() for v in self.violations]
        return "\n".join(lines)


def verify_events(events: list[dict]) -> Verdict:
    run = next((e for e in events if e["event"] == "run"), None)
    if run is None:
        raise TraceError("the trace has no 'run' header: its algorithm and capacities are unknown")
    capacities = run.get("capacities")
    if not isinstance(capacities, dict):
        raise TraceError("the trace's run header lacks 'capacities'")
    algorithm = run.get("algorithm")
    body = [e for e in events if e["event"] != "run"]
    violations = check_capacities(body, capacities)
    checks = ["capacity by happened-before"]
    family = FAMILY_CHECKS.get(algorithm)
    if family is not None:
        checker = importlib.import_module(family)
        violations += checker.check(body, run)
        checks += list(getattr(checker, "CHECKS", [algorithm + " invariants"]))
    return Verdict(algorithm, violations, checks, dict(Counter(e["event"] for e in body)))


def verify_file(path: str | Path) -> Verdict:
    return verify_events(read_trace(path))
