"""The search of ``mutexlab check``: every reachable world, depth-first or breadth-first.

Both searches keep only 64-bit fingerprints of the worlds they have seen (hash compaction, as
SPIN's ``-DHC``); the probability that two of n distinct worlds share one is below n²/2⁶⁵, and
the result says so. ``exact=True`` stores the worlds themselves instead (for cross-checks).

Depth-first search is Tarjan's algorithm: when a strongly connected component closes, a
non-trivial one (a cycle) is handed to the liveness check (``properties.fair_starvation``) with
the path that leads to it. An acyclic graph — every bounded workload of the classic algorithms —
has no infinite run, so there liveness is deadlock-freedom. Breadth-first search gives shortest
counterexamples; it notices any edge that may close a cycle (one back to a level already done)
and then runs the depth-first search for liveness after it.

A search stops at the first finding, at ``max_states``, or when the memory the check has added
to the process passes ``max_memory_mb`` (then the result is *incomplete*, never a pass): in every
phase, the liveness analysis and the lasso included (``budget.py``). What the process held before
the check (a long test session, say) does not count against it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol import ProtocolError
from ..sim.stuck import stuck_said
from ..waiting import WaitsRaised
from . import core
from .budget import Budget, LimitReached, growth
from .lasso import unjudged, witness
from .model import Model
from .properties import WaitsUnknown, fair_starvation
from .result import CheckFinding, Result, peak_mb

CHECK_EVERY = 2048  # states between looks at the clock and the memory


@dataclass
class Search:
    model: Model
    invariant: Any = None
    max_states: int | None = None
    max_memory: float | None = None  # MB the search may add to the process
    exact: bool = False
    progress: Callable[[Result, bool], None] | None = None
    budget: Budget | None = None  # the check's (run_check arms its watchdog); else one of its own

    def __post_init__(self) -> None:
        self.result = Result(exact=self.exact)
        self._t0 = 0.0
        if self.budget is None:  # the process before this search: not the search's to spend
            self.budget = Budget(self.max_states, self.max_memory, self.progress)
        self.budget.result = self.result

    # -- shared ----------------------------------------------------------------------------
    def key(self, world: tuple):
        return world if self.exact else hash(world)

    def _limits(self, table: dict | None = None) -> int:
        """Raise LimitReached when a limit stops the search; else report progress and return
        how many states may be added before the next look. ``table``: the visited table, whose
        next reallocation (``budget.growth``) must fit under the memory limit."""
        return self.limits_at(*(growth(table) if table is not None else (CHECK_EVERY, 0)))

    def limits_at(self, left: int, need: int) -> int:
        """``_limits`` of a visited table that reallocates after ``left`` insertions, to take
        ``need`` bytes then."""
        r, budget = self.result, self.budget
        assert budget is not None
        if self.max_states is not None and r.states >= self.max_states:
            raise LimitReached(f"state limit {self.max_states:,} reached")
        budget.look(need if left == 0 else 0)
        budget.report()
        stride = max(1, min(CHECK_EVERY, left))
        return stride if self.max_states is None else min(stride, self.max_states - r.states)

    def _phase(self, phase: str) -> None:
        assert self.budget is not None
        self.budget.phase = phase

    def world_finding(self, world: tuple) -> CheckFinding | None:
        """Checks of a world when first reached: the scenario's invariant."""
        if self.invariant is not None:
            broken = self.invariant(self.model, world)
            if broken is not None:
                return CheckFinding("invariant", broken[0], [], processes=broken[1])
        return None

    def dead_end(self, world: tuple) -> CheckFinding | None:
        model = self.model
        if model.all_finished(world):
            self.result.finals += 1
            return None
        unexplained = None
        try:
            stuck = list(model.waiters(world))
        except WaitsRaised as exc:  # the stall is shown all the same, its cause unknown: not judged
            unexplained = exc.short
            stuck = [model.names[model.pids[i]] for i in range(model.n) if not model.finished(world[i])]
        return CheckFinding(
            "deadlock",
            f"nothing can move; waiting: {stuck_said(model, world)}",
            [],
            processes=stuck,
            unexplained=unexplained,
        )

    def refusal(self, t) -> None:
        """A refused step (``t.refused``: a handler left a state of no name): a dead end. The
        search goes on past it, the first said; what lies beyond it is unchecked. Each refused
        transition counts once (the model caches it: one object, met at many edges)."""
        if id(t) in self._refused:
            return
        self._refused.add(id(t))
        r = self.result
        r.refusals += 1
        if r.refusal is None:
            r.refusal = t.error

    def edge_finding(self, world: tuple, label: tuple, nxt, t, overfull) -> CheckFinding:
        """The finding of a step that was refused (``nxt`` None) or overfilled a resource."""
        model = self.model
        if nxt is None:
            return CheckFinding(
                "error",
                f"{model.describe(label)}: {t.error}",
                [],
                processes=[model.names[model.pids[label[1] if label[0] == 1 else model.link_to[label[1]]]]],
            )
        if overfull is not None:
            held = [
                model.names[model.pids[i]]
                for r, i, _ in model.holdings(nxt)
                if model.resources[r] == overfull.split(" ", 1)[0]
            ]
            return CheckFinding("capacity", overfull, [], processes=held, resource=overfull.split(" ", 1)[0])
        raise ValueError(f"{model.describe(label)} is neither refused nor overfull: no finding")

    def _finish(self) -> Result:
        r = self.result
        r.seconds = time.perf_counter() - self._t0
        r.peak_mb = peak_mb()
        if self.progress is not None:
            self.progress(r, True)
        return r

    def _stopped(self, stop: LimitReached) -> Result:
        """A limit stopped the search: incomplete (a finding already made stays)."""
        self.result.stopped = stop.why
        self.result.complete = False
        return self._finish()

    def _begin(self, search: str):
        """Start the clock and the result; the initial world, or None when it is already a finding."""
        if not self._t0:  # a restart (partial-order reduction dropped) keeps the first start
            self._t0 = time.perf_counter()
        self._refused: set[int] = set()  # the refused transitions noted in this search's result
        self.result.search = search
        return self.initial_world()

    def initial_world(self):
        try:
            world, overfull = self.model.initial()
        except ProtocolError as exc:
            self.result.findings.append(CheckFinding("error", str(exc), []))
            return None
        if overfull is not None:
            self.result.findings.append(
                CheckFinding("capacity", overfull, [], resource=overfull.split(" ", 1)[0])
            )
            return None
        return world

    # -- depth-first (Tarjan) ----------------------------------------------------------------
    def dfs(self) -> Result:
        """Depth-first search; under partial-order reduction, the first edge that closes a cycle
        of the reduced graph switches the reduction off and starts again (``por.py``)."""
        try:
            result = self._dfs()
            if result is None:
                self.model.drop_por()
                self.result = Result(exact=self.exact)
                assert self.budget is not None
                self.budget.result = self.result
                result = self._dfs()
                assert result is not None
            return result
        except LimitReached as stop:
            return self._stopped(stop)

    def _dfs(self) -> Result | None:
        r, model, root = self.result, self.model, self._begin("dfs")
        if root is None:
            return self._finish()
        self._phase("search")
        if core.eligible(self):  # the integer-world core: the same worlds, counts and findings
            return self._finish() if core.run_dfs(self, root) else None
        key = self.key
        steps, step = model.steps, model.step
        fast = not model.reorder and not model.dup
        n, P0, link_to, trans = model.n, model.P0, model.link_to, model.trans
        transition = model.transition
        normalise = model.normalise
        por = model.por
        ample = por.ample if por is not None else None
        tails, heads, seqs = model.seq_tail, model.seq_head, model.seqs
        pushes, adds, drops = model._push, model._add, model._drop  # noqa: SLF001 - the search loop binds the model's hot methods once
        push, add, drop = model.push, model.add, model.drop
        # fingerprint → its Tarjan index while the world is on the Tarjan stack, -1 once its
        # component is closed (the visited set and Tarjan's "on stack" in one table)
        seen: dict = {}
        tstack: list = []  # (fingerprint, world) not yet in a closed component
        # a frame: [world, fingerprint, labels, next position, label that led here, self-loop, low]
        frames: list = []
        counter = 0

        def enter(world, fp, via) -> CheckFinding | None:
            nonlocal counter
            seen[fp] = counter
            r.states += 1
            tstack.append((fp, world))
            labels = steps(world)
            if ample is not None and len(labels) > 1:
                labels = ample(world, labels)
            frames.append([world, fp, labels, 0, via, False, counter])
            counter += 1
            if len(frames) - 1 > r.depth:
                r.depth = len(frames) - 1
            found = self.world_finding(world) if self.invariant is not None else None
            if found is None and not labels:
                found = self.dead_end(world)
            return found

        def path() -> list:
            return [f[4] for f in frames[1:]]

        found = enter(root, key(root), None)
        if found is not None:
            found.path = path()
            r.findings.append(found)
            return self._finish()
        transitions = 0
        next_look = 0
        hashed = not self.exact
        check_world = self.invariant is not None
        seen_get, tstack_append, frames_append = seen.get, tstack.append, frames.append
        try:
            while frames:
                frame = frames[-1]
                labels, pos = frame[2], frame[3]
                if pos < len(labels):
                    label = labels[pos]
                    frame[3] = pos + 1
                    world = frame[0]
                    if fast:
                        # model.step, inlined for FIFO links without duplicates (the common case)
                        kind, x, y = label
                        w = list(world)
                        if kind:  # LOCAL
                            i = x
                            q = w[P0 + i]
                            w[P0 + i] = drops[q].get(y) or drop(q, y)
                            code = 2 * y + 1
                        else:
                            w[n + x] = tails[w[n + x]]
                            i = link_to[x]
                            code = 2 * y
                        t = trans[w[i]].get(code) or transition(w[i], code)
                        overfull = None
                        if t.error is None:
                            w[i] = t.state
                            for k, mid in t.sends:
                                q = w[n + k]
                                w[n + k] = pushes[q].get(mid) or push(q, mid)
                            for a in t.schedules:
                                q = w[P0 + i]
                                w[P0 + i] = adds[q].get(a) or add(q, a)
                            if t.holds:
                                overfull = model.hold(w, i, t.holds)
                            nxt = tuple(w)
                            if normalise is not None:
                                nxt = normalise(nxt)
                        else:
                            nxt = None
                    else:
                        nxt, t, overfull = step(world, label)
                    if nxt is None and t.refused:  # a dead end: noted at its first edge, as the cores
                        self.refusal(t)
                        continue
                    if nxt is None or overfull is not None:
                        if nxt is not None:
                            transitions += 1
                        found = self.edge_finding(world, label, nxt, t, overfull)
                        found.path = path() + [label]
                        r.findings.append(found)
                        return self._finish()
                    transitions += 1
                    nfp = hash(nxt) if hashed else nxt
                    got = seen_get(nfp)
                    if got is not None:
                        if got >= 0:  # on the Tarjan stack
                            if por is not None:
                                return None  # a cycle of the reduced graph: start again without
                            if nfp == frame[1]:
                                frame[5] = True
                            elif got < frame[6]:
                                frame[6] = got
                        continue
                    if r.states >= next_look:
                        r.transitions = transitions
                        next_look = r.states + self._limits(seen)
                    if fast and not check_world:
                        # enter(), inlined
                        seen[nfp] = counter
                        r.states += 1
                        tstack_append((nfp, nxt))
                        labels = [(0, k, heads[q]) for k, q in enumerate(nxt[n:P0]) if q]
                        for i in range(n):
                            q = nxt[P0 + i]
                            if q:
                                pending = seqs[q]
                                labels += (
                                    [(1, i, a) for a in sorted(set(pending))]
                                    if len(pending) > 1
                                    else [(1, i, pending[0])]
                                )
                        if ample is not None and len(labels) > 1:
                            labels = ample(nxt, labels)
                        frames_append([nxt, nfp, labels, 0, label, False, counter])
                        counter += 1
                        if len(frames) > r.depth + 1:
                            r.depth = len(frames) - 1
                        if labels:
                            continue
                        found = self.dead_end(nxt)
                    else:
                        found = enter(nxt, nfp, label)
                    if found is not None:
                        found.path = path()
                        r.findings.append(found)
                        return self._finish()
                    continue
                # every successor done: close the frame
                frames.pop()
                fp, low = frame[1], frame[6]
                if frames and low < frames[-1][6]:
                    frames[-1][6] = low
                if low == seen[fp]:
                    v, w = tstack.pop()
                    seen[v] = -1
                    if v == fp and not frame[5]:
                        continue  # a trivial component: no cycle through this world
                    comp = {v: w}
                    while v != fp:
                        v, w = tstack.pop()
                        seen[v] = -1
                        comp[v] = w
                    if self.component(
                        list(comp.values()), path() + ([frame[4]] if frame[4] is not None else [])
                    ):
                        return self._finish()
        finally:
            r.transitions = transitions
        r.complete = True
        return self._finish()

    def component(self, worlds: list, prefix: list) -> bool:
        """A non-trivial strongly connected component closed (its worlds; ``prefix`` the path to
        its root): True when its liveness check found a lasso, now a finding of the result."""
        self.result.cycles = True
        if self.result.refusal is not None:  # a step out of it may have been refused: not judged
            self.result.liveness_unjudged = True
            return False
        comp = {hash(w): w for w in worlds}
        self._phase(f"liveness analysis of a component of {len(comp):,} worlds")
        try:
            found = fair_starvation(self.model, comp)
        except WaitsUnknown as unknown:  # whether anyone starves here cannot be said: not judged
            self._phase("building the path to the cycle")
            self.result.findings.append(unjudged(self.model, unknown, comp, prefix))
            return True
        if found is None:
            self._phase("search")
            return False
        self._phase("building the lasso")
        self.result.findings.append(witness(self.model, found, comp, prefix))
        return True

    # -- breadth-first -------------------------------------------------------------------------
    def bfs(self) -> Result:
        try:
            return self._bfs()
        except LimitReached as stop:
            return self._stopped(stop)

    def _bfs(self) -> Result:
        r, model, root = self.result, self.model, self._begin("bfs")
        if root is None:
            return self._finish()
        key = self.key
        steps, step = model.steps, model.step
        rfp = key(root)
        parent: dict = {rfp: None}  # fingerprint → parent fingerprint (visited set and paths)
        r.states = 1
        found = self.world_finding(root) or (None if steps(root) else self.dead_end(root))
        if found is not None:
            r.findings.append(found)
            return self._finish()
        self._phase("search")
        level = [root]
        back_edge = False
        depth = 0
        next_look = 0
        while level:
            depth += 1
            nxt_level: list = []
            new: set = set()
            for world in level:
                fp = key(world)
                labels = steps(world)
                if model.por is not None and len(labels) > 1:
                    labels = model.por.ample(world, labels)
                for label in labels:
                    nxt, t, overfull = step(world, label)
                    if nxt is None and t.refused:  # a dead end: noted once, the search goes on
                        self.refusal(t)
                        continue
                    if nxt is not None:
                        r.transitions += 1
                    if nxt is None or overfull is not None:
                        found = self.edge_finding(world, label, nxt, t, overfull)
                        found.path = self._bfs_path(parent, fp) + [label]
                        r.findings.append(found)
                        return self._finish()
                    nfp = key(nxt)
                    if nfp in parent:
                        if nfp not in new:
                            back_edge = True
                        continue
                    if r.states >= next_look:
                        next_look = r.states + self._limits(parent)
                    parent[nfp] = fp
                    new.add(nfp)
                    r.states += 1
                    r.depth = depth
                    found = self.world_finding(nxt) or (None if steps(nxt) else self.dead_end(nxt))
                    if found is not None:
                        found.path = self._bfs_path(parent, nfp)
                        r.findings.append(found)
                        return self._finish()
                    nxt_level.append(nxt)
            level = nxt_level
        if back_edge:
            # An edge back to an earlier level may close a cycle: liveness needs the graph's
            # components, which the depth-first search computes.
            parent.clear()
            self._phase("liveness: a depth-first pass")
            deep = Search(
                model, self.invariant, self.max_states, self.max_memory, self.exact, budget=self.budget
            ).dfs()
            assert self.budget is not None
            self.budget.result = r  # this search's result again, should a limit land now
            r.cycles = deep.cycles
            r.liveness_unjudged = deep.liveness_unjudged
            if deep.findings:
                r.findings = deep.findings
            elif not deep.complete:
                r.stopped = deep.stopped
                return self._finish()
        r.complete = not r.findings
        return self._finish()

    def _bfs_path(self, parent: dict, fp) -> list:
        """The labels from the initial world to ``fp``: follow parents back, then replay forward
        choosing the successor with the next fingerprint."""
        chain = []
        while fp is not None:
            chain.append(fp)
            fp = parent[fp]
        chain.reverse()
        model = self.model
        world, _ = model.initial()
        labels = []
        for want in chain[1:]:
            for label in model.steps(world):
                nxt, _, _ = model.step(world, label)
                if nxt is not None and self.key(nxt) == want:
                    labels.append(label)
                    world = nxt
                    break
            else:
                raise AssertionError("a breadth-first path could not be replayed")
        return labels
