"""``mutexlab report TRACE [-o report.html]``: the self-contained HTML report of a trace.

Exit 0 when written (whatever the verdict: the verdict is in the page), 2 when the trace cannot
be read or the report cannot be written. The trace is read once, as a stream; a trace longer than
``--window`` events is drawn in part, with the verdict of the whole (``report/window.py``). A
foreign log is read as ``verify`` reads it (the same flags) and placed by causality
(``report/layout.py``).
"""

from __future__ import annotations

from pathlib import Path

from ..report import WINDOW_EVENTS, read_window, write_report
from ..setups import ConfigError
from ..trace import TraceError
from .common import fail, positive
from .flags import add_algorithm_argument, disagreement, named_algorithm
from .registry import Command
from .verify import add_log_arguments, log_options


def arguments(p) -> None:
    p.add_argument(
        "trace",
        help="a JSON Lines trace written by simulate, replay, run or the monitor, or another system's "
        "log (ShiViz / GoVector, clock-free JSON Lines: placed by causality)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="where to write the page (default: the trace's name with .html)",
    )
    p.add_argument(
        "--window",
        type=positive,
        default=WINDOW_EVENTS,
        metavar="N",
        help=f"draw at most the first N events of a longer trace (default {WINDOW_EVENTS:,}); "
        "the verdict always covers the whole trace",
    )
    add_log_arguments(p)
    add_algorithm_argument(p, "the trace")


def run(args) -> int:
    output = Path(args.output) if args.output else Path(args.trace).with_suffix(".html")
    if output.resolve() == Path(args.trace).resolve():
        return fail(f"the report would overwrite its own trace {args.trace}; choose another name with -o")
    try:
        found = named_algorithm(args)
        shown = read_window(args.trace, args.window, **log_options(args))
    except (ConfigError, TraceError) as exc:
        return fail(str(exc))
    wrong = disagreement(found, shown.verdict.algorithm, args.algorithm, args.trace)
    if wrong:
        return fail(wrong)
    try:
        target = write_report(shown.events, output, window=shown)
    except TraceError as exc:  # an event the page cannot draw: "line N: ..." gets the file's name
        return fail(f"{args.trace}: {exc}")
    except OSError as exc:
        return fail(f"cannot write {output}: {exc.strerror or exc}")
    print(f"report written to {target}")
    if not shown.whole:
        print(f"(it draws {shown.shown:,} of the trace's {shown.total:,} events: --window)")
    return 0


COMMAND = Command(
    "report",
    "write a self-contained HTML report of a trace",
    """Space-time diagram, occupancy over time, the audit verdict and message statistics of a trace, as one
    HTML file that opens offline; another system's log (ShiViz / GoVector, clock-free JSON Lines) is placed
    by causality. Exit 2 when the trace cannot be read.""",
    run,
    arguments,
)
