"""Logical clocks.

``LamportClock`` is the scalar clock every protocol owns; ``priority`` gives the total order
(timestamp, pid) that all Lamport-style algorithms rely on: two distinct processes never
compare equal, whatever their initial clock values.

``VectorClock`` is kept by the drivers (simulator, transport), never by protocols: it exists
only so the audit can decide happened-before.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeGuard

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class LamportClock:
    """Scalar Lamport clock. Invariant: ``time`` never decreases."""

    __slots__ = ("time",)

    def __init__(self, initial: int = 0) -> None:
        if initial < 0:
            raise ValueError(f"a Lamport clock cannot start below 0 (got {initial})")
        self.time = initial

    def tick(self) -> int:
        """A local event (including a send): advance and return the new time."""
        self.time += 1
        return self.time

    def receive(self, stamp: int) -> int:
        """A receive: jump past the sender's stamp."""
        time = self.time
        self.time = time = (stamp if stamp > time else time) + 1  # max(), without its call: once per message
        return time

    def answer(self, stamp: int) -> int:
        """A receive at once answered: ``receive(stamp)`` then ``tick()``, the answer's time. Speed:
        one call for the two on the bees' commonest inputs, a request acked at once."""
        time = self.time
        self.time = time = (stamp if stamp > time else time) + 2
        return time

    def __repr__(self) -> str:
        return f"LamportClock({self.time})"


def priority(timestamp: int, pid: int) -> tuple[int, int]:
    """The total order of requests: lower is earlier; ties on timestamp go to the lower pid."""
    return (timestamp, pid)


class VectorClock:
    """Vector clock over process names. ``counts[name]`` = events of ``name`` known here.

    Invariant: ``counts[owner]`` counts this process's own events, starting at 1 for its first.
    """

    __slots__ = ("owner", "counts")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.counts: dict[str, int] = {}

    def tick(self) -> dict[str, int]:
        self.counts[self.owner] = self.counts.get(self.owner, 0) + 1
        return dict(self.counts)

    def merge(self, other: dict[str, int]) -> dict[str, int]:
        """A receive: take the element-wise maximum, then tick."""
        counts = self.counts
        for name, value in other.items():
            if value > counts.get(name, 0):
                counts[name] = value
        return self.tick()


def happened_before(a_pid: str, a_vc: dict[str, int], b_vc: dict[str, int]) -> bool:
    """Event a (on process a_pid, vector a_vc) happened-before-or-equals event b.

    With per-process event counters, a → b iff b knows at least a's own count.
    """
    return b_vc.get(a_pid, 0) >= a_vc[a_pid]


class LocalEventClocks:
    """Vector clocks that count only *local* events, for an audit that never writes the trace.

    The audit asks happened-before only from a local event (an ``enter``, ``exit`` or
    ``contract_done``) to another event, never from a ``send`` or ``recv``. Counting only local
    events (everything but ``send`` and ``recv``) keeps that exact: event a (local, the k-th of
    its process p) happened-before b iff b's count for p is ≥ k, the same test as with full
    clocks. What it buys: a clock changes only at a local event or when a receive brings news,
    so each process's clock is an immutable array shared by every message sent until it changes
    (no copy per send), and a receive costs one compiled comparison of two arrays (and a maximum
    only when there is news) instead of P dictionary operations in Python; ``fastclock`` has the
    whole clock in C (``clock`` gives it when built). Docs: docs/architecture.md#scaling.

    A clock's ``token`` is ``(serial, counts, sender index)``: ``serial`` numbers each distinct
    array, so a receiver skips a message whose clock is the one it last took from that sender
    (``fastclock``'s ``Token`` is that triple as one object; ``is_token`` knows both).
    """

    def __init__(self, names: list[str], compiled: bool = True) -> None:
        from .fastclock import compiled as built

        self.index = {name: i for i, name in enumerate(names)}
        self.names = list(names)
        self._serial = 0
        # The compiled clocks (``fastclock``: ``merge.c``'s ``Clock``, a receive in one C call) or
        # None: this module's ``LocalEventClock`` on numpy. With them the counts are ``array("B")``,
        # a byte an entry, made ``array("i")`` by a clock that counts past 255 (merge.c: narrow
        # counts; numpy not even imported). ``compiled=False``: numpy's, always.
        module = built() if compiled else None
        self._fast: Any = None
        if module is not None:
            self._zero: Any = array("B", bytes(len(names)))
            self._fast = module.Family(self._zero)
            self._clock = module.Clock
            return
        import numpy as np

        self._zero = np.zeros(len(names), dtype=np.int32)
        # Scratch for ``LocalEventClock.merge``'s comparison (one at a time: the drivers are single
        # threaded), and the comparison itself, bound once.
        self._greater = np.zeros(len(names), dtype=bool)
        self._compare = np.greater
        self._maximum = np.maximum

    def clock(self, name: str) -> EventClock:
        if self._fast is not None:  # the same clock, in C
            clock: EventClock = self._clock(self._fast, self.index[name])
            return clock
        return LocalEventClock(self, self.index[name])

    def next_serial(self) -> int:
        if self._fast is not None:  # one sequence with the compiled clocks'
            serial: int = self._fast.next_serial()
            return serial
        self._serial += 1
        return self._serial


