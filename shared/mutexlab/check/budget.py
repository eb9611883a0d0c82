"""The limits of one ``mutexlab check`` in every phase, and its progress reports.

``--max-memory`` counts the memory the check adds to the process (resident memory now minus
what it held when the check began: a long test session's does not count). It is watched in two
ways, so that no phase runs past it:

* a **watchdog thread** reads the resident memory every ``WATCH_EVERY`` seconds, whatever the
  main thread is doing (building the model, choosing persistent sets, the liveness analysis of
  a component, building a lasso). Past the limit it interrupts the main thread
  (``_thread.interrupt_main`` with a handler of its own), which raises ``LimitReached`` there;
* the **search** looks before each state it adds to its visited table when a step is due, and
  before the table grows: a Python dict reallocates its whole table at once (at 2/3 full, to
  twice the size), a jump of gigabytes for tens of millions of worlds that no watchdog can
  interrupt. ``growth`` predicts the next reallocation (CPython's layout) so the search stops
  *before* a step that would pass the limit; so does ``list_growth`` for the lists of the Python
  core's Tarjan stack, and the compiled core for its stack's map and arrays (``_core.c``).

``--max-states`` is the number of worlds a search (or the liveness pass after a breadth-first
one) may store. ``LimitReached`` derives from BaseException, like KeyboardInterrupt, so no
``except Exception`` of a protocol swallows it; the search turns it into an *incomplete* result
(never a pass, never a finding).

Progress: the watchdog also hands the result to ``progress`` every ``PROGRESS_EVERY`` seconds,
in every phase (the caller decides how to show it, ``commands/check.py``).
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .result import Result, rss_mb

WATCH_EVERY = 0.05  # seconds between the watchdog's looks at the memory
PROGRESS_EVERY = 10.0  # seconds between progress reports handed to ``progress``
_SIGNAL = getattr(signal, "SIGUSR2", signal.SIGINT)  # the handler the watchdog trips (Python-level only)


class LimitReached(BaseException):
    """A limit stopped the check (``why`` says which, and in which phase)."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class Budget:
    """The limits of one check and the clock its progress is reported by."""

    def __init__(
        self,
        max_states: int | None = None,
        max_memory: float | None = None,
        progress: Callable[[Result, bool], None] | None = None,
        result: Result | None = None,
    ) -> None:
        self.max_states = max_states
        self.max_memory = max_memory  # MB the check may add to the process
        self.progress = progress
        self.result = result if result is not None else Result()
        self.base_mb = rss_mb()
        self.t0 = time.perf_counter()
        self.phase = "building the model"
        self.over: str | None = None  # set by the watchdog: why the check must stop
        self._armed = False

    def added_mb(self) -> float:
        return rss_mb() - self.base_mb

    def stop(self, why: str) -> LimitReached:
        return LimitReached(f"{why} ({self.phase})" if self.phase != "search" else why)

    def memory_over(self, need_mb: float = 0.0) -> bool:
        return self.max_memory is not None and self.added_mb() + need_mb > self.max_memory

    def look(self, need_bytes: int = 0) -> None:
        """Raise LimitReached when the memory added, plus ``need_bytes`` about to be allocated,
        passes the limit (or the watchdog found it passed)."""
        if self.over is not None:
            raise self.stop(self.over)
        if self.memory_over(need_bytes / 2**20):
            extra = f": the next step would add {need_bytes / 2**20:,.0f} MB at once" if need_bytes else ""
            raise self.stop(f"memory limit {self.max_memory:g} MB reached{extra}")

    def report_time(self) -> float:
        return time.perf_counter() - self.t0

    def report(self, final: bool = False) -> None:
        if self.progress is not None:
            r = self.result
            r.seconds = time.perf_counter() - self.t0
            r.phase = self.phase
            self.progress(r, final)

    # -- the watchdog ----------------------------------------------------------------------
    def _trip(self, signum: int, frame: Any) -> None:
        if self._armed and self.over is not None:
            raise self.stop(self.over)

    @contextmanager
    def watch(self) -> Iterator[Budget]:
        """Run the watchdog while the block runs (in the main thread: interrupts; elsewhere the
        search's own looks still stop it)."""
        try:
            previous = signal.signal(_SIGNAL, self._trip)
        except ValueError:  # not the main thread: no interrupt, the looks remain
            previous = None
        done = threading.Event()
        thread = threading.Thread(target=self._watchdog, args=(done, previous is not None), daemon=True)
        self._armed = True
        thread.start()
        try:
            yield self
        finally:
            self._armed = False
            done.set()
            thread.join()
            if previous is not None:
                signal.signal(_SIGNAL, previous)

    def _watchdog(self, done: threading.Event, interrupt: bool) -> None:
        next_report = time.perf_counter() + PROGRESS_EVERY
        while not done.wait(WATCH_EVERY):
            if self.over is None and self.memory_over():
                self.over = f"memory limit {self.max_memory:g} MB reached"
                if interrupt:
                    _thread.interrupt_main(_SIGNAL)
            now = time.perf_counter()
            if now >= next_report:
                next_report = now + PROGRESS_EVERY
                self.report()


# -- CPython's dict layout (3.7+): 2^s index slots, 2/3 of them usable entries of 24 bytes ---
_DICT_HEAD = sys.getsizeof({0: 0}) - (8 * 1 + 5 * 24)  # the object and the keys' header


def _table_bytes(s: int) -> int:
    width = 1 if s < 8 else 2 if s < 16 else 4 if s < 32 else 8
    return (1 << s) * width + ((2 << s) // 3) * 24


def growth(d: dict) -> tuple[int, int]:
    """(insertions before ``d`` reallocates its table, bytes the dict will then take at most).
    A dict that only grows (no deletions) reallocates when its usable entries run out, to twice
    the size. When the layout is not recognised (another interpreter): (0, twice its size),
    which makes the caller look at every insertion with the worst case in mind."""
    if not d:
        return 0, _DICT_HEAD + _table_bytes(3)
    size = sys.getsizeof(d) - _DICT_HEAD
    for s in range(3, 48):
        table = _table_bytes(s)
        if table == size:
            return max(0, (2 << s) // 3 - len(d)), _DICT_HEAD + _table_bytes(s + 1)
        if table > size:
            break
    return 0, 2 * sys.getsizeof(d)


def doubling_mb(known: dict, every: int) -> float:
    """The MB ``known`` takes at once when it reallocates before the next look (every ``every``
    insertions): foreseen, so a limit is not passed by a whole table's size."""
    left, after = growth(known)
    return (after - sys.getsizeof(known)) / 2**20 if left <= every else 0.0


_LIST_HEAD = sys.getsizeof([])  # a list's object; its array of pointers follows (``allocated``)


def list_growth(items: list) -> tuple[int, int]:
    """(appends before ``items`` reallocates its array of pointers, bytes the array then takes),
    by CPython's over-allocation (an eighth more, rounded up to 4); the Tarjan stack of the Python
    search core holds millions of worlds in one large component."""
    allocated, n = (sys.getsizeof(items) - _LIST_HEAD) // 8, len(items)
    grows_at = max(n, allocated) + 1
    return max(0, allocated - n), 8 * ((grows_at + (grows_at >> 3) + 6) & ~3)
