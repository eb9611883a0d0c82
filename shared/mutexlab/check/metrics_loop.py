"""The figures' search loop of ``check --metrics`` climbed by the compiled core (``Core.climb``,
``_core_loop.h``): the speed shortcut of metrics.py's ``while frames`` loop, its pure-Python twin.

The core walks the augmented worlds depth-first, takes each step and its remembered lookups
(``advance``), and folds each closed world's figures ahead into its parent's in C (the bypass
plan, the fewest and most messages per count of entries ahead, the charges ahead of the live
requests, the closed figures interned and stored in the search's ``known``). It calls back here
only for what needs Python: a step not remembered yet (``missed``: edges.py computes it, as the
twin does), the figures a step reaches, the requests it opens, a bypass that may beat the best
known, a world where nothing can move, and the limits every ``CHECK_EVERY`` worlds. The hooks are
the twin's own functions, so a figure, the run reaching it and every count are the twin's
(tests/test_check_core_loop.py holds them together; a build folding wrongly is caught there).
"""

from __future__ import annotations

from collections.abc import Callable

from .ahead import averages, ended
from .edges import Edges
from .extremes import Figures, MetricsResult

CLIMB = True  # False: metrics.py's own loop even on a core that climbs (the tests' reference)


def climbs(core) -> bool:
    """Whether the figures' loop runs in ``core`` (the compiled one; ``PyCore`` has no climb)."""
    return CLIMB and hasattr(core, "climb")


def climb(
    core,
    out: MetricsResult,
    root: list,
    edges: Edges,
    known: dict,
    interned: dict,
    keyof: Callable,
    hooks: tuple,
    max_states: int | None,
    kinds: list,
    augmented: Callable | None = None,
) -> None:
    """The search from the ``root`` frame (metrics.py's), climbed by ``core``: ``out``'s counts,
    runs, stop and figures as the twin's loop leaves them. ``hooks``: the twin's ``opened``,
    ``reached_at``, ``beat`` and ``limited``; ``augmented``: the core's, for a step whose
    signature is computed here (None: the Tracker's)."""
    opened, reached_at, beat, limited = hooks
    model = edges.tracker.model
    auxes, remembered, trans = edges.auxes, edges._edges, model.trans  # noqa: SLF001 - the hot table

    def missed(world: tuple, label: tuple, aux: int, nxt: tuple, i: int, sig: tuple | None) -> tuple:
        """A step ``advance`` did not find remembered: (signature, remembered step, key)."""
        t = None
        if sig is None:
            t = trans[world[i]][2 * label[2] + label[0]]  # the core asked the model for it
            sig = edges.signature(label, world[i], t)
        akey = (aux, sig[0], edges.awaits(nxt, i, sig[1], aux) if sig[1] else 0)
        got = remembered.get(akey)
        if got is None and augmented is not None:
            got = augmented(akey[0], akey[1], sig[1], akey[2], i) if len(sig[1]) <= 62 else None
        if got is None:
            t = t or trans[world[i]][2 * label[2] + label[0]]
            got = edges.step(akey, world, label, nxt, t, i, sig[2])
        return sig, got, keyof((nxt, got[0]))

    def opens(label: tuple, nxt: tuple, aux: int, requests: list) -> None:
        opened(label, (nxt, auxes[aux]), requests)

    def bypass(kd: int, value: int, label: tuple, nxt: tuple, aux: int, i: int) -> None:
        beat(kd, value, label, (nxt, auxes[aux]), i)

    def final(nxt: tuple, aux: int) -> tuple | None:
        """A world where nothing can move: the keys of its live requests if a complete run ends."""
        if not model.all_finished(nxt):
            return None
        out.runs += 1
        return tuple(ended(auxes[aux][2]))

    world, _ = root[0]
    states, transitions, closed, stopped = core.climb(
        world,
        root[12],
        root[6],
        list(root[1]),
        interned,
        out.states,
        -1 if max_states is None else max_states,
        (missed, reached_at, opens, bypass, limited, final),
    )
    out.states, out.transitions, out.stopped = states, transitions, stopped
    if closed is not None and stopped is None:
        averages(out, closed[1], kinds, Figures)
