"""What ``mutexlab check`` may reduce for Lamport, declared for the exact ``LamportNode`` only
(``mutexlab.reduction``; a subclass gets none unless it declares its own). Kept beside the
protocol, read by its ``SPEC`` when ``check`` asks."""

from __future__ import annotations

import copy

from ..clock import LamportClock
from ..reduction import ClockOffsets, Reductions, declare_parts
from .classic import State
from .lamport import LamportNode


def _low(p: LamportNode) -> int:
    return min([p.clock.time] + [ts for _, ts in p.q.values()])


def _shift(p: LamportNode, d: int) -> LamportNode:
    twin = copy.deepcopy(p)
    twin.clock.time -= d
    twin.q = {j: (kind, ts - d) for j, (kind, ts) in p.q.items()}
    return twin


# every attribute of a node and its exact types: the reasons below are about these
PARTS = declare_parts(pid=int, n=int, clock=LamportClock, state=State, requests_left=int, entries=int, q=dict)

REDUCTIONS = Reductions(
    frozenset({LamportNode}),
    clocks=ClockOffsets(
        _low,
        _shift,
        "the array's timestamps are only compared as (ts, pid) and clocks move only by tick and "
        "receive, which commute with adding one constant to every clock and timestamp",
    ),
    parts=PARTS,
)
