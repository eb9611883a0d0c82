"""Logical clocks.

``LamportClock`` is the scalar clock every protocol owns; ``priority`` gives the total order
(timestamp, pid) that all Lamport-style algorithms rely on: two distinct processes never
compare equal, whatever their initial clock values.

``VectorClock`` is kept by the drivers (simulator, transport), never by protocols: it exists
only so the audit can decide happened-before.
"""

from __future__ import annotations


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
        self.time = max(self.time, stamp) + 1
        return self.time

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
