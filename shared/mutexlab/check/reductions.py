"""Reductions of ``mutexlab check`` (all off under ``--no-reduction``).

Each one merges worlds that have the same future, so every verdict is kept; none adds a world.

* **Canonical snapshots** (``canonical``): a process state is keyed by the variables its future
  reads, not by ``snapshot()``. Ricart–Agrawala: the reply set is read only while WANTED (a
  REPLY outside WANTED is ignored, a new request starts an empty set), so outside WANTED it is
  dropped. The bees already key their snapshots this way; the elves' keys are in
  ``elves_reductions.py``.
* **Clock-offset normalisation** (``ClockShift``): Ricart–Agrawala, Lamport and the bees only
  compare timestamps (``(ts, pid)`` priorities, a bee's rank among the reed requests, an ACK's
  ``req_ts`` against the request it answers — equality) and move clocks by ``tick`` (+1) and
  ``receive`` (``max(clock, ts) + 1``). All of these commute with adding one constant to every
  clock, every stored timestamp and every timestamp in flight (``ts``, ``req_ts``), so two
  worlds that differ by such a shift behave the same forever, up to the shift. (Timestamps
  are never printed into a decision: a bee's RELEASEreed carries egg counts, not times.) Each world is therefore shifted down until its smallest
  timestamp is 0. (Off with ``--reorder`` or ``--duplicate``, whose link entries it does not
  rewrite.)

* **Retired clocks** (``RetiredClocks``, Ricart–Agrawala): once nobody will request again the
  clocks and REPLY timestamps are dead (see the class).
* **Whom a process may send to** (``SENDS_TO``): the bound partial-order reduction (``por.py``)
  uses to keep a set of processes small.

Classes are matched with ``isinstance``: a variant that subclasses one of these algorithms is
reduced too, which is right as long as it reads its fields as the original does (the tests'
broken variants do; the differential tests run each of them with and without reductions).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from ..protocols.bees import FINAL_STATES, REST, WAIT_REED, Bee
from ..protocols.elves import Mayor, XRequest
from ..protocols.lamport import LamportNode
from ..protocols.ricart_agrawala import RicartAgrawalaNode
from . import elves_reductions as elves

NAMES = ("canonical snapshots", "clock-offset normalisation", "retired clocks")


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
    protocols = list(protocols)
    if protocols and elves.applies(protocols):
        return elves.canonical
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


def _elves_low(p) -> int:
    return min(elves.live(p), default=NOTHING_LIVE)


SHIFTS: list[tuple[type, Callable, Callable]] = [
    (RicartAgrawalaNode, _ra_low, _ra_shift),
    (LamportNode, _lamport_low, _lamport_shift),
    (Bee, _bee_low, _bee_shift),
]
# the elves' mayor and elves (exact classes, elves_reductions.py): one shift for both
ELVES_SHIFT = (_elves_low, elves.shift)
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
        protos = list(model.setup.protocols.values())
        if elves.applies(protos):
            self.fns = ELVES_SHIFT
        else:
            cls = type(protos[0])
            self.fns = next((low, shift) for base, low, shift in SHIFTS if issubclass(cls, base))

    @staticmethod
    def applies(setup) -> bool:
        protos = list(setup.protocols.values())
        if elves.applies(protos):
            return True
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


class ElvesClockShift(ClockShift):
    """The elves' clock shift, which also knows dead messages: an elf message of a round its
    receiver has already seen stopped (or an earlier one) is dropped on delivery before the
    receiver's clock moves (``Elf.on_message``), so its timestamp is never read. The receiver's
    round only grows and it becomes active again only in a later round, so such a message stays
    dead until delivered. Its timestamp is set to 0 and left out of the smallest live one.

    **Retired clocks**, as Ricart–Agrawala's: once no process will request again
    (``elves_reductions.will_not_request``: the last round, every elf past its last request),
    no clock will become a request's timestamp; clocks feed only other clocks (``tick``,
    ``receive``) and the timestamps of replies, releases, completions and STOP, which feed only
    clocks. Only the requests' timestamps (queued, in flight) are compared from then on. Such a
    world gets every clock and every other timestamp 0, the request timestamps shifted to
    start at 0."""

    def __init__(self, model) -> None:
        super().__init__(model)
        # state id → (will not request, smallest live timestamp, smallest request timestamp)
        self._state: dict[int, tuple[bool, int, int]] = {}
        # (link contents, receiver state, retired) → (smallest live timestamp, any dead one)
        self._link: dict[tuple[int, int, bool], tuple[int, bool]] = {}
        self._link_shifted: dict[tuple[int, int, int, bool], int] = {}
        self._retired: dict[tuple[int, int], int] = {}
        self.final = len(next(p for p in model.setup.protocols.values() if type(p) is Mayor).plan)
        self._links = [(n_k, model.link_to[k]) for k, n_k in enumerate(range(model.n, model.n + model.L))]

    def state_info(self, sid: int) -> tuple[bool, int, int]:
        got = self._state.get(sid)
        if got is None:
            p = self.model.objects[sid]
            got = self._state[sid] = (
                elves.will_not_request(p, self.final),
                min(elves.live(p), default=NOTHING_LIVE),
                min(elves.request_stamps(p), default=NOTHING_LIVE),
            )
        return got

    def __call__(self, world: tuple) -> tuple:
        model = self.model
        n = model.n
        infos = [self._state.get(sid) or self.state_info(sid) for sid in world[:n]]
        retired = all(info[0] for info in infos)
        d = min(info[2] if retired else info[1] for info in infos)
        dead = False
        link_info = self._link
        for slot, receiver in self._links:
            q = world[slot]
            if q:
                key = (q, world[receiver], retired)
                low, has_dead = link_info.get(key) or self.link_info(key)
                if low < d:
                    d = low
                dead = dead or has_dead
        if d == NOTHING_LIVE:
            d = 0
        if not (d or retired or dead):
            return world
        w = list(world)
        if d or retired:
            cache = self._retired if retired else self.shifted
            for i in range(n):
                key2 = (world[i], d)
                sid = cache.get(key2)
                if sid is None:
                    obj = model.objects[world[i]]
                    twin = elves.shift(obj, d, 0) if retired else self.fns[1](obj, d)
                    sid = cache[key2] = model.state_id(i, twin)
                w[i] = sid
        for slot, receiver in self._links:
            if world[slot]:
                w[slot] = self.link_shift(world[slot], world[receiver], d, retired)
        return tuple(w)

    def _live(self, mid: int, receiver: int, retired: bool) -> bool:
        """Whether message ``mid``'s timestamp will be read (to ``receiver``; ``retired``: only
        requests' are)."""
        msg = self.model.messages[mid]
        if retired and not isinstance(msg, XRequest):
            return False
        return not elves.dead_message(msg, self.model.objects[receiver])

    def link_info(self, key: tuple[int, int, bool]) -> tuple[int, bool]:
        q, receiver, retired = key
        live = [self._live(mid, receiver, retired) for mid in self.model.seqs[q]]
        lows = [self.msg_low(mid) for mid, ok in zip(self.model.seqs[q], live, strict=True) if ok]
        got = self._link[key] = (min(lows, default=NOTHING_LIVE), not all(live))
        return got

    def link_shift(self, q: int, receiver: int, d: int, retired: bool) -> int:
        """The link's contents with the live timestamps lowered by ``d`` and the dead ones 0."""
        key = (q, receiver, d, retired)
        got = self._link_shifted.get(key)
        if got is None:
            model = self.model
            got = self._link_shifted[key] = model.seq_id(
                tuple(
                    self._msg(mid, d if self._live(mid, receiver, retired) else model.messages[mid].ts)
                    for mid in model.seqs[q]
                )
            )
        return got


