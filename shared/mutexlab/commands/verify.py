"""``mutexlab verify TRACE``: exit 0 SAFE, 1 VIOLATION, 2 unreadable trace, 3 INCOMPLETE (see
``audit.verdict``)."""

from __future__ import annotations

from ..audit import verify_file
from ..trace import TraceError
from .common import fail, print_json


def register(sub) -> None:
    p = sub.add_parser(
        "verify",
        help="audit a trace by happened-before",
        description="Decide a trace: capacities by happened-before plus the algorithm's invariants. "
        "Exit 0 SAFE (safe and finished), 1 VIOLATION (a safety property is broken in "
        "what the trace shows), 2 when the trace cannot be read, 3 INCOMPLETE (no safety "
        "violation, but the trace ends unfinished: cut short or stalled, a trace alone "
        "cannot tell).",
    )
    p.add_argument("trace", help="a JSON Lines trace written by simulate, replay, run or the monitor")
    p.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    p.set_defaults(func=run)


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
