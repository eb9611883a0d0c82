"""The mason bees' invariants on a trace: the bees' rules (``rules.py``, the one definition
``check`` applies too), each bee's events folded in its own (vector-clock) order, the totals kept
as the trace goes (capacities are capacity.py's job)."""

from __future__ import annotations

from .rules import CHECKS, RULES

INVARIANTS = RULES.invariants()
EVENTS = INVARIANTS.events  # the event kinds the audit reads: a streamed audit keeps no others

__all__ = ["CHECKS", "EVENTS", "INVARIANTS"]
