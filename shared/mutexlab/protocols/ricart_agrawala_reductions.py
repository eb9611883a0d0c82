"""What ``mutexlab check`` may reduce for Ricart–Agrawala, declared for the exact ``RicartAgrawalaNode`` only
(``mutexlab.reduction``; a subclass gets none unless it declares its own). Kept beside the
protocol, read by its ``SPEC`` when ``check`` asks."""

from __future__ import annotations

import copy
from typing import Any

from ..clock import LamportClock
from ..reduction import Canonical, ClockOffsets, Reductions, RetiredClocks, SendBound, declare_parts
from ..setups import Setup
from .classic import State
from .ricart_agrawala import RicartAgrawalaNode


def _key(p: RicartAgrawalaNode) -> tuple[Any, ...]:
    """snapshot() without the reply set outside WANTED."""
    return (
        p.state,
        p.clock.time,
        p.my_request,
        frozenset(p.replies) if p.state is State.WANTED else None,
        tuple(p.deferred),
        p.requests_left,
    )


def _low(p: RicartAgrawalaNode) -> int:
    return min(p.clock.time, p.my_request[0]) if p.my_request else p.clock.time


def _shift(p: RicartAgrawalaNode, d: int, clock: int | None = None) -> RicartAgrawalaNode:
    twin = copy.deepcopy(p)
    twin.clock.time = p.clock.time - d if clock is None else clock
    if p.my_request is not None:
        twin.my_request = (p.my_request[0] - d, p.my_request[1])
    return twin


def _done(p: RicartAgrawalaNode, pending: tuple[str, ...], setup: Setup) -> bool:
    return p.requests_left == 0 and "request" not in pending


def _may_send(
    p: RicartAgrawalaNode, pending: tuple[str, ...], inflight: tuple[Any, ...], x: RicartAgrawalaNode
) -> bool:
    """A REQUEST to everyone only with a request to make; a REPLY to ``x`` only for a REQUEST of
    ``x`` in flight (``x`` sends no new one while it does not move) or deferred."""
    return (
        p.requests_left > 0
        or "request" in pending
        or x.pid in p.deferred
        or any(m.type == "REQUEST" for m in inflight)
    )


# every attribute of a node and its exact types: the reasons below are about these (a node of this
# class with another clock is other code)
PARTS = declare_parts(
    pid=int,
    n=int,
    clock=LamportClock,
    state=State,
    requests_left=int,
    entries=int,
    my_request=(tuple, None),
    replies=set,
    deferred=list,
)

REDUCTIONS = Reductions(
    frozenset({RicartAgrawalaNode}),
    canonical=Canonical(
        _key,
        "the reply set is read only while WANTED: a REPLY elsewhere is refused, a request starts an empty set",
    ),
    clocks=ClockOffsets(
        _low,
        _shift,
        "timestamps are only compared as (ts, pid) and clocks move only by tick and receive, "
        "which commute with adding one constant to every clock and timestamp",
    ),
    retired=RetiredClocks(
        _done,
        lambda p: [p.my_request[0]] if p.my_request is not None else [],
        lambda msg: msg.type == "REQUEST",
        lambda p, d: _shift(p, d, clock=0),
        "once nobody will request, a clock feeds only clocks and REPLY timestamps, which feed only "
        "clocks; request timestamps are only compared with each other",
    ),
    sends=SendBound(_may_send, "a node sends a REQUEST only when it requests, a REPLY only for a REQUEST"),
    parts=PARTS,
)
