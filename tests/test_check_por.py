"""``mutexlab check``'s partial-order reduction and retired clocks: never more worlds, the same
verdict, every broken variant still caught (with both searches), and the full graph searched
again when the reduced one has a cycle."""

from __future__ import annotations

from dataclasses import replace

import pytest
from test_check import BROKEN, FORGETFUL, SpinningNode, only_finding

from mutexlab.check import core, core_reduce, engine
from mutexlab.check import por as por_module
from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.protocols import ricart_agrawala_reductions
from mutexlab.protocols.registry import make_setup

POR = "partial-order reduction"


def check(algorithm, processes, options=None, setup=None, **kw):
    return run_check(CheckConfig(algorithm, processes, dict(options or {}), **kw), setup=setup)


# The largest state space (three bees: 700,000 worlds, then 330,000 reduced; some 30 CPU-seconds)
# is marked slow: the quick subset leaves it out, the full suite runs it. It stays: of the bees'
# cases, only three bees lose a final world when the persistence condition is dropped.
SLOW = pytest.mark.slow
# The costliest cases of the sweeps below (1-2 CPU-s each), for the full run only.
QUICK_LEAVES_OUT = {
    "test_partial_order_reduction_never_adds_worlds_and_keeps_every_final_world[sanders-3]",
    "test_partial_order_reduction_catches_every_broken_variant[bfs-bees-3]",  # dfs-bees-3 stays
}
CORRECT = [
    ("ricart-agrawala", 3, {"requests": 1}),
    ("ricart-agrawala", 2, {"requests": 3}),
    # two requests: 623 worlds, final worlds lost without the persistence condition; at three
    # processes (300,000 worlds) it showed nothing that the other three-process cases do not
    ("lamport", 2, {"requests": 2}),
    ("maekawa", 3, {"requests": 1}),
    ("sanders", 3, {"requests": 1}),
    ("suzuki-kasami", 3, {"requests": 1}),
    ("raymond", 3, {"requests": 2}),
    pytest.param("bees", 3, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}, marks=SLOW),
    ("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 2, "cocoons": 4}),
    ("elves", 2, {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}),
]


def _id(case) -> str:
    values = case.values if hasattr(case, "values") else case
    return f"{values[0]}-{values[1]}"


@pytest.mark.parametrize("algorithm, processes, options", CORRECT, ids=[_id(c) for c in CORRECT])
def test_partial_order_reduction_never_adds_worlds_and_keeps_every_final_world(algorithm, processes, options):
    """Persistent sets keep every world where nothing can move: the final worlds are the same."""
    full, _ = check(algorithm, processes, options, partial_order=False)
    reduced, model = check(algorithm, processes, options)
    assert POR in model.reductions and not model.por_dropped
    assert full.verdict == reduced.verdict == "pass"
    assert reduced.states <= full.states and reduced.transitions <= full.transitions
    assert reduced.finals == full.finals


def test_partial_order_reduction_cuts_ricart_agrawala():
    """The figures the docs show (RA N=3 × 1): 3,100 worlds with the other reductions, 1,690 with
    partial-order reduction too; 13,474 with none."""
    full, _ = check("ricart-agrawala", 3, {"requests": 1}, partial_order=False)
    reduced, model = check("ricart-agrawala", 3, {"requests": 1})
    assert (full.states, reduced.states) == (3_100, 1_690)
    assert model.por.reduced > 0


@pytest.mark.parametrize(
    "algorithm, processes, options, kind", BROKEN, ids=[f"{b[0].split('.')[1]}-{b[1]}" for b in BROKEN]
)
@pytest.mark.parametrize("search", ["dfs", "bfs"])
def test_partial_order_reduction_catches_every_broken_variant(algorithm, processes, options, kind, search):
    full, _ = check(algorithm, processes, options, search=search, partial_order=False)
    reduced, model = check(algorithm, processes, options, search=search)
    assert (POR in model.reductions) or model.por_dropped
    a, b = only_finding(full, kind), only_finding(reduced, kind)
    if kind != "liveness":
        assert sorted(a.processes) == sorted(b.processes) and a.resource == b.resource


