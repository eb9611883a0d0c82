"""Long simulations: the memory check before the run, its limits and the progress bar during it.

* ``check_memory`` predicts the run's peak memory (``mutexlab.memory``) and refuses it (exit 2) when it
  exceeds what the machine has available, or warns on stderr above half of it; ``--ignore-memory``
  skips the check.
* ``event_limit`` and ``growth_watch``: where a run that never ends is cut (``--max-events``, the
  memory it may grow by), and ``limit_reached`` says which cut it (exit 3, docs/exit-codes.md#limits);
* ``progress_bar`` shows events done and events per second on stderr — only when stderr is a
  terminal and the output is not ``--json``, and only once the run has lasted a second; it is
  gone when the run ends, so the summary below reads as ever.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from .. import memory
from ..audit.stream import StreamAudit
from ..setups import Setup
from ..trace import TraceWriter
from .common import fail, positive

if TYPE_CHECKING:  # rich is imported only when a bar is shown
    from rich.progress import Progress, TaskID

SHOW_AFTER = 1.0  # seconds of running before a progress bar appears


def add_memory_argument(parser) -> None:
    parser.add_argument(
        memory.IGNORE_FLAG,
        action="store_true",
        help="run even when the run is predicted to need more memory than is available",
    )


def check_memory(args, prediction: memory.Prediction, what: str) -> int | None:
    """2 (after printing why) when the run must be refused; None to go on (after any warning)."""
    if getattr(args, "ignore_memory", False):
        return None
    error, warning = memory.verdict(prediction, memory.available_bytes(), what)
    if error:
        return fail(error)
    if warning:
        print(f"mutexlab: {warning}", file=sys.stderr)
    return None


EVENTS_FLAG = "--max-events"
# A streamed run holds no trace: its floor is one of time (500,000 events: ~2.5 CPU-s for a bee
# that never stops fidgeting), not of memory.
STREAMED_EVENTS = 500_000


def add_events_argument(parser) -> None:
    parser.add_argument(
        EVENTS_FLAG,
        type=positive,
        metavar="N",
        help="stop a run (incomplete, exit 3) after N events; default: several times the "
        "run's estimate, at least what fits in memory (a run that never ends is cut there)",
    )


def event_limit(args, streamed: bool, messages: float, intervals: float, processes: int) -> int:
    """``--max-events``, else the run's guard against never ending: several times its estimated
    messages (and holding intervals, each a few local events), at least STREAMED_EVENTS for a
    streamed run and what fits in memory for a run that holds its trace. Healthy runs make a
    quarter of it or less (bees P = 1–100, elves, the classic algorithms, the philosophers); at
    P = 1000 bees 9,247,872 events (BENCHMARKS.md §6), under 3 × its messages."""
    if args.max_events is not None:
        return int(args.max_events)
    if streamed:
        return max(STREAMED_EVENTS, int(3 * messages + 8 * intervals))
    return max(memory.held_events(processes), int(4 * messages))


def limit_reached(result, guard: int, allowance: int | None) -> str | None:
    """What a run a limit cut short says about it: the limit, and the flag that raises it."""
    if result is None or not result.truncated:
        return None
    if result.limit == "memory":
        return (
            f"the run grew by more than its memory limit ({memory.human_bytes(allowance or 0)}: twice its "
            f"predicted need, at least {memory.human_bytes(memory.GROWTH_FLOOR)}) before it ended; "
            f"{memory.IGNORE_FLAG} lifts the limit"
        )
    return f"the event limit ({guard:,} events) was reached before the run ended; {EVENTS_FLAG} N raises it"


def growth_watch(allowance: int | None) -> Callable[[], str | None] | None:
    """The ``Simulation.watch`` of a run that may grow by ``allowance`` bytes (None: unwatched)."""
    return memory.growth_watch(allowance) if allowance is not None else None


def wanted(args) -> bool:
    return not getattr(args, "json", False) and sys.stderr.isatty()


@contextmanager
def progress_bar(args, expected_events: float, label: str) -> Iterator[Callable[[int, float], None] | None]:
    """A ``progress(events, now)`` callback for ``Simulation.progress``, or None when no bar is wanted."""
    if not wanted(args):
        yield None
        return
    start = time.monotonic()
    shown: tuple[Progress, TaskID] | None = None  # the bar and its task, once the run lasts SHOW_AFTER

    def progress(events: int, now: float) -> None:
        nonlocal shown
        elapsed = time.monotonic() - start
        if shown is None:
            if elapsed < SHOW_AFTER:
                return
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            bar = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                TextColumn("{task.completed:,.0f} of ~{task.total:,.0f} events"),
                TextColumn("{task.fields[rate]:,.0f} events/s"),
                TimeElapsedColumn(),
                console=Console(file=sys.stderr),
                transient=True,
            )
            bar.start()
            shown = (bar, bar.add_task(label, total=max(expected_events, 1), rate=0))
        bar, task = shown
        bar.update(
            task,
            completed=events,
            total=max(expected_events, events, 1),
            rate=events / elapsed if elapsed > 0 else 0,
        )

    try:
        yield progress
    finally:
        if shown is not None:
            shown[0].stop()


def audit_trace(
    setup: Setup, path: str | None, also: Callable[[dict], None] | None = None
) -> tuple[TraceWriter, StreamAudit] | tuple[str, None]:
    """The trace of an audited simulation and the audit it feeds as the run goes; the error text
    instead when the trace file cannot be opened. Nothing is held in memory.

    Written to ``path`` when given (full vector clocks); without, the processes keep local-event
    clocks (``clock.LocalEventClocks``) that only the audit sees. ``also`` is shown every event
    too (the report's window, ``report.WindowFeed``); without it, the sends and receives the audit
    does not read are only counted (``TraceWriter.tally``).
    """
    auditor = StreamAudit()
    sink = auditor.feed if also is None else _both(auditor.feed, also)
    if path is None:
        names = [setup.names[pid] for pid in sorted(setup.names)]
        trace = TraceWriter(local_clocks=names, sink=sink, tally=auditor if also is None else None)
        auditor.index = trace.clocks.index if trace.clocks is not None else None
        return trace, auditor
    try:
        return TraceWriter(path, sink=sink), auditor
    except OSError as exc:
        return f"cannot write trace {path}: {exc.strerror}", None


def _both(first: Callable[[dict], None], second: Callable[[dict], None]) -> Callable[[dict], None]:
    def feed(event: dict) -> None:
        first(event)
        second(event)

    return feed
