"""The classic algorithms' progress checks: the ``mutex`` problem's (problems/mutex_audit.py)."""

from ..problems.mutex_audit import CHECKS, EVENTS, INVARIANTS, Stream, check

__all__ = ["CHECKS", "EVENTS", "INVARIANTS", "Stream", "check"]