def test_partial_order_reduction_catches_the_silent_nodes_deadlock():
    for por in (False, True):
        result, model = check(
            "ricart-agrawala",
            3,
            {"requests": 1},
            setup=FORGETFUL.make_setup(3, {"requests": 1}),
            partial_order=por,
        )
        assert only_finding(result, "deadlock")
        assert (POR in model.reductions) == por


def test_a_cycle_of_the_reduced_graph_switches_it_off_and_the_full_graph_is_searched():
    """The starving variant and a node with an always-pending no-op both have cycles: the
    reduction is dropped (liveness needs the full graph), and the verdicts are those of the
    search without it."""
    starving, model = check("mutexlab_broken.starving", 2, {"requests": 1})
    assert model.por_dropped and POR not in model.reductions
    assert only_finding(starving, "liveness").processes == ["node-2"]
    setup = make_setup("ricart-agrawala", 2, {"requests": 1})
    for node in setup.protocols.values():
        node.__class__ = SpinningNode
    spinning, model = check("ricart-agrawala", 2, {"requests": 1}, setup=setup)
    assert model.por_dropped and spinning.cycles and spinning.verdict == "pass"


def test_off_under_no_reduction_and_with_faults():
    _, plain = check("ricart-agrawala", 2, {"requests": 1}, reductions=False)
    _, reordering = check("ricart-agrawala", 2, {"requests": 1}, reorder=True)
    assert plain.por is None and reordering.por is None and POR not in reordering.reductions


@pytest.mark.parametrize("where", ["model search", "search core"])
def test_without_the_persistence_condition_final_worlds_are_lost(monkeypatch, where):
    """The final-worlds comparison can fail: take one process's steps whatever may still arrive
    on its empty links (no closure), and whole runs are cut off — in the model's own search, or
    in the search core's (its pure-Python twin: the compiled one runs the same algorithm, held
    to it by test_check_core.py)."""
    full, _ = check("maekawa", 3, {"requests": 1}, partial_order=False)
    if where == "model search":
        monkeypatch.setattr(core, "eligible", lambda search: False)
        monkeypatch.setattr(
            por_module.PartialOrder, "closure", lambda self, world, p, mask=None: frozenset({p})
        )
    else:

        def alone(self, world, p, mask):
            self.spent += 1
            return 1 << p

        monkeypatch.setattr(core, "core_name", lambda: "python")
        monkeypatch.setattr(core_reduce.Reducer, "closure", alone)
    broken, _ = check("maekawa", 3, {"requests": 1})
    assert broken.finals < full.finals


def test_retired_clocks_apply_to_the_exact_class_only():
    _, model = check("ricart-agrawala", 2, {"requests": 2})
    assert "retired clocks" in model.reductions
    _, variant = check("mutexlab_broken.ricart_agrawala_greedy_quiet", 2, {"requests": 1})
    assert "retired clocks" not in variant.reductions


# Three processes (3, 1), and requests left after an entry (2, 3): (3, 2) adds only worlds (550,000).
@pytest.mark.parametrize("processes, requests", [(3, 1), (2, 3)])
def test_retired_clocks_never_add_worlds_and_keep_the_final_worlds_and_the_pass(
    monkeypatch, processes, requests
):
    """Against the clock shift alone: fewer worlds, the same pass, and the final worlds (all
    processes done, nothing in flight) merge into one — they differ only in dead clocks."""
    options = {"requests": requests}
    retired, model = check("ricart-agrawala", processes, options, partial_order=False)
    assert "retired clocks" in model.reductions
    shift_only = replace(ricart_agrawala_reductions.REDUCTIONS, retired=None)
    monkeypatch.setattr(engine, "declared_for", lambda algorithm: [shift_only])
    shifted, model = check("ricart-agrawala", processes, options, partial_order=False)
    assert "retired clocks" not in model.reductions
    assert retired.verdict == shifted.verdict == "pass"
    assert retired.states < shifted.states and retired.transitions < shifted.transitions
    assert retired.finals == 1 < shifted.finals
