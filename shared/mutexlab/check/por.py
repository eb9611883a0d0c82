"""Partial-order reduction of ``mutexlab check``: persistent sets of whole processes.

**Independence.** Every step belongs to one process p: it delivers the oldest message of a
link *into* p, or fires one of p's pending local decisions. It reads and writes only p's state,
p's pending decisions, the head of that one link, the tails of the links *out of* p and p's
own entries in the holdings. Two steps of different processes therefore commute when both are
enabled (a push onto the tail of a non-empty FIFO link leaves its head alone; the holdings are
a multiset), and neither disables the other: they are independent.

**Persistent sets.** For a set S of processes let ample(S) be every enabled step of every
process in S. If every link from a process outside S into a process of S is non-empty, then no
run of steps outside S can change what S's steps are or what they do: outside steps only append
behind messages already waiting for S. So ample(S) is *persistent* (Godefroid): every run from
the world begins, up to commuting independent steps, with a step of ample(S). S is found by
closing {p} under "q is added when the link q→x into some x in S is empty and q may send to x
before anyone in S moves". "May send" is always true unless the protocol declares a bound
(``mutexlab.reduction.SendBound``, for its exact classes: Ricart–Agrawala, the bees, the
elves, whose bound also reads the receiver's state). Exploring only
ample(S) keeps every reachable deadlock (and so every final world). Clock shifts and retired
clocks commute with steps (a step of a shifted world is the shifted step), so the argument
holds on the normalised worlds too.

**Visibility.** A reduced world (ample(S) smaller than every enabled step) is accepted only if
no step in ample(S) is *visible*: none enters or leaves a resource (capacity), none is refused
(``ProtocolError``), and none changes what the scenario's state invariant reads of its process
(``WorldInvariant.reads`` of the spec: the bees' eggs laid, reed and being on a flower; the elves'
invariant reads only the holdings). A step of p does the same thing whatever the other
processes do first (it depends on p's state and the message only), so it is invisible in every
world the commuted runs pass through. With the cycle condition below this is the ample-set
method's C0–C3, which keeps, for every run of the full graph, one of the reduced graph that
shows the same sequence of visible changes: a capacity overflow, a broken invariant, a refused
input or a deadlock reachable in the full graph is reachable in the reduced one.

**Cycles.** C3 (every cycle of the reduced graph passes a fully expanded world) holds trivially
when the reduced graph has no cycle — the case of every bounded workload of the classic
algorithms, the bees and the elves. Then the full graph has none either (an infinite run of the
full graph has a reduced counterpart, which in a finite graph must close a cycle), so liveness
is deadlock freedom there, which the reduction keeps. The search watches for the first edge
that closes a cycle of the reduced graph; then the reduction is switched off and the search
starts again on the full graph (liveness under weak fairness needs its strongly connected
components, which this reduction does not keep).

**Cost.** Choosing a set costs up to one closure per process, each up to every link: Θ(N³)
for N processes. Past ``WORK`` link examinations in one world the world is fully expanded
instead (always sound: every enabled step), so a large N costs the search time per world, not
an unbounded pause before its first one.

Off under ``--no-reduction``, with ``--reorder`` or ``--duplicate`` (a message appended to a
reordering link is a new enabled delivery, so the closure argument above fails), and when a
scenario's invariant does not say what it reads.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .model import LOCAL, Model

NAME = "partial-order reduction"
WORK = 20_000  # link examinations per world before it is fully expanded instead


class PartialOrder:
    """Chooses, per world, the enabled steps of a persistent set of processes."""

    def __init__(
        self,
        model: Model,
        reads: Callable[[Any], Any] | None,
        sends_to: Callable[[Any, tuple, tuple, Any], bool] | None = None,
        reads_receiver: bool = False,
    ) -> None:
        self.model = model
        self.reads = reads
        self.sends_to = sends_to  # the protocol's declared bound on whom a process may send to
        self.reads_receiver = reads_receiver  # the bound reads the receiver's state, not just its pid
        n = model.n
        # into[x]: ((link index, sender index), ...) of every link into process x
        into: list[list[tuple[int, int]]] = [[] for _ in range(n)]
        for k, (s, t) in enumerate(model.links):
            into[model.index[t]].append((k, model.index[s]))
        self.into = [tuple(v) for v in into]
        self._closure: dict[tuple, frozenset] = {}
        self._may: dict[tuple[int, int, int, int], bool] = {}
        self.link_of = {(model.index[s], model.index[t]): k for k, (s, t) in enumerate(model.links)}
        self._visible: dict[tuple[int, int], bool] = {}
        self.reduced = 0  # worlds where a proper subset was taken
        self.spent = 0  # link examinations of the closures of the current world

    @staticmethod
    def applies(model: Model, invariant, reads_known: bool) -> bool:
        return not model.reorder and not model.dup and model.n > 1 and (invariant is None or reads_known)

    def visible(self, sid: int, code: int) -> bool:
        """Whether process state ``sid`` taking input ``code`` changes what a property sees."""
        key = (sid, code)
        got = self._visible.get(key)
        if got is None:
            got = self._visible[key] = self.visible_once(sid, code)
        return got

    def visible_once(self, sid: int, code: int) -> bool:
        """``visible``, not kept: for a search core, which keeps each answer in a table of its own
        (a second copy here cost about 130 bytes an answer, tens of MB in a large search)."""
        model = self.model
        t = model.transition(sid, code)
        got = t.error is not None or bool(t.holds)
        if not got and self.reads is not None:
            got = self.reads(model.objects[t.state]) != self.reads(model.objects[sid])
        return got

    def closure(self, world: tuple, p: int, mask: int | None = None) -> frozenset | None:
        """The smallest set of processes holding ``p`` such that no process outside it can send
        to one inside it on an empty link before one inside moves (``mask``: bit k set when
        link k is non-empty); None once the world's closures have cost more than ``WORK``."""
        if mask is None:
            mask = self.mask(world)
        key: tuple | None = (mask, p) if self.sends_to is None else None
        if key is not None:
            got = self._closure.get(key)
            if got is not None:
                return got
        members = {p}
        todo = [p]
        spent, into = self.spent, self.into
        while todo:
            x = todo.pop()
            links = into[x]
            spent += len(links)
            if spent > WORK:
                self.spent = spent
                return None
            for k, q in links:
                if q not in members and not mask >> k & 1 and self.may_send(world, q, x):
                    members.add(q)
                    todo.append(q)
        self.spent = spent
        got = frozenset(members)
        if key is not None:
            self._closure[key] = got
        return got

    def closures_used(self) -> bool:
        """Whether closures have been cached already (the search core keeps a cache of its own,
        which must start where this one does)."""
        return bool(self._closure)

    def mask(self, world: tuple) -> int:
        n = self.model.n
        mask = 0
        for k in range(self.model.L):
            if world[n + k]:
                mask |= 1 << k
        return mask

    def may_send(self, world: tuple, q: int, x: int) -> bool:
        """Whether process ``q`` may send to ``x`` before ``x`` (or anyone with it) moves: the
        protocol's bound from ``q``'s state, its pending decisions, what ``x`` has in flight
        to it and ``x`` (its state, for a bound that reads it; else only its pid matters); without
        one, always."""
        if self.sends_to is None:
            return True
        model = self.model
        back = world[model.n + self.link_of[(x, q)]]
        key = (world[q], world[model.P0 + q], back, world[x] if self.reads_receiver else -1 - x)
        got = self._may.get(key)
        if got is None:
            got = self._may[key] = self.may_send_once(world, q, x)
        return got

    def may_send_once(self, world: tuple, q: int, x: int) -> bool:
        """``may_send``, not kept: for a search core, which keeps each answer itself (as
        ``visible_once``)."""
        if self.sends_to is None:
            return True
        model = self.model
        back = world[model.n + self.link_of[(x, q)]]
        pending = tuple(model.actions[a] for a in model.seqs[world[model.P0 + q]])
        inflight = tuple(model.messages[m] for m in model.seqs[back])
        return self.sends_to(model.objects[world[q]], pending, inflight, model.objects[world[x]])

    def ample(self, world: tuple, labels: list) -> list:
        """A persistent, invisible subset of ``labels`` (every step enabled in ``world``), or
        ``labels`` itself."""
        model = self.model
        link_to = model.link_to
        by_proc: dict[int, list] = {}
        for label in labels:
            kind, x, _ = label
            by_proc.setdefault(x if kind == LOCAL else link_to[x], []).append(label)
        if len(by_proc) < 2:
            return labels
        visible = self._label_visible
        hidden = {q: not any(visible(world, label) for label in mine) for q, mine in by_proc.items()}
        mask = self.mask(world)
        best: list | None = None
        self.spent = 0
        for p in sorted(by_proc, key=lambda q: len(by_proc[q])):
            if not hidden[p]:
                continue
            members = self.closure(world, p, mask)
            if members is None:
                return labels  # too dear to reduce this world: every enabled step (sound)
            if any(not hidden.get(q, True) for q in members):
                continue
            chosen = [label for q in sorted(members) for label in by_proc.get(q, ())]
            if len(chosen) == len(labels) or (best is not None and len(chosen) >= len(best)):
                continue
            best = chosen
            if len(best) == 1:
                break
        if best is None:
            return labels
        self.reduced += 1
        # keep the model's order among the chosen steps
        keep = set(best)
        return [label for label in labels if label in keep]

    def _label_visible(self, world: tuple, label: tuple) -> bool:
        kind, x, y = label
        if kind == LOCAL:
            return self.visible(world[x], 2 * y + 1)
        return self.visible(world[self.model.link_to[x]], 2 * y)
