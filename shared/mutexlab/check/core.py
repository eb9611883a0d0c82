"""The search core over integer worlds: the depth-first (Tarjan) search, with the reductions
the model applies, compiled (``_core.c`` and ``_core_reduce.h``, built by ``pip install -e .``)
or its pure-Python twin ``PyCore`` (the same algorithm, used when the extension is absent and
held to it by tests/test_check_core.py); and single steps on the same tables for the figures'
search of ``check --metrics`` (``stepper``, ``_core_step.h``; tests/test_check_core_step.py).

The core never runs protocol code. ``sim/world.py`` already gives each process's distinct
states, messages, actions and sequences small integer ids, and runs each distinct (state,
input) transition once; the core remembers, in tables of its own, every answer it asked of the
model through ``Tables`` (a transition, a link's or a pending set's edit, a holding change, a
state's ``finished``, and the reductions' answers: ``core_reduce.py``), so each is asked once.
A world is the model's flat tuple of ints; the compiled core keeps it as int32s and its
fingerprint is the same 64-bit ``hash`` of that tuple, so both cores visit exactly the worlds
the model's search visits, in the same order, and count, decide and explain alike.

It serves the depth-first searches whose every step is a remembered transition: fingerprints,
FIFO links without duplicates, and the reductions as ``core_reduce.reducible`` says: partial-order
reduction (its restart without it when the reduced graph closes a cycle included) and the
clock-shift normalisation under the sampler (``eligible``). A transition is remembered only
because a protocol step depends on its state and input alone — the model's premise
(``snapshot()`` decides a process's future); the others (reordering, duplicates, a world-level
normalisation other than the clock shift, ``--exact``, breadth-first search) keep the model's own
search (``search.py``).
"""

from __future__ import annotations

import os
import warnings
from types import SimpleNamespace
from typing import Any

from .augment import augment
from .core_reduce import Reducer, ReduceTables, reducible, shift_of
from .reductions import ClockShift
from .result import CheckFinding

# The compiled core's calling convention; _core.c states the same number. A build of an older
# source (a `git pull` without `pip install -e .`) says another, or none, and is not used. Bump
# both with any change to what Core's constructor or methods take or return (_core.c,
# _core_reduce.h): a change inside the search that keeps them is held by test_check_core instead.
INTERFACE = 9

CCore: Any = None
try:  # the compiled core; absent (a build without a compiler, another interpreter): the twin
    from . import _core

    if getattr(_core, "INTERFACE", None) == INTERFACE:
        CCore = _core.Core
    else:
        warnings.warn(
            f"mutexlab's compiled search core ({_core.__file__}) is older than its source; "
            "`pip install -e .` rebuilds it. The pure-Python core is used meanwhile.",
            RuntimeWarning,
            stacklevel=1,
        )
except ImportError:  # pragma: no cover - depends on the build
    pass

# MUTEXLAB_CORE=python: the twin even when the compiled core is there (tests, benchmarks)
CORE_ENV = "MUTEXLAB_CORE"


def eligible(search: Any) -> bool:
    """Whether ``search`` (a ``Search``) may run on the core: see the module's docstring."""
    m = search.model
    return not (search.exact or m.reorder or m.dup) and reducible(m)


def core_name() -> str:
    """Which core a search uses now: ``compiled`` or ``python``."""
    return "compiled" if CCore is not None and os.environ.get(CORE_ENV) != "python" else "python"


