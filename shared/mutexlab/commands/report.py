"""``mutexlab report TRACE [-o report.html]``: the self-contained HTML report of a trace.

Exit 0 when written (whatever the verdict: the verdict is in the page), 2 when the trace cannot
be read or the report cannot be written.
"""

from __future__ import annotations

from pathlib import Path

from ..report import write_report
from ..trace import TraceError, read_trace
from .common import fail
from .registry import Command


def arguments(p) -> None:
    p.add_argument("trace", help="a JSON Lines trace written by simulate, replay, run or the monitor")
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write the page (default: the trace's name with .html)",
    )


def run(args) -> int:
    output = Path(args.output) if args.output else Path(args.trace).with_suffix(".html")
    if output.resolve() == Path(args.trace).resolve():
        return fail(f"the report would overwrite its own trace {args.trace}; choose another name with -o")
    try:
        events = read_trace(args.trace)
    except TraceError as exc:
        return fail(str(exc))
    try:
        target = write_report(events, output)
    except TraceError as exc:  # an event the page cannot draw: "line N: ..." gets the file's name
        return fail(f"{args.trace}: {exc}")
    except OSError as exc:
        return fail(f"cannot write {output}: {exc.strerror or exc}")
    print(f"report written to {target}")
    return 0


COMMAND = Command(
    "report",
    "write a self-contained HTML report of a trace",
    """Space-time diagram, occupancy over time, the audit verdict and message statistics of a trace, as one
    HTML file that opens offline. Exit 2 when the trace cannot be read.""",
    run,
    arguments,
)
