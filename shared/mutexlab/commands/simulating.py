"""What the commands that simulate share (``simulate bees|elves|mutex``, ``compare``): the
fault-injection flags, and a run's outcome — the audit's summary, the exit code, the closing
lines of the summary."""

from __future__ import annotations

from typing import Any

from ..waiting import WaitsRaised
from .common import probability, seconds, seen, stopped_json


def add_fault_arguments(parser) -> None:
    """Simulator fault injection (see ``SimConfig``): the same flags on every ``simulate``."""
    group = parser.add_argument_group("fault injection")
    group.add_argument(
        "--duplicate",
        type=probability,
        default=0.0,
        metavar="P",
        help="probability that a message is delivered twice (the copy is dropped by its id)",
    )
    group.add_argument(
        "--spike",
        type=probability,
        default=0.0,
        metavar="P",
        help="probability that a message is delayed by --spike-delay more (FIFO kept)",
    )
    group.add_argument(
        "--spike-delay",
        type=seconds,
        default=50.0,
        metavar="D",
        help="length of a delay spike, in mean message delays (default 50)",
    )
    group.add_argument(
        "--reorder",
        action="store_true",
        help="let messages overtake each other on a link: breaks the algorithms' FIFO "
        "assumption on purpose (the audit may then find violations)",
    )


def fault_config(args) -> dict:
    """The ``SimConfig`` keywords for the fault flags (each flag's name is its keyword)."""
    return {key: getattr(args, key) for key in ("duplicate", "spike", "spike_delay", "reorder")}


def fault_line(args, duplicates_dropped: int) -> str | None:
    """One summary line about injected faults, or None when none were asked for."""
    if not (args.duplicate or args.spike or args.reorder):
        return None
    parts = []
    if args.duplicate:
        parts.append(f"duplicates p={args.duplicate:g} ({duplicates_dropped} dropped by message id)")
    if args.spike:
        parts.append(f"delay spikes p={args.spike:g} of {args.spike_delay:g}")
    if args.reorder:
        parts.append("links NOT FIFO (reordering)")
    return "faults injected: " + ", ".join(parts)


def audit_summary(verdict) -> dict | None:
    """The verdict as the ``audit`` object of a simulate command's JSON summary: ``verdict`` is
    SAFE, VIOLATION or INCOMPLETE; ``safe`` means no safety violation; ``violations`` are the safety
    violations, ``unfinished`` the progress findings, ``undecided`` what the audit could not decide."""
    if verdict is None:
        return None
    groups = {
        kind: [v.describe() for v in verdict.violations if v.kind == kind]
        for kind in ("safety", "progress", "undecided")
    }
    return {
        "verdict": verdict.status,
        "safe": verdict.ok,  # the verdict is SAFE: never true for an INCOMPLETE one
        "checks": verdict.checks,
        "violations": groups["safety"],
        "unfinished": groups["progress"],
        "undecided": groups["undecided"],
    }


def exit_code(verdict, finished: bool, failed: bool = False, unexplained: bool = False) -> int:
    """The exit code of a simulation: 0 it finished and the audit says SAFE; 1 the audit found a
    safety violation, or a participant rejected an input (``failed``); 2 it stalled and a process's
    ``waiting_for()`` raised (``unexplained``: not judged, as ``check`` and ``run`` say it), without
    a violation; 3 it did not finish (stalled, event limit) or the audit found it unfinished,
    without a safety violation."""
    if failed or (verdict is not None and not verdict.safe):
        return 1
    if unexplained:
        return 2
    if not finished or (verdict is not None and not verdict.ok):
        return 3
    return 0


def outcome_lines(s: dict) -> list[str]:
    """The closing lines every simulate summary shares, from its JSON summary ``s``: faults,
    truncation, the stall explanation, the audit verdict and where the trace went."""
    from ..audit.stall import explain_stall

    lines = []
    if s.get("faults"):
        lines.append(s["faults"])
    if s.get("truncated"):
        lines.append(
            "incomplete: " + (s.get("incomplete") or "the event limit was reached before the run ended")
        )
    unexplained = s.get("unexplained")
    if s.get("stalled"):  # a process whose waiting_for() raised: its wait unknown (UNKNOWN)
        lines.append("STALLED — " + explain_stall(s["stalled"], s.get("states")))
    audit = s["audit"]
    if audit is None:
        lines.append("audit: skipped (--no-audit)")
    else:
        from ..audit.verdict import UNDECIDED_NOTE, UNFINISHED_NOTE

        count = (
            len(audit["violations"])
            if audit["verdict"] == "VIOLATION"
            else len(audit["unfinished"]) + len(audit["undecided"])
        )
        # A run a limit cut short is audited as far as it went: its SAFE vouches for no more.
        lines.append(
            ("audit of the run so far: " if s.get("truncated") else "audit: ")
            + audit["verdict"]
            + (f" ({count})" if audit["verdict"] != "SAFE" else "")
            + " — "
            + ", ".join(audit["checks"])
        )
        lines += ["  " + v for v in audit["violations"]]
        for key, note in (("unfinished", UNFINISHED_NOTE), ("undecided", UNDECIDED_NOTE)):
            if audit[key]:
                lines.append(f"{key} ({len(audit[key])}): {note}")
                lines += ["  " + v for v in audit[key]]
    if unexplained:
        lines += unexplained_lines(unexplained, audit is not None and audit["violations"])
    if s.get("trace"):
        lines.append(f"trace written to {s['trace']}")
    elif audit is not None and any(audit[k] for k in ("violations", "unfinished", "undecided")):
        lines.append(NO_TRACE_NOTE)
    return lines