class Tables(ReduceTables):
    """What a core asks of the model (each answer once), and the search's hooks: its limits, its
    invariant, its liveness check of a component."""

    def __init__(self, search: Any) -> None:
        self.search, self.model = search, search.model
        self.holds: list[tuple[int, tuple]] = []  # a holding id → (process index, enters/exits)
        self.hold_ids: dict[tuple[int, tuple], int] = {}
        self.found: CheckFinding | None = None  # the invariant's finding, when check said so

    def trans(self, sid: int, code: int) -> tuple[int, tuple, tuple, int]:
        """(new state id, or -1 when the input is refused (a finding), or -2 when the step is a
        dead end (a refusal: ``Search.refusal`` notes the first); sends flattened (link, message
        id, ...), schedules, holding id or -1). Asked once per (state, input), at the first edge
        that takes it, in the order of the model's own search."""
        m = self.model
        t = m.trans[sid].get(code) or m.transition(sid, code)
        if t.error is not None:
            if t.refused:
                noted = getattr(self.search, "refusal", None)  # (the figures' stepper has none)
                if noted is not None:
                    noted(t)
                return -2, (), (), -1
            return -1, (), (), -1
        hid = -1
        if t.holds:
            key = (m.owner[sid], t.holds)
            hid = self.hold_ids.get(key, -1)
            if hid < 0:
                hid = self.hold_ids[key] = len(self.holds)
                self.holds.append(key)
        return t.state, tuple(x for send in t.sends for x in send), t.schedules, hid

    def hold(self, h: int, hid: int) -> int:
        """2 × the holdings after holding change ``hid`` from holdings ``h``, + 1 when overfull."""
        m = self.model
        i, holds = self.holds[hid]
        w = [0] * (m.H + 1)
        w[m.H] = h
        over = m.hold(w, i, holds)
        return 2 * w[m.H] + (over is not None)

    def push(self, q: int, e: int) -> int:
        return self.model.push(q, e)

    def add(self, q: int, a: int) -> int:
        return self.model.add(q, a)

    def drop(self, q: int, a: int) -> int:
        return self.model.drop(q, a)

    def seq(self, q: int) -> tuple[int, int, tuple]:
        """(tail id, head, distinct items in order) of sequence ``q``."""
        m = self.model
        return m.seq_tail[q], m.seq_head[q], tuple(sorted(set(m.seqs[q])))

    def finished(self, sid: int) -> bool:
        return self.model.finished(sid)

    def look(self, states: int, transitions: int, depth: int, left: int, need: int) -> int:
        r = self.search.result
        r.states, r.transitions, r.depth = states, transitions, depth
        return int(self.search.limits_at(left, need))

    def check(self, world: tuple) -> bool:
        self.found = self.search.world_finding(world)
        return self.found is not None

    def component(self, worlds: list[tuple], prefix: list) -> bool:
        """A non-trivial component closed (its worlds, top of the Tarjan stack first): True when
        its liveness check found a lasso (a finding now)."""
        return bool(self.search.component(worlds, prefix))


def run_dfs(search: Any, root: tuple, which: str | None = None) -> bool:
    """The depth-first search from ``root`` on a core (``which``: ``compiled`` or ``python``;
    None: ``core_name()``), its counts and finding put into ``search.result``; False when
    partial-order reduction met a cycle of the reduced graph (``search.dfs`` drops it and starts
    again)."""
    model, r = search.model, search.result
    tables = Tables(search)
    args = (tables, model.n, tuple(model.link_to), search.invariant is not None, *tables.reduce_config())
    core = (CCore if (which or core_name()) == "compiled" else PyCore)(*args)
    try:
        code, world, label, path = core.dfs(root)
    finally:
        r.states, r.transitions, r.depth, r.finals, cycles = core.counts()
        r.cycles = r.cycles or bool(cycles)
        tables.finish(*core.reduce_counts())
    if code == 0:
        r.complete = True
    elif code == 4:  # partial-order reduction met a cycle of the reduced graph: search.dfs restarts
        return False
    elif code == 1:  # a step refused, or overfilling a resource
        nxt, t, overfull = unsampled_step(model, world, label)
        found = search.edge_finding(world, label, nxt, t, overfull)
        found.path = path + [label]
        r.findings.append(found)
    elif code == 2:  # a world breaking the invariant, or a deadlock
        found = tables.found or search.dead_end(world)
        found.path = path
        r.findings.append(found)
    return True


