"""``mutexlab verify TRACE``: exit 0 SAFE, 1 VIOLATION, 2 unreadable trace, 3 INCOMPLETE (see
``audit.verdict``)."""

from __future__ import annotations

from ..audit import verify_file
from ..trace import TraceError
from .common import add_json_argument, fail, print_json
from .registry import Command


def arguments(p) -> None:
    p.add_argument("trace", help="a JSON Lines trace written by simulate, replay, run or the monitor")
    add_json_argument(p, "verdict")


def run(args) -> int:
    try:
        verdict = verify_file(args.trace)
    except TraceError as exc:
        return fail(str(exc))
    if args.json:
        print_json(verdict.as_dict())
    else:
        print(verdict.render())
    return verdict.exit_code


COMMAND = Command(
    "verify",
    "audit a trace by happened-before",
    """Decide a trace: capacities by happened-before plus the algorithm's invariants. Exit 0 SAFE (safe and
    finished), 1 VIOLATION (a safety property is broken in what the trace shows), 2 when the trace cannot
    be read, 3 INCOMPLETE (no safety violation, but the trace ends unfinished: cut short or stalled, a
    trace alone cannot tell).""",
    run,
    arguments,
)
