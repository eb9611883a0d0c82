"""The reductions of ``mutexlab check``: generic machinery for what a protocol declares.

A protocol's spec declares what it licenses (``mutexlab.reduction``: canonical keys, clock
offsets, retired clocks, a send bound for partial-order reduction), for **exact classes**: a
declaration applies to a setup only when it covers every process's exact class, and nothing
is ever inferred from a base class, and a process whose parts (attributes) are not the declared
ones gets none (``Reductions.strange``). ``choose`` decides what to apply and says why for each
reduction, applied or not (``Note``); ``check`` prints the notes. Each reduction merges only
worlds with the same future (up to the declared argument), so a verdict is kept and no world
is added; all are off under ``--no-reduction``. A reduction the sampling refused
(``sampling.py``: its twin worlds behaved otherwise) is off, with the sample's words.

* **Canonical snapshots**: the declared key replaces ``snapshot()`` as a process state's key.
* **Clock-offset normalisation** (``ClockShift``): every world is shifted down until its
  smallest live timestamp is 0 — every process by the declared ``shift``, every message in
  flight on the declared stamp fields. A message the declaration calls dead for its receiver
  gets its timestamps 0 and is left out of the minimum. Off with ``--reorder`` or
  ``--duplicate``, whose link entries it does not rewrite.
* **Retired clocks** (in ``ClockShift``): once every process is done requesting (declared per
  state and pending decisions), every clock becomes 0, every message timestamp 0 but the
  requests', and the request timestamps are shifted down to start at 0.
* **Partial-order reduction** (``por.py``) is generic; the declared send bound narrows it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from ..reduction import (
    CANONICAL,
    CLOCKS,
    NOTHING_LIVE,
    POR,
    RETIRED,
    SENDS,
    ClockOffsets,
    Reductions,
    SendBound,
)
from ..reduction import RetiredClocks as Retirement


@dataclass(frozen=True)
class Note:
    """One line of what ``check`` did about a reduction, and why."""

    name: str
    applied: bool
    why: str

    def as_dict(self) -> dict:
        return {"reduction": self.name, "applied": self.applied, "why": self.why}


POR_WHY = (
    "generic: steps of different processes commute (each reads and writes only its own process, "
    "the head of one link into it and the tails of links out of it), and a set of processes is "
    "taken only when none of its steps is visible"
)


@dataclass
class Choice:
    """What to apply to one configuration (``None``: not applied), with a note for each."""

    declared: Reductions | None
    canonical: Callable[[Any], Hashable] | None = None
    clocks: ClockOffsets | None = None
    retired: Retirement | None = None
    sends: SendBound | None = None
    notes: list[Note] = field(default_factory=list)


def _names(classes) -> str:
    return ", ".join(sorted({c.__name__ for c in classes}))


ENDLESS_OFF = (
    "off with --endless: it rests on the workload's budget of requests, which an endless one does not use"
)


def refused_note(name: str, why: str) -> Note:
    return Note(name, False, f"refused: {why}")


def choose(
    protocols,
    candidates: list[Reductions],
    on: bool,
    faults: str | None,
    endless: bool = False,
    refused: dict[str, str] | None = None,
    names: dict[int, str] | None = None,
) -> Choice:
    """The reductions of the first of ``candidates`` that covers every one of ``protocols``
    (by pid, or a list; ``on``: reductions wanted at all; ``faults``: the flag that makes links
    reorder or duplicate, if any; ``endless``: processes request forever; ``refused``: name →
    why the sampling refused it; ``names``: pid → process name, for the notes). Partial-order
    reduction is decided by the engine (it depends on the scenario's invariant)."""
    by_pid = protocols if isinstance(protocols, dict) else dict(enumerate(protocols))
    protocols = list(by_pid.values())
    refused = refused or {}
    classes = {type(p) for p in protocols}
    declared = next((d for d in candidates if d.covers(protocols)), None)
    choice = Choice(declared)
    notes = choice.notes
    if not on:
        notes.append(Note("every reduction", False, "--no-reduction"))
        return choice
    if declared is None:
        known = set().union(*(d.classes for d in candidates)) & classes
        why = f"not declared by {_names(classes - known)}"
        if known:
            why += (
                f" ({_names(known)} declares some, but a declaration applies only when it covers every "
                "process's exact class)"
            )
        for name in (CANONICAL, CLOCKS, RETIRED, SENDS):
            notes.append(Note(name, False, why))
        return choice
    who = _names(classes)
    strange = declared.strange(by_pid, names)
    for name, reason in declared.named().items():
        if reason is None:
            notes.append(Note(name, False, f"not declared by {who}"))
        elif strange is not None:
            notes.append(
                Note(name, False, f"off: {strange} (the declaration of {who} is about its declared parts)")
            )
        elif name in refused:
            notes.append(refused_note(name, refused[name]))
        elif name in (CLOCKS, RETIRED) and faults:
            notes.append(Note(name, False, f"off with {faults} (it does not rewrite those links' entries)"))
        elif name in (RETIRED, SENDS) and endless:
            notes.append(Note(name, False, ENDLESS_OFF))
        else:
            notes.append(Note(name, True, f"declared by {who}: {reason}"))
    applied = {n.name for n in notes if n.applied}
    choice.canonical = declared.canonical.key if CANONICAL in applied and declared.canonical else None
    choice.clocks = declared.clocks if CLOCKS in applied else None
    choice.retired = declared.retired if RETIRED in applied else None
    choice.sends = declared.sends if SENDS in applied else None
    return choice


def por_note(applied: bool, why: str | None = None) -> Note:
    return Note(POR, applied, POR_WHY if applied else (why or ""))


DROPPED = (
    "dropped: the reduced graph has a cycle, and liveness needs the full graph's; searched again without it"
)


def notes_of(model) -> list[Note]:
    """The model's notes, with partial-order reduction dropped if the search dropped it."""
    if not model.por_dropped:
        return list(model.notes)
    return [Note(n.name, False, DROPPED) if n.name in (POR, SENDS) and n.applied else n for n in model.notes]


class ClockShift:
    """Shifts a world down so that its smallest live timestamp is 0, or retires its clocks
    (see the module). Every result is cached by the ids it was computed from."""

    def __init__(self, model, clocks: ClockOffsets, retired: Retirement | None = None) -> None:
        self.model = model
        self.clocks = clocks
        self.retired = retired
        self.stamps = clocks.stamps
        self.low: dict[int, int] = {}  # state id → its smallest live timestamp
        self.shifted: dict[tuple[int, int], int] = {}  # (state id, d) → shifted state id
        self.msg_lows: dict[int, int] = {}
        self.msg_shifted: dict[tuple[int, int], int] = {}
        self._done: dict[tuple[int, int], bool] = {}  # (state id, pending id) → will not request
        self._req_low: dict[int, int] = {}
        self._retired: dict[tuple[int, int], int] = {}
        self._zero: dict[int, int] = {}
        # (link contents, receiver state, retired) → (smallest live timestamp, any dead one)
        self._link: dict[tuple[int, int, bool], tuple[int, bool]] = {}
        self._link_shifted: dict[tuple[int, int, int, bool], int] = {}
        n = model.n
        self._links = [(n + k, model.link_to[k]) for k in range(model.L)]

    # -- per state, per message --------------------------------------------------------------
    def state_low(self, sid: int) -> int:
        got = self.low.get(sid)
        if got is None:
            got = self.low[sid] = self.clocks.low(self.model.objects[sid])
        return got

    def msg_low(self, mid: int) -> int:
        got = self.msg_lows.get(mid)
        if got is None:
            msg = self.model.messages[mid]
            got = self.msg_lows[mid] = min(getattr(msg, f) for f in self.stamps if hasattr(msg, f))
        return got

    def _msg(self, mid: int, d: int) -> int:
        """Message ``mid`` with its timestamps lowered by ``d``."""
        key = (mid, d)
        got = self.msg_shifted.get(key)
        if got is None:
            msg = self.model.messages[mid]
            update = {f: getattr(msg, f) - d for f in self.stamps if hasattr(msg, f)}
            got = self.msg_shifted[key] = self.model.msg_id(msg.model_copy(update=update))
        return got

    def _dead_msg(self, mid: int) -> int:
        """Message ``mid`` with its timestamps 0 (never read)."""
        got = self._zero.get(mid)
        if got is None:
            msg = self.model.messages[mid]
            update = {f: 0 for f in self.stamps if hasattr(msg, f)}
            got = self._zero[mid] = self.model.msg_id(msg.model_copy(update=update))
        return got

    def _state(self, cache: dict, i: int, sid: int, d: int, fn) -> int:
        key = (sid, d)
        got = cache.get(key)
        if got is None:
            got = cache[key] = self.model.state_id(i, fn(self.model.objects[sid], d))
        return got

    def is_done(self, sid: int, pending: int) -> bool:
        key = (sid, pending)
        got = self._done.get(key)
        if got is None:
            model = self.model
            actions = tuple(model.actions[a] for a in model.seqs[pending])
            assert self.retired is not None
            got = self._done[key] = self.retired.done(model.objects[sid], actions, model.setup)
        return got

    # -- worlds ----------------------------------------------------------------------------------
    def retires(self, world: tuple) -> bool:
        """Whether ``world`` is rewritten by retired clocks (every process done requesting)."""
        if self.retired is None:
            return False
        P0 = self.model.P0
        return all(self.is_done(world[i], world[P0 + i]) for i in range(self.model.n))

    def __call__(self, world: tuple) -> tuple:
        if self.retired is not None:
            n, P0 = self.model.n, self.model.P0
            done = self._done
            for i in range(n):
                got = done.get((world[i], world[P0 + i]))
                if not (got if got is not None else self.is_done(world[i], world[P0 + i])):
                    break
            else:
                return self._retire(world)
        return self._plain(world) if self.clocks.dead is None else self._with_dead(world, False)

    def _plain(self, world: tuple) -> tuple:
        """The shift when no message is ever dead: nothing to do once some timestamp is 0."""
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
            w[i] = self._state(self.shifted, i, world[i], d, self.clocks.shift)
        for k in range(L):
            if world[n + k]:
                w[n + k] = model.seq_id(tuple(self._msg(mid, d) for mid in seqs[world[n + k]]))
        return tuple(w)

    def _retire(self, world: tuple) -> tuple:
        """Every process done requesting: clocks 0, only request timestamps kept (shifted)."""
        n = self.model.n
        d = NOTHING_LIVE
        for i in range(n):
            low = self._req_low.get(world[i])
            if low is None:
                low = self.req_low(world[i])
            if low < d:
                d = low
        return self._with_dead(world, True, d)

    def req_low(self, sid: int) -> int:
        """State ``sid``'s smallest request timestamp (retired clocks keep only those)."""
        got = self._req_low.get(sid)
        if got is None:
            assert self.retired is not None
            got = self._req_low[sid] = min(
                self.retired.requests(self.model.objects[sid]), default=NOTHING_LIVE
            )
        return got

    def shift_state(self, i: int, sid: int, d: int) -> int:
        """Process ``i``'s state ``sid`` shifted down by ``d``."""
        return self._state(self.shifted, i, sid, d, self.clocks.shift)

    def retire_state(self, i: int, sid: int, d: int) -> int:
        """Process ``i``'s state ``sid`` with its clocks retired, requests lowered by ``d``."""
        assert self.retired is not None
        return self._state(self._retired, i, sid, d, self.retired.retire)

    def link_info(self, q: int, receiver: int, retired: bool) -> tuple[int, bool]:
        """(smallest live timestamp, any dead) of link contents ``q`` for state ``receiver``."""
        key = (q, receiver, retired)
        return self._link.get(key) or self._link_info(key)

    def _with_dead(self, world: tuple, retired: bool, d: int | None = None) -> tuple:
        """The shift when messages may be dead (or clocks retired, ``retired``: ``d`` is then the
        smallest request timestamp kept): live timestamps lowered by the smallest, dead ones 0."""
        model = self.model
        n = model.n
        if d is None:
            d = min(self.state_low(world[i]) for i in range(n))
        dead = False
        link_info = self._link
        for slot, receiver in self._links:
            q = world[slot]
            if q:
                key = (q, world[receiver], retired)
                low, has_dead = link_info.get(key) or self._link_info(key)
                if low < d:
                    d = low
                dead = dead or has_dead
        if d == NOTHING_LIVE:
            d = 0
        if not (d or retired or dead):
            return world
        w = list(world)
        if retired:
            assert self.retired is not None
            for i in range(n):
                w[i] = self._state(self._retired, i, world[i], d, self.retired.retire)
        elif d:
            for i in range(n):
                w[i] = self._state(self.shifted, i, world[i], d, self.clocks.shift)
        for slot, receiver in self._links:
            if world[slot]:
                w[slot] = self.link_shift(world[slot], world[receiver], d, retired)
        return tuple(w)

    def _live(self, mid: int, receiver: int, retired: bool) -> bool:
        """Whether message ``mid``'s timestamps will be read (by state ``receiver``; ``retired``:
        only requests' are)."""
        msg = self.model.messages[mid]
        if retired and not self.retired.is_request(msg):  # type: ignore[union-attr]
            return False
        dead = self.clocks.dead
        return dead is None or not dead(msg, self.model.objects[receiver])

    def _link_info(self, key: tuple[int, int, bool]) -> tuple[int, bool]:
        q, receiver, retired = key
        seq = self.model.seqs[q]
        live = [self._live(mid, receiver, retired) for mid in seq]
        lows = [self.msg_low(mid) for mid, ok in zip(seq, live, strict=True) if ok]
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
                    self._msg(mid, d) if self._live(mid, receiver, retired) else self._dead_msg(mid)
                    for mid in model.seqs[q]
                )
            )
        return got
