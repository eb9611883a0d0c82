"""The augmented steps of ``check --metrics`` that enter and exit nothing, computed without the
``Tracker``: the pure-Python twin of the compiled core's ``augment`` (``_core_augment.h``),
which ``Core.advance`` runs on a step not remembered yet (edges.py), instead of calling back into
Python for it.

A step with no entry or exit reaches no figure and touches no hop count but to copy it (an exit
starts the counts, an entry ends them): what ``Tracker.step`` does for it — a delivery's charge
and tag dropped, a request noted, given up or stated by ``wants()``, each message sent tagged and
charged to the request awaiting it or to the step's cause, the requests nothing refers to any
more closed — reads only the augmented part, the signature (``Edges.shown``) and the awaits
bits. Two steps are left to the ``Tracker``: an entry or exit, and a delivery of a message
carrying hop counts (merged into its receiver's). Edges.py's remembered step (moved, the bypass
plan, the augmented successor interned) follows as ``Edges.step`` makes it, so a step computed
here is the one the ``Tracker`` would give (tests/test_check_augment.py).
"""

from __future__ import annotations

from .charges import NONE
from .edges import plan
from .model import LOCAL

AUGMENT = True  # False: every step not remembered asked of the Tracker (the tests' reference)


def augment(
    auxes: list, ids: dict, aux_id: int, shown: tuple, sends: tuple, bits: int, i: int, n: int, link_to: tuple
) -> tuple | None:
    """``Edges.step``'s remembered step (successor's aux id, moved, figures reached, edge) for
    the augmented part ``aux_id``, the step shown as ``shown`` by process ``i`` sending ``sends``
    with receivers awaiting them by ``bits``; None when the ``Tracker`` must compute it."""
    if len(shown) != 8:
        return None  # not edges.py's signature (a test's broken one): the Tracker's
    kind, x, noted, w0, w1, _, moves, _ = shown
    if moves:
        return None  # an entry or an exit: hop counts and figures reached
    aux = auxes[aux_id]
    tags, procs, live, measuring = aux
    charged: list = []
    closed: list = []
    freed = NONE
    p = procs[i]
    if kind == LOCAL:
        cause = p[2]
    else:
        link = tags[x]
        cause, mhops = link[0]
        if mhops:
            return None  # hop counts merged into the receiver's
        tags = tags[:x] + (link[1:],) + tags[x + 1 :]
        freed = cause
    if noted == NONE and not sends and w1 in (w0, NONE) and p[1] == NONE:
        if freed != NONE and not referenced(freed, procs, tags):
            live = close(live, freed, closed)
    else:
        q = list(p)
        procs_l, live_l, old_own = list(procs), list(live), q[2]
        if noted != NONE:
            cause = open_request(live_l, q, i, n, noted)
        if q[1] != NONE and w0 == q[1] and w1 != q[1]:  # given up
            kd, charge, _ = live_l[q[0]]
            live_l[q[0]] = (kd, charge, False)
            q[0] = q[1] = NONE
        if w1 != NONE and w1 != w0 and q[1] != w1:
            cause = open_request(live_l, q, i, n, w1)
        if sends:
            tags_l = list(tags)
            for b, (k, _) in enumerate(sends):
                charge = procs[link_to[k]][0] if bits >> b & 1 else cause
                if charge != NONE:
                    charged.append(charge)
                tags_l[k] = tags_l[k] + ((charge, q[3]),)
            tags = tuple(tags_l)
        procs_l[i] = tuple(q)
        procs, live = tuple(procs_l), tuple(live_l)
        if freed != NONE and not referenced(freed, procs, tags):
            live = close(live, freed, closed)
        if old_own not in (NONE, q[2], freed) and not referenced(old_own, procs, tags):
            live = close(live, old_own, closed)
    naux = (tags, procs, live, measuring)
    if not closed and live == aux[2]:
        moved: tuple | list = tuple(charged)
    else:
        moved = [tuple(charged), tuple(closed)]
    old = aux[1]
    edge = plan(old, procs, i, ()) if procs[i][0] != old[i][0] or any(o[0] != NONE for o in old) else None
    naux_id = ids.get(naux)
    if naux_id is None:
        naux_id = ids[naux] = len(auxes)
        auxes.append(naux)
    return (naux_id, moved, (), edge)


def open_request(live: list, p: list, i: int, n: int, kd: int) -> int:
    """``Tracker.step``'s ``open_request``: the smallest free key of process ``i``."""
    key = i
    while key < len(live) and live[key]:
        key += n
    while len(live) <= key:
        live.append(())
    live[key] = (kd, 0, True)
    p[0], p[1], p[2] = key, kd, key
    return key


def referenced(key: int, procs: tuple, tags: tuple) -> bool:
    return any(o[2] == key for o in procs) or any(c == key for link in tags for c, _ in link)


def close(live: tuple, key: int, closed: list) -> tuple:
    """``Tracker._close`` without a carried charge: the key listed as closed, its entry gone."""
    closed.append((key, live[key][2]))
    live = live[:key] + ((),) + live[key + 1 :]
    while live and not live[-1]:
        live = live[:-1]
    return live
