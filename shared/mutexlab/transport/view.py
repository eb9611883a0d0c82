"""The monitor's live view (docs/architecture.md#monitor): one line per state change (written
together at most every ``PRINT_EVERY`` seconds), or a live table.

Fed by the audit feed (feed.py) with each member's trace events and statuses; it only displays
them, it decides nothing.
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.live import Live
    from rich.table import Table


class LiveView:
    """The live view: one plain line per state change (not a terminal, e.g. compose logs), or a
    continuously updated table (a terminal): each participant's state, Lamport clock, entries,
    eggs (bees) or contracts done (elves) and what it waits for; who holds which resource; eggs
    per reed; messages per second (over the last ``WINDOW`` seconds and over the whole run).

    ``table()`` builds the table from what was fed so far; it is pure, so it is testable without
    a terminal. Invariant: holders reflect exactly the enter/exit events seen (units summed).
    """

    WINDOW = 5.0
    # Plain lines are written together at most this often (and at the end): one write and flush per
    # state change cost the monitor more than the rest of its work on a step.
    PRINT_EVERY = 0.1

    def __init__(self, out: IO[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.out = out
        self.clock = clock
        self.live: Live | None = None
        self.rows: dict[str, dict[str, Any]] = {}
        self.holders: dict[str, Counter[str]] = {}  # resource -> {holder: units}
        self.eggs_per_reed: Counter[str] = Counter()
        # Arrival times of the sends, oldest first; invariant: none older than WINDOW before the last one.
        self.sends: deque[float] = deque()
        self.total_sends = 0
        self.began = clock()
        self._drawn = 0.0
        self._lines: list[str] = []  # plain lines not yet written
        self._printed = clock()

    @staticmethod
    def _row() -> dict[str, Any]:
        return {"state": "-", "lamport": 0, "entries": 0, "eggs": 0, "contracts": 0, "waiting": ""}

    def begin(self, names: list[str]) -> None:
        self.rows = {n: self._row() for n in names}
        self.began = self.clock()
        if self.out.isatty():
            from rich.console import Console
            from rich.live import Live

            self.live = live = Live(
                self.table(), refresh_per_second=4, transient=False, console=Console(file=self.out)
            )
            live.start()

    def _forget_before(self, now: float) -> None:
        """Drop the sends that left the window (from the old end: O(1) per send, amortised)."""
        while self.sends and self.sends[0] <= now - self.WINDOW:
            self.sends.popleft()

    def rate(self) -> tuple[float, float]:
        """(messages/s over the last WINDOW seconds, messages/s since the start)."""
        now = self.clock()
        self._forget_before(now)
        recent = len(self.sends) / min(self.WINDOW, max(now - self.began, 1e-9))
        overall = self.total_sends / max(now - self.began, 1e-9)
        return recent, overall

    def table(self) -> Table:
        from rich.table import Table

        recent, overall = self.rate()
        # A counter's column shows once some member counts it (the trace's events decide, not the family).
        eggs = any(r["eggs"] for r in self.rows.values()) or any(k.startswith("reed") for k in self.holders)
        contracts = any(r["contracts"] for r in self.rows.values())
        held = (
            "; ".join(
                f"{res} {', '.join(h if units == 1 else f'{h}×{units}' for h, units in sorted(who.items()))}"
                for res, who in sorted(self.holders.items())
                if who
            )
            or "nothing held"
        )
        caption = [
            f"holders: {held}",
            f"messages/s: {recent:.1f} (last {self.WINDOW:g}s), "
            f"{overall:.1f} overall, {self.total_sends} sent",
        ]
        if self.eggs_per_reed:
            caption.append(
                "eggs per reed: " + ", ".join(f"{r} {n}" for r, n in sorted(self.eggs_per_reed.items()))
            )
        table = Table(title="mutexlab monitor", caption="\n".join(caption), caption_justify="left")
        columns = (
            ["process", "state", "lamport", "entries"]
            + (["eggs"] if eggs else [])
            + (["contracts"] if contracts else [])
            + ["waiting for"]
        )
        for col in columns:
            table.add_column(col)
        for name, row in self.rows.items():
            cells = [name, row["state"], str(row["lamport"]), str(row["entries"])]
            cells += [str(row["eggs"])] if eggs else []
            cells += [str(row["contracts"])] if contracts else []
            table.add_row(*cells, row["waiting"])
        return table

    def _redraw(self, force: bool = False) -> None:
        if self.live is not None and (force or self.clock() - self._drawn >= 0.25):
            self._drawn = self.clock()
            self.live.update(self.table())

    def event(self, name: str, event: dict) -> None:
        """Every trace event of a member, in arrival order."""
        row = self.rows.get(name)
        if row is None:  # made only when missing: this runs for every event the monitor hears
            row = self.rows[name] = self._row()
        kind = event.get("event")
        if isinstance(event.get("lamport"), int):
            row["lamport"] = event["lamport"]
        units = event.get("units", 1) if isinstance(event.get("units"), int) else 1
        if kind == "send":
            self.total_sends += 1
            now = self.clock()
            self.sends.append(now)
            self._forget_before(now)  # off a terminal nobody asks for the rate: keep the window small
        elif kind == "enter":
            row["entries"] += 1
            self.holders.setdefault(str(event.get("resource")), Counter())[name] += units
        elif kind == "exit":
            held = self.holders.get(str(event.get("resource")))
            if held is not None:
                held[name] -= units
                if held[name] <= 0:
                    del held[name]
        elif kind == "egg":
            row["eggs"] += 1
            self.eggs_per_reed[f"reed:{event.get('reed')}"] += 1
        elif kind == "contract_done":
            row["contracts"] += 1
        elif kind == "state":
            # a send to oneself is an input inside the one that sent it, each with its state event
            # (the coordinator of central.py, granting itself: HELD three times): one line a change
            shown, row["state"] = row["state"], str(event.get("state"))
            if self.live is None and row["state"] != shown:
                self._lines.append(
                    f"{float(event.get('t', 0)):9.3f}s  {name:<10} {row['state']:<22} lamport {row['lamport']}"
                )
                self.flush(self.PRINT_EVERY)
            self._redraw(force=True)
            return
        self._redraw()

    def status(self, name: str, status: dict) -> None:
        row = self.rows.get(name)
        if row is not None:
            waiting = status.get("waiting")
            if not isinstance(waiting, dict):
                waiting = {}
            row["waiting"] = "; ".join(
                f"{what} from {', '.join(map(str, whom))}"
                for what, whom in waiting.items()
                if isinstance(whom, list)
            )
            row["lamport"] = status.get("lamport", row["lamport"])
            self._redraw()

    def flush(self, after: float = 0.0) -> None:
        """Write the plain lines kept back, if the last write was at least ``after`` seconds ago (the
        monitor calls this after every poll, so a line waits at most a poll and ``PRINT_EVERY``)."""
        if self._lines and self.clock() - self._printed >= after:
            self.out.write("\n".join(self._lines) + "\n")
            self.out.flush()
            self._lines.clear()
            self._printed = self.clock()

    def end(self) -> None:
        self.flush()
        if self.live is not None:
            self.live.update(self.table())
            self.live.stop()
            self.live = None
