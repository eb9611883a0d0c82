"""A report of a trace file of any length: the file is read once, as a stream.

The verdict comes from the audit fed event by event (``audit.stream.StreamAudit``, as ``mutexlab
verify`` decides), so it covers the whole trace. The page draws a window: the first ``window``
events, plus what completes them further on — the ``recv`` of a message sent in the window and
the ``exit`` of an interval entered in it — so no arrow or interval of the window is cut. Only
those events are held (without their vector clocks, which the page does not read); the rest
are counted and left out, and the page says so. A trace no longer than the window is drawn
whole, exactly as ``build_model`` draws it.

``WindowFeed`` collects the window from events as they come: from the file (``read_window``), or
from a simulation as it runs (``simulate bees --report``: no trace held, no file read again).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..audit.verdict import Verdict, verify_file

WINDOW_EVENTS = 100_000  # events a page draws at most (plus the receives and exits completing them)


@dataclass
class Window:
    events: list[dict]  # the run header, the window and the events completing it, in trace order
    verdict: Verdict  # of the whole trace
    total: int  # events in the trace, the run header excepted
    shown: int  # of them in the window
    completing: int  # receives and exits after the window that complete it
    last_line: int  # the trace's last line

    @property
    def whole(self) -> bool:
        return self.shown == self.total

    def note(self) -> str | None:
        """What the page leaves out, or None when it shows the whole trace."""
        if self.whole:
            return None
        left = self.total - self.shown - self.completing
        return (
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


def read_window(path: str | Path, window: int = WINDOW_EVENTS) -> Window:
    """Read the trace file at ``path`` once: its verdict and the window the page draws. TraceError
    (naming the file) when it cannot be read or decided. The audit is ``mutexlab verify``'s own
    (``audit.verdict.verify_file``: settled capacity-1 intervals forgotten, and the file read
    again, keeping them, when it cannot), shown every event as it goes."""
    if window < 1:
        raise ValueError("a window holds at least one event")
    passes: list[WindowFeed] = []

    def fresh() -> WindowFeed:  # one per pass over the file
        passes.append(WindowFeed(window))
        return passes[-1]

    verdict = verify_file(path, fresh)
    return passes[-1].window_of(verdict)


class WindowFeed:
    """The window's events, collected from one pass over a trace, event by event (``__call__``).
    Events without ``_line`` (a simulation's, as it runs) are numbered as their file would number
    them: the run header is line 1."""

    def __init__(self, window: int | None = None) -> None:
        self.window = WINDOW_EVENTS if window is None else window
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
            if not self.kept:
                self.kept.append(event if "_line" in event else dict(event, _line=self.line))
            return
        self.total += 1
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
        # the page does not read clocks: a copy without (the audit may hold the event itself)
        kept = {k: v for k, v in event.items() if k != "vc"}
        kept.setdefault("_line", self.line)
        self.kept.append(kept)
