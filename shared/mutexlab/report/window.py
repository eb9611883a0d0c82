"""A report of a trace file of any length: the file is read once, as a stream.

The verdict comes from the audit fed event by event (``audit.stream.StreamAudit``, as ``mutexlab
verify`` decides), so it covers the whole trace. The page draws a window: the first ``window``
events, plus what completes them further on — the ``recv`` of a message sent in the window and
the ``exit`` of an interval entered in it — so no arrow or interval of the window is cut. Only
those events are held (without their vector clocks, which the page does not read); the rest
are counted and left out, and the page says so. A trace no longer than the window is drawn
whole, exactly as ``build_model`` draws it.

Another system's log (ShiViz / GoVector, clock-free JSON Lines) is read and decided as ``mutexlab
verify`` reads it (``audit.foreign``); its window keeps the vector clocks, which place its events
(``layout.py``: such a log has no times).

``WindowFeed`` collects the window from events as they come: from the file (``read_window``), or
from a simulation as it runs (``simulate bees --report``: no trace held, no file read again).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..audit.foreign import detect, spooled, verify_log
from ..audit.verdict import Verdict
from ..trace import TraceError
from .layout import lay_out
from .model import MAX_LANES, too_many_lanes

WINDOW_EVENTS = 100_000  # events a page draws at most (plus the receives and exits completing them)


@dataclass
class Window:
    events: list[dict]  # the run header, the window and the events completing it, in trace order
    verdict: Verdict  # of the whole trace
    total: int  # events in the trace, the run header excepted
    shown: int  # of them in the window
    completing: int  # receives and exits after the window that complete it
    last_line: int  # the trace's last line
    layout: str | None = None  # how a log without times was placed (``layout.py``), else None

    @property
    def whole(self) -> bool:
        return self.shown == self.total

    def note(self) -> str | None:
        """How a log without times is placed and what the page leaves out, or None when it shows
        the whole of a trace with times."""
        if self.whole:
            return self.layout
        left = self.total - self.shown - self.completing
        return (f"{self.layout} " if self.layout else "") + (
            f"This page draws the first {self.shown:,} of the trace's {self.total:,} events"
            + (
                f", and the {self.completing:,} later receives and exits that complete their messages "
                f"and holding intervals"
                if self.completing
                else ""
            )
            + f"; the other {left:,} events (up to line {self.last_line:,}) are left out. The verdict "
            "covers the whole trace; the diagram, occupancy and statistics cover what is drawn."
        )


def read_window(
    path: str | Path,
    window: int = WINDOW_EVENTS,
    fmt: str = "auto",
    capacities: dict[str, int] | None = None,
    regex: str | None = None,
    expected: dict[str, int] | None = None,
) -> Window:
    """Read the log at ``path`` once: its verdict and the window the page draws. TraceError
    (naming the file, and the line) when it cannot be read or decided. The audit is ``mutexlab
    verify``'s own (``audit.foreign.verify_log``: settled capacity-1 intervals forgotten, and the
    file read again, keeping them, when it cannot), shown every event as it goes; ``fmt``,
    ``capacities``, ``regex`` and ``expected`` as there. A foreign log (no times) is placed by
    causality (``layout.py``)."""
    if window < 1:
        raise ValueError("a window holds at least one event")
    with spooled(path) as readable:  # a pipe, read once into a file
        if fmt == "auto":
            fmt = detect(readable)
        foreign = fmt != "mutexlab"
        passes: list[WindowFeed] = []

        def fresh() -> WindowFeed:  # one per pass over the file
            passes.append(WindowFeed(window, keep_clocks=foreign))
            return passes[-1]

        try:
            verdict = verify_log(readable, fmt, capacities, regex, fresh, expected)
        except TraceError as exc:  # the window's own refusals name the line only
            message = str(exc)
            named = message.startswith((str(path), str(readable)))  # a pipe's copy: named path by spooled
            raise TraceError(message if named else f"{path}: {message}") from None
    shown = passes[-1].window_of(verdict)
    if foreign or passes[-1].timeless:
        shown.events, shown.layout = lay_out(shown.events)
    return shown


class WindowFeed:
    """The window's events, collected from one pass over a trace, event by event (``__call__``).
    Events without ``_line`` (a simulation's, as it runs) are numbered as their file would number
    them: the run header is line 1."""

    def __init__(self, window: int | None = None, keep_clocks: bool = False) -> None:
        self.window = WINDOW_EVENTS if window is None else window
        self.keep_clocks = keep_clocks  # a log without times: its clocks place its events
        self.timeless = False  # a trace whose first event has no time 't': placed by its clocks too
        self.kept: list[dict] = []
        self.unreceived: set = set()  # ids of the window's sends not yet received
        self.held: set[tuple] = set()  # (pid, resource) entered in the window and not yet left
        self.total = self.completing = self.line = 0

    def window_of(self, verdict: Verdict) -> Window:
        """The window collected so far, with ``verdict``: that of the whole trace."""
        return Window(
            self.kept, verdict, self.total, min(self.total, self.window), self.completing, self.line
        )

    def __call__(self, event: dict) -> None:
        self.line = event.get("_line", self.line + 1)
        kind = event["event"]
        if kind == "run":
            declared = event.get("processes")
            if isinstance(declared, dict) and len(declared) > MAX_LANES:  # refused before it is read
                raise TraceError(f"line {self.line}: {too_many_lanes(len(declared))}")
            if not self.kept:
                self.kept.append(event if "_line" in event else dict(event, _line=self.line))
            return
        self.total += 1
        if self.total == 1 and not self.keep_clocks and not _timed(event):
            self.timeless = self.keep_clocks = True  # `t` is optional in a trace (trace-format.md)
        if self.total <= self.window:
            if kind == "send":
                self.unreceived.add(event.get("id"))
            elif kind == "recv":
                self.unreceived.discard(event.get("id"))
            elif kind == "enter":
                self.held.add((event["pid"], event.get("resource")))
            elif kind == "exit":
                self.held.discard((event["pid"], event.get("resource")))
        elif kind == "recv" and event.get("id") in self.unreceived:
            self.unreceived.discard(event.get("id"))
            self.completing += 1
        elif kind == "exit" and (event["pid"], event.get("resource")) in self.held:
            self.held.discard((event["pid"], event.get("resource")))
            self.completing += 1
        else:
            return
        # the page does not read clocks (but ``layout`` does): a copy (the audit may hold the event)
        kept = dict(event) if self.keep_clocks else {k: v for k, v in event.items() if k != "vc"}
        kept.setdefault("_line", self.line)
        self.kept.append(kept)


def _timed(event: dict) -> bool:
    """Whether ``event`` carries its time ``t`` (a number)."""
    t = event.get("t")
    return isinstance(t, (int, float)) and not isinstance(t, bool)
