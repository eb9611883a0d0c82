"""The augmented worlds of ``check --metrics`` (metrics.py): what a world carries besides the
model's — each message's charge and hop counts, each process's open request, the requests
something still refers to — and how a step moves it (``Tracker.step``). Invariants: two paths to
the same augmented world have the same futures and the same figures ahead; an augmented world is
ints and tuples only (no ``None``, whose hash is its address), so its fingerprint is the same in
every run.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from ..protocol import Note, Protocol, ProtocolError
from ..sim.driver import resource_kind
from .model import LOCAL, Model

NONE = -1  # no request / no hops known


class Tracker:
    """Requests, charges and hops of one model; ``step`` maps an augmented world forward.

    The augmented part of a world, ``aux`` = (tags, procs, live, measuring):

    * ``tags``: per link, per message in flight, ``(charge, hops)`` — the request it is charged
      to (a key, or NONE) and its hop counts (``()`` while no kind is measured, else
      ``(kind, longest, shortest)`` for each kind measured that a chain reaches);
    * ``procs``: per process ``(open, kind, own, hops)`` — its open request's key and kind
      (NONE when it waits for none), its latest request's key, its hop counts (as a message's).
      The bypass is not here: ``search_metrics`` computes it over the closed worlds;
    * ``live``: indexed by key, ``(kind, charge, counts)`` of every request something still
      refers to (a process's latest request, a message in flight charged to it), else ``()``; a
      request nothing refers to can be charged no more: its figure is taken and it is dropped
      (``counts``: not given up). Without ``carry`` the charge stays 0 (it would split worlds by
      every count): ``search_metrics`` computes it bottom-up from ``charged`` and ``closed``;
    * ``measuring``: a bit per kind — an exit of that kind while someone waited for it, its
      next entry not yet made; hop counts are kept only for the kinds measured.

    The run's totals (messages sent, entries) are not here: ``search_metrics`` computes the
    run's average bottom-up, as the bypass.

    A request's key is ``i + n·j`` for the smallest ``j`` its process does not use among the
    live ones: equal histories give equal keys whatever came before.
    """

    def __init__(self, model: Model, carry: bool = True) -> None:
        self.model = model
        # carry: each live request's running charge is in the world and taken at its close (the
        # reference walk of the witnesses); else it stays 0 and ``step`` lists, for the search's
        # bottom-up charges, the requests each step charges and closes
        self.carry = carry
        self.charged: list[int] = []  # the last step's charged keys, once per message
        self.closed: list[tuple[int, bool]] = []  # the last step's closed keys, (key, counts)
        self.kinds: list[str] = []  # kind id → name
        self._kind_ids: dict[str, int] = {}
        self._noted: dict[tuple[int, int], int] = {}  # (state id, code) → kind noted, or NONE
        self._wants: dict[int, int] = {}  # state id → kind it waits to enter, or NONE
        self._res_kind: dict[int, int] = {}  # resource id → kind id
        self._holds: dict[tuple, tuple] = {}  # holds → ((kind, +1|-1), ...)
        self._declares: dict[type, bool] = {}  # protocol class → it defines wants()

    def kind_id(self, name: str) -> int:
        got = self._kind_ids.get(name)
        if got is None:
            got = self._kind_ids[name] = len(self.kinds)
            self.kinds.append(name)
        return got

    def noted(self, sid: int, code: int) -> int:
        """The kind the local decision ``code`` in state ``sid`` notes as a request, or NONE."""
        key = (sid, code)
        got = self._noted.get(key)
        if got is None:
            got = NONE
            model = self.model
            ran = getattr(model, "requested", {}).get(key)  # what the model's own run noted
            if code & 1 and ran is not None:
                for resource in ran:
                    got = self.kind_id(resource_kind(resource))
            elif code & 1:
                twin = copy.deepcopy(model.objects[sid])
                try:
                    effects = twin.on_local(model.actions[code >> 1])
                except ProtocolError:
                    effects = []
                for effect in effects:
                    if type(effect) is Note and effect.event == "request":
                        got = self.kind_id(resource_kind(str(effect.fields.get("resource"))))
            self._noted[key] = got
        return got

    def wants(self, sid: int) -> int:
        """The kind state ``sid`` waits to enter (``Protocol.wants``), or NONE."""
        got = self._wants.get(sid)
        if got is None:
            kind = self.model.objects[sid].wants()
            got = self._wants[sid] = NONE if kind is None else self.kind_id(kind)
        return got

    def states_wants(self, sid: int) -> bool:
        """Whether the process of state ``sid`` states its requests by ``wants()``."""
        cls = type(self.model.objects[sid])
        got = self._declares.get(cls)
        if got is None:
            got = self._declares[cls] = cls.wants is not Protocol.wants
        return got

    def moves(self, holds: tuple) -> tuple:
        """((kind, +1 entry | −1 exit), ...) of a transition's holds."""
        got = self._holds.get(holds)
        if got is None:
            out = []
            for sign, rid, _ in holds:
                kind = self._res_kind.get(rid)
                if kind is None:
                    kind = self._res_kind[rid] = self.kind_id(resource_kind(self.model.resources[rid]))
                out.append((kind, 1 if sign > 0 else -1))
            got = self._holds[holds] = tuple(out)
        return got

    def initial(self, world: tuple) -> tuple:
        """The augmented initial world: the start's messages charged to nobody."""
        m = self.model
        tags = tuple(tuple((NONE, ()) for _ in m.seqs[world[m.n + k]]) for k in range(m.L))
        procs = tuple((NONE, NONE, NONE, ()) for _ in range(m.n))
        return (tags, procs, (), 0)

    def awaits(self, world: tuple, q: int, i: int, mid: int) -> bool:
        m = self.model
        lacks = m.waiting(world[q])
        whom = lacks.get(m.messages[mid].type) if lacks else None
        return whom is not None and (not whom or m.pids[i] in whom)

    def step(self, world: tuple, aux: tuple, label: tuple, nxt: tuple, t, seen: Callable) -> tuple:
        """The augmented successor; ``seen(kind, what, value, i)`` records a figure reached."""
        m = self.model
        n = m.n
        tags, procs, live, measuring = aux
        kind, x, y = label
        if self.charged:
            self.charged = []
        if self.closed:
            self.closed = []
        freed = NONE  # a key that may have lost its last reference
        if kind == LOCAL:
            i = x
            sid = world[i]
            p = procs[i]
            cause = p[2]
            noted = self._noted.get((sid, 2 * y + 1))
            if noted is None:
                noted = self.noted(sid, 2 * y + 1)
        else:
            i = m.link_to[x]
            sid = world[i]
            link = tags[x]
            (cause, mhops), tags = link[0], tags[:x] + (link[1:],) + tags[x + 1 :]
            p = procs[i]
            freed = cause
            if mhops:
                p = p[:3] + (_merge(p[3], mhops),)
            noted = NONE
        wants = self._wants
        w0 = wants.get(sid)
        if w0 is None:
            w0 = self.wants(sid)
        w1 = wants.get(t.state)
        if w1 is None:
            w1 = self.wants(t.state)
        if noted == NONE and not t.holds and not t.sends and w1 in (w0, NONE) and p[1] == NONE:
            # the common step: a delivery or a decision that changes no request and sends nothing
            if p is not procs[i]:
                procs = procs[:i] + (p,) + procs[i + 1 :]
            if freed != NONE and not _referenced(freed, procs, tags):
                live = self._close(live, freed, seen)
            return (tags, procs, live, measuring)
        p = list(p)
        procs_l = list(procs)
        live_l = list(live)
        old_own = p[2]

        def open_request(kd: int) -> int:
            j = 0
            while i + n * j < len(live_l) and live_l[i + n * j]:
                j += 1
            key = i + n * j
            while len(live_l) <= key:
                live_l.append(())
            live_l[key] = (kd, 0, True)
            p[0], p[1], p[2] = key, kd, key
            return key

        if noted != NONE:
            cause = open_request(noted)
        if t.holds:
            for kd, sign in self.moves(t.holds):
                bit = 1 << kd
                if sign > 0:
                    if p[1] != kd and self.states_wants(sid):
                        # an entry with no request open: a request served at once
                        cause = open_request(kd)
                        seen(kd, "bypass", 0, i)  # (the others' bypass: search_metrics)
                    p[0] = p[1] = NONE
                    if measuring & bit:
                        longest, shortest = _hops(p[3], kd)
                        seen(kd, "sync", longest, i)
                        seen(kd, "sync_short", shortest, i)
                        measuring &= ~bit
                        p[3] = _without(p[3], kd)
                        procs_l, tags = _clear_all(procs_l, tags, kd)
                else:
                    if measuring & bit:
                        procs_l, tags = _clear_all(procs_l, tags, kd)
                        p[3] = _without(p[3], kd)
                    if p[1] == kd or any(o[1] == kd for j, o in enumerate(procs_l) if j != i):
                        # someone waits: every later hop count of this kind starts from this exit
                        measuring |= bit
                        p[3] = tuple(sorted((p[3] or ()) + ((kd, 0, 0),)))
                    else:
                        measuring &= ~bit
        if p[1] != NONE and w0 == p[1] and w1 != p[1]:  # given up: it turned away without an entry
            kd, charge, _ = live_l[p[0]]
            live_l[p[0]] = (kd, charge, False)
            p[0] = p[1] = NONE
        if w1 != NONE and w1 != w0 and p[1] != w1:
            cause = open_request(w1)
        if t.sends:
            hops = p[3]
            tags_l = list(tags)
            link_to = m.link_to
            for k, mid in t.sends:
                q = link_to[k]
                opened = procs_l[q][0]
                charge = opened if opened != NONE and self.awaits(nxt, q, i, mid) else cause
                if charge != NONE:
                    if self.carry:
                        kd, c, counts = live_l[charge]
                        live_l[charge] = (kd, c + 1, counts)
                    else:
                        self.charged.append(charge)
                tags_l[k] = tags_l[k] + ((charge, hops),)
            tags = tuple(tags_l)
        procs_l[i] = tuple(p)
        procs = tuple(procs_l)
        live = tuple(live_l)
        if freed != NONE and not _referenced(freed, procs, tags):
            live = self._close(live, freed, seen)
        if old_own not in (NONE, p[2], freed) and not _referenced(old_own, procs, tags):
            live = self._close(live, old_own, seen)
        return (tags, procs, live, measuring)

    def _close(self, live: tuple, key: int, seen: Callable) -> tuple:
        """Nothing refers to request ``key`` any more: its charge is final."""
        kd, charge, counts = live[key]
        if not self.carry:
            self.closed.append((key, counts))
        elif counts:
            seen(kd, "charge", charge, key % self.model.n)
        live = live[:key] + ((),) + live[key + 1 :]
        while live and not live[-1]:
            live = live[:-1]
        return live

    def final(self, aux: tuple, seen: Callable) -> None:
        """The end of a complete run: every request still live has its final charge."""
        n = self.model.n
        for key, entry in enumerate(aux[2]):
            if entry and entry[2]:
                seen(entry[0], "charge", entry[1], key % n)


def _referenced(key: int, procs, tags: tuple) -> bool:
    for o in procs:
        if o[2] == key:
            return True
    for link in tags:
        for c, _ in link:
            if c == key:
                return True
    return False


def _hops(hops: tuple, kd: int) -> tuple[int, int]:
    """(longest, shortest) chain of kind ``kd`` in a hop tuple, NONE when it has none."""
    for k, longest, shortest in hops or ():
        if k == kd:
            return longest, shortest
    return NONE, NONE


def _merge(mine: tuple, carried: tuple) -> tuple:
    """A process's hop counts after receiving a message carrying ``carried``: one hop more."""
    got = {k: (lo, sh) for k, lo, sh in mine or ()}
    for k, lo, sh in carried:
        old = got.get(k)
        if old is None:
            got[k] = (lo + 1, sh + 1)
        else:
            got[k] = (max(old[0], lo + 1), min(old[1], sh + 1))
    return tuple((k, lo, sh) for k, (lo, sh) in sorted(got.items()))


def _without(hops: tuple, kd: int) -> tuple:
    if not hops:
        return ()
    return tuple(h for h in hops if h[0] != kd)


def _clear_all(procs: list, tags: tuple, kd: int) -> tuple[list, tuple]:
    """Every hop count of kind ``kd`` forgotten (an exit restarts them; an entry ends them)."""
    procs = [o if not o[3] else (o[0], o[1], o[2], _without(o[3], kd)) for o in procs]
    tags = tuple(
        link if not any(h for _, h in link) else tuple((c, _without(h, kd)) for c, h in link) for link in tags
    )
    return procs, tags
