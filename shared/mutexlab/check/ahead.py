"""The figures ahead of ``check --metrics`` (metrics.py), computed bottom-up over the closed
worlds of its acyclic graph, and the walks that rebuild a run reaching each from them.

Each closed world knows, besides its bypass ahead: per count of entries still ahead on a
complete run, the fewest and most messages sent on the way (``fold``: the run's average); and
per live request it counts, the fewest and most messages it is still charged before its charge
is final (``settle``: its close, or the end of a complete run). A request's messages per entry
is then what the step opening it charges it plus that figure of the world the step leads to.
"""

from __future__ import annotations

from collections.abc import Callable

from .charges import Tracker
from .model import LOCAL


def bypassing(tracker: Tracker, ahead_of: Callable, v: tuple, i: int) -> list:
    """From the closed world ``v``, the steps to process ``i``'s entry that meet the most entries
    by others on the way (the figure ``ahead_of(v)[0][i]``)."""
    model = tracker.model
    out: list = []
    state = v
    while True:
        world, aux = state
        want = ahead_of(state)[0][i]
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
                ahead = ahead_of((nxt, nxt_aux))[0][i]
            else:
                ahead = ahead_of((nxt, nxt_aux))[0][i] + entered.count(mine[1])
            if ahead == want:
                out.append(label)
                state = (nxt, nxt_aux)
                break
        else:
            raise AssertionError("no step reaches the bypass figure found")


def fold(acc: dict, counts: tuple, ahead: tuple) -> None:
    """A step sending ``counts[0]`` messages and making ``counts[1]`` entries, into a world with
    ``ahead`` = ((entries ahead, fewest, most messages ahead), ...): ``acc`` the same seen from
    before the step."""
    sent, entries = counts
    for e, lo, hi in ahead:
        e += entries
        got = acc.get(e)
        if got is None:
            acc[e] = [lo + sent, hi + sent]
        else:
            if lo + sent < got[0]:
                got[0] = lo + sent
            if hi + sent > got[1]:
                got[1] = hi + sent


def averages(out, runs: tuple, kinds: list[str], new: Callable) -> None:
    """Every complete run's messages ÷ its entries, fewest and most (one kind of resource only):
    ``runs`` the root's ((entries, fewest, most messages), ...)."""
    if len(kinds) != 1:
        return
    for e, lo, hi in runs:
        if e:
            f = out.figures.setdefault(kinds[0], new())
            f.average_min = lo / e if f.average_min is None else min(f.average_min, lo / e)
            f.average_max = hi / e if f.average_max is None else max(f.average_max, hi / e)


def widen(acc: dict, key: int, lo: int, hi: int) -> None:
    """``acc[key]`` = [fewest, most], widened to ``lo`` and ``hi``."""
    got = acc.get(key)
    if got is None:
        acc[key] = [lo, hi]
        return
    if lo < got[0]:
        got[0] = lo
    if hi > got[1]:
        got[1] = hi


def ended(live: tuple) -> dict:
    """The charges ahead of a world ending a complete run: every request still live that counts
    has its final charge (nothing more)."""
    return {k: [0, 0] for k, e in enumerate(live) if e and e[2]}


def shift(charged: tuple, ahead: tuple) -> tuple:
    """``ahead`` = ((key, fewest, most), ...) seen from before a step that charges ``charged``
    (a key per message) and leaves the same requests live."""
    return tuple((k, lo + charged.count(k), hi + charged.count(k)) for k, lo, hi in ahead)


def settle(acc: dict, u_live: tuple, moved: tuple | list, ahead: tuple) -> list:
    """A step from a world whose live requests are ``u_live`` (its charges ahead: ``acc``, key →
    [fewest, most]) that charges ``moved[0]`` (a key per message) and closes ``moved[1]`` ((key,
    counts), ...) into a closed world with ``ahead`` = ((key, fewest, most), ...): ``acc``
    widened; the requests the step opens returned, ((key, fewest, most, charged by it), ...)."""
    charged, closed = moved
    out: list = []
    live = len(u_live)
    for k, lo, hi in ahead:
        if charged:
            c = charged.count(k)
            lo += c
            hi += c
        else:
            c = 0
        if k < live and u_live[k]:
            got = acc.get(k)
            if got is None:
                acc[k] = [lo, hi]
            else:
                if lo < got[0]:
                    got[0] = lo
                if hi > got[1]:
                    got[1] = hi
        else:
            out.append((k, lo, hi, c))
    for k, counts in closed:
        if not (k < live and u_live[k]):
            raise AssertionError("a request opened and closed in one step")
        if counts:
            c = charged.count(k)
            widen(acc, k, c, c)
    return out


def charging(tracker: Tracker, ahead_of: Callable, v: tuple, key: int, want: int, low: bool) -> list:
    """From the closed world ``v``, the steps that charge request ``key`` ``want`` messages more
    before its charge is final (the fewest of ``ahead_of(v)[2]`` if ``low``, else the most)."""
    model = tracker.model
    out: list = []
    state = v
    while True:
        world, aux = state
        labels = model.steps(world)
        if not labels and want == 0 and model.all_finished(world):
            return out  # a complete run ends with the request live: its charge is final
        for label in labels:
            nxt, t, _ = model.step(world, label)
            if nxt is None:
                continue
            nxt_aux = tracker.step(world, aux, label, nxt, t, lambda *a: None)
            c = tracker.charged.count(key)
            ended = [counts for k, counts in tracker.closed if k == key]
            if ended:
                if ended[0] and c == want:
                    return out + [label]
                continue
            for k, lo, hi in ahead_of((nxt, nxt_aux))[2]:
                if k == key and (lo if low else hi) + c == want:
                    break
            else:
                continue
            out.append(label)
            want -= c
            state = (nxt, nxt_aux)
            break
        else:
            raise AssertionError("no step reaches the charge found")
