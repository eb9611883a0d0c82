"""Deliberately broken bees: the audit must flag each on some seed, and must not flag the correct
bee on the same seeds. One variant per decision of docs/bees.md and per audit rule."""

from __future__ import annotations

import pytest
from conftest import audited
from mutexlab_broken.bees_variants import (
    CountsStaleAcks,
    EggOnTheFlower,
    FliesOffItsReed,
    FlowerThresholdOneTooLow,
    IgnoresDeaths,
    IgnoresReedOrder,
    LastEggAfterLeaving,
    NeverAsks,
    NoPidTiebreak,
    OneBeeTooManyPerReed,
    OneEggTooMany,
    SeedLiteralComparison,
    SurplusWaits,
    WaitsForAllP,
)

from mutexlab.protocols import bees
from mutexlab.protocols.bees import Bee

SEEDS = range(8)


# variant, bees, options, equal initial clocks?, the audit rule that must fire
VARIANTS = [
    (FlowerThresholdOneTooLow, 6, {"flowers": 1, "reeds": 3}, False, "capacity"),
    (FlowerThresholdOneTooLow, 8, {"flowers": 2, "reeds": 4}, False, "capacity"),
    (IgnoresReedOrder, 6, {"flowers": 2, "reeds": 2}, False, "capacity"),
    (SeedLiteralComparison, 6, {"flowers": 1, "reeds": 3}, False, "capacity"),
    (NoPidTiebreak, 6, {"flowers": 1, "reeds": 3}, True, "capacity"),
    (CountsStaleAcks, 8, {"flowers": 2, "reeds": 4}, False, "capacity"),
    (IgnoresDeaths, 4, {"flowers": 1, "reeds": 2}, False, "left-waiting"),
    (SurplusWaits, 5, {"flowers": 2, "reeds": 1}, False, "left-waiting"),
    (WaitsForAllP, 3, {}, False, "left-waiting"),
    (OneEggTooMany, 4, {"flowers": 2, "reeds": 2}, False, "eggs-per-bee"),
    (OneBeeTooManyPerReed, 5, {"flowers": 2, "reeds": 1}, False, "eggs-per-reed"),
    (EggOnTheFlower, 3, {"flowers": 1, "reeds": 1}, False, "egg-without-nectar"),
    (LastEggAfterLeaving, 3, {"flowers": 1, "reeds": 1}, False, "egg-off-reed"),
    (NeverAsks, 3, {"flowers": 1, "reeds": 2}, False, "unfinished"),
    (NeverAsks, 3, {"flowers": 1, "reeds": 2}, False, "too-few-eggs"),
    (FliesOffItsReed, 3, {"flowers": 1, "reeds": 1}, False, "flower-without-reed"),
]


def audit(cls, processes, options, equal_clocks, seed):
    options = dict(options)
    if equal_clocks:
        options["initial_clocks"] = {pid: 0 for pid in range(1, processes + 1)}
    setup = bees.make_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = cls
        bee.__init__(bee.pid, bee.n, bee.flowers, bee.reeds, bee.eggs, bee.cocoons, bee.clock.time)
    return audited(setup, seed)


@pytest.mark.parametrize(
    "cls, processes, options, equal_clocks, rule",
    VARIANTS,
    ids=[f"{v[0].__name__}-P{v[1]}" for v in VARIANTS],
)
def test_the_audit_catches_a_broken_bee(cls, processes, options, equal_clocks, rule):
    caught = [
        seed
        for seed in SEEDS
        if rule in {v.rule for v in audit(cls, processes, options, equal_clocks, seed).verdict.violations}
    ]
    assert caught, f"{cls.__name__} was not caught by rule {rule!r} on seeds {list(SEEDS)}"
    for seed in caught:
        result, verdict = audit(Bee, processes, options, equal_clocks, seed)
        assert verdict.ok and result.ok, verdict.render()


def test_a_violation_names_the_bees_and_lines():
    _, verdict = audit(FlowerThresholdOneTooLow, 6, {"flowers": 1, "reeds": 3}, False, 0)
    capacity = next(v for v in verdict.violations if v.rule == "capacity")
    assert "flower (capacity 1) held by bee-" in capacity.message
    assert all(e["event"] == "enter" and "_line" in e for e in capacity.events)
    assert "line " in capacity.describe()