class EventClock(Protocol):
    """What a process's clock in a ``LocalEventClocks`` family offers: ``LocalEventClock``, or
    ``fastclock``'s ``Clock``, the same in C."""

    @property
    def counts(self) -> Any: ...

    @property
    def token(self) -> tuple[Any, ...]: ...

    def tick(self) -> tuple[Any, ...]: ...

    def merge(self, token: tuple[Any, ...]) -> tuple[Any, ...]: ...


class LocalEventClock:
    """One process's clock in a ``LocalEventClocks`` family (see there), on numpy."""

    __slots__ = ("family", "own", "counts", "token", "_last", "_greater", "_compare")

    def __init__(self, family: LocalEventClocks, own: int) -> None:
        self.family = family
        self.own = own
        self.counts = family._zero  # noqa: SLF001 - a clock shares its family's arrays; shared and never written: a new array on every change
        self.token: tuple[Any, ...] = (0, self.counts, own)
        # serial of the last token taken from each sender (0: none); a list, not an array: one
        # item is read per receive, and a list item is a fraction of the cost of an array's
        self._last = [0] * len(family.names)
        self._greater, self._compare = family._greater, family._compare  # noqa: SLF001 - shared scratch

    def tick(self) -> tuple[Any, ...]:
        counts = self.counts.__copy__()
        counts[self.own] += 1
        self.counts = counts
        self.token = (self.family.next_serial(), counts, self.own)
        return self.token

    def merge(self, token: tuple[Any, ...]) -> tuple[Any, ...]:
        """A receive: take the element-wise maximum with the sender's token (no tick: a receive is
        not a local event)."""
        serial, theirs, sender = token
        if serial == 0 or self._last[sender] == serial:
            return self.token
        if serial < 0:  # as fastclock's Clock refuses it: no family gives one out
            raise ValueError("merge: a token's serial below 0 (serials are 0 or above)")
        self._last[sender] = serial
        mine = self.counts
        family = self.family
        # ``(theirs > mine).any()``, without a new array and through ``bytes.__contains__`` (one
        # memchr): a third of the time, and most receives at P = 1000 come here (measured).
        if b"\x01" in self._compare(theirs, mine, out=self._greater).tobytes():
            self.counts = family._maximum(mine, theirs)  # noqa: SLF001 - the family's bound np.maximum
            self.token = (family.next_serial(), self.counts, self.own)
        return self.token


def is_token(vc: object) -> TypeGuard[Sequence[Any]]:
    """Whether ``vc`` is a ``LocalEventClocks`` token: numpy's clocks' ``(serial, counts, sender)``
    tuple, or ``fastclock``'s ``Token``, which reads as that tuple (``token[1]``: a view of its
    counts) and is one object (merge.c: the compact token)."""
    kind = type(vc)
    return isinstance(vc, tuple) or (kind.__name__ == "Token" and kind.__module__ == "_mutexlab_merge")


class ClockView:
    """A read-only ``{name: count}`` view of a ``LocalEventClocks`` array, for the audit."""

    __slots__ = ("index", "counts")

    def __init__(self, index: dict[str, int], counts: npt.NDArray[np.int32] | array[int]) -> None:
        self.index = index
        self.counts = counts

    def get(self, name: str, default: int = 0) -> int:
        i = self.index.get(name)
        if i is None:
            return default
        value = int(self.counts[i])
        return value if value else default

    def __getitem__(self, name: str) -> int:
        value = self.get(name, 0)
        if not value:
            raise KeyError(name)
        return value

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.get(name, 0) > 0

    def items(self) -> list[tuple[str, int]]:
        return [(n, int(c)) for n, c in zip(self.index, self.counts.tolist(), strict=True) if c]

    def __iter__(self) -> Iterator[str]:
        return iter(n for n, _ in self.items())

    def __len__(self) -> int:
        return sum(1 for c in self.counts.tolist() if c)
