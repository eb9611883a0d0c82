"""The ``mutex`` problem: N nodes share one critical section ``cs`` of capacity 1.

Each node asks ``requests`` times; a solution lets one node at a time in, and serves every
request. The audit (mutex_audit.py): every request served, no entry without a request, every
node ends idle (``RELEASED``); the capacity of ``cs`` by happened-before is every trace's.
How the commands present it: mutex_flags.py.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..findings import Invariants
from ..problem import Problem
from .mutex_flags import FLAGS

CS = "cs"
# The options every solution takes (each solution adds its own).
OPTIONS = {
    "requests": "critical sections per node",
    "initial_clocks": "Lamport clock per pid (default 0)",
}


def audit() -> Invariants:
    """The progress checks of a trace (mutex_audit.py), imported on the verdict's first call."""
    from .mutex_audit import INVARIANTS

    return INVARIANTS


def resources(_processes: int, _options: Mapping[str, Any]) -> dict[str, int]:
    return {CS: 1}


PROBLEM = Problem(
    "mutex",
    "mutual exclusion: one critical section cs, one node at a time, every request served",
    FLAGS,
    OPTIONS,
    resources,
    audit,
    endless="requests",
)
