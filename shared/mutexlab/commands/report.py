"""``mutexlab report TRACE [-o report.html]``: the self-contained HTML report of a trace.

Exit 0 when written (whatever the verdict: the verdict is in the page), 2 when the trace cannot
be read or the report cannot be written. The trace is read once, as a stream; a trace longer than
``--window`` events is drawn in part, with the verdict of the whole (``report/window.py``). A
foreign log is read as ``verify`` reads it (the same flags) and placed by causality
(``report/layout.py``).
"""

from __future__ import annotations

import os
import stat
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
        help="where to write the page (default: the trace's name with .html; needed for a pipe)",
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
    if not args.output and _streamed(args.trace):  # /dev/stdin.html, /dev/fd/63.html: no place
        return fail(
            f"{args.trace} is a pipe or a device, not a file of its own: the report has no name "
            "to take from it; choose one with -o FILE"
        )
    output = Path(args.output) if args.output else Path(args.trace).with_suffix(".html")
    if _same_file(output, Path(args.trace)):
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


def _streamed(trace: str) -> bool:
    """Whether ``trace`` is a stream or a device (a pipe, a terminal, a socket), or a name of one
    under ``/dev`` or ``/proc`` (``/dev/stdin`` redirected from a file: a page beside it would be
    written into ``/dev``)."""
    if os.path.abspath(trace).startswith(("/dev/", "/proc/")):
        return True
    try:
        mode = os.stat(trace).st_mode
    except OSError:  # the reader names the problem
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file; a path that cannot be resolved (a symbolic link's loop:
    RuntimeError before Python 3.13, OSError after) names none — its reader says why."""
    try:
        return one.resolve() == other.resolve()
    except (OSError, RuntimeError):
        return False


COMMAND = Command(
    "report",
    "write a self-contained HTML report of a trace",
    """Space-time diagram, occupancy over time, the audit verdict and message statistics of a trace, as one
    HTML file that opens offline; another system's log (ShiViz / GoVector, clock-free JSON Lines) is placed
    by causality. Exit 2 when the trace cannot be read.""",
    run,
    arguments,
)
