"""A report of a trace file of any length: the file is read once, as a stream.

The verdict comes from the audit fed event by event (``audit.stream.StreamAudit``, as ``mutexlab
verify`` decides), so it covers the whole trace. The page draws a window: the first ``window``
events, plus what completes them further on — the ``recv`` of a message sent in the window and
the ``exit`` of an interval entered in it — so no arrow or interval of the window is cut. Only
those events are held (without their vector clocks, which the page does not read); the rest
are counted and left out, and the page says so. A trace no longer than the window is drawn
whole, exactly as ``build_model`` draws it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..audit.exclusive import InexactStream
from ..audit.stream import StreamAudit
from ..audit.verdict import Verdict
from ..trace import TraceError, parse_events

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
    (naming the file) when it cannot be read or decided. The audit forgets settled capacity-1
    intervals as ``mutexlab verify`` does (and the file is read again, keeping them, when it
    cannot: ``audit.exclusive``)."""
    if window < 1:
        raise ValueError("a window holds at least one event")
    try:
        return _read(path, window, StreamAudit(bounded=True))
    except InexactStream:
        return _read(path, window, StreamAudit())


def _read(path: str | Path, window: int, audit: StreamAudit) -> Window:
    kept: list[dict] = []
    unreceived: set = set()  # ids of the window's sends not yet received
    held: set[tuple] = set()  # (pid, resource) entered in the window and not yet left
    total = completing = line = 0
    try:
        with open(path, "rb") as handle:
            for event in parse_events(handle, str(path)):
                audit.feed(event)
                line = event["_line"]
                kind = event["event"]
                if kind == "run":
                    if not kept:
                        kept.append(event)
                    continue
                total += 1
                if total <= window:
                    if kind == "send":
                        unreceived.add(event.get("id"))
                    elif kind == "recv":
                        unreceived.discard(event.get("id"))
                    elif kind == "enter":
                        held.add((event["pid"], event.get("resource")))
                    elif kind == "exit":
                        held.discard((event["pid"], event.get("resource")))
                elif kind == "recv" and event.get("id") in unreceived:
                    unreceived.discard(event.get("id"))
                    completing += 1
                elif kind == "exit" and (event["pid"], event.get("resource")) in held:
                    held.discard((event["pid"], event.get("resource")))
                    completing += 1
                else:
                    continue
                # the page does not read clocks: a copy without (the audit may hold the event itself)
                kept.append({k: v for k, v in event.items() if k != "vc"})
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from None
    if audit.run is None:
        raise TraceError(f"{path}: the trace is empty (no events)")
    try:
        verdict = audit.verdict()
    except TraceError as exc:  # an event the audit cannot use: "line N: ..." gets the file's name
        raise TraceError(f"{path}: {exc}") from None
    return Window(kept, verdict, total, min(total, window), completing, line)
