"""Lamport's declared reductions (``protocols/lamport_reductions.py``, argued in
docs/check.md#reductions): canonical snapshots, retired clocks and the send bound, beside the
clock shift it declared before. Each is compared with the declaration without it on small
configurations — the same verdict, liveness result and ``--metrics`` figures, never more worlds —
and with all of them declared for deliberately broken Lamport nodes (a subclass gets none
unless it declares them, as these do) the bug is still found, as without any reduction."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from mutexlab_broken import recast
from mutexlab_broken.lamport_variants import EnterOnEarliestRequest, NeverReplies, SelfFirstOnTies

from mutexlab.check import engine
from mutexlab.check.engine import CheckConfig, build_model, run_check
from mutexlab.check.metrics import search_metrics
from mutexlab.check.reductions import notes_of
from mutexlab.protocols import lamport
from mutexlab.protocols.lamport_reductions import REDUCTIONS
from mutexlab.reduction import CANONICAL, CLOCKS, RETIRED, SENDS

NEW = {CANONICAL: "canonical", RETIRED: "retired", SENDS: "sends"}


def _low_before(p) -> int:
    """The clock shift's lowest live timestamp as declared before issue 41: every stamp."""
    return min([p.clock.time] + [ts for _, ts in p.q.values()])


# the declaration before issue 41: the clock shift alone
BEFORE = replace(
    REDUCTIONS, canonical=None, retired=None, sends=None, clocks=replace(REDUCTIONS.clocks, low=_low_before)
)
SMALL = [(2, 1), (2, 2), (3, 1)]
# the figures of Lamport N=3 × 1 with the clock shift alone (343,090 worlds, some 30 CPU-s) for
# the full run only
QUICK_LEAVES_OUT = {"test_the_figures_are_the_same_with_and_without_the_new_declarations[3x1]"}


def declare(monkeypatch, declaration) -> None:
    monkeypatch.setattr(engine, "declared_for", lambda solution: [declaration])


def without(name: str):
    return replace(REDUCTIONS, **{NEW[name]: None})


def check(processes: int, requests: int, setup=None, **kw):
    return run_check(CheckConfig("lamport", processes, {"requests": requests}, **kw), setup=setup)


def applied(model) -> set[str]:
    return {n.name for n in notes_of(model) if n.applied}


def phases(model) -> set:
    """Every process phase the search met: (pid, state, requests left)."""
    return {(p.pid, p.state, p.requests_left) for p in model.objects if isinstance(p, lamport.LamportNode)}


@pytest.mark.parametrize("processes, requests", SMALL, ids=[f"{n}x{r}" for n, r in SMALL])
@pytest.mark.parametrize("partial_order", [True, False], ids=["por", "no-por"])
def test_each_new_declaration_keeps_the_verdict_and_never_adds_worlds(
    monkeypatch, processes, requests, partial_order
):
    """All declared, and each new one taken away alone, against the clock shift alone: the same
    pass (capacity, deadlock, liveness: no cycle, every run ends), the same process phases, and
    never more worlds; with retired clocks the final worlds merge into one."""
    declare(monkeypatch, BEFORE)
    before, model = check(processes, requests, partial_order=partial_order)
    assert not set(NEW) & applied(model)
    seen = phases(model)
    plain, _ = check(processes, requests, reductions=False)
    assert plain.verdict == before.verdict == "pass" and plain.cycles == before.cycles == 0
    for name in [None, *NEW]:
        declare(monkeypatch, REDUCTIONS if name is None else without(name))
        got, model = check(processes, requests, partial_order=partial_order)
        wanted = set(NEW) - {name} - ({SENDS} if not partial_order else set())
        assert wanted <= applied(model), (name, model.notes)
        assert (got.verdict, got.complete, got.cycles, got.findings) == ("pass", True, 0, []), name
        assert phases(model) == seen, name
        assert got.states <= before.states and got.transitions <= before.transitions, name
        assert (got.finals == 1) == (RETIRED in applied(model)), (name, got.finals)
    declare(monkeypatch, REDUCTIONS)
    every, _ = check(processes, requests, partial_order=partial_order)
    assert every.states < before.states


# what the declarations may change in the figures' JSON: the search's size, time and notes
NOT_FIGURES = ("seconds", "states", "transitions", "reductions", "collision_bound")


def figures(processes: int, requests: int) -> tuple[dict, Any]:
    model = build_model(CheckConfig("lamport", processes, {"requests": requests}, partial_order=False))
    result = search_metrics(model)
    assert result.complete and result.defined
    return {k: v for k, v in result.as_dict().items() if k not in NOT_FIGURES}, model


@pytest.mark.parametrize(
    "processes, requests", [(2, 1), (2, 2), (2, 3), (3, 1)], ids=["2x1", "2x2", "2x3", "3x1"]
)
def test_the_figures_are_the_same_with_and_without_the_new_declarations(monkeypatch, processes, requests):
    declare(monkeypatch, BEFORE)
    before, model = figures(processes, requests)
    assert CANONICAL not in applied(model)
    declare(monkeypatch, REDUCTIONS)
    after, model = figures(processes, requests)
    assert {CANONICAL, CLOCKS, RETIRED} <= applied(model)
    assert after == before


# (variant, processes, requests, the finding's kind)
BROKEN = [
    (EnterOnEarliestRequest, 2, 1, "capacity"),  # enters without a later message from everyone
    (EnterOnEarliestRequest, 3, 1, "capacity"),
    (SelfFirstOnTies, 2, 1, "capacity"),  # a broken tie-break
    (SelfFirstOnTies, 3, 1, "capacity"),
    (NeverReplies, 2, 2, "deadlock"),  # no REPLY: a request after the other's last waits forever
    (NeverReplies, 2, 3, "deadlock"),
]


@pytest.mark.parametrize(
    "cls, processes, requests, kind", BROKEN, ids=[f"{b[0].__name__}-{b[1]}x{b[2]}" for b in BROKEN]
)
@pytest.mark.parametrize("search", ["dfs", "bfs"])
@pytest.mark.parametrize("declared", ["all", *NEW.values()])
def test_a_broken_lamport_is_found_with_the_new_declarations_on(
    monkeypatch, cls, processes, requests, kind, search, declared
):
    """Lamport's declarations (all, or one new one beside the clock shift) declared for the
    broken node, as its author would (it reads the array and sends as Lamport does): applied,
    nothing refused, and the same kind of finding as the search without any reduction."""

    def run(**kw):
        setup = recast(lamport.make_setup(processes, {"requests": requests}), cls)
        return check(processes, requests, setup=setup, search=search, **kw)

    plain, _ = run(reductions=False)
    mine = REDUCTIONS if declared == "all" else replace(BEFORE, **{declared: getattr(REDUCTIONS, declared)})
    declare(monkeypatch, mine.only(cls))
    reduced, model = run()
    names = set(NEW) if declared == "all" else {n for n, v in NEW.items() if v == declared}
    assert names | {CLOCKS} <= applied(model), model.notes
    assert not [n for n in model.notes if n.why.startswith(("refused", "off:"))], model.notes
    assert plain.verdict == reduced.verdict == "violation", (plain.stopped, reduced.stopped)
    a, b = plain.findings[0], reduced.findings[0]  # breadth-first may meet another pair first
    assert a.kind == b.kind == kind and len(a.processes) == len(b.processes) > 0, (a, b)