class RetiredClocks:
    """Ricart–Agrawala once nobody will request again (``requests_left`` 0 everywhere and no
    request pending): clocks are then dead. A clock is read only by ``tick``/``receive``, whose
    results become clocks again and REPLY timestamps; a REPLY's timestamp is read only by
    ``receive``; the only other reader of a clock is the next request's timestamp — and there
    is none. What stays live are the requests' timestamps (``my_request`` and REQUESTs in
    flight), which are only compared with each other. Such a world is rewritten with every
    clock and every REPLY's timestamp 0 and the live timestamps shifted down to start at 0;
    any other world goes to the clock shift (``ClockShift``). Only the exact class: a variant
    may read its clock elsewhere."""

    def __init__(self, model, shift: ClockShift) -> None:
        self.model = model
        self.shift = shift
        self._retired: dict[tuple[int, int], bool] = {}
        self._low: dict[int, int] = {}
        self._node: dict[tuple[int, int], int] = {}
        self._msg: dict[tuple[int, int], int] = {}
        self._request = model.action_id("request")

    @staticmethod
    def applies(setup) -> bool:
        return all(type(p) is RicartAgrawalaNode for p in setup.protocols.values())

    def retired(self, sid: int, pending: int) -> bool:
        key = (sid, pending)
        got = self._retired.get(key)
        if got is None:
            got = self._retired[key] = (
                self.model.objects[sid].requests_left == 0 and self._request not in self.model.seqs[pending]
            )
        return got

    def __call__(self, world: tuple) -> tuple:
        model = self.model
        n, L, P0 = model.n, model.L, model.P0
        if not all(self.retired(world[i], world[P0 + i]) for i in range(n)):
            return self.shift(world)
        seqs, objects = model.seqs, model.objects
        d = NOTHING_LIVE
        for i in range(n):
            mine = objects[world[i]].my_request
            if mine is not None and mine[0] < d:
                d = mine[0]
        for k in range(L):
            for mid in seqs[world[n + k]]:
                msg = model.messages[mid]
                if msg.type == "REQUEST" and msg.ts < d:
                    d = msg.ts
        if d == NOTHING_LIVE:
            d = 0
        w = list(world)
        for i in range(n):
            key = (world[i], d)
            sid = self._node.get(key)
            if sid is None:
                twin = copy.deepcopy(objects[world[i]])
                twin.clock.time = 0
                if twin.my_request is not None:
                    twin.my_request = (twin.my_request[0] - d, twin.my_request[1])
                sid = self._node[key] = model.state_id(i, twin)
            w[i] = sid
        for k in range(L):
            if world[n + k]:
                w[n + k] = model.seq_id(tuple(self._message(mid, d) for mid in seqs[world[n + k]]))
        return tuple(w)

    def _message(self, mid: int, d: int) -> int:
        key = (mid, d)
        got = self._msg.get(key)
        if got is None:
            msg = self.model.messages[mid]
            ts = msg.ts - d if msg.type == "REQUEST" else 0
            got = self._msg[key] = self.model.msg_id(msg.model_copy(update={"ts": ts}))
        return got


