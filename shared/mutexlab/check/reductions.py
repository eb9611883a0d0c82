"""Reductions of ``mutexlab check`` (all off under ``--no-reduction``).

Each one merges worlds that have the same future, so every verdict is kept; none adds a world.

* **Canonical snapshots** (``canonical``): a process state is keyed by the variables its future
  reads, not by ``snapshot()``. Ricart–Agrawala: the reply set is read only while WANTED (a
  REPLY outside WANTED is ignored, a new request starts an empty set), so outside WANTED it is
  dropped. Bees and elves already key their snapshots this way.
* **Clock-offset normalisation** (``ClockShift``): Ricart–Agrawala, Lamport and the bees only
  compare timestamps (``(ts, pid)`` priorities, a bee's rank among the reed requests, an ACK's
  ``req_ts`` against the request it answers — equality) and move clocks by ``tick`` (+1) and
  ``receive`` (``max(clock, ts) + 1``). All of these commute with adding one constant to every
  clock, every stored timestamp and every timestamp in flight (``ts``, ``req_ts``), so two
  worlds that differ by such a shift behave the same forever, up to the shift. (Timestamps
  are never printed into a decision: a bee's RELEASEreed carries egg counts, not times.) Each world is therefore shifted down until its smallest
  timestamp is 0. (Off with ``--reorder`` or ``--duplicate``, whose link entries it does not
  rewrite.)

Classes are matched with ``isinstance``: a variant that subclasses one of these algorithms is
reduced too, which is right as long as it reads its fields as the original does (the tests'
broken variants do; the differential tests run each of them with and without reductions).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..protocols.bees import FINAL_STATES, REST, WAIT_REED, Bee
from ..protocols.lamport import LamportNode
from ..protocols.ricart_agrawala import RicartAgrawalaNode

NAMES = ("canonical snapshots", "clock-offset normalisation")


def _ra_canonical(p: RicartAgrawalaNode):
    return (
        p.state,
        p.clock.time,
        p.my_request,
        frozenset(p.replies) if p.state == "WANTED" else None,
        tuple(p.deferred),
        p.requests_left,
    )


CANONICAL: list[tuple[type, Callable[[Any], Any]]] = [(RicartAgrawalaNode, _ra_canonical)]


def canonical_for(protocols) -> Callable[[Any], Any] | None:
    """A per-process key function for these protocols, or None when none of them has one."""
    table = {}
    for proto in protocols:
        for cls, fn in CANONICAL:
            if isinstance(proto, cls):
                table[type(proto)] = fn
                break
    if not table:
        return None

    def key(proto):
        fn = table.get(type(proto))
        return fn(proto) if fn is not None else proto.snapshot()

    return key


# -- clock shifts --------------------------------------------------------------------------
def _ra_low(p: RicartAgrawalaNode) -> int:
    return min(p.clock.time, p.my_request[0]) if p.my_request else p.clock.time


def _ra_shift(p: RicartAgrawalaNode, d: int) -> RicartAgrawalaNode:
    twin = copy.deepcopy(p)
    twin.clock.time -= d
    if twin.my_request is not None:
        twin.my_request = (twin.my_request[0] - d, twin.my_request[1])
    return twin


def _lamport_low(p: LamportNode) -> int:
    return min([p.clock.time] + [ts for _, ts in p.q.values()])


def _lamport_shift(p: LamportNode, d: int) -> LamportNode:
    twin = copy.deepcopy(p)
    twin.clock.time -= d
    twin.q = {j: (kind, ts - d) for j, (kind, ts) in p.q.items()}
    return twin


NOTHING_LIVE = 1 << 60  # the low of a state with no live timestamp


def _bee_low(b: Bee) -> int:
    """The smallest *live* timestamp (what ``snapshot()`` keeps): none once DEAD or RETIRED; the
    reed requests only until the bee has its reed (its rank is fixed then). Dead values are
    shifted too and may go below 0: they are never read or sent again."""
    if b.state in FINAL_STATES:
        return NOTHING_LIVE
    values = [b.clock.time] + [ts for _, ts in b.deferred]
    if b.state in (REST, WAIT_REED):
        values += [ts for ts, _ in b.requests.values()]
    if b.flower_request is not None:
        values.append(b.flower_request[0])
    return min(values)


def _bee_shift(b: Bee, d: int) -> Bee:
    twin = copy.deepcopy(b)
    twin.clock.time -= d
    twin.requests = {j: (ts - d, pid) for j, (ts, pid) in b.requests.items()}
    twin._order = None
    twin.deferred = [(j, ts - d) for j, ts in b.deferred]
    if b.flower_request is not None:
        twin.flower_request = (b.flower_request[0] - d, b.flower_request[1])
    return twin


SHIFTS: list[tuple[type, Callable, Callable]] = [
    (RicartAgrawalaNode, _ra_low, _ra_shift),
    (LamportNode, _lamport_low, _lamport_shift),
    (Bee, _bee_low, _bee_shift),
]
# message fields that hold timestamps, besides ``ts``
STAMPS = ("req_ts",)


class ClockShift:
    """Shifts a world down so that its smallest timestamp is 0 (see the module's docstring)."""

    def __init__(self, model) -> None:
        self.model = model
        self.low: dict[int, int] = {}  # state id → its smallest timestamp
        self.shifted: dict[tuple[int, int], int] = {}
        self.msg_shifted: dict[tuple[int, int], int] = {}
        self.msg_lows: dict[int, int] = {}
        cls = type(next(iter(model.setup.protocols.values())))
        self.fns = next((low, shift) for base, low, shift in SHIFTS if issubclass(cls, base))

    @staticmethod
    def applies(setup) -> bool:
        protos = list(setup.protocols.values())
        return any(all(isinstance(p, base) for p in protos) for base, _, _ in SHIFTS) and all(
            type(p) is type(protos[0]) for p in protos
        )

    def state_low(self, sid: int) -> int:
        got = self.low.get(sid)
        if got is None:
            got = self.low[sid] = self.fns[0](self.model.objects[sid])
        return got

    def __call__(self, world: tuple) -> tuple:
        model = self.model
        n, L = model.n, model.L
        d = min(self.state_low(world[i]) for i in range(n))
        if d == 0:
            return world
        seqs = model.seqs
        for k in range(L):
            for mid in seqs[world[n + k]]:
                ts = self.msg_low(mid)
                if ts < d:
                    d = ts
                    if d == 0:
                        return world
        if d == NOTHING_LIVE:
            return world
        w = list(world)
        for i in range(n):
            key = (world[i], d)
            sid = self.shifted.get(key)
            if sid is None:
                sid = self.shifted[key] = model.state_id(i, self.fns[1](model.objects[world[i]], d))
            w[i] = sid
        for k in range(L):
            if world[n + k]:
                w[n + k] = model.seq_id(tuple(self._msg(mid, d) for mid in seqs[world[n + k]]))
        return tuple(w)

    def msg_low(self, mid: int) -> int:
        got = self.msg_lows.get(mid)
        if got is None:
            msg = self.model.messages[mid]
            got = self.msg_lows[mid] = min([msg.ts] + [getattr(msg, f) for f in STAMPS if hasattr(msg, f)])
        return got

    def _msg(self, mid: int, d: int) -> int:
        key = (mid, d)
        got = self.msg_shifted.get(key)
        if got is None:
            msg = self.model.messages[mid]
            update = {"ts": msg.ts - d}
            update.update({f: getattr(msg, f) - d for f in STAMPS if hasattr(msg, f)})
            got = self.msg_shifted[key] = self.model.msg_id(msg.model_copy(update=update))
        return got
