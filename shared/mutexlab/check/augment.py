"""The augmented steps of ``check --metrics`` computed without the ``Tracker``: the pure-Python
twin of the compiled core's ``augment`` (``_core_augment.h``), which ``Core.advance`` runs on a
step not remembered yet (edges.py), instead of calling back into Python for it.

What ``Tracker.step`` (without carried charges) and ``Edges.step`` make of a step reads only the
augmented part, the signature (``Edges.shown``: the kind a decision notes, what the process
waits to enter before and after, whether it states its requests by ``wants()``, its entries and
exits, the links it sends on) and the awaits bits: a delivery's charge and tag dropped and its
hop counts merged into its receiver's, a request noted, given up or stated by ``wants()``, an
entry (a request served at once, the handover measured ends: the figures it reaches) or an exit
(a handover measured from it when someone waits), each message sent tagged with the sender's hop
counts and charged to the request awaiting it or to the step's cause, the requests nothing refers
to any more closed; then the bypass plan and the successor interned. So a step computed here is
the one the ``Tracker`` would give (tests/test_check_augment.py holds them together). Left to the
``Tracker`` (None): a signature that is not edges.py's, a kind id past ``MAX_KIND`` (a bit of a
64-bit word in C), hop counts of more than ``MAX_HOPS`` kinds.
"""

from __future__ import annotations

from .charges import NONE
from .edges import plan
from .model import LOCAL

AUGMENT = True  # False: every step not remembered asked of the Tracker (the tests' reference)
MAX_KIND = 61  # the largest kind id computed here (measuring is a bit set)
MAX_HOPS = 64  # the most kinds in one hop-count tuple computed here


def augment(
    auxes: list, ids: dict, aux_id: int, shown: tuple, sends: tuple, bits: int, i: int, n: int, link_to: tuple
) -> tuple | None:
    """``Edges.step``'s remembered step (successor's aux id, moved, figures reached, edge) for
    the augmented part ``aux_id``, the step shown as ``shown`` by process ``i`` sending ``sends``
    with receivers awaiting them by ``bits``; None when the ``Tracker`` must compute it."""
    if len(shown) != 8:
        return None  # not edges.py's signature (a test's broken one): the Tracker's
    kind, x, noted, w0, w1, declares, moves, _ = shown
    if any(kd < 0 or kd > MAX_KIND for kd, _ in moves):
        return None
    aux = auxes[aux_id]
    tags, procs, live, measuring = aux
    charged: list = []
    closed: list = []
    reached: list = []
    freed = NONE
    p = procs[i]
    hops = p[3]
    if len(hops) > MAX_HOPS:
        return None
    if kind == LOCAL:
        cause = p[2]
    else:
        link = tags[x]
        cause, mhops = link[0]
        if mhops:
            hops = merge(hops, mhops)
            if hops is None:
                return None
        tags = tags[:x] + (link[1:],) + tags[x + 1 :]
        freed = cause
    if noted == NONE and not moves and not sends and w1 in (w0, NONE) and p[1] == NONE:
        if hops is not p[3]:
            procs = procs[:i] + ((p[0], p[1], p[2], hops),) + procs[i + 1 :]
        if freed != NONE and not referenced(freed, procs, tags):
            live = close(live, freed, closed)
    else:
        q = [p[0], p[1], p[2]]
        procs_l, tags_l, live_l, old_own = list(procs), list(tags), list(live), q[2]
        if noted != NONE:
            cause = open_request(live_l, q, i, n, noted)
        for kd, sign in moves:
            bit = 1 << kd
            if sign > 0:  # an entry
                if q[1] != kd and declares:  # with no request open: a request served at once
                    cause = open_request(live_l, q, i, n, kd)
                    reached.append((kd, "bypass", 0, i))
                q[0] = q[1] = NONE
                if measuring & bit:  # the handover measured ends here
                    longest, shortest = longest_shortest(hops, kd)
                    reached.append((kd, "sync", longest, i))
                    reached.append((kd, "sync_short", shortest, i))
                    measuring &= ~bit
                    hops = without(hops, kd)
                    clear_all(procs_l, tags_l, kd)
            else:  # an exit
                if measuring & bit:
                    clear_all(procs_l, tags_l, kd)
                    hops = without(hops, kd)
                if q[1] == kd or any(o[1] == kd for j, o in enumerate(procs_l) if j != i):
                    measuring |= bit  # someone waits: every later hop count starts here
                    hops = tuple(sorted(hops + ((kd, 0, 0),)))
                    if len(hops) > MAX_HOPS:
                        return None
                else:
                    measuring &= ~bit
        if q[1] != NONE and w0 == q[1] and w1 != q[1]:  # given up
            kd, charge, _ = live_l[q[0]]
            live_l[q[0]] = (kd, charge, False)
            q[0] = q[1] = NONE
        if w1 != NONE and w1 != w0 and q[1] != w1:
            cause = open_request(live_l, q, i, n, w1)
        for b, (k, _) in enumerate(sends):
            charge = procs[link_to[k]][0] if bits >> b & 1 else cause
            if charge != NONE:
                charged.append(charge)
            tags_l[k] = tags_l[k] + ((charge, hops),)
        procs_l[i] = (q[0], q[1], q[2], hops)
        procs, tags, live = tuple(procs_l), tuple(tags_l), tuple(live_l)
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
    if procs[i][0] != old[i][0] or any(o[0] != NONE for o in old):
        edge = plan(old, procs, i, tuple(kd for kd, sign in moves if sign > 0))
    else:
        edge = None
    naux_id = ids.get(naux)
    if naux_id is None:
        naux_id = ids[naux] = len(auxes)
        auxes.append(naux)
    return (naux_id, moved, tuple(reached), edge)


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


def merge(mine: tuple, carried: tuple) -> tuple | None:
    """``charges._merge``: a receiver's hop counts after a message carrying ``carried``, one hop
    more, by kind (a later entry of a kind replaces an earlier); None past ``MAX_HOPS`` kinds."""
    got: list = []  # [kind, longest, shortest], in order of first appearance
    for k, lo, sh in mine:
        at = next((e for e in got if e[0] == k), None)
        if at is None:
            got.append([k, lo, sh])
        else:
            at[1], at[2] = lo, sh
    for k, lo, sh in carried:
        at = next((e for e in got if e[0] == k), None)
        if at is None:
            got.append([k, lo + 1, sh + 1])
        else:
            at[1], at[2] = max(at[1], lo + 1), min(at[2], sh + 1)
    if len(got) > MAX_HOPS:
        return None
    return tuple((k, lo, sh) for k, lo, sh in sorted(got, key=lambda e: e[0]))


def longest_shortest(hops: tuple, kd: int) -> tuple[int, int]:
    """``charges._hops``: (longest, shortest) chain of kind ``kd``, NONE when it has none."""
    for k, longest, shortest in hops:
        if k == kd:
            return longest, shortest
    return NONE, NONE


def without(hops: tuple, kd: int) -> tuple:
    return tuple(h for h in hops if h[0] != kd)


def clear_all(procs: list, tags: list, kd: int) -> None:
    """``charges._clear_all`` in place: every hop count of kind ``kd`` forgotten."""
    for j, o in enumerate(procs):
        if o[3]:
            procs[j] = (o[0], o[1], o[2], without(o[3], kd))
    for k, link in enumerate(tags):
        if any(h for _, h in link):
            tags[k] = tuple((c, without(h, kd)) for c, h in link)
