"""How much memory a simulation will need, predicted before it runs.

What grows: a run that holds its trace (``simulate`` of a family that is not ``streamed``:
its ``--report`` draws from it) keeps every trace event in memory (two
events per message, plus local ones), and each event carries a vector clock with an entry for
every process its owner has heard of, up to all P of them. So such a run needs about

    BASE + messages × (PER_MESSAGE + PER_CLOCK_ENTRY × P)

and, as the broadcast algorithms send Θ(P²) messages (Θ(N²·M) for N nodes asking M times), memory
grows as P³. A run that does not hold its trace (a ``streamed`` family's, with or without the
audit or ``--report``: the audit is fed as the run goes, the page keeps a window of bounded size,
docs/architecture.md#scaling) holds only the messages in flight, at most about one broadcast
from every process at once: BASE + PER_IN_FLIGHT × P(P−1).
A streamed run that is audited (the default) keeps every holding interval it makes for the
capacity audit — an ``enter`` and its ``exit``, with the entering process's clock, in the
family's estimate (``Flags.estimate_intervals``: the bees' flower visits, one per egg):
AUDIT_BASE + I × (PER_INTERVAL + PER_CLOCK_ENTRY × P) more. (Measured: bees P=10, 3,000, 6,000
and 60,000 intervals, 97, 98 and 282 MB peak against 40 MB with ``--no-audit``; predicted 100,
111 and 317 MB.) Either way every process keeps a little state about every other (who is alive, whose request
came when): PER_PEER × P², already at setup — so the check comes before the setup is built.

The constants are fitted to peak RSS measured on CPython 3.11: for bees P = 70–200, Lamport
N = 100, Suzuki–Kasami N = 150, Raymond N = 200 and elves N = 30 the prediction is 1.05–1.5 times
the measured peak, never below it. The message counts are each algorithm's own estimate from its
structure (its spec's ``estimate_messages``): what matters is the order of magnitude, to refuse
up front a run that would exhaust the machine instead of letting it grow for minutes and be killed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .spec import AlgorithmSpec, Flags

BASE = 40 << 20  # the interpreter, the package, the setup
PER_MESSAGE = 2000  # bytes per message of an audited run: its send and recv events, body, ids
PER_CLOCK_ENTRY = 50  # bytes per vector-clock entry per message (the two events' clocks)
PER_IN_FLIGHT = 500  # bytes per message waiting in the event queue of an unaudited run
PER_PEER = 100  # bytes per (process, other process): the protocols' own tables
AUDIT_BASE = 48 << 20  # a streamed audit: its imports and the capacity audit's working set (46 MB measured)
PER_INTERVAL = 3500  # bytes per holding interval a streamed audit keeps (and its flow's share)
WARN_SHARE = 0.5  # warn above this share of the available memory, refuse above all of it
IGNORE_FLAG = "--ignore-memory"
# A run that never ends (a protocol whose nodes keep sending, or whose state keeps growing) is
# stopped, never left to grow until the machine refuses it: a run that holds its trace may make
# at least the events HELD_BUDGET holds (``held_events``), and every run may grow by twice what it
# was predicted to need, at least GROWTH_FLOOR (``growth_allowance``), but never past
# GROWTH_SHARE of the memory available when it starts. Measured (a node that sends forever, 3
# processes, held trace): 97,000 events in 7 s, 160 MB, its audit 5 s more and 230 MB peak.
HELD_BUDGET = 200 << 20
GROWTH_FLOOR = 256 << 20
GROWTH_SHARE = 0.8


@dataclass(frozen=True)
class Prediction:
    messages: int  # estimated network messages of the whole run
    processes: int
    audited: bool  # the whole trace is held in memory
    bytes: int  # estimated peak memory
    intervals: int = 0  # holding intervals a streamed audit keeps

    def describe(self) -> str:
        held = (
            f"~{human_count(self.messages)} messages traced with {self.processes}-entry vector clocks"
            if self.audited
            else f"up to ~{human_count(self.processes * (self.processes - 1))} messages in flight"
        )
        if self.intervals:
            held += f", ~{human_count(self.intervals)} holding intervals kept for the audit"
        return f"about {human_bytes(self.bytes)} ({held})"


def predict(messages: float, processes: int, audited: bool = True, intervals: float = 0) -> Prediction:
    """``intervals``: of a run that does not hold its trace but audits it as it goes."""
    messages, intervals = max(0, int(messages)), max(0, int(intervals))
    need = BASE + PER_PEER * processes * processes
    if audited:
        need += messages * (PER_MESSAGE + PER_CLOCK_ENTRY * processes)
    else:
        need += PER_IN_FLIGHT * min(messages, processes * (processes - 1))
        if intervals:
            need += AUDIT_BASE + intervals * (PER_INTERVAL + PER_CLOCK_ENTRY * processes)
    return Prediction(messages, processes, audited, int(need), 0 if audited else intervals)


def held_events(processes: int) -> int:
    """The events a run that holds its trace may make whatever its estimate: what HELD_BUDGET holds
    (a delivery and its send, their vector clocks of up to ``processes`` entries)."""
    return HELD_BUDGET // (PER_MESSAGE + PER_CLOCK_ENTRY * max(processes, 1))


def growth_allowance(prediction: Prediction, available: int | None) -> int:
    """The bytes a run may add to the process while it runs: twice its prediction, at least
    GROWTH_FLOOR, at most GROWTH_SHARE of ``available`` (when known)."""
    allowed = max(GROWTH_FLOOR, 2 * prediction.bytes)
    return allowed if available is None else max(1, min(allowed, int(GROWTH_SHARE * available)))


def resident_bytes(statm: str | Path = "/proc/self/statm") -> int | None:
    """This process's resident memory now (/proc/self/statm), or None when it cannot be read."""
    # os.open/os.read, not Path.read_text: called every Simulation.WATCH_EVERY events, where the
    # text file's machinery was 1% of a run (bees P = 1000, py-spy)
    try:
        fd = os.open(statm, os.O_RDONLY)
        try:
            data = os.read(fd, 256)
        finally:
            os.close(fd)
        return int(data.split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def growth_watch(allowance: int) -> Callable[[], str | None] | None:
    """A ``Simulation.watch``: "memory" once the process has grown by more than ``allowance`` bytes
    since this call; None where resident memory cannot be read (the event limit still holds)."""
    start = resident_bytes()
    if start is None:
        return None

    def watch() -> str | None:
        now = resident_bytes()
        return "memory" if now is not None and now - start > allowance else None

    return watch


def intervals(flags: Flags, processes: int, options: dict[str, Any]) -> float:
    """The holding intervals a streamed audit of the run keeps (``Flags.estimate_intervals``)."""
    return flags.estimate_intervals(processes, dict(options)) if flags.estimate_intervals else 0


def messages(spec: AlgorithmSpec, processes: int, options: dict[str, Any]) -> float:
    """The network messages a run of ``spec`` sends, about: its own estimate
    (``AlgorithmSpec.estimate_messages``), else a broadcast and its replies per process and
    request (3 P (P−1) per request, one request when the options say none)."""
    if spec.estimate_messages is not None:
        return spec.estimate_messages(processes, dict(options))
    requests = options.get("requests", 1)
    requests = (
        requests if isinstance(requests, int) and not isinstance(requests, bool) and requests > 0 else 1
    )
    return 3 * processes * max(processes - 1, 1) * requests


def available_bytes(meminfo: str | Path = "/proc/meminfo") -> int | None:
    """MemAvailable from /proc/meminfo, in bytes; None when it cannot be read (not Linux)."""
    try:
        for line in Path(meminfo).read_text(encoding="ascii", errors="replace").splitlines():
            if line.startswith("MemAvailable:"):
                value, unit = line.split()[1:3]
                return int(value) * (1024 if unit.lower() == "kb" else 1)
    except (OSError, ValueError, IndexError):
        return None
    return None


def verdict(prediction: Prediction, available: int | None, what: str) -> tuple[str | None, str | None]:
    """(error, warning) for a prediction against the available memory; both None when it fits.
    ``what`` names the knob to turn down (e.g. "fewer bees")."""
    if available is None:
        return None, None
    if prediction.bytes > available:
        return (
            f"this run is predicted to need {prediction.describe()}, but {human_bytes(available)} is "
            f"available (MemAvailable in /proc/meminfo); use {what}, or {IGNORE_FLAG} to run it anyway"
        ), None
    if prediction.bytes > WARN_SHARE * available:
        return None, (
            f"warning: this run is predicted to need {prediction.describe()}, more than half of the "
            f"{human_bytes(available)} available"
        )
    return None, None


def human_bytes(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB", "PB"):
        if n < 1024 or unit == "PB":
            return f"{n:.0f} {unit}" if unit in ("B", "KB") else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PB"  # unreachable


def human_count(n: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(int(n))
