"""What a run stopped midway had already broken: a stop never hides a violation.

A simulated or replayed run stops at a handler that raised or an input refused (a finding,
``ProtocolError``) or at a handler that left a state of no name (a refusal, ``ConfigError``). The
events recorded up to the stop may already break safety; ``note_seen`` audits them and puts the
safety violations on the exception (``seen``, each ``Violation.describe()``), and the command
line reports them as a violation (exit 1), the stop said beside it (``cli.said_seen``)."""

from __future__ import annotations

from collections.abc import Callable

from ..trace import TraceError
from .verdict import Verdict, verify_events


def note_seen(exc: BaseException, events: list[dict] | Callable[[], Verdict] | None) -> BaseException:
    """``exc`` with ``seen``: the safety violations of ``events`` (the trace up to the stop, its
    header first) or of the verdict a streamed audit gives; kept when set already. Returns ``exc``."""
    if getattr(exc, "seen", None) is not None or events is None:
        return exc
    try:
        verdict = events() if callable(events) else verify_events(events)
    except TraceError:  # a prefix the audit cannot read shows nothing: the stop is said alone
        return exc
    exc.seen = [v.describe() for v in verdict.safety]  # type: ignore[attr-defined]
    return exc