def stepper(model: Any, which: str | None = None) -> tuple[Any, Tables] | None:
    """A core taking single steps for the figures' search (``successor``, check/metrics.py):
    the model's step on the core's remembered tables, normalised and sampled as the model's
    normalisation would be; partial-order reduction never applies. None where the core cannot
    step the model (reordering, duplicates, a normalisation other than the clock shift) or
    without the compiled core (``which``: this core, for the tests). With
    its ``Tables``, whose ``finish`` gives the sampler's count back to the model."""
    inner, _ = shift_of(model)
    if model.reorder or model.dup or not (inner is None or isinstance(inner, ClockShift)):
        return None
    if which is None and core_name() != "compiled":
        return None  # the twin steps slower than the search's own inlined step: tests call it
    tables = Tables(SimpleNamespace(model=model))
    _, into, link_of, *rest = tables.reduce_config()
    core = (CCore if (which or core_name()) == "compiled" else PyCore)(
        tables, model.n, tuple(model.link_to), False, 0, into, link_of, *rest
    )
    return core, tables


def unsampled_step(model: Any, world: Any, label: Any) -> tuple:
    """``model.step`` again, for a finding's words: the sampler neither counts nor samples it
    (the search already normalised and counted that world)."""
    sampler = getattr(model.normalise, "sampler", None)
    if sampler is None:
        return model.step(world, label)
    calls, busy = sampler.calls, sampler.busy
    sampler.busy = True
    try:
        return model.step(world, label)
    finally:
        sampler.calls, sampler.busy = calls, busy