# Findings cite events by their line in the trace; without --trace no file holds those lines.
NO_TRACE_NOTE = (
    '("line N": the N-th event of the run\'s trace, which was not written; --trace FILE writes it)'
)


def unexplained(exc: WaitsRaised, events: list[dict] | None, trace: str | None) -> dict[str, Any]:
    """The ``unexplained`` object of a simulate summary: the run ended stalled and ``exc`` says whose
    ``waiting_for()`` raised. Which process, in which state, after which of its events (from the
    held ``events``, else from the written ``trace`` file, else unknown), and how to reach it again."""
    last = None
    if events is not None:
        last = next((e for e in reversed(events) if _its_input(e, exc.process)), None)
    elif trace:
        last = _last_written(trace, exc.process)
    return {
        "process": exc.process,
        "state": exc.state,
        "unknown": list(exc.unknown),
        "error": str(exc),
        "last_event": describe_event(last) if last is not None else None,
        "reached": exc.scenario,
    }


def _last_written(path: str, process: str) -> dict | None:
    """The last event of ``process`` in the trace file ``path``, its line as ``_line``; None if none
    (or the file cannot be read again: the summary says so, it changes no verdict)."""
    import json

    last = None
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if f'"{process}"' in line:
                    event = json.loads(line)
                    if _its_input(event, process):
                        last = dict(event, _line=number)
    except (OSError, ValueError):
        return None
    return last


def _its_input(e: dict, process: str) -> bool:
    """An event of ``process`` that says what it did: any but a ``state`` (which follows it)."""
    return e.get("pid") == process and e.get("event") != "state"


def describe_event(e: dict) -> str:
    """One trace event in words: ``line 12: recv GRANT from node-1 (time 3.210)``."""
    kind = str(e.get("event"))
    what = {
        "send": lambda: f"send {e.get('type')} to {e.get('to')}",
        "recv": lambda: f"recv {e.get('type')} from {e.get('from')}",
        "state": lambda: f"state {e.get('state')}",
        "enter": lambda: f"enter {e.get('resource')}",
        "exit": lambda: f"exit {e.get('resource')}",
    }.get(kind, lambda: kind)()
    where = f"line {e['_line']}: " if "_line" in e else ""
    return f"{where}{what} (time {float(e.get('t', 0.0)):.3f})"


def unexplained_lines(u: dict, violated: bool) -> list[str]:
    """The closing lines of a run whose stall a ``waiting_for()`` that raised cannot explain: not
    judged (exit 2) unless the audit found a violation (exit 1), as ``run``'s monitor says it."""
    head = "" if violated else "NOT JUDGED (exit 2, as check and run say it): "
    last = (
        f"its last event {u['last_event']}"
        if u["last_event"]
        else "its last event unknown (--trace FILE shows it)"
    )
    return [
        f"{head}the stall cannot be explained: {u['error']}",
        f"  {u['process']} was {u['state']} when asked, {last}; {u['reached'] or 'the same seed'} reaches it again",
    ]


def stopped_row(algorithm: str, exc: Exception, events: list[dict] | None) -> tuple[dict, int]:
    """``compare``'s row of a run ``exc`` stopped midway (a handler raised, an input refused, a
    state of no name refused), and its exit code: UNSAFE (1) with the violations ``events`` (the
    trace up to the stop) show, the stop said beside them; else the stop alone (2 for a refusal,
    1 for a finding): a stop never hides a violation (``audit.seen``)."""
    from ..audit.seen import note_seen  # noqa: PLC0415 - the audit only for a run stopped midway
    from ..protocol import HandlerError  # noqa: PLC0415
    from ..setups import ConfigError, NoName  # noqa: PLC0415

    note_seen(exc, events)
    said = exc.finding() if isinstance(exc, HandlerError) else str(exc)
    found = seen(exc)
    if isinstance(exc, ConfigError) and not isinstance(exc, NoName):  # bad arguments: no run to stop
        if found:
            return {"algorithm": algorithm, "error": f"UNSAFE, then stopped: {said}", "violations": found}, 1
        return {"algorithm": algorithm, "error": said}, 2
    stop, alone = (
        ("a handler raised", "handler-raised")
        if isinstance(exc, HandlerError)
        else ("a handler left a state of no name: refused", "refused")
        if isinstance(exc, NoName)
        else ("an input was refused", "rejected-input")
    )
    row = {"algorithm": algorithm, **stopped_json(exc, stop, alone)}  # the stop's shape, its words in "error"
    if found:
        return row | {"error": f"UNSAFE, then stopped: {said}", "violations": found}, 1
    return row | {"error": said}, 2 if isinstance(exc, NoName) else 1
