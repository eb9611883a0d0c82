"""``check --metrics``' charges computed bottom-up (check/ahead.py): the same figures as the
charges carried in every world, on every configuration the figures are tested on; each broken
combination of them caught."""

from __future__ import annotations

import pytest

from mutexlab.check import ahead, metrics, metrics_loop
from mutexlab.check.engine import CheckConfig, build_model
from mutexlab.check.metrics import search_metrics

BEES = {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 2}
ELVES = {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}
CASES = {
    "ricart-agrawala-2x3": ("ricart-agrawala", 2, {"requests": 3}),
    "suzuki-kasami-3x1": ("suzuki-kasami", 3, {"requests": 1}),
    "raymond-3x1": ("raymond", 3, {"requests": 1}),
    "raymond-3x2": ("raymond", 3, {"requests": 2}),
    "maekawa-3x1": ("maekawa", 3, {"requests": 1}),
    "sanders-2x1": ("sanders", 2, {"requests": 1}),
    "lamport-2x2": ("lamport", 2, {"requests": 2}),
    "bees-2": ("bees", 2, BEES),
    "bees-2-2reeds": ("bees", 2, {**BEES, "reeds": 2, "cocoons": 1}),
    "elves-2": ("elves", 2, ELVES),
    "elves-2-1contract": ("elves", 2, {**ELVES, "contracts": 1}),
}


def model_of(case: str):
    algorithm, n, options = CASES[case]
    return build_model(CheckConfig(algorithm, n, dict(options), partial_order=False))


def resources(case: str, carried: bool = False) -> dict:
    result = search_metrics(model_of(case), carried=carried)
    assert result.complete and result.defined
    return result.as_dict()["resources"]


@pytest.mark.parametrize("case", CASES)
def test_the_charges_bottom_up_are_the_carried_ones(case):
    model = model_of(case)
    carried, bottom_up = search_metrics(model, carried=True), search_metrics(model)
    assert bottom_up.as_dict()["resources"] == carried.as_dict()["resources"]
    assert bottom_up.states <= carried.states  # the running counts no longer split worlds


def test_fewer_worlds_without_the_running_charges():
    # Raymond N=3 × 2: the charges carried split 12,730 worlds; bottom-up, 4,578 remain
    model = model_of("raymond-3x2")
    assert search_metrics(model, carried=True).states == 12_730
    assert search_metrics(model).states == 4_578


def _min_as_max(acc: dict, key: int, lo: int, hi: int) -> None:
    # the successors' fewest combined as the most (max where min belongs)
    got = acc.setdefault(key, [lo, hi])
    got[0], got[1] = max(got[0], lo), max(got[1], hi)


def _closes_dropped(acc, u_live, moved, ahead_):
    return ahead.settle(acc, u_live, (moved[0], ()), ahead_)  # the closing steps forgotten


def _crossing_charge_dropped(charged: tuple, ahead_: tuple) -> tuple:
    return ahead_  # what a step charges a request it leaves live is lost on the way up


# broken combination → (where, what it breaks): a figure that moves, or the run reaching a
# figure that cannot be rebuilt from the closed worlds (the charge found is no path's)
BROKEN = {
    "the fewest taken as the most": (metrics, "widen", _min_as_max, "raymond-3x1"),
    "a request's close dropped": (metrics, "settle", _closes_dropped, "elves-2"),
    "a step's charge of a live request dropped": (metrics, "shift", _crossing_charge_dropped, "raymond-3x1"),
    "a complete run's end settling nothing": (metrics, "ended", lambda live: {}, "raymond-3x1"),
}


@pytest.mark.parametrize("broken", BROKEN)
def test_a_broken_bottom_up_combination_is_caught(broken, monkeypatch):
    module, name, wrong, case = BROKEN[broken]
    # metrics.py's own loop, whose helpers are broken here (the compiled loop's close is broken
    # by its own builds: test_check_core_loop.py)
    monkeypatch.setattr(metrics_loop, "CLIMB", False)
    right = resources(case, carried=True)
    assert resources(case) == right
    monkeypatch.setattr(module, name, wrong)
    try:
        got = search_metrics(model_of(case)).as_dict()["resources"]
    except AssertionError as exc:
        assert "no step reaches the charge found" in str(exc)
    else:
        assert got != right


def test_a_cycle_is_refused_not_settled():
    # an endless workload returns to worlds on the stack: no bottom-up figure over a cycle
    model = build_model(CheckConfig("ricart-agrawala", 2, {}, endless=True, partial_order=False))
    for carried in (False, True):
        with pytest.raises(ValueError, match="a cycle"):
            search_metrics(model, carried=carried)