class PyCore:
    """The compiled core's twin, step for step (``_core.c``): the same tables, the same order."""

    def __init__(self, tables: Tables, n: int, link_to: tuple, check: bool, *reduce: Any) -> None:
        self.tables, self.n, self.link_to, self.check = tables, n, link_to, check
        self.red = Reducer(tables, n, link_to, reduce or (0, (), (), 0, 0, -1, 0, 0))
        self.L = len(link_to)
        self.P0, self.H = n + self.L, 2 * n + self.L
        self.states = self.transitions = self.depth = self.finals = 0
        self.cycles = False
        self.seen: dict[int, int] = {}  # fingerprint → Tarjan index; -1 once its component closed
        self.tstack: list[tuple[int, tuple]] = []
        self.frames: list[list] = []  # [world, fingerprint, labels, next, via, self-loop, low, tidx]
        self._seq: dict[int, tuple[int, int, tuple]] = {}
        self._fin: dict[int, bool] = {}

    def counts(self) -> tuple[int, int, int, int, int]:
        return self.states, self.transitions, self.depth, self.finals, int(self.cycles)

    def reduce_counts(self) -> tuple[int, int]:
        """(the sampler's calls, worlds reduced by partial-order reduction)."""
        return self.red.calls, self.red.reduced

    def seq(self, q: int) -> tuple[int, int, tuple]:
        got = self._seq.get(q)
        if got is None:
            got = self._seq[q] = self.tables.seq(q)
        return got

    def path(self) -> list:
        return [f[4] for f in self.frames[1:]]

    def enter(self, world: tuple, fp: int, via: tuple | None, counter: int) -> None:
        self.seen[fp] = counter
        self.states += 1
        self.tstack.append((fp, world))
        labels = self.steps(world)
        if self.red.por and len(labels) > 1:
            labels = self.red.ample(world, labels)
        self.frames.append([world, fp, labels, 0, via, False, counter, len(self.tstack) - 1])
        if len(self.frames) - 1 > self.depth:
            self.depth = len(self.frames) - 1

    def world_checks(self, world: tuple, has_steps: bool) -> bool:
        """True: a finding (the invariant's, or a dead end that is not final)."""
        if self.check and self.tables.check(world):
            return True
        if has_steps:
            return False
        fin, tables = self._fin, self.tables
        for sid in world[: self.n]:
            done = fin.get(sid)
            if done is None:
                done = fin[sid] = tables.finished(sid)
            if not done:
                return True
        self.finals += 1
        return False

    def dfs(self, root: tuple) -> tuple[int, tuple | None, tuple | None, list]:
        n, P0, H, link_to, tables, seq = self.n, self.P0, self.H, self.link_to, self.tables, self.seq
        seen, frames, tstack, red = self.seen, self.frames, self.tstack, self.red
        trans: dict[int, tuple] = {}
        edits: dict[str, dict[int, int]] = {"push": {}, "add": {}, "drop": {}, "hold": {}}
        push, add, drop, hold = (edits[k] for k in ("push", "add", "drop", "hold"))

        def edit(kind: str, table: dict, q: int, e: int) -> int:
            got = table.get((q << 32) | e)
            if got is None:
                got = table[(q << 32) | e] = getattr(tables, kind)(q, e)
            return got

        self.enter(root, hash(root), None, 0)
        counter, next_look = 1, 0
        if self.world_checks(root, bool(frames[0][2])):
            return 2, root, None, self.path()
        while frames:
            frame = frames[-1]
            labels, pos = frame[2], frame[3]
            if pos < len(labels):
                label = labels[pos]
                frame[3] = pos + 1
                world = frame[0]
                kind, x, y = label
                w = list(world)
                if kind:  # a local decision
                    i = x
                    w[P0 + i] = edit("drop", drop, w[P0 + i], y)
                    code = 2 * y + 1
                else:  # the oldest message of a link
                    w[n + x] = seq(w[n + x])[0]
                    i = link_to[x]
                    code = 2 * y
                key = (w[i] << 32) | code
                t = trans.get(key)
                if t is None:
                    t = trans[key] = tables.trans(w[i], code)
                state, sends, schedules, hid = t
                if state == -2:  # a refused step: a dead end, the search goes on (Search.refusal)
                    continue
                if state < 0:
                    return 1, world, label, self.path()
                w[i] = state
                for k in range(0, len(sends), 2):
                    w[n + sends[k]] = edit("push", push, w[n + sends[k]], sends[k + 1])
                for a in schedules:
                    w[P0 + i] = edit("add", add, w[P0 + i], a)
                over = 0
                if hid >= 0:
                    h = edit("hold", hold, w[H], hid)
                    w[H], over = h >> 1, h & 1
                self.transitions += 1
                nxt = red.normal(w) if red.norm else tuple(w)
                if over:
                    return 1, world, label, self.path()
                fp = hash(nxt)
                got = seen.get(fp)
                if got is not None:
                    if got >= 0:  # on the Tarjan stack
                        if red.por:
                            return 4, None, None, []  # a cycle of the reduced graph: restart without
                        if fp == frame[1]:
                            frame[5] = True
                        elif got < frame[6]:
                            frame[6] = got
                    continue
                if self.states >= next_look:
                    next_look = self.states + tables.look(
                        self.states, self.transitions, self.depth, *_room(seen, tstack, frames)
                    )
                self.enter(nxt, fp, label, counter)
                counter += 1
                if self.world_checks(nxt, bool(frames[-1][2])):
                    return 2, nxt, None, self.path()
                continue
            # every successor done: close the frame
            frames.pop()
            fp, low, tidx = frame[1], frame[6], frame[7]
            if frames and low < frames[-1][6]:
                frames[-1][6] = low
            if low != seen[fp]:
                continue
            for v, _ in tstack[tidx:]:
                seen[v] = -1
            if tidx == len(tstack) - 1 and not frame[5]:
                tstack.pop()  # a trivial component: no cycle through this world
                continue
            self.cycles = True
            worlds = [w for _, w in reversed(tstack[tidx:])]
            del tstack[tidx:]
            prefix = self.path() + ([frame[4]] if frame[4] is not None else [])
            if tables.component(worlds, prefix):
                return 3, None, None, []
        return 0, None, None, []

    def successor(self, world: tuple, label: tuple) -> tuple | None:
        """The compiled core's ``successor`` (``_core_step.h``): the world ``label`` leads to,
        normalised and sampled as the model's; None when the input is refused (a finding's
        refusal or a dead end alike)."""
        n, P0, H, tables = self.n, self.P0, self.H, self.tables
        kind, x, y = label
        w = list(world)
        if kind:
            i, code = x, 2 * y + 1
            w[P0 + i] = tables.drop(w[P0 + i], y)
        else:
            i, code = self.link_to[x], 2 * y
            w[n + x] = self.seq(w[n + x])[0]
        state, sends, schedules, hid = tables.trans(w[i], code)
        if state < 0:
            return None
        w[i] = state
        for k in range(0, len(sends), 2):
            w[n + sends[k]] = tables.push(w[n + sends[k]], sends[k + 1])
        for a in schedules:
            w[P0 + i] = tables.add(w[P0 + i], a)
        if hid >= 0:
            w[H] = tables.hold(w[H], hid) >> 1
        self.transitions += 1
        return self.red.normal(w) if self.red.norm else tuple(w)

    def steps(self, world: tuple) -> list:
        """The compiled core's ``steps`` (``_core_step.h``): the labels of every step possible in
        ``world``, each link's oldest message by link, then each process's distinct pending
        decisions (``model.steps()``'s order on FIFO links without duplicates)."""
        n, P0, seq = self.n, self.P0, self.seq
        labels = [(0, k, seq(q)[1]) for k, q in enumerate(world[n:P0]) if q]
        for i in range(n):
            q = world[P0 + i]
            if q:
                labels += [(1, i, a) for a in seq(q)[2]]
        return labels

    def figures(
        self, sigs: dict, awaits: dict, remembered: dict, known: dict, auxes: list, keyof: Any
    ) -> None:
        """The figures' search's dictionaries, interned parts and key of an augmented world, read
        by ``advance``."""
        self._fig = (sigs, awaits, remembered, known, auxes, keyof)
        self._track: tuple | None = None

    def tracking(self, shown: list | None, ids: dict | None) -> None:
        """What the compiled core's ``tracking`` takes (``_core_augment.h``): from now on
        ``advance`` computes a step not remembered yet that ``augment`` can, and remembers it."""
        self._track = None if shown is None else (shown, ids)

    def augmented(self, aux: int, sig: int, sends: tuple, bits: int, i: int) -> tuple | None:
        """The compiled core's ``augmented`` (``_core_augment.h``): ``augment``'s step, remembered
        under (aux, sig, bits), or None when the Tracker must compute it."""
        if self._track is None:
            raise RuntimeError("augmented: figures() and tracking() not given")
        shown, ids = self._track
        remembered, auxes = self._fig[2], self._fig[4]
        edge = augment(auxes, ids, aux, shown[sig], sends, bits, i, self.n, self.link_to)
        if edge is not None:
            remembered[aux, sig, bits] = edge
        return edge

    def advance(self, world: tuple, label: tuple, aux: int) -> tuple | None:
        """The compiled core's ``advance`` (``_core_figures.h``): None when ``label`` is refused,
        else (successor, stepping process, signature, remembered step, key, ``known``'s value);
        from the signature on, a miss gives None there and after (the key not known: ``known``)."""
        sigs, awaits, remembered, known, auxes, keyof = self._fig
        nxt = self.successor(world, label)
        if nxt is None:
            return None
        i = label[1] if label[0] else self.link_to[label[1]]
        sig = sigs.get((label, world[i]))
        if sig is None:
            return nxt, i, None, None, None, None
        bits = 0
        if len(sig[1]) > 62:
            return nxt, i, sig, None, None, None
        for b, (k, mid) in enumerate(sig[1]):
            q = self.link_to[k]
            if auxes[aux][1][q][0] == -1:  # charges.NONE: no request open, nothing awaited
                continue
            got = awaits.get((nxt[q], mid, i))
            if got is None:
                return nxt, i, sig, None, None, None
            if got:
                bits |= 1 << b
        edge = remembered.get((aux, sig[0], bits))
        if edge is None and self._track is not None:  # not remembered: computed here if it can be
            edge = self.augmented(aux, sig[0], sig[1], bits, i)
        if edge is None:
            return nxt, i, sig, None, None, None
        key = keyof((nxt, edge[0]))
        return nxt, i, sig, edge, key, known.get(key, known)

    def sampling(self, calls: int, due: int) -> None:
        """The sampler's calls and next call due, as another normaliser left them."""
        self.red.calls, self.red.due = calls, due


def _room(seen: dict, *stack: list) -> tuple[int, int]:
    """(insertions before the visited dict or a list of the Tarjan stack reallocates — the first
    of them —, bytes those then take): ``budget.growth``, ``budget.list_growth``."""
    from .budget import growth, list_growth

    rooms = [growth(seen), *(list_growth(items) for items in stack)]
    left = min(room for room, _ in rooms)
    return left, sum(need for room, need in rooms if room == left)
