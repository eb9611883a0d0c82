"""What ``mutexlab check`` may reduce for Lamport, declared for the exact ``LamportNode`` only
(``mutexlab.reduction``; a subclass gets none unless it declares its own). Kept beside the
protocol, read by its ``SPEC`` when ``check`` asks.

Why each is sound (docs/check.md#reductions). The array's timestamps are read only by the entry
condition and ``waiting_for()``, both only while WANTED, and both only compare ``q[j]`` with the
node's own request, as ``(ts, pid)``; a message replaces ``q[j]`` whole. Outside WANTED every
``q[j]`` is at most the clock (a receive lifts the clock past it), and the next request's
timestamp is the clock plus one, so at that request every ``q[j]`` is earlier than it whatever
its timestamp: only whether ``q[j]`` is a REQUEST is ever read of it (``waiting_for()`` says
RELEASE or "a later message"). While WANTED, ``q[j]`` is read as that kind and as earlier or
later than the request. ``q[i]`` is read only while WANTED (the request sets it). REPLY and
RELEASE are never told apart."""

from __future__ import annotations

import copy
from typing import Any

from ..clock import LamportClock, priority
from ..reduction import Canonical, ClockOffsets, Reductions, RetiredClocks, SendBound, declare_parts
from ..setups import Setup
from .classic import State
from .lamport import LamportNode


def _key(p: LamportNode) -> tuple[Any, ...]:
    """snapshot() with the array reduced to what its future reads (see the module)."""
    others = [j for j in range(1, p.n + 1) if j != p.pid]
    if p.state is not State.WANTED:
        return (p.state, p.clock.time, tuple(p.q[j][0] == "REQUEST" for j in others), p.requests_left)
    mine = p.q[p.pid][1]
    earlier = tuple((p.q[j][0] == "REQUEST", p._key(j) < priority(mine, p.pid)) for j in others)  # noqa: SLF001
    return (p.state, p.clock.time, mine, earlier, p.requests_left)


def _low(p: LamportNode) -> int:
    """The smallest timestamp the key keeps: the request while WANTED (the clock is past it), else
    the clock."""
    return p.q[p.pid][1] if p.state is State.WANTED else p.clock.time


def _shift(p: LamportNode, d: int) -> LamportNode:
    twin = copy.deepcopy(p)
    twin.clock.time -= d
    twin.q = {j: (kind, ts - d) for j, (kind, ts) in p.q.items()}
    return twin


def _retire(p: LamportNode, d: int) -> LamportNode:
    """Clock 0 and the array as it started: once nobody is WANTED or will be, neither is read
    again (it keeps no request timestamp)."""
    twin = copy.deepcopy(p)
    twin.clock.time = 0
    twin.q = {j: ("RELEASE", 0) for j in p.q}
    return twin


def _done(p: LamportNode, pending: tuple[str, ...], setup: Setup) -> bool:
    """Will never compare a timestamp again: no request left to make, none waiting."""
    return p.requests_left == 0 and "request" not in pending and p.state is not State.WANTED


def _may_send(p: LamportNode, pending: tuple[str, ...], inflight: tuple[Any, ...], x: LamportNode) -> bool:
    """REQUESTs to everyone only with a request to make, RELEASEs only after one (WANTED or HELD),
    a REPLY to ``x`` only for a REQUEST of ``x`` in flight (``x`` sends none while it does not move)."""
    return (
        p.requests_left > 0
        or "request" in pending
        or p.state is not State.RELEASED
        or any(m.type == "REQUEST" for m in inflight)
    )


# every attribute of a node and its exact types: the reasons below are about these
PARTS = declare_parts(pid=int, n=int, clock=LamportClock, state=State, requests_left=int, entries=int, q=dict)

REDUCTIONS = Reductions(
    frozenset({LamportNode}),
    canonical=Canonical(
        _key,
        "the array is read only while WANTED, against the own request: outside WANTED every entry is "
        "earlier than the next request, so only its kind (REQUEST or not) is kept; while WANTED, its "
        "kind and whether it is earlier than the request",
    ),
    clocks=ClockOffsets(
        _low,
        _shift,
        "the array's timestamps are only compared as (ts, pid) and clocks move only by tick and "
        "receive, which commute with adding one constant to every clock and timestamp",
    ),
    retired=RetiredClocks(
        _done,
        lambda p: [],
        lambda msg: False,
        _retire,
        "once nobody will request and nobody is WANTED, the array is never read again and no timestamp "
        "is compared again: clocks feed only clocks and the stamps of REPLYs and RELEASEs, which feed "
        "only clocks and the array",
    ),
    sends=SendBound(
        _may_send,
        "a node sends REQUESTs only when it requests, RELEASEs only when it exits, a REPLY only for a REQUEST",
    ),
    parts=PARTS,
)
