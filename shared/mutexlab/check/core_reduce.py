"""The reductions on the search core (``core.py``): partial-order reduction's persistent sets
(``por.py``) and the clock-shift normalisation of a world (``reductions.ClockShift``) over
integer worlds, in the pure-Python twin (``Reducer``) of the compiled core's ``_core_reduce.h``.

The algorithm is the model's own, step for step, so that both cores ask the model the same
questions in the same order (the model gives ids in the order they are first asked for, so the
same order means the same worlds, fingerprints and counts). What depends on protocol code is
asked of the model once and remembered, keyed by the ids it was computed from:

* **partial-order reduction**: whether a step (a state id and an input) is visible; whether q
  may send to x (the declared bound, keyed by q's state and pending decisions, what x has in
  flight to q and x's state or pid); the closure of a process under an empty-link mask when no
  bound is declared (as ``PartialOrder.closure`` caches it, so the ``WORK`` spent per world is
  the same). The rest — grouping the steps by process, the closures, the choice of the smallest
  invisible persistent set, the cycle check — is integer work of the core's own.
* **clock shift**: a state's smallest live timestamp, its request low (retired clocks), whether
  a (state, pending decisions) is done requesting, a link's (smallest live timestamp, any dead)
  for its receiver, and the shifted, retired or rewritten state and link ids.
* **sampling** (``sampling.py``): the core counts the worlds it normalises as the model's
  normaliser does and hands the sampler each world due a sample (raw and normal form): the same
  worlds are sampled, and a refusal ends the search as it would the model's.

``eligible`` (``core.py``) keeps the model's own search for what is not remembered by ids alone:
a normalisation that is not ``ClockShift`` (or none) under the sampler, a partial-order reduction
whose closure cache the model has used already, or more than ``MAX_PROCS`` processes or
``MAX_LINKS`` links (the closures are bit sets of processes, cached by a link mask and a process).
"""

from __future__ import annotations

from typing import Any

from ..reduction import NOTHING_LIVE
from . import por as por_module
from .por import PartialOrder
from .reductions import ClockShift

MAX_PROCS = 58  # processes: a closure is a bit set of processes (an int64)
MAX_LINKS = 57  # links: a closure is cached by (mask << 6 | process) in 64 bits
# the normalisation's flags (``Reducer.norm``)
NORM, SHIFT, DEAD, RETIRED = 1, 2, 4, 8


def shift_of(model: Any) -> tuple[Any, Any]:
    """(the world-level normalisation under the sampler, or None; the Sampler, or None)."""
    norm = model.normalise
    sampler = getattr(norm, "sampler", None)
    return (norm.inner if sampler is not None else norm), sampler


def reducible(model: Any) -> bool:
    """Whether the core can run the model's reductions (see the module)."""
    por = model.por
    if por is not None:
        if not isinstance(por, PartialOrder) or por.closures_used() or model.n > MAX_PROCS:
            return False
        if model.L > MAX_LINKS:
            return False
    inner, _ = shift_of(model)
    return inner is None or isinstance(inner, ClockShift)


