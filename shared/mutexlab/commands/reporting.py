"""``--report FILE`` for the commands that produce a trace (simulate, run, replay).

A command adds the option with ``add_report_argument(parser)`` and after the run calls
``write_report_if_asked(args, trace)``, with the trace as it has it: its events kept in memory
(``TraceWriter(path, keep=True)``), a window collected as the run went (``report.WindowFeed``:
``simulate bees``), or the trace file (``run``: read as ``mutexlab report`` reads it, a window
and the streamed verdict). That returns 0, or 2 (after printing the reason) when the report
cannot be written — so ``return write_report_if_asked(args, trace) or code``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..trace import TraceError, TraceWriter

if TYPE_CHECKING:
    from ..audit.verdict import Verdict
    from ..report import Window


def add_report_argument(parser) -> None:
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="also write a self-contained HTML report of the run (space-time diagram, "
        "occupancy, verdict, message statistics)",
    )


def write_report_if_asked(
    args: Any,
    events: list[dict] | TraceWriter | Window | str | Path | None,
    stalled: dict | None = None,
    states: dict | None = None,
    verdict: Verdict | None = None,
) -> int:
    """Write ``args.report`` when it is set.

    ``events`` is the trace: a list of events, a TraceWriter built with ``keep=True``, a
    ``Window`` (a page of a long trace draws its first ``WINDOW_EVENTS`` events and says what it
    leaves out), or the path of a trace file (for ``run``, whose monitor writes the trace; read
    into a window). ``stalled`` and ``states`` (``SimResult.stalled`` / ``.states``) add the
    stall explanation to the page. ``verdict``: the page's verdict when the command judged more
    than the events show (a replay the schedule left unfinished); else the events' audit.
    """
    path = getattr(args, "report", None)
    if not path:
        return 0
    # only when asked: run, simulate and replay import this module
    from ..report import Window, read_window, write_report

    window: Window | None = None
    kept: list[dict] | None
    if isinstance(events, (str, Path)):
        try:
            window = read_window(events)
        except TraceError as exc:
            print(f"mutexlab: error: cannot build report: {exc}", file=sys.stderr)
            return 2
    elif isinstance(events, Window):
        window = events
    if window is not None:
        kept = window.events
    elif isinstance(events, TraceWriter):
        kept = events.events
    else:
        kept = events if isinstance(events, list) else None
    if kept is None:
        print(
            "mutexlab: error: --report needs the run's trace events, but they were not kept", file=sys.stderr
        )
        return 2
    try:
        target = write_report(kept, path, stalled, states, window=window, verdict=verdict)
    except OSError as exc:
        print(f"mutexlab: error: cannot write report {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except TraceError as exc:
        print(f"mutexlab: error: cannot build report: {exc}", file=sys.stderr)
        return 2
    # With --json, stdout carries one JSON object: say where the report went on stderr.
    where = sys.stderr if getattr(args, "json", False) else sys.stdout
    print(f"report written to {target}", file=where)
    if window is not None and not window.whole:
        print(f"(it draws {window.shown:,} of the trace's {window.total:,} events)", file=where)
    return 0