# -- whom a process may send to (partial-order reduction, por.py) -----------------------------
def _ra_sends_to(p: RicartAgrawalaNode, pending: tuple, inflight: tuple, x: RicartAgrawalaNode) -> bool:
    """Whether Ricart–Agrawala node ``p`` may send to ``x`` while ``x`` does not move. ``p``
    sends a REQUEST to everyone when it requests (``requests_left`` > 0 or a request pending),
    and a REPLY to ``x`` only on delivering a REQUEST of ``x`` (one in flight: ``x`` sends no
    new one while it does not move) or on exit to the deferred requests (``x`` deferred).
    Receiving anything else sends to its sender or to the deferred, never to anyone else."""
    return (
        p.requests_left > 0
        or "request" in pending
        or x.pid in p.deferred
        or any(m.type == "REQUEST" for m in inflight)
    )


def _bee_sends_to(b: Bee, pending: tuple, inflight: tuple, x: Bee) -> bool:
    """A DEAD or RETIRED bee ignores every message without a step of its own and has nothing
    pending: it never sends again. Any other bee will at least broadcast its RELEASEreed."""
    return b.state not in FINAL_STATES or bool(pending)


# Exact classes only: a subclass (a variant) may send elsewhere, and gets no bound.
SENDS_TO: dict[type, Callable[[Any, tuple, tuple, Any], bool]] = {
    RicartAgrawalaNode: _ra_sends_to,
    Bee: _bee_sends_to,
}


def sends_to_for(protocols) -> Callable[[Any, tuple, tuple, Any], bool] | None:
    """The send bound of these protocols, when all of them are of one class that has one (or
    are the elves' exact mayor and elves)."""
    protocols = list(protocols)
    if protocols and elves.applies(protocols):
        return elves.sends_to
    kinds = {type(p) for p in protocols}
    return SENDS_TO.get(kinds.pop()) if len(kinds) == 1 else None
