"""What ``mutexlab check`` may reduce for the mason bees: the exact ``Bee`` only (reduction.py).

``bees.SPEC`` declares ``REDUCTIONS``.

* **Canonical snapshots**: none beyond ``Bee.snapshot()``, which already keeps only what a
  bee's future reads (its docstring argues it).
* **Clock-offset normalisation**: a bee uses timestamps only in comparisons — ``(ts, pid)``
  priorities, its rank among the reed requests, an ACK's ``req_ts`` against the request it
  answers (equality) — and moves its clock by ``tick`` and ``receive``; no timestamp is printed
  into a decision (a RELEASEreed carries egg counts, not times). All of this commutes with
  adding one constant to every clock, stored timestamp and timestamp in flight (``ts``,
  ``req_ts``). The smallest *live* timestamp is taken over exactly what ``snapshot()`` keeps:
  none once DEAD or RETIRED; the reed requests only until the bee has its reed (its rank is
  fixed then); the flower request only while waiting for a flower; the deferred requests only
  while waiting for or sitting on a flower. Dead values are shifted too and may go below 0:
  they are never read or sent again.
* **Send bound**: a DEAD or RETIRED bee ignores every message without a step of its own and
  has nothing pending, so it never sends again. Any other bee will at least broadcast its
  RELEASEreed.
"""

from __future__ import annotations

import copy
from typing import Any

from ...clock import LamportClock
from ...reduction import NOTHING_LIVE, ClockOffsets, Reductions, SendBound, declare_parts
from .machine import Bee
from .messages import FINAL_STATES, BeeState


def low(b: Bee) -> int:
    if b.state in FINAL_STATES:
        return NOTHING_LIVE
    # exactly the timestamps snapshot() keeps: a value it drops may differ between two bees it
    # merges, and the world's normal form must not depend on which one the search kept
    values = [b.clock.time]
    if b.state is BeeState.REST or b.state is BeeState.WAIT_REED:
        values += [ts for ts, _ in b.requests.values()]
    if b.state is BeeState.WAIT_FLOWER and b.flower_request is not None:
        values.append(b.flower_request[0])
    if b.state is BeeState.WAIT_FLOWER or b.state is BeeState.ON_FLOWER:
        values += [ts for _, ts in b.deferred]
    return min(values)


def shift(b: Bee, d: int) -> Bee:
    twin = copy.deepcopy(b)
    twin.clock.time -= d
    twin.requests = {j: (ts - d, pid) for j, (ts, pid) in b.requests.items()}
    twin._order = None  # noqa: SLF001 - the twin's request order is stale
    twin.deferred = [(j, ts - d) for j, ts in b.deferred]
    if b.flower_request is not None:
        twin.flower_request = (b.flower_request[0] - d, b.flower_request[1])
    return twin


def may_send(b: Bee, pending: tuple[str, ...], inflight: tuple[Any, ...], x: Bee) -> bool:
    return b.state not in FINAL_STATES or bool(pending)


# every attribute of a bee and its exact types: the reasons above are about these
PARTS = declare_parts(
    pid=int,
    n=int,
    flowers=int,
    reeds=int,
    eggs=int,
    cocoons=int,
    per_reed=int,
    clock=LamportClock,
    state=BeeState,
    alive=set,
    requests=dict,
    _order=(tuple, None),
    reed_acks=set,
    _reed_missing=int,
    reed=int,
    reed_eggs=dict,
    flower_request=(tuple, None),
    flower_acks=set,
    _flower_live=int,
    deferred=list,
    laid=int,
)

REDUCTIONS = Reductions(
    frozenset({Bee}),
    clocks=ClockOffsets(
        low,
        shift,
        "timestamps are only compared ((ts, pid) priorities, reed ranks, an ACK's req_ts against "
        "its request) and clocks move only by tick and receive, which commute with adding one "
        "constant to every clock and timestamp",
        stamps=("ts", "req_ts"),
    ),
    sends=SendBound(may_send, "a DEAD or RETIRED bee ignores every message and never sends again"),
    parts=PARTS,
)
