"""``mutexlab check --metrics``: worst (and best) cases over every interleaving.

Three figures per resource, each a property of a *path*, not of a world:

* **messages per entry** — every protocol message sent is charged to one request (an entry):
  a message addressed to a process that is waiting and awaits it (its ``waiting_for()`` names
  the message's type, and the sender or nobody in particular) is charged to that process's
  request; any other message to the request that caused the step sending it — the request
  itself for a step that makes a request, the charged request of the message delivered for a
  delivery, the process's own latest request for its other decisions (an exit). A request's
  figure is final once nothing refers to it any more: min and max are over every request of
  every complete run (a request given up without an entry — a process with no room left — is not
  an entry and has none). Beside it, with one kind of resource, the run's average: every
  message a complete run sent ÷ its entries;
* **synchronisation delay** — after an exit while someone waits, the number of message hops on
  the longest causal chain from that exit to the next entry: the time between them when every
  message takes one unit and local steps none (each process and each message in flight carries
  the longest chain since the latest exit it causally follows). Beside it, the worst case of
  the *shortest* such chain: hops the entry could not have come sooner than;
* **bypass** — how many entries by others happen between a process's request and its entry.

A request is the protocol's ``Note("request", {"resource": r})`` (what the audit reads too), or,
for a protocol that defines ``wants()`` (a problem's own processes), the step where ``wants()`` turns to
a kind of resource; an entry and an exit are its ``Enter``/``Exit`` of that kind (``slot:2`` is
of kind ``slot``). A protocol that states no requests has no figures, and the result says so.

The figures depend on the path, so the search runs on *augmented* worlds (``Tracker``): the
model's world with the charges and hops of the messages in flight, each process's open request
and hops, the requests something still refers to, the kinds whose handover is being measured. Two paths to the same augmented world have the same futures and the same
figures ahead, so the search visits each augmented world once (kept as a 64-bit fingerprint
with its figure ahead, as the check keeps its worlds; ``--exact``: whole) and the figures stay
exact (up to the stated collision bound). What
would only split worlds is left out: a request's charge is taken (and dropped) as soon as
nothing in flight or in a process refers to it, hop counts are kept only while a handover is
measured, and neither the bypass, nor a request's running charge, nor the run's totals are
carried at all — the search computes, bottom-up over the (acyclic) graph, the most entries by
others each open request can still see, the fewest and most messages each live request is still
charged, and the fewest and most messages a complete run still sends per count of entries
(``ahead.py``).

Reductions: the per-world ones a protocol declares (canonical snapshots, clock-offset
normalisation, retired clocks) merge only worlds with the same future — the same steps, sends,
entries, exits, requests and ``waiting_for()`` up to timestamps — so they keep every figure, and
the search uses them (a wrong declaration moves the figures as it moves the verdict;
``--cross-check`` is the test of a declaration). Partial-order reduction skips interleavings,
and the figures depend on the interleaving: it is off.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ..sim.engine import _rare_collections as rare_collections
from . import augment as augmenting
from .ahead import averages, bypassing, charging, ended, fold, settle, shift, widen
from .budget import doubling_mb
from .charges import NONE, Tracker
from .core import stepper
from .core_reduce import shift_of
from .edges import NEG, Edges
from .extremes import Extreme, Figures, MetricsResult, flat
from .metrics_loop import climb, climbs
from .model import LOCAL, Model
from .por import NAME as POR
from .result import rss_mb

CHECK_EVERY = 4096


fingerprint = hash  # of an augmented world: ints and tuples only, the same in every run (charges.py)


@rare_collections()  # its worlds and tables are long-lived and form no cycles (sim/engine.py)
def search_metrics(
    model: Model,
    max_states: int | None = None,
    max_memory: float | None = None,
    progress: Callable | None = None,
    exact: bool = False,
    carried: bool = False,
    remember: bool = True,
) -> MetricsResult:
    """Every reachable augmented world, depth-first; the figures with a run reaching each.
    ``model`` may be the check's own (its transitions are computed already): its per-world
    reductions are kept, its partial-order reduction is not used.

    The bypass is not carried in the worlds (it would split each world by every count): when a
    world is closed (all its successors searched), the search knows for each process with a
    request open the most entries by others it can still see before its entry, the maximum
    over its successors (a graph of bounded runs has no cycle: every successor is closed
    first); the bypass of a request is that figure of the world its request step leads to.
    The run's average is not carried either (the run's totals would split worlds too): each
    closed world knows, per count of entries still ahead on a complete run, the fewest and most
    messages sent on the way (``_fold``); the root's give every complete run's average.

    The charges are not carried either (each live request's running count would split worlds by
    every count): each closed world knows, per live request, the fewest and most messages it is
    still charged (``settle``); a request's figure is what the step opening it charges it plus
    that figure of the world it leads to, and the runs reaching the extremes are rebuilt from
    the closed worlds (``charging``). ``carried``: the charges carried in the worlds and taken
    at each close instead, the reference the bottom-up figures are tested against.
    ``remember``: False asks the ``Tracker`` every step instead of once per distinct one
    (``edges.py``), the reference the remembered steps are tested against.

    Worlds are kept as 64-bit fingerprints (``hash`` of the int tuples, as the check's search),
    each with its figure ahead (interned: few distinct ones); ``exact`` keeps them whole.

    On the compiled core the loop below is climbed in C (``metrics_loop.py``, ``Core.climb``),
    which calls this function's own hooks for what needs Python; the loop here is its twin."""
    # every step of every world: never the model's partial-order reduction (its ample sets)
    out = MetricsResult(reductions=[r for r in model.reductions if r != POR], exact=exact)
    t0 = time.perf_counter()
    base = rss_mb()
    tracker = Tracker(model, carry=carried)
    edges = Edges(tracker, remember)  # each distinct augmented step computed once (edges.py)
    world, _ = model.initial()
    if any(t.holds for _, t in model.start_transitions):
        raise ValueError("--metrics: a process holds a resource from its start: no request precedes it")
    n = model.n
    root = (world, tracker.initial(world))
    root_aux = edges.intern(root[1])
    # a frame: [augmented world, labels, next position, label that led here, the most entries by
    # others ahead per process, (stepping process, kinds entered) of the step that led here, key,
    # entries ahead → [fewest, most] messages ahead on complete runs, (sent, entries) of the step,
    # live request → [fewest, most] messages it is still charged, what the step charged and
    # closed (below), the charges ahead of the steps that left the same requests live, its aux
    # id]. An augmented world is keyed as (model's world, aux id): the same worlds, hashed faster
    keyof = (lambda v: v) if exact else fingerprint
    frames: list = [
        [
            root,
            model.steps(world),
            0,
            None,
            [NEG] * n,
            None,
            keyof((world, root_aux)),
            {},
            (0, 0),
            {},
            (),
            None,
            root_aux,
        ]
    ]

    def ahead_of(state: tuple) -> tuple:
        return known[keyof((state[0], edges.intern(state[1])))]

    # key of an augmented world → None while on the stack, once closed (its bypass ahead, its
    # ((entries ahead, fewest, most messages ahead), ...), its ((request, fewest, most), ...))
    known: dict = {frames[0][6]: None}
    interned: dict = {}  # the distinct figures ahead, each kept once
    out.states = 1
    kinds = tracker.kinds
    names = model.names
    pids = model.pids
    link_to = model.link_to

    def figures(kd: int) -> Figures:
        got = out.figures.get(kinds[kd])
        return got if got is not None else out.figures.setdefault(kinds[kd], Figures())

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

    def trail() -> list:  # the labels from the root to the world searched now (or the core's)
        return [fr[3] for fr in frames[1:]] if climber is None else climber.trail()

    def path() -> list:
        return trail() + [current]

    pending: dict = {}  # id of an extreme → (it, fewest?, request key, world, charge ahead): to rebuild

    def opened(label: tuple, v: tuple, requests: list) -> None:
        """The step ``label`` to the closed world ``v`` opens ``requests`` ((key, fewest, most,
        charged by the step), ...): their messages per entry."""
        for k, lo, hi, c in requests:
            f = figures(v[1][2][k][0])
            f.entries += 1
            prefix = None
            if f.messages_min is None or lo < f.messages_min.value:
                prefix = trail() + [label]
                e = f.messages_min = Extreme(lo, prefix, names[pids[k % n]])
                pending[id(e)] = (e, True, k, v, lo - c)
            if f.messages_max is None or hi > f.messages_max.value:
                prefix = prefix or trail() + [label]
                e = f.messages_max = Extreme(hi, list(prefix), names[pids[k % n]])
                pending[id(e)] = (e, False, k, v, hi - c)

    shifted: dict = {}  # (keys charged, charges ahead) → the charges ahead before the step

    def passed(frame: list, charged: tuple, ahead: tuple) -> None:
        """A step that charges ``charged`` and leaves the same requests live, into a closed world
        with ``ahead``: kept, shifted by the charges, for ``frame``'s close (few distinct)."""
        if charged:
            got = shifted.get((charged, ahead))
            if got is None:
                got = shifted[charged, ahead] = shift(charged, ahead)
            ahead = got
        if frame[11] is None:
            frame[11] = {ahead}
        else:
            frame[11].add(ahead)

    def combine(frame: list, label: tuple, edge: tuple, v: tuple, ahead: tuple) -> None:
        """The step ``label`` from ``frame``'s world to the closed world ``v``: the bypass ahead."""
        i, plan, opens = edge  # edges.plan
        best = frame[4]
        for j, src, add in plan:
            got = ahead[src] + add if src >= 0 else add
            if got > best[j]:
                best[j] = got
        if opens != NONE and ahead[i] >= 0:  # a request opened here
            beat(opens, ahead[i], label, v, i)

    def beat(kd: int, value: int, label: tuple, v: tuple, i: int) -> None:
        """A request of kind ``kd`` opened by the step ``label`` into ``v`` sees ``value``."""
        f = figures(kd)
        if f.bypass_max is None or value > f.bypass_max.value:
            prefix = trail() + [label]
            f.bypass_max = Extreme(value, prefix + walking(bypassing, v, i), names[pids[i]])

    def limited(states: int, transitions: int) -> str | None:
        """Why the search stops at ``states`` worlds, if it does; else the progress shown."""
        if max_states is not None and states >= max_states:
            return f"state limit {max_states:,} reached"
        if states % CHECK_EVERY == 0:
            if max_memory is not None and rss_mb() - base + doubling_mb(known, CHECK_EVERY) > max_memory:
                return f"memory limit {max_memory:g} MB reached"
            if progress is not None:
                progress(states, transitions, time.perf_counter() - t0)
        return None

    current: tuple | None = None
    climber = None  # the core climbing the loop below in C (metrics_loop.py), if any

    def reached_at(label: tuple, seen: tuple) -> None:  # the core's figures reached by a step
        nonlocal current
        current = label
        for a in seen:
            record(*a)

    step, steps = model.step, model.steps
    sigs, signature, awaits, estep = edges._sigs, edges.signature, edges.awaits, edges.step  # noqa: SLF001
    remembered, auxes = edges._edges, edges.auxes  # noqa: SLF001 - the loop binds the hot tables once
    fast = not model.reorder and not model.dup
    # the model's step on a search core's remembered tables (core.stepper), else inlined below
    stepping = stepper(model) if fast else None
    advance = None  # the model's step and the lookups below in one call (_core_figures.h)
    augmented = None  # a step not remembered computed by the core (augment.py), once its signature is
    if stepping is not None:  # a new world's steps listed on the core's tables too (model.steps())
        advance, steps = stepping[0].advance, stepping[0].steps
        stepping[0].figures(sigs, edges._awaits, remembered, known, auxes, keyof)  # noqa: SLF001
        if remember and not carried and augmenting.AUGMENT:  # the steps augment.py computes
            stepping[0].tracking(edges.shown_of, edges.ids)
            augmented = stepping[0].augmented

    def walking(walk: Callable, v: tuple, *args) -> list:
        """A witness ``walk`` from ``v``: it steps the model's own normalisation, whose sampler
        then counts on from the core's count, and the core on from its."""
        if stepping is None:
            return walk(tracker, ahead_of, v, *args)
        core, tables = stepping
        tables.finish(*core.reduce_counts())
        try:
            return walk(tracker, ahead_of, v, *args)
        finally:
            sampler = shift_of(model)[1]
            if sampler is not None:
                core.sampling(sampler.calls, sampler.next_at)

    P0, trans, transition, normalise = model.P0, model.trans, model.transition, model.normalise
    tails, drops, pushes, adds = model.seq_tail, model._drop, model._push, model._add  # noqa: SLF001 - the loop binds the model's hot tables once, as search.py's
    drop, push, add = model.drop, model.push, model.add
    if stepping is not None and not carried and remember and climbs(stepping[0]):
        climber = stepping[0]  # the loop below in C: the same figures, runs and counts
        hooks = (opened, reached_at, beat, limited)
        climb(climber, out, frames.pop(), edges, known, interned, keyof, hooks, max_states, kinds, augmented)
    while frames:
        frame = frames[-1]
        labels, pos = frame[1], frame[2]
        if pos >= len(labels):
            frames.pop()
            if frame[11] is not None:  # the steps that left the same requests live: their charges ahead
                for ahead in frame[11]:
                    for k, lo, hi in ahead:
                        widen(frame[9], k, lo, hi)
            closed = (tuple(frame[4]), flat(frame[7]), flat(frame[9]) if frame[9] else ())
            closed = known[frame[6]] = interned.setdefault(closed, closed)
            if frames:
                fold(frames[-1][7], frame[8], closed[1])
                parent = frames[-1]
                if type(frame[10]) is tuple:
                    if closed[2]:
                        passed(parent, frame[10], closed[2])
                else:
                    got_open = settle(parent[9], parent[0][1][2], frame[10], closed[2])
                    if got_open:
                        opened(frame[3], frame[0], got_open)
                if frame[5] is not None:
                    current = frame[3]
                    combine(frames[-1], frame[3], frame[5], frame[0], closed[0])
            elif out.stopped is None:
                averages(out, closed[1], kinds, Figures)
            continue
        frame[2] = pos + 1
        state = frame[0]
        world, aux = state
        current = labels[pos]
        out.transitions += 1
        t = got = None
        if advance is not None:
            got = advance(world, current, frame[12])
            if got is None:
                continue  # a rejected input is the plain check's finding, not a run
            nxt, i, sig, got, key, kn = got
        elif fast:
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
        # the augmented step, computed once per (aux, signature, awaits bits): edges.py. moved:
        # a tuple, the keys the step charges, the same requests live (their charges ahead pass
        # through, shifted); a list, [charged, closed] of a step that opens or closes requests
        if got is None:  # not all found by advance: what it missed, and what follows
            if advance is None:
                i = current[1] if current[0] == LOCAL else link_to[current[1]]
                sig = sigs.get((current, world[i]))
            if sig is None:
                t = t or trans[world[i]][2 * current[2] + current[0]]  # the core asked the model for it
                sig = signature(current, world[i], t)
            akey = (frame[12], sig[0], awaits(nxt, i, sig[1], frame[12]) if sig[1] else 0)
            got = remembered.get(akey)
            if got is None and augmented is not None:
                got = augmented(akey[0], akey[1], sig[1], akey[2], i) if len(sig[1]) <= 62 else None
            if got is None:
                t = t or trans[world[i]][2 * current[2] + current[0]]
                got = estep(akey, world, current, nxt, t, i, sig[2])
            key = keyof((nxt, got[0]))
            kn = known.get(key, known)
        naux_id, moved, reached, edge = got
        for a in reached:
            record(*a)
        counts = sig[3]
        v = (nxt, auxes[naux_id])
        got = kn
        if got is not known:
            if got is None:
                raise ValueError("--metrics: a run can return to a world it passed (a cycle): runs must end")
            fold(frame[7], counts, got[1])
            if type(moved) is tuple:
                if got[2]:
                    passed(frame, moved, got[2])
            else:
                got_open = settle(frame[9], aux[2], moved, got[2])
                if got_open:
                    opened(current, v, got_open)
            if edge is not None:
                combine(frame, current, edge, v, got[0])
            continue
        known[key] = None
        out.states += 1
        if (max_states is not None and out.states >= max_states) or out.states % CHECK_EVERY == 0:
            out.stopped = limited(out.states, out.transitions)
            if out.stopped is not None:
                break
        labels = steps(nxt)
        runs_ahead: dict = {}  # none: a world where nothing can move before all are finished
        charges_ahead: dict = {}
        if not labels and model.all_finished(nxt):
            if carried:
                tracker.final(v[1], record)
            else:  # every request still live has its final charge
                charges_ahead = ended(v[1][2])
            out.runs += 1
            runs_ahead[0] = [0, 0]  # a complete run ends here
        frames.append(
            [
                v,
                labels,
                0,
                current,
                [NEG] * n,
                edge,
                key,
                runs_ahead,
                counts,
                charges_ahead,
                moved,
                None,
                naux_id,
            ]
        )
    if stepping is not None:  # the sampler's count back to the model
        stepping[1].finish(*stepping[0].reduce_counts())
    out.complete = out.stopped is None
    if out.complete:  # the runs reaching the messages per entry, from the closed worlds
        for f in out.figures.values():
            for e in (f.messages_min, f.messages_max):
                if e is not None and id(e) in pending:
                    _, low, k, v, rest = pending[id(e)]
                    e.path += walking(charging, v, k, rest, low)
    out.seconds = time.perf_counter() - t0
    out.defined = bool(out.figures)  # a request was made somewhere
    return out
