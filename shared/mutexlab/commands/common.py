"""Helpers the subcommands share: argument types, errors, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any


def count(minimum: int):
    """An argparse type: a whole number ≥ ``minimum``, with a clear error otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"whole number ≥ {minimum}"
    return parse


positive = count(1)
non_negative = count(0)


def add_scenario_command(sub, name: str, help: str, description: str, dest: str = "scenario"):
    """``mutexlab <name> SCENARIO``, a command with one subcommand per scenario (``bees``,
    ``elves``, ``mutex``): registers it and returns the group the scenarios are added to."""
    parser = sub.add_parser(name, help=help, description=description)
    return parser.add_subparsers(dest=dest, metavar="SCENARIO", required=True)


def real(name: str, unit: str, ok: Callable[[float], bool], rule: str) -> Callable[[str], float]:
    """An argparse type: a number (``{text} is not a number`` + ``unit``) that ``ok`` accepts, else
    the error ``must be <rule>, got <text>``."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number{unit}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
        return value

    parse.__name__ = name
    return parse


seconds = real("seconds", " of seconds", lambda v: v >= 0, "≥ 0")  # a duration in seconds, ≥ 0
probability = real("probability", "", lambda v: 0 <= v <= 1, "a probability between 0 and 1")
megabytes = real("megabytes", " of MB", lambda v: v > 0, "> 0")


def fail(message: str, code: int = 2) -> int:
    print(f"mutexlab: error: {message}", file=sys.stderr)
    return code


def format_number(value: float | None, digits: int = 2) -> str:
    """A measured figure for a summary line or table: ``digits`` decimals, "—" when there is none."""
    return "—" if value is None else f"{value:.{digits}f}"


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, sort_keys=False, default=str)
    sys.stdout.write("\n")


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
        "safe": verdict.safe,
        "checks": verdict.checks,
        "violations": groups["safety"],
        "unfinished": groups["progress"],
        "undecided": groups["undecided"],
    }


def exit_code(verdict, finished: bool, failed: bool = False) -> int:
    """The exit code of a simulation: 0 it finished and the audit says SAFE; 1 the audit found a
    safety violation, or a participant rejected an input (``failed``); 3 it did not finish
    (stalled, event limit) or the audit found it unfinished, without a safety violation."""
    if failed or (verdict is not None and not verdict.safe):
        return 1
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
        lines.append("TRUNCATED: the event limit was reached before the run ended")
    if s.get("stalled"):
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
        lines.append(
            f"audit: {audit['verdict']}"
            + (f" ({count})" if audit["verdict"] != "SAFE" else "")
            + " — "
            + ", ".join(audit["checks"])
        )
        lines += ["  " + v for v in audit["violations"]]
        for key, note in (("unfinished", UNFINISHED_NOTE), ("undecided", UNDECIDED_NOTE)):
            if audit[key]:
                lines.append(f"{key} ({len(audit[key])}): {note}")
                lines += ["  " + v for v in audit[key]]
    if s.get("trace"):
        lines.append(f"trace written to {s['trace']}")
    return lines
