"""What an audit reports: findings, each either a safety violation or a progress finding.

* **safety** — something happened that must never happen (two holders at once, an egg laid off
  its reed, a contract done twice). What the trace shows already breaks the property; no
  continuation of the trace can repair it.
* **progress** — something that should have happened has not, by the end of the trace: a request
  unserved, a holder or a waiter left, a process not in its final state, eggs or contracts
  missing. A trace that was cut short and a run that stalled look exactly alike here, so a
  progress finding says "unfinished", never "unsafe".
* **undecided** — the audit could not decide (it gave up searching, or the trace lacks what a
  check needs); it is never reported as safe nor as a violation.

Every rule the audit modules report is listed below in exactly one class (a test holds them
to it); a rule listed nowhere counts as safety.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
        # bees.py
        "flower-without-reed",
        "eggs-per-bee",
        "eggs-per-reed",
        "egg-off-reed",
        "egg-without-nectar",
        "too-many-eggs",
        # elves.py
        "two-contracts",
        "pins-without-contract",
        "pins-units",
        "poison-without-pins",
        "poison-units",
        "contract-abandoned",
        "done-by-non-holder",
        "done-without-tools",
        "contract-twice",
        "contract-done-twice",
        "contract-unknown",
        "stop-before-done",
        "round-mixed",
        "contract-position",
    }
)
PROGRESS_RULES = frozenset(
    {
        # classic.py
        "request-unserved",
        "held-at-end",
        "not-idle-at-end",
        "workload-short",
        # bees.py
        "left-waiting",
        "unfinished",
        "too-few-eggs",
        # elves.py
        "contract-not-done",
        "rounds-unfinished",
        "not-finished",
    }
)
UNDECIDED_RULES = frozenset({"audit-incomplete", "algorithm-unknown"})


def kind_of(rule: str) -> str:
    if rule in PROGRESS_RULES:
        return PROGRESS
    if rule in UNDECIDED_RULES:
        return UNDECIDED
    return SAFETY


@dataclass
class Violation:
    rule: str  # short name: capacity, eggs-per-bee, contract-twice ...
    message: str  # one readable sentence naming processes and resources
    events: list[dict] = field(default_factory=list)  # the events involved

    @property
    def kind(self) -> str:
        """safety, progress or undecided (see the module docstring)."""
        return kind_of(self.rule)

    def describe(self) -> str:
        where = ", ".join(f"line {e['_line']} ({e['pid']} {e['event']})" for e in self.events if "_line" in e)
        return f"[{self.rule}] {self.message}" + (f" — {where}" if where else "")
