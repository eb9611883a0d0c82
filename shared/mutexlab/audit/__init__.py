"""Auditing traces: safety decided by happened-before, plus each scenario's own invariants."""

from .verdict import Verdict, Violation, numbered, verify_events, verify_file

__all__ = ["Verdict", "Violation", "numbered", "verify_events", "verify_file"]