class ReduceTables:
    """What the reductions ask of the model (each answer once, remembered by the core); mixed
    into ``core.Tables``, whose ``model`` it reads."""

    model: Any

    def reduce_config(self) -> tuple[int, tuple, tuple, int, int, int, int, int]:
        """(por mode: 0 off, 1 no bound, 2 a bound by pid, 3 a bound reading the receiver;
        links into each process flattened (link, sender, ...); the link x→q at x·n+q or -1;
        normalisation flags; the sampler's calls and next call due, -1 without one; ``WORK``;
        ``NOTHING_LIVE``)."""
        m = self.model
        por, (shift, sampler) = m.por, shift_of(m)
        mode = 0 if por is None else 1 if por.sends_to is None else 3 if por.reads_receiver else 2
        into = tuple(tuple(x for pair in links for x in pair) for links in por.into) if por else ()
        link_of = [-1] * (m.n * m.n)
        if por is not None:
            for (x, q), k in por.link_of.items():
                link_of[x * m.n + q] = k
        norm = 0
        if m.normalise is not None:
            norm = NORM
            if shift is not None:
                norm |= SHIFT | (DEAD if shift.clocks.dead is not None else 0)
                norm |= RETIRED if shift.retired is not None else 0
        calls, due = (sampler.calls, sampler.next_at) if sampler is not None else (0, -1)
        return mode, into, tuple(link_of), norm, calls, due, por_module.WORK, NOTHING_LIVE

    def finish(self, calls: int, reduced: int) -> None:
        """The core's counts back to the model: the sampler's calls, the reduced worlds."""
        _, sampler = shift_of(self.model)
        if sampler is not None:
            sampler.calls = calls
        if self.model.por is not None:
            self.model.por.reduced += reduced

    # -- partial-order reduction --------------------------------------------------------------
    def visible(self, sid: int, code: int) -> bool:  # each core keeps the answers itself
        return self.model.por.visible_once(sid, code)

    def may_send(self, world: tuple, q: int, x: int) -> bool:
        return self.model.por.may_send_once(world, q, x)

    # -- the clock shift ------------------------------------------------------------------------
    def _shift(self) -> ClockShift:
        shift, _ = shift_of(self.model)
        return shift

    def low(self, sid: int) -> int:
        return self._shift().state_low(sid)

    def req_low(self, sid: int) -> int:
        return self._shift().req_low(sid)

    def done(self, sid: int, pending: int) -> bool:
        return self._shift().is_done(sid, pending)

    def link(self, q: int, receiver: int, retired: int) -> tuple[int, bool]:
        return self._shift().link_info(q, receiver, bool(retired))

    def shifted(self, i: int, sid: int, d: int) -> int:
        return self._shift().shift_state(i, sid, d)

    def retire(self, i: int, sid: int, d: int) -> int:
        return self._shift().retire_state(i, sid, d)

    def link_shift(self, q: int, receiver: int, d: int, retired: int) -> int:
        return self._shift().link_shift(q, receiver, d, bool(retired))

    def sample(self, raw: tuple, norm: tuple, calls: int) -> tuple[int, int]:
        """The sampler's look at normalisation number ``calls`` (due a sample): its calls and
        next call due after it (its own steps normalise worlds too)."""
        _, sampler = shift_of(self.model)
        assert sampler is not None
        sampler.calls = calls - 1
        sampler.observe(raw, norm)
        return sampler.calls, sampler.next_at


