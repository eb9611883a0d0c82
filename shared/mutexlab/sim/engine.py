"""The seeded discrete-event simulator (docs/architecture.md#drivers).

Virtual time; every link (sender → receiver) is FIFO with random delays; local decisions
(``Schedule`` effects) happen after random dwell times. Same setup + same seed ⇒ the same
event order and the same trace, byte for byte: all randomness comes from one ``random.Random``
and ties in time are broken by a sequence number.

Time unit: the mean message delay is 1.0, so durations read as "message delays".
"""

from __future__ import annotations

import heapq
import math
import random
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from ..protocol import Send
from ..setup import ConfigError, Setup
from ..trace import TraceWriter
from .driver import Driver

_MESSAGE, _TIMER = 0, 1
PROGRESS_EVERY = 4096  # events between two calls of ``Simulation.progress`` (when set)


def _exp_inlinable() -> bool:
    """``random.expovariate(1.0)`` is ``-log(1 - random())`` in this Python (checked, not assumed),
    so the plain loop may draw exponential delays without the call and get the same numbers."""
    a, b = random.Random(20260101), random.Random(20260101)
    return all(a.expovariate(1.0) == -math.log(1.0 - b.random()) for _ in range(512))


_EXP_INLINE = _exp_inlinable()


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
    truncated: bool  # max_events reached before quiescence
    duplicates_dropped: int = 0  # injected duplicates recognised by message id and dropped
    protocols: Mapping[int, Any] = field(repr=False, default_factory=dict)

    @property
    def total_messages(self) -> int:
        return sum(self.messages.values())

    @property
    def ok(self) -> bool:
        return not self.stalled and not self.truncated


