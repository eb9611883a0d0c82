"""``mutexlab check --metrics``: worst (and best) cases over every interleaving.

Three figures per resource, each a property of a *path*, not of a world:

* **messages per entry** — every protocol message sent is charged to one request (an entry):
  a message addressed to a process that is waiting and awaits it (its ``waiting_for()`` names
  the message's type, and the sender or nobody in particular) is charged to that process's
  request; any other message to the request that caused the step sending it — the request
  itself for a step that makes a request, the charged request of the message delivered for a
  delivery, the process's own latest request for its other decisions (an exit). A request's
  figure is final once nothing refers to it any more: min and max are over every request of
  every complete run (a request given up without an entry — a bee with no room left — is not
  an entry and has none). Beside it, with one kind of resource, the run's average: every
  message a complete run sent ÷ its entries;
* **synchronisation delay** — after an exit while someone waits, the number of message hops on
  the longest causal chain from that exit to the next entry: the time between them when every
  message takes one unit and local steps none (each process and each message in flight carries
  the longest chain since the latest exit it causally follows). Beside it, the worst case of
  the *shortest* such chain: hops the entry could not have come sooner than;
* **bypass** — how many entries by others happen between a process's request and its entry.

A request is the protocol's ``Note("request", {"resource": r})`` (what the audit reads too), or,
for a protocol that defines ``wants()`` (the bees, the elves), the step where ``wants()`` turns to
a kind of resource; an entry and an exit are its ``Enter``/``Exit`` of that kind (``reed:2`` is
of kind ``reed``). A protocol that states no requests has no figures, and the result says so.

The figures depend on the path, so the search runs on *augmented* worlds (``Tracker``): the
model's world with the charges and hops of the messages in flight, each process's open request
and hops, the charges of the requests something still refers to, the kinds whose handover is
being measured. Two paths to the same augmented world have the same futures and the same
figures ahead, so the search stores each augmented world once and the figures stay exact. What
would only split worlds is left out: a request's charge is taken (and dropped) as soon as
nothing in flight or in a process refers to it, hop counts are kept only while a handover is
measured, and the bypass is not carried at all — the search computes, bottom-up over the
(acyclic) graph, the most entries by others each open request can still see.

Reductions: the per-world ones a protocol declares (canonical snapshots, clock-offset
normalisation, retired clocks) merge only worlds with the same future — the same steps, sends,
entries, exits, requests and ``waiting_for()`` up to timestamps — so they keep every figure, and
the search uses them (a wrong declaration moves the figures as it moves the verdict;
``--cross-check`` is the test of a declaration). Partial-order reduction skips interleavings,
and the figures depend on the interleaving: it is off.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..protocol import Note, Protocol, ProtocolError
from ..sim.driver import resource_kind
from .model import LOCAL, Model
from .por import NAME as POR
from .result import rss_mb

CHECK_EVERY = 4096
NONE = -1  # no request / no hops known


@dataclass
class Extreme:
    value: int
    path: list[tuple]  # the step labels of a run reaching it
    who: str = ""  # the process concerned


@dataclass
class Figures:
    """The figures of one resource."""

    messages_min: Extreme | None = None
    messages_max: Extreme | None = None
    sync_max: Extreme | None = None
    sync_short_max: Extreme | None = None  # the shortest causal chain's hops, at its worst
    bypass_max: Extreme | None = None
    average_min: float | None = None  # every message of a complete run ÷ its entries, fewest
    average_max: float | None = None
    entries: int = 0  # charges taken (once per edge of the augmented graph that closes one)
    unlinked: int = 0  # entries after a waited-on exit that no causal chain leads to

    def as_dict(self) -> dict:
        def val(e: Extreme | None):
            return None if e is None else e.value

        return {
            "messages_per_entry": {"min": val(self.messages_min), "max": val(self.messages_max)},
            "messages_per_entry_run_average": {"min": _r(self.average_min), "max": _r(self.average_max)},
            "sync_delay": {"max": val(self.sync_max), "max_shortest_chain": val(self.sync_short_max)},
            "bypass": {"max": val(self.bypass_max)},
        }


@dataclass
class MetricsResult:
    figures: dict[str, Figures] = field(default_factory=dict)  # resource → figures
    states: int = 0
    transitions: int = 0
    seconds: float = 0.0
    complete: bool = False
    stopped: str | None = None
    defined: bool = True  # False: the protocol states no requests
    runs: int = 0  # complete runs (final worlds reached, counted once per augmented world)
    reductions: list[str] = field(default_factory=list)  # those the search ran with

    def as_dict(self) -> dict:
        out: dict = {
            "complete": self.complete,
            "stopped": self.stopped,
            "states": self.states,
            "transitions": self.transitions,
            "seconds": round(self.seconds, 3),
            "reductions": self.reductions,
        }
        if not self.complete:
            return out  # no figure is proven
        if not self.defined:
            out["why"] = (
                "the protocol states no requests (neither Note 'request' nor wants()): no figures are defined"
            )
            return out
        out["resources"] = {r: f.as_dict() for r, f in sorted(self.figures.items())}
        if len(self.figures) == 1:
            out |= next(iter(self.figures.values())).as_dict()
        return out


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 3)


class Tracker:
    """Requests, charges and hops of one model; ``step`` maps an augmented world forward.

    The augmented part of a world, ``aux`` = (tags, procs, live, measuring, sent, served):

    * ``tags``: per link, per message in flight, ``(charge, hops)`` — the request it is charged
      to (a key, or NONE) and its hop counts (``None`` while no kind is measured, else
      ``(kind, longest, shortest)`` for each kind measured that a chain reaches);
    * ``procs``: per process ``(open, kind, own, hops)`` — its open request's key and kind
      (NONE when it waits for none), its latest request's key, its hop counts (as a message's).
      The bypass is not here: ``search_metrics`` computes it over the closed worlds;
    * ``live``: indexed by key, ``(kind, charge, counts)`` of every request something still
      refers to (a process's latest request, a message in flight charged to it), else None; a
      request nothing refers to can be charged no more: its figure is taken and it is dropped
      (``counts``: not given up);
    * ``measuring``: a bit per kind — an exit of that kind while someone waited for it, its
      next entry not yet made; hop counts are kept only for the kinds measured;
    * ``sent``, ``served``: messages sent and entries made so far (the run's average).

    A request's key is ``i + n·j`` for the smallest ``j`` its process does not use among the
    live ones: equal histories give equal keys whatever came before.
    """

    def __init__(self, model: Model) -> None:
        self.model = model
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
            if code & 1:
                model = self.model
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
        tags = tuple(tuple((NONE, None) for _ in m.seqs[world[m.n + k]]) for k in range(m.L))
        procs = tuple((NONE, NONE, NONE, None) for _ in range(m.n))
        return (tags, procs, (), 0, 0, 0)

    def awaits(self, world: tuple, q: int, i: int, mid: int) -> bool:
        m = self.model
        lacks = m.waiting(world[q])
        whom = lacks.get(m.messages[mid].type) if lacks else None
        return whom is not None and (not whom or m.pids[i] in whom)

    def step(self, world: tuple, aux: tuple, label: tuple, nxt: tuple, t, seen: Callable) -> tuple:
        """The augmented successor; ``seen(kind, what, value, i)`` records a figure reached."""
        m = self.model
        n = m.n
        tags, procs, live, measuring, sent, served = aux
        kind, x, y = label
        freed = NONE  # a key that may have lost its last reference
        if kind == LOCAL:
            i = x
            sid = world[i]
            p = procs[i]
            cause = p[2]
            noted = self.noted(sid, 2 * y + 1)
        else:
            i = m.link_to[x]
            sid = world[i]
            link = tags[x]
            (cause, mhops), tags = link[0], tags[:x] + (link[1:],) + tags[x + 1 :]
            p = procs[i]
            freed = cause
            if mhops is not None:
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
            return (tags, procs, live, measuring, sent, served)
        p = list(p)
        procs_l = list(procs)
        live_l = list(live)
        old_own = p[2]

        def open_request(kd: int) -> int:
            j = 0
            while i + n * j < len(live_l) and live_l[i + n * j] is not None:
                j += 1
            key = i + n * j
            while len(live_l) <= key:
                live_l.append(None)
            live_l[key] = (kd, 0, True)
            p[0], p[1], p[2] = key, kd, key
            return key

        if noted != NONE:
            cause = open_request(noted)
        if t.holds:
            for kd, sign in self.moves(t.holds):
                bit = 1 << kd
                if sign > 0:
                    served += 1
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
            sent += len(t.sends)
            hops = p[3]
            tags_l = list(tags)
            link_to = m.link_to
            for k, mid in t.sends:
                q = link_to[k]
                opened = procs_l[q][0]
                charge = opened if opened != NONE and self.awaits(nxt, q, i, mid) else cause
                if charge != NONE:
                    kd, c, counts = live_l[charge]
                    live_l[charge] = (kd, c + 1, counts)
                tags_l[k] = tags_l[k] + ((charge, hops),)
            tags = tuple(tags_l)
        procs_l[i] = tuple(p)
        procs = tuple(procs_l)
        live = tuple(live_l)
        if freed != NONE and not _referenced(freed, procs, tags):
            live = self._close(live, freed, seen)
        if old_own not in (NONE, p[2], freed) and not _referenced(old_own, procs, tags):
            live = self._close(live, old_own, seen)
        return (tags, procs, live, measuring, sent, served)

    def _close(self, live: tuple, key: int, seen: Callable) -> tuple:
        """Nothing refers to request ``key`` any more: its charge is final."""
        kd, charge, counts = live[key]
        if counts:
            seen(kd, "charge", charge, key % self.model.n)
        live = live[:key] + (None,) + live[key + 1 :]
        while live and live[-1] is None:
            live = live[:-1]
        return live

    def final(self, aux: tuple, seen: Callable) -> None:
        """The end of a complete run: every request still live has its final charge."""
        n = self.model.n
        for key, entry in enumerate(aux[2]):
            if entry is not None and entry[2]:
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


def _hops(hops: tuple | None, kd: int) -> tuple[int, int]:
    """(longest, shortest) chain of kind ``kd`` in a hop tuple, NONE when it has none."""
    for k, longest, shortest in hops or ():
        if k == kd:
            return longest, shortest
    return NONE, NONE


def _merge(mine: tuple | None, carried: tuple) -> tuple:
    """A process's hop counts after receiving a message carrying ``carried``: one hop more."""
    got = {k: (lo, sh) for k, lo, sh in mine or ()}
    for k, lo, sh in carried:
        old = got.get(k)
        if old is None:
            got[k] = (lo + 1, sh + 1)
        else:
            got[k] = (max(old[0], lo + 1), min(old[1], sh + 1))
    return tuple((k, lo, sh) for k, (lo, sh) in sorted(got.items()))


def _without(hops: tuple | None, kd: int) -> tuple | None:
    if not hops:
        return None
    kept = tuple(h for h in hops if h[0] != kd)
    return kept or None


def _clear_all(procs: list, tags: tuple, kd: int) -> tuple[list, tuple]:
    """Every hop count of kind ``kd`` forgotten (an exit restarts them; an entry ends them)."""
    procs = [o if not o[3] else (o[0], o[1], o[2], _without(o[3], kd)) for o in procs]
    tags = tuple(
        link if not any(h for _, h in link) else tuple((c, _without(h, kd)) for c, h in link) for link in tags
    )
    return procs, tags


NEG = -(1 << 40)  # no bypass figure ahead on any path (the request is given up on all of them)


def search_metrics(
    model: Model,
    max_states: int | None = None,
    max_memory: float | None = None,
    progress: Callable | None = None,
) -> MetricsResult:
    """Every reachable augmented world, depth-first; the figures with a run reaching each.
    ``model`` may be the check's own (its transitions are computed already): its per-world
    reductions are kept, its partial-order reduction is not used.

    The bypass is not carried in the worlds (it would split each world by every count): when a
    world is closed (all its successors searched), the search knows for each process with a
    request open the most entries by others it can still see before its entry, the maximum
    over its successors (a graph of bounded runs has no cycle: every successor is closed
    first); the bypass of a request is that figure of the world its request step leads to."""
    # every step of every world: never the model's partial-order reduction (its ample sets)
    out = MetricsResult(reductions=[r for r in model.reductions if r != POR])
    t0 = time.perf_counter()
    base = rss_mb()
    tracker = Tracker(model)
    world, _ = model.initial()
    if any(t.holds for _, t in model.start_transitions):
        raise ValueError("--metrics: a process holds a resource from its start: no request precedes it")
    n = model.n
    root = (world, tracker.initial(world))
    # a frame: [augmented world, labels, next position, label that led here, the most entries by
    # others ahead per process, (stepping process, kinds entered) of the step that led here]
    frames: list = [[root, model.steps(world), 0, None, [NEG] * n, None]]
    known: dict = {root: None}  # augmented world → None while on the stack, its bypass ahead once closed
    out.states = 1
    kinds = tracker.kinds
    names = model.names
    pids = model.pids
    link_to = model.link_to

    def figures(kd: int) -> Figures:
        return out.figures.setdefault(kinds[kd], Figures())

    def record(kd: int, what: str, value: int, i: int) -> None:
        f = figures(kd)
        if what == "charge":
            f.entries += 1
            if f.messages_min is None or value < f.messages_min.value:
                f.messages_min = Extreme(value, path(), names[pids[i]])
            if f.messages_max is None or value > f.messages_max.value:
                f.messages_max = Extreme(value, path(), names[pids[i]])
        elif what == "bypass":
            if f.bypass_max is None or value > f.bypass_max.value:
                f.bypass_max = Extreme(value, path(), names[pids[i]])
        elif value == NONE:
            f.unlinked += what == "sync"
        elif what == "sync":
            if f.sync_max is None or value > f.sync_max.value:
                f.sync_max = Extreme(value, path(), names[pids[i]])
        elif f.sync_short_max is None or value > f.sync_short_max.value:
            f.sync_short_max = Extreme(value, path(), names[pids[i]])

    def path() -> list:
        return [fr[3] for fr in frames[1:]] + [current]

    def combine(frame: list, label: tuple, edge: tuple, v: tuple, ahead: tuple) -> None:
        """The step ``label`` from ``frame``'s world to the closed world ``v``: the bypass ahead."""
        u_procs, v_procs = frame[0][1][1], v[1][1]
        i, entered = edge
        best = frame[4]
        for j in range(n):
            o = u_procs[j]
            if o[0] == NONE:
                continue
            if j != i:
                got = ahead[j] + entered.count(o[1])
            elif v_procs[i][0] == o[0]:
                got = ahead[i]
            else:  # served by this step (its figure is what it has seen so far), or given up
                got = 0 if o[1] in entered else NEG
            if got > best[j]:
                best[j] = got
        mine = v_procs[i]
        if mine[0] != NONE and mine[0] != u_procs[i][0] and ahead[i] >= 0:  # a request opened here
            f = figures(mine[1])
            if f.bypass_max is None or ahead[i] > f.bypass_max.value:
                prefix = [fr[3] for fr in frames[1:] if fr[3] is not None] + [label]
                f.bypass_max = Extreme(ahead[i], prefix + _bypassing(tracker, known, v, i), names[pids[i]])

    current: tuple | None = None
    step, steps, tstep, moves = model.step, model.steps, tracker.step, tracker.moves
    fast = not model.reorder and not model.dup
    P0, trans, transition, normalise = model.P0, model.trans, model.transition, model.normalise
    tails, drops, pushes, adds = model.seq_tail, model._drop, model._push, model._add  # noqa: SLF001 - the loop binds the model's hot tables once, as search.py's
    drop, push, add = model.drop, model.push, model.add
    while frames:
        frame = frames[-1]
        labels, pos = frame[1], frame[2]
        if pos >= len(labels):
            frames.pop()
            ahead = known[frame[0]] = tuple(frame[4])
            if frames and frame[5] is not None:
                current = frame[3]
                combine(frames[-1], frame[3], frame[5], frame[0], ahead)
            continue
        frame[2] = pos + 1
        state = frame[0]
        world, aux = state
        current = labels[pos]
        out.transitions += 1
        if fast:
            # model.step, inlined for FIFO links without duplicates (as search.py's loop)
            kind, x, y = current
            w = list(world)
            if kind:  # LOCAL
                q = w[P0 + x]
                w[P0 + x] = drops[q].get(y) or drop(q, y)
                i, code = x, 2 * y + 1
            else:
                w[n + x] = tails[w[n + x]]
                i, code = link_to[x], 2 * y
            t = trans[w[i]].get(code) or transition(w[i], code)
            if t.error is not None:
                continue  # a rejected input is the plain check's finding, not a run
            w[i] = t.state
            for k, mid in t.sends:
                q = w[n + k]
                w[n + k] = pushes[q].get(mid) or push(q, mid)
            for a in t.schedules:
                q = w[P0 + i]
                w[P0 + i] = adds[q].get(a) or add(q, a)
            if t.holds:
                model.hold(w, i, t.holds)
            nxt = tuple(w) if normalise is None else normalise(tuple(w))
        else:
            stepped, t, _ = step(world, current)
            if stepped is None:
                continue  # a rejected input is the plain check's finding, not a run
            nxt = stepped
        naux = tstep(world, aux, current, nxt, t, record)
        v = (nxt, naux)
        i = current[1] if current[0] == LOCAL else link_to[current[1]]
        relevant = naux[1][i][0] != aux[1][i][0] or any(o[0] != NONE for o in aux[1])
        edge = (i, [kd for kd, sign in moves(t.holds) if sign > 0] if t.holds else []) if relevant else None
        got = known.get(v, known)
        if got is not known:
            if got is None:
                raise ValueError("--metrics: a run can return to a world it passed (a cycle): runs must end")
            if edge is not None:
                combine(frame, current, edge, v, got)
            continue
        known[v] = None
        out.states += 1
        if max_states is not None and out.states >= max_states:
            out.stopped = f"state limit {max_states:,} reached"
            break
        if out.states % CHECK_EVERY == 0:
            if max_memory is not None and rss_mb() - base > max_memory:
                out.stopped = f"memory limit {max_memory:g} MB reached"
                break
            if progress is not None:
                progress(out.states, out.transitions, time.perf_counter() - t0)
        labels = steps(nxt)
        if not labels and model.all_finished(nxt):
            tracker.final(naux, record)
            _average(out, naux, kinds)
        frames.append([v, labels, 0, current, [NEG] * n, edge])
    out.seconds = time.perf_counter() - t0
    out.complete = out.stopped is None
    out.defined = bool(out.figures)  # a request was made somewhere
    return out


def _bypassing(tracker: Tracker, known: dict, v: tuple, i: int) -> list:
    """From the closed world ``v``, the steps to process ``i``'s entry that meet the most entries
    by others on the way (the figure ``known[v][i]``)."""
    model = tracker.model
    out: list = []
    state = v
    while True:
        world, aux = state
        want = known[state][i]
        mine = aux[1][i]
        for label in model.steps(world):
            nxt, t, _ = model.step(world, label)
            if nxt is None:
                continue
            nxt_aux = tracker.step(world, aux, label, nxt, t, lambda *a: None)
            j = label[1] if label[0] == LOCAL else model.link_to[label[1]]
            entered = [kd for kd, sign in tracker.moves(t.holds) if sign > 0] if t.holds else []
            if j == i:
                if nxt_aux[1][i][0] != mine[0]:
                    if mine[1] in entered and want == 0:
                        return out + [label]
                    continue
                ahead = known[(nxt, nxt_aux)][i]
            else:
                ahead = known[(nxt, nxt_aux)][i] + entered.count(mine[1])
            if ahead == want:
                out.append(label)
                state = (nxt, nxt_aux)
                break
        else:
            raise AssertionError("no step reaches the bypass figure found")


def _average(out: MetricsResult, aux: tuple, kinds: list[str]) -> None:
    """A complete run: every message it sent over its entries (one kind of resource only)."""
    out.runs += 1
    sent, served = aux[4], aux[5]
    if len(kinds) != 1 or not served:
        return
    average = sent / served
    f = out.figures.setdefault(kinds[0], Figures())
    f.average_min = average if f.average_min is None else min(f.average_min, average)
    f.average_max = average if f.average_max is None else max(f.average_max, average)