class Reducer:
    """The twin's reductions over integer worlds (``_core_reduce.h`` is the compiled one)."""

    def __init__(self, tables: Any, n: int, link_to: tuple, config: tuple) -> None:
        self.tables, self.n, self.link_to = tables, n, link_to
        self.L = len(link_to)
        self.P0 = n + self.L
        self.por, into, self.link_of, self.norm, self.calls, self.due, self.work, self.nothing = config
        self.into = [tuple((f[j], f[j + 1]) for j in range(0, len(f), 2)) for f in into]
        self.reduced = 0
        self._visible: dict[tuple[int, int], bool] = {}
        self._may: dict[tuple[int, int, int, int], bool] = {}
        self._closure: dict[tuple[int, int], int] = {}
        self._ints: dict[str, dict] = {k: {} for k in ("low", "req_low", "done", "shifted", "retire")}
        self._link: dict[tuple[int, int, int], tuple[int, bool]] = {}
        self._link_shift: dict[tuple[int, int, int, int], int] = {}

    # -- partial-order reduction ----------------------------------------------------------------
    def visible(self, world: tuple, label: tuple) -> bool:
        kind, x, y = label
        key = (world[x], 2 * y + 1) if kind else (world[self.link_to[x]], 2 * y)
        got = self._visible.get(key)
        if got is None:
            got = self._visible[key] = bool(self.tables.visible(*key))
        return got

    def may_send(self, world: tuple, q: int, x: int) -> bool:
        if self.por == 1:
            return True
        back = world[self.n + self.link_of[x * self.n + q]]
        key = (world[q], world[self.P0 + q], back, world[x] if self.por == 3 else -1 - x)
        got = self._may.get(key)
        if got is None:
            got = self._may[key] = bool(self.tables.may_send(world, q, x))
        return got

    def closure(self, world: tuple, p: int, mask: int) -> int | None:
        """``PartialOrder.closure`` as a bit set of processes; None past ``WORK``."""
        if self.por == 1:
            got = self._closure.get((mask, p))
            if got is not None:
                return got
        members, todo = 1 << p, [p]
        while todo:
            x = todo.pop()
            links = self.into[x]
            self.spent += len(links)
            if self.spent > self.work:
                return None
            for k, q in links:
                if not members >> q & 1 and not mask >> k & 1 and self.may_send(world, q, x):
                    members |= 1 << q
                    todo.append(q)
        if self.por == 1:
            self._closure[(mask, p)] = members
        return members

    def ample(self, world: tuple, labels: list) -> list:
        """``PartialOrder.ample``: the steps of the smallest invisible persistent set of processes
        found, or ``labels`` itself."""
        link_to = self.link_to
        owners = [x if kind else link_to[x] for kind, x, _ in labels]
        procs: list[int] = []
        count: dict[int, int] = {}
        for q in owners:
            if q not in count:
                procs.append(q)
                count[q] = 0
            count[q] += 1
        if len(procs) < 2:
            return labels
        hidden = {}
        for q in procs:
            hidden[q] = not any(self.visible(world, lab) for lab, o in zip(labels, owners) if o == q)
        mask = 0
        for k in range(self.L):
            if world[self.n + k]:
                mask |= 1 << k
        best, best_n = None, 0
        self.spent = 0
        for p in sorted(procs, key=count.__getitem__):
            if not hidden[p]:
                continue
            members = self.closure(world, p, mask)
            if members is None:
                return labels
            if any(members >> q & 1 and not hidden[q] for q in procs):
                continue
            chosen = sum(count[q] for q in procs if members >> q & 1)
            if chosen == len(labels) or (best is not None and chosen >= best_n):
                continue
            best, best_n = members, chosen
            if chosen == 1:
                break
        if best is None:
            return labels
        self.reduced += 1
        return [lab for lab, o in zip(labels, owners) if best >> o & 1]

    # -- the clock shift ------------------------------------------------------------------------
    def _ask(self, table: str, *key: int) -> Any:
        cache = self._ints[table]
        got = cache.get(key)
        if got is None:
            got = cache[key] = getattr(self.tables, table)(*key)
        return got

    def shift(self, w: list) -> list:
        """``ClockShift`` of world ``w`` (a list, rewritten in place and returned)."""
        n, P0, ask = self.n, self.P0, self._ask
        retired = 0
        if self.norm & RETIRED:
            retired = int(all(ask("done", w[i], w[P0 + i]) for i in range(n)))
        if retired:
            d = min([self.nothing] + [ask("req_low", w[i]) for i in range(n)])
        else:
            d = min(ask("low", w[i]) for i in range(n))
            if d == 0 and not self.norm & DEAD:
                return w
        dead = False
        for k in range(self.L):
            q = w[n + k]
            if q:
                key = (q, w[self.link_to[k]] if self.norm & DEAD else -1, retired)
                got = self._link.get(key)
                if got is None:  # a receiver matters only to a declaration of dead messages
                    got = self._link[key] = self.tables.link(q, w[self.link_to[k]], retired)
                low, has_dead = got
                d = min(d, low)
                dead = dead or bool(has_dead)
        if d == self.nothing:
            d = 0
        if not (d or retired or dead):
            return w
        receivers = [w[self.link_to[k]] for k in range(self.L)]
        if retired or d:
            which = "retire" if retired else "shifted"
            for i in range(n):
                w[i] = ask(which, i, w[i], d)
        for k in range(self.L):
            q = w[n + k]
            if q:
                shift_key = (q, receivers[k] if self.norm & DEAD else -1, d, retired)
                sid = self._link_shift.get(shift_key)
                if sid is None:
                    sid = self._link_shift[shift_key] = self.tables.link_shift(q, receivers[k], d, retired)
                w[n + k] = sid
        return w

    def normal(self, w: list) -> tuple:
        """The model's normalisation of ``w`` (its raw world), sampled as the model's would be."""
        raw = tuple(w)
        out = tuple(self.shift(w)) if self.norm & SHIFT else raw
        self.calls += 1
        if 0 <= self.due <= self.calls:
            self.calls, self.due = self.tables.sample(raw, out, self.calls)
        return out