class Simulation(Driver):
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
        self._queue: list = []
        self._seq = 0
        # sender → receiver → time of the last message put on that link (one dict per sender: no
        # (sender, receiver) tuple to build and hash per message).
        self._link_last: defaultdict[int, dict[int, float]] = defaultdict(dict)
        self.events = 0
        self.duplicates_dropped = 0
        # Optional ``progress(events, now)``, called every PROGRESS_EVERY events and at the end; it
        # only watches (a progress bar): the run is the same with or without it.
        self.progress: Callable[[int, float], None] | None = None
        self._seen: set[tuple[int, str]] | None = set() if self.config.duplicate > 0 else None
        # One message delay per call; the same calls on the same generator as ever (traces stay identical).
        if self.config.delay == "exp":
            self._delay: Callable[[], float] = partial(self.rng.expovariate, 1.0)
        elif self.config.delay == "uniform":
            self._delay = partial(self.rng.uniform, 0.5, 1.5)
        else:
            self._delay = lambda: 1.0

    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        config = self.config
        copies = 2 if config.duplicate and self.rng.random() < config.duplicate else 1
        link = self._link_last[sender]
        for _ in range(copies):
            at = self.now + self._delay()
            if config.spike and self.rng.random() < config.spike:
                at += config.spike_delay
            if not config.reorder:
                last = link.get(to, 0.0)
                if at < last:  # FIFO per link: never overtake an earlier message on the same link
                    at = last
                link[to] = at
            self._seq += 1
            heapq.heappush(self._queue, (at, self._seq, _MESSAGE, to, (sender, msg, msg_id, vc)))

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        mean = self.config.dwell.get(dwell, 1.0)
        at = self.now + (self.rng.expovariate(1.0 / mean) if mean > 0 else 0.0)
        self._seq += 1
        heapq.heappush(self._queue, (at, self._seq, _TIMER, pid, action))

    def _plain(self) -> bool:
        """No trace, no fault injection and the effect semantics of ``Driver``: ``_run_plain`` applies."""
        config, cls = self.config, type(self)
        return (
            self.trace is None
            and not (config.duplicate or config.spike or config.reorder)
            and cls.transmit is Simulation.transmit
            and cls.deliver is Driver.deliver
            and cls.feed is Driver.feed
            and cls.apply is Driver.apply
        )

    def run(self) -> SimResult:
        self.start_all()
        limit, progress = self.config.max_events, self.progress
        # Without a progress callback: one slice up to the limit, as ever. With one: slices of
        # PROGRESS_EVERY events, the same loop resumed, so the same events in the same order.
        while self._queue and self.events < limit:
            until = limit if progress is None else min(limit, self.events + PROGRESS_EVERY)
            if self._plain():
                self._run_plain(until)
            else:
                self._run_general(until)
            if progress is not None:
                progress(self.events, self.now)
        return self._result()

    def _run_general(self, limit: int) -> None:
        queue = self._queue
        pop = heapq.heappop
        while queue and self.events < limit:
            at, _, kind, pid, payload = pop(queue)
            self.now = at
            self.events += 1
            if kind == _MESSAGE:
                sender, msg, msg_id, vc = payload
                if self._seen is not None:
                    if (pid, msg_id) in self._seen:
                        self.duplicates_dropped += 1
                        continue
                    self._seen.add((pid, msg_id))
                self.deliver(sender, pid, msg, msg_id, vc)
            else:
                self.feed(pid, lambda p, a=payload: p.on_local(a))

    def _run_plain(self, limit: int) -> None:
        """The same loop as ``_run_general`` with ``deliver``, ``apply`` and ``transmit`` inlined for
        network sends (the bulk of the work); every other effect goes through ``apply``. Same
        random draws in the same order, same event order: the run is identical, only faster.
        ``seq`` is kept in a local and written back to ``self._seq`` around every ``apply`` (which
        may schedule or transmit) and at the end."""
        queue, protocols = self._queue, self.protocols
        messages, sent, link_last = self.messages, self._sent, self._link_last
        delay, pop, push, apply = self._delay, heapq.heappop, heapq.heappush, self.apply
        uniform = self.rng.random if (_EXP_INLINE and self.config.delay == "exp") else None
        log = math.log
        events, seq = self.events, self._seq
        try:
            while queue and events < limit:
                at, _, kind, pid, payload = pop(queue)
                self.now = at
                events += 1
                if kind == _MESSAGE:
                    effects = protocols[pid].on_message(payload[1])
                else:
                    effects = protocols[pid].on_local(payload)
                if not effects:
                    continue
                links = link_last[pid]
                for effect in effects:
                    if type(effect) is not Send or effect.to == pid or effect.to not in protocols:
                        self._seq = seq
                        apply(pid, (effect,))  # (an unknown receiver: raises the driver's error)
                        seq = self._seq
                        continue
                    to, msg = effect.to, effect.msg
                    messages[msg.type] += 1
                    number = sent[pid] + 1
                    sent[pid] = number
                    when = (
                        at - log(1.0 - uniform()) if uniform is not None else at + delay()
                    )  # = expovariate(1)
                    last = links.get(to, 0.0)
                    if when < last:  # FIFO per link: never overtake an earlier message on the same link
                        when = last
                    links[to] = when
                    seq += 1
                    push(queue, (when, seq, _MESSAGE, to, (pid, msg, number, None)))
        finally:
            self.events, self._seq = events, seq

    def _result(self) -> SimResult:
        queue = self._queue
        return SimResult(
            algorithm=self.setup.algorithm,
            seed=self.config.seed,
            duration=self.now,
            events=self.events,
            messages=dict(sorted(self.messages.items())),
            entries=dict(sorted(self.entries.items())),
            notes=dict(sorted(self.notes.items())),
            states={self.names[p]: proto.state for p, proto in sorted(self.protocols.items())},
            stalled=self.waiting() if not queue else {},
            truncated=bool(queue),
            duplicates_dropped=self.duplicates_dropped,
            protocols=self.protocols,
        )


def simulate(setup: Setup, seed: int = 0, trace: TraceWriter | None = None, **config: Any) -> SimResult:
    """Run ``setup`` to quiescence under seed ``seed``."""
    return Simulation(setup, SimConfig(seed=seed, **config), trace).run()
