"""The augmented steps of ``check --metrics`` (metrics.py), each computed once: the augmented
part of a world (``charges.Tracker``'s ``aux``) interned to a small int, and each distinct
(augmented part, what the step shows of the model) mapped once by ``Tracker.step`` and
remembered, as the check's core remembers each (local state, input) transition.

What ``Tracker.step`` reads of a step besides ``aux`` is its *signature*: the label's kind and
link or process, the kind a local decision notes as a request, what the stepping process waits
to enter before and after (``wants``), whether it states its requests by ``wants()``, its
entries and exits, the links it sends on, and, per message sent, whether its receiver awaits it
in the world the step leads to (``awaits``). Two steps with the same ``aux`` and signature give
the same augmented successor, the same charges and closes, and the same figures reached — so
many steps share one (Sanders N=3 × 1: 99,990 steps, 7,867 distinct), and the search asks the
``Tracker`` only once for each.
"""

from __future__ import annotations

from .charges import NONE, Tracker
from .model import LOCAL

NEG = -(1 << 40)  # no bypass figure ahead on any path (the request is given up on all of them)


class Edges:
    """Interned augmented parts and remembered augmented steps of one ``Tracker``."""

    def __init__(self, tracker: Tracker, remember: bool = True) -> None:
        self.tracker = tracker
        self.remember = remember  # False: every step asked of the Tracker (the reference)
        self.auxes: list[tuple] = []  # aux id → aux
        self.ids: dict[tuple, int] = {}  # aux → aux id
        self._sigs: dict[tuple, tuple] = {}  # (label, state id) → (signature id, sends, entered)
        self._sig_ids: dict[tuple, int] = {}
        self.shown_of: list[tuple] = []  # signature id → what it shows (``shown``; augment.py reads it)
        self._awaits: dict[tuple, bool] = {}  # (receiver's state id, message id, sender) → awaits
        self._edges: dict[tuple, tuple] = {}  # (aux id, signature id, awaits bits) → the step
        self.asked = 0  # steps computed by the Tracker (the distinct ones)

    def intern(self, aux: tuple) -> int:
        got = self.ids.get(aux)
        if got is None:
            got = self.ids[aux] = len(self.auxes)
            self.auxes.append(aux)
        return got

    def signature(self, label: tuple, sid: int, t) -> tuple:
        """(signature id, sends, entered kinds, (messages sent, entries)) of the step ``label``
        from the stepping process's state ``sid`` (transition ``t``)."""
        key = (label, sid)
        got = self._sigs.get(key)
        if got is None:
            tr = self.tracker
            entered = tuple(kd for kd, sign in tr.moves(t.holds) if sign > 0) if t.holds else ()
            shown = self.shown(label, sid, t)
            sig_id = self._sig_ids.get(shown)
            if sig_id is None:
                sig_id = self._sig_ids[shown] = len(self.shown_of)
                self.shown_of.append(shown)
            got = self._sigs[key] = (sig_id, t.sends, entered, (len(t.sends), len(entered)))
        return got

    def shown(self, label: tuple, sid: int, t) -> tuple:
        """What ``Tracker.step`` reads of the step ``label`` from state ``sid`` (but who awaits
        its messages): its signature."""
        tr = self.tracker
        kind, x, y = label
        return (
            kind,
            x,
            tr.noted(sid, 2 * y + 1) if kind == LOCAL else NONE,
            tr.wants(sid),
            tr.wants(t.state),
            tr.states_wants(sid) if t.holds else False,
            tr.moves(t.holds) if t.holds else (),
            tuple(k for k, _ in t.sends),
        )

    def awaits(self, nxt: tuple, i: int, sends: tuple, aux: int) -> int:
        """A bit per message sent: its receiver has a request open in ``aux`` (an aux id) and
        awaits it in ``nxt`` (``Tracker.awaits``, which the Tracker asks only then)."""
        bits = 0
        link_to = self.tracker.model.link_to
        procs = self.auxes[aux][1]
        cache = self._awaits
        for b, (k, mid) in enumerate(sends):
            q = link_to[k]
            if procs[q][0] == NONE:
                continue
            key = (nxt[q], mid, i)
            got = cache.get(key)
            if got is None:
                got = cache[key] = self.tracker.awaits(nxt, q, i, mid)
            if got:
                bits |= 1 << b
        return bits

    def step(self, key: tuple, world: tuple, label: tuple, nxt: tuple, t, i: int, entered: tuple) -> tuple:
        """The augmented step ``key`` = (aux id, signature id, awaits bits), not remembered yet,
        computed from one step showing it: (successor's aux id, moved, figures reached, edge).

        ``moved``: a tuple, the keys the step charges (the same requests live); a list
        [charged, closed] of a step that opens or closes requests. ``figures reached``: the
        ``Tracker``'s ``seen`` calls, (kind, what, value, process), to replay. ``edge``:
        ``plan``'s when the bypass ahead depends on this step, else None."""
        self.asked += 1
        tr = self.tracker
        aux = self.auxes[key[0]]
        seen: list = []
        naux = tr.step(world, aux, label, nxt, t, lambda *a: seen.append(a))
        if not tr.closed and (naux[2] is aux[2] or naux[2] == aux[2]):
            moved: tuple | list = tuple(tr.charged) if tr.charged else ()
        else:
            moved = [tuple(tr.charged), tuple(tr.closed)]
        procs = aux[1]
        if naux[1][i][0] != procs[i][0] or any(o[0] != NONE for o in procs):
            edge = plan(procs, naux[1], i, entered)
        else:
            edge = None
        naux_id = self.ids.get(naux)
        if naux_id is None:
            naux_id = self.ids[naux] = len(self.auxes)
            self.auxes.append(naux)
        got = (naux_id, moved, tuple(seen), edge)
        if self.remember:
            self._edges[key] = got
        return got


def plan(u_procs: tuple, v_procs: tuple, i: int, entered: tuple) -> tuple:
    """How the most entries by others each open request of a world can still see follow from
    those of the world a step by process ``i`` entering ``entered`` leads to: (i, ((process,
    its figure's source process or NONE, added), ...), the kind of a request the step opens
    or NONE). A figure with no source is the constant added: 0 for a request served by the
    step (its figure is what it has seen so far), NEG (``metrics.NEG``) for one given up."""
    out = []
    for j, o in enumerate(u_procs):
        if o[0] == NONE:
            continue
        if j != i:
            out.append((j, j, entered.count(o[1])))
        elif v_procs[i][0] == o[0]:
            out.append((j, i, 0))
        else:
            out.append((j, NONE, 0 if o[1] in entered else NEG))
    mine = v_procs[i]
    opens = mine[1] if mine[0] != NONE and mine[0] != u_procs[i][0] else NONE
    return (i, tuple(out), opens)
