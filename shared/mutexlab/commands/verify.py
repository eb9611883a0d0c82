"""``mutexlab verify TRACE``: exit 0 safe, 1 violation, 2 unreadable trace."""

from __future__ import annotations

from ..audit import verify_file
from ..trace import TraceError
from .common import fail, print_json


def register(sub) -> None:
    p = sub.add_parser("verify", help="audit a trace by happened-before",
                       description="Decide a trace: capacities by happened-before plus the algorithm's invariants. "
                                   "Exit 0 when safe, 1 on a violation, 2 when the trace cannot be read.")
    p.add_argument("trace", help="a JSON Lines trace written by simulate, replay, run or the monitor")
    p.add_argument("--json", action="store_true", help="print the verdict as one JSON object")
    p.set_defaults(func=run)


def run(args) -> int:
    try:
        verdict = verify_file(args.trace)
    except TraceError as exc:
        return fail(str(exc))
    if args.json:
        print_json({"algorithm": verdict.algorithm, "safe": verdict.safe, "checks": verdict.checks,
                    "counts": verdict.counts,
                    "violations": [{"rule": v.rule, "message": v.message,
                                    "lines": [e.get("_line") for e in v.events]} for v in verdict.violations]})
    else:
        print(verdict.render())
    return 0 if verdict.safe else 1
