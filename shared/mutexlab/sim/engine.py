"""The seeded discrete-event simulator (docs/architecture.md#drivers).

Virtual time; every link (sender → receiver) is FIFO with random delays; local decisions
(``Schedule`` effects) happen after random dwell times. Same setup + same seed ⇒ the same
event order and the same trace, byte for byte: all randomness comes from one ``random.Random``
and events due at the same time are handled in the order they were scheduled.

The event queue: a calendar of buckets, each ``1 / scale`` of virtual time wide. An item is a
flat tuple ``(time, kind, ...)``. Future buckets (``_later``: bucket number → its items in
scheduling order, and ``_starts``, a heap of those numbers) are unsorted lists; the bucket being
drained (``_now``) is sorted once, when its turn comes, by time and, for equal times, scheduling
order (a stable sort), and kept latest-first so the next item is ``pop()``ed off its end; an item
pushed into the bucket being drained is inserted in its place (rare: most delays are longer than
a bucket). So items come out in (time, order queued), as from a heap of ``(time, sequence)``
pairs, whatever the width. Speed: at P = 1000 bees ~600,000 messages are in flight; a heap of
them cost a pop ~20 levels of comparisons between floats scattered in memory (15% of the run,
docs/scaling.md#scaling), a bucket's sort about ten comparisons per item within a few thousand.

Time unit: the mean message delay is 1.0, so durations read as "message delays".
"""

from __future__ import annotations

import copy
import gc
import heapq
import random
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from math import log
from operator import itemgetter
from typing import Any, ClassVar

from ..findings import Stall
from ..protocol import Enter, Exit, HandlerError
from ..setups import (
    ConfigError,
    Setup,
    SharedState,
    class_state,
    class_state_changed,
    module_random,
)
from ..show import state_text
from ..trace import TraceWriter
from ..waiting import WaitsRaised
from . import fastpath, hung
from .driver import Driver
from .stuck import wanted

_MESSAGE, _TIMER = 0, 1
_AT = itemgetter(0)  # an item's time: the sort key of a bucket


def bucket_scale(processes: int) -> float:
    """Buckets per unit of virtual time for a run of ``processes``: a power of two near P / 16, at
    least 1 (about a thousand items a bucket for bees at P = 1000, tens at P = 10; any width gives
    the same order, this one only the speed)."""
    return float(2 ** max(0, round(log(max(processes, 1) / 16, 2)))) if processes > 16 else 1.0


PROGRESS_EVERY = 4096  # events between two calls of ``Simulation.progress`` (when set)
WATCH_EVERY = 1024  # events between two calls of ``Simulation.watch`` (when set; progress then too)
# The cyclic garbage collector during a run: a young collection every RUN_GC_THRESHOLD
# allocations (Python's default: 700), and a full one only as Python decides after that.
RUN_GC_THRESHOLD = (100_000, 20, 100)


