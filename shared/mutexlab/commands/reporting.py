"""``--report FILE`` for the commands that produce a trace (simulate, run, replay).

A command adds the option with ``add_report_argument(parser)``, keeps its trace events in
memory when ``args.report`` is set (``TraceWriter(path, keep=True)``), and after the run calls
``write_report_if_asked(args, events)``. That returns 0, or 2 (after printing the reason) when
the report cannot be written — so ``return write_report_if_asked(args, events) or code``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..trace import TraceError, TraceWriter, read_trace


def add_report_argument(parser) -> None:
    parser.add_argument(
        "--report",
        metavar="FILE",
        help="also write a self-contained HTML report of the run (space-time diagram, "
        "occupancy, verdict, message statistics)",
    )


def write_report_if_asked(
    args: Any,
    events: list[dict] | TraceWriter | str | Path | None,
    stalled: dict | None = None,
    states: dict | None = None,
) -> int:
    """Write ``args.report`` when it is set.

    ``events`` is the trace: a list of events, a TraceWriter built with ``keep=True``, or the
    path of a trace file (for ``run``, whose monitor writes the trace). ``stalled`` and
    ``states`` (``SimResult.stalled`` / ``.states``) add the stall explanation to the page.
    """
    path = getattr(args, "report", None)
    if not path:
        return 0
    from ..report import write_report  # only when asked: run, simulate and replay import this module

    if isinstance(events, TraceWriter):
        events = events.events
    elif isinstance(events, (str, Path)):
        try:
            events = read_trace(events)
        except TraceError as exc:
            print(f"mutexlab: error: cannot build report: {exc}", file=sys.stderr)
            return 2
    if events is None:
        print(
            "mutexlab: error: --report needs the run's trace events, but they were not kept", file=sys.stderr
        )
        return 2
    try:
        target = write_report(events, path, stalled, states)
    except OSError as exc:
        print(f"mutexlab: error: cannot write report {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except TraceError as exc:
        print(f"mutexlab: error: cannot build report: {exc}", file=sys.stderr)
        return 2
    # With --json, stdout carries one JSON object: say where the report went on stderr.
    print(f"report written to {target}", file=sys.stderr if getattr(args, "json", False) else sys.stdout)
    return 0