@dataclass
class SimConfig:
    seed: int = 0
    delay: str = "exp"  # "exp": exponential with mean 1; "uniform": uniform on [0.5, 1.5]; "fixed": 1
    dwell: dict[str, float] = field(default_factory=dict)  # mean dwell per kind; unlisted kinds: 1.0
    max_events: int = 5_000_000  # a guard against a livelock; hitting it is reported, never hidden
    # Fault injection. Duplicates and delay spikes stay within the algorithms' model: the
    # receiving side drops a duplicate by its message id (as the RabbitMQ transport does), and a
    # spike delays a message without letting it overtake its link. ``reorder`` leaves the model:
    # messages on one link may overtake each other (FIFO is broken on purpose).
    duplicate: float = 0.0  # probability that a message is delivered a second time
    spike: float = 0.0  # probability that a message is delayed by ``spike_delay`` more
    spike_delay: float = 50.0
    reorder: bool = False

    def __post_init__(self) -> None:
        for name in ("duplicate", "spike"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise ConfigError(f"{name} is a probability between 0 and 1, got {value!r}")
        if not isinstance(self.spike_delay, (int, float)) or self.spike_delay < 0:
            raise ConfigError(f"spike_delay must be a number ≥ 0, got {self.spike_delay!r}")
        if self.delay not in ("exp", "uniform", "fixed"):
            raise ConfigError(f"delay model must be exp, uniform or fixed, got {self.delay!r}")
        for kind, mean in self.dwell.items():
            if not isinstance(mean, (int, float)) or mean < 0:
                raise ConfigError(f"dwell time for {kind!r} must be a number ≥ 0, got {mean!r}")
        if self.max_events < 1:
            raise ConfigError("max_events must be at least 1")


@dataclass
class SimResult:
    algorithm: str
    seed: int
    duration: float  # virtual time of the last event
    events: int  # inputs processed (deliveries + local decisions)
    messages: dict[str, int]  # network messages by type
    entries: dict[str, int]  # entries by resource kind (reed, flower, cs, pins ...)
    notes: dict[str, int]  # scenario events by name (egg, death ...)
    states: dict[str, str]  # final state per process name
    stalled: dict[str, dict[str, list[str]]]  # processes not finished: what they lack, from whom
    truncated: bool  # a limit reached before quiescence (``limit`` says which)
    duplicates_dropped: int = 0  # injected duplicates recognised by message id and dropped
    protocols: Mapping[int, Any] = field(repr=False, default_factory=dict)
    # Which limit cut the run short: "events" (``SimConfig.max_events``) or what ``Simulation.watch``
    # returned (the command's memory guard); None when the run ended by itself.
    limit: str | None = None

    @property
    def total_messages(self) -> int:
        return sum(self.messages.values())

    @property
    def ok(self) -> bool:
        return not self.stalled and not self.truncated


class Simulation(Driver):
    # False: every run through the plain loop (``_run``), never sim/fastpath.py's (the
    # differential test, tests/test_fastpath.py, runs both).
    fast: ClassVar[bool] = True

    def __init__(
        self,
        setup: Setup,
        config: SimConfig | None = None,
        trace: TraceWriter | None = None,
        trace_bodies: bool = True,
    ) -> None:
        super().__init__(setup, trace, trace_bodies)
        self.config = config or SimConfig()
        self.rng = random.Random(self.config.seed)
        # the event queue (module docstring): the bucket being drained, latest item first, and its
        # number; later buckets by number, items in push order; the heap of their numbers
        self._scale = bucket_scale(len(setup.protocols))
        self._now: list[tuple] = []
        self._bucket = -1
        self._later: dict[int, list[tuple]] = {}
        self._starts: list[int] = []
        # sender → receiver → time of the last message put on that link, 0.0 before the first
        # (``link_table``; no (sender, receiver) tuple to build and hash per message).
        self._link_last = link_table(setup.protocols)
        self._changeable = setup.codec.changeable  # types ``transmit`` copies for each receiver
        self.events = 0
        self.duplicates_dropped = 0
        self.holdings: dict[str, list[tuple[int, int]]] = {}  # resource → [(pid, units)]: a stall names them
        # Optional ``progress(events, now)``, called every PROGRESS_EVERY events and at the end; it
        # only watches (a progress bar): the run is the same with or without it.
        self.progress: Callable[[int, float], None] | None = None
        # Optional ``watch()``, called every WATCH_EVERY events while something is still due: the
        # name of a limit the run has reached (it stops there, ``SimResult.limit``), else None. It
        # only looks (the process's memory, say): until it answers, the run is the same without it.
        self.watch: Callable[[], str | None] | None = None
        self._stopped: str | None = None
        self._seen: set[tuple[int, str]] | None = set() if self.config.duplicate > 0 else None
        # sim/fastpath.py's tallied loop: each process's clock and its bound merge, made on its
        # first slice and kept for the others (a run with progress or watch runs in slices).
        self._fast_clocks: tuple[dict[int, Any], dict[int, tuple[Any, Any, Any]]] | None = None
        # One message delay per call, drawn from ``rng``. Exponential: ``-log(1 - random())``, what
        # ``random.expovariate(1.0)`` computes, written out so sim/fastpath.py can inline it.
        self._random = self.rng.random
        self._delay: Callable[[], float]
        if self.config.delay == "exp":
            self._delay = lambda: -log(1.0 - self._random())
        elif self.config.delay == "uniform":
            self._delay = partial(self.rng.uniform, 0.5, 1.5)
        else:
            self._delay = lambda: 1.0

    def holding_changed(self, pid: int, effect: Enter | Exit) -> None:
        held = self.holdings.setdefault(effect.resource, [])
        if isinstance(effect, Enter):
            held.append((pid, effect.units))
        elif (pid, effect.units) in held:
            held.remove((pid, effect.units))

    def stall(self, stalled: dict[str, dict[str, list[str]]] | None = None) -> Stall:
        """Who waits for what from whom (``waiting``, or ``stalled`` when known: a ``waiting_for()``
        raised), with who holds which resource and what each waiter waits to enter
        (``sim/stuck.py``): what a stall explanation names."""
        names = self.names
        holding = {r: [names[p] for p, _ in hs] for r, hs in self.holdings.items() if hs}
        stalled = self.waiting() if stalled is None else stalled
        resources = list(self.setup.capacities)
        wants = {
            names[p]: wanted(proto, resources, [r for r, hs in holding.items() if names[p] in hs])
            for p, proto in self.protocols.items()
            if names[p] in stalled
        }
        return Stall(stalled, holding, wants)

    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        config = self.config
        copies = 2 if config.duplicate and self.rng.random() < config.duplicate else 1
        link = self._link_last[sender]
        for _ in range(copies):
            at = self.now + self._delay()
            if config.spike and self.rng.random() < config.spike:
                at += config.spike_delay
            if not config.reorder:
                last = link[to]
                if at < last:  # FIFO per link: never overtake an earlier message on the same link
                    at = last
                link[to] = at
            # each receiver its own copy of a message that may change (a list in it): as over the wire,
            # what the sender or another receiver does to theirs later never reaches it
            held = copy.deepcopy(msg) if msg.type in self._changeable else msg
            self.push((at, _MESSAGE, to, sender, held, msg_id, vc))

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        mean = self.config.dwell.get(dwell, 1.0)
        at = self.now + (self.rng.expovariate(1.0 / mean) if mean > 0 else 0.0)
        self.push((at, _TIMER, pid, action))

    def push(self, item: tuple) -> None:
        """Queue ``item`` after all queued for its time (sim/fastpath.py inlines this): a message
        ``(time, _MESSAGE, to, sender, msg, msg_id, vc)`` or a timer ``(time, _TIMER, pid, action)``."""
        number = int(item[0] * self._scale)
        if number <= self._bucket:  # the bucket being drained (latest first): before its items ≤ time
            now = self._now
            now.insert(bisect_left(now, -item[0], key=_latest_first), item)
            return
        later = self._later.get(number)
        if later is None:
            self._later[number] = [item]
            heapq.heappush(self._starts, number)
        else:
            later.append(item)

    def pending(self) -> bool:
        """Something is queued."""
        return bool(self._now) or bool(self._starts)

    def pop(self) -> tuple:
        """The next item due (``push``'s order), taken off the queue; the queue is not empty."""
        if not self._now:
            self._bucket = heapq.heappop(self._starts)
            self._now = next_bucket(self._later.pop(self._bucket))
        return self._now.pop()

    def run(self) -> SimResult:
        limit, progress, watch = self.config.max_events, self.progress, self.watch
        fast = fastpath.mode(self) if self.fast else None
        # Without a progress or watch callback: one slice up to the limit, as ever. With one: slices
        # of PROGRESS_EVERY events, the same loop resumed, so the same events in the same order.
        every = WATCH_EVERY if watch is not None else PROGRESS_EVERY if progress is not None else None
        kept = class_state(self.setup)  # a handler changing one is every process's: a finding
        try:
            with module_random(self.config.seed):
                self.start_all()
                with _rare_collections(), hung.watching(self.setup):
                    while self.pending() and self.events < limit:
                        end = limit if every is None else min(limit, self.events + every)
                        if fast is None:
                            self._run(end)
                        else:
                            fastpath.run(self, end, fast)
                        if progress is not None:
                            progress(self.events, self.now)
                        if watch is not None and self.pending():
                            self._stopped = watch()
                            if self._stopped is not None:
                                break
            changed = class_state_changed(kept)
            if changed is not None:
                raise SharedState(changed)
        except HandlerError as exc:  # the algorithm's code raised: say how this run reached it
            exc.scenario = f"seed {self.config.seed}, at event {self.events:,} (time {self.now:.3f})"
            raise
        try:
            return self._result()
        except WaitsRaised as exc:  # the run ended, stalled; its stall cannot be explained
            exc.scenario = f"seed {self.config.seed}, at event {self.events:,} (time {self.now:.3f})"
            # every process whose wait is unknown stalls too: waiting for what nobody knows
            order = [self.names[pid] for pid in sorted(self.protocols)]
            exc.result = self._result(exc.waiting(order))
            raise

    def _run(self, limit: int) -> None:
        """Handle events in time order until the queue is empty or ``limit`` events are done: a
        message through ``deliver``, a timer through ``feed``, every effect through ``apply``.
        (sim/fastpath.py is this loop written out, run where it is the same run.)"""
        seen = self._seen
        while self.pending() and self.events < limit:
            entry = self.pop()
            self.now = entry[0]
            self.events += 1
            if entry[1] == _MESSAGE:
                _, _, pid, sender, msg, msg_id, vc = entry
                if seen is not None:  # the duplicate filter, as the RabbitMQ transport's
                    if (pid, msg_id) in seen:
                        self.duplicates_dropped += 1
                        continue
                    seen.add((pid, msg_id))
                self.deliver(sender, pid, msg, msg_id, vc)
            else:
                _, _, pid, action = entry
                self.feed(pid, lambda p, a=action: p.on_local(a))

    def _result(self, stalled: dict[str, dict[str, list[str]]] | None = None) -> SimResult:
        """The run as it ended; ``stalled``: what its unfinished processes wait for, when known."""
        queue = self.pending()
        return SimResult(
            algorithm=self.setup.algorithm,
            seed=self.config.seed,
            duration=self.now,
            events=self.events,
            messages=dict(sorted(self.messages.items())),
            entries=dict(sorted(self.entries.items())),
            notes=dict(sorted(self.notes.items())),
            states={self.names[p]: state_text(proto.state) for p, proto in sorted(self.protocols.items())},
            stalled={} if queue else self.stall(stalled),
            truncated=queue,
            duplicates_dropped=self.duplicates_dropped,
            protocols=self.protocols,
            limit=(self._stopped or "events") if queue else None,
        )


DENSE_LINKS = 4_000_000  # most (sender, receiver) slots kept as lists (8 bytes each)


class _Unsent(dict):
    """A sender's links by receiver, where the pids are too sparse for a list: 0.0 when unused."""

    def __missing__(self, key: int) -> float:
        return 0.0


def link_table(pids: Iterable[int]) -> dict[int, Any]:
    """Per sender, the time of the last message on each of its links, indexed by receiver (0.0: none
    yet): a list per sender when the pids are ints 0..M with M + 1 lists of M + 1 within
    DENSE_LINKS, else a dict reading 0.0 for a receiver not sent to. Speed: at P = 1000 a send's
    lookup in a dict of P floats was 6% of the run (hash probe, key compare); a list is one index."""
    pids = list(pids)
    top = max(pids, default=0) if all(type(p) is int and p >= 0 for p in pids) else None
    if top is not None and (top + 1) ** 2 <= DENSE_LINKS:
        return {pid: [0.0] * (top + 1) for pid in pids}
    return {pid: _Unsent() for pid in pids}


def _latest_first(item: tuple) -> float:
    """The key under which a drained bucket (latest first) is ascending: minus the time."""
    return -item[0]


def next_bucket(items: list[tuple]) -> list[tuple]:
    """A bucket's items (in push order), made the bucket being drained: sorted by time and, among
    equal times, push order (a stable sort), latest first, so ``pop()`` takes them in order."""
    if len(items) > 1:
        items.reverse()  # equal times: the last pushed first, and it stays so through a stable sort
        items.sort(key=_AT, reverse=True)
    return items


@contextmanager
def _rare_collections():
    """Run with the cyclic garbage collector's young collections RUN_GC_THRESHOLD apart. Speed: at
    P = 1000 bees ~600,000 messages are in flight, and each wave of them promoted to the oldest
    generation set off a full collection (0.6 s each, 11 of the first 24 CPU-s). Cyclic garbage is
    still collected, in fewer, larger young collections; a run's own objects form no cycles."""
    before = gc.get_threshold()
    gc.set_threshold(*RUN_GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def simulate(setup: Setup, seed: int = 0, trace: TraceWriter | None = None, **config: Any) -> SimResult:
    """Run ``setup`` to quiescence under seed ``seed``."""
    return Simulation(setup, SimConfig(seed=seed, **config), trace).run()
