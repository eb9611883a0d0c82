"""Exhaustive exploration of small colonies (``mutexlab check``'s engine, no reductions: the
same worlds as ``sim/explore.py``): every interleaving the FIFO links and the bees' local
decisions allow. No reachable state breaks a capacity (one bee per reed, at most K on flowers)
or the bees' invariants (eggs per bee and per reed), nothing can deadlock, no bee waits forever
(liveness), and every final state is a proper end (every bee DEAD — after all its eggs — or
RETIRED). The egg total of complete runs is checked by the property tests and the audit."""

from __future__ import annotations

import pytest
from mutexlab_broken.bees_variants import FlowerThresholdOneTooLow, IgnoresReedOrder

from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.protocols.bees import make_setup

# bees, options; equal initial clocks, so the pid tie-break is exercised too.
SMALL = [
    (2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}),
    (2, {"flowers": 1, "reeds": 1, "eggs": 2, "cocoons": 4}),
    (2, {"flowers": 1, "reeds": 2, "eggs": 2, "cocoons": 2}),
]


def check_colony(colony, max_states=None):
    """Check a colony: every reachable world, no reductions (the counts equal explore()'s)."""
    config = CheckConfig("bees", colony.processes, {}, max_states=max_states, reductions=False)
    return run_check(config, setup=colony())[0]


def summary(result) -> str:
    return (
        f"{result.states} states, {result.transitions} transitions, {result.finals} final states, "
        f"depth {result.depth}, {result.verdict}" + (f" ({result.stopped})" if result.stopped else "")
    )


class Colony:
    """A setup factory: a fresh colony (equal initial clocks), optionally of broken bees."""

    def __init__(self, processes: int, options: dict, cls=None) -> None:
        self.processes, self.options, self.cls = processes, options, cls

    def __call__(self):
        options = dict(self.options, initial_clocks={pid: 0 for pid in range(1, self.processes + 1)})
        setup = make_setup(self.processes, options, 0)
        if self.cls is not None:
            for bee in setup.protocols.values():
                bee.__class__ = self.cls
        return setup


@pytest.mark.parametrize(
    "processes, options",
    SMALL,
    ids=[f"P{p}-" + "-".join(f"{k[0]}{v}" for k, v in o.items()) for p, o in SMALL],
)
def test_every_interleaving_is_safe_and_ends_properly(processes, options, record_property):
    result = check_colony(Colony(processes, options), max_states=3_000_000)
    print(f"\nbees P={processes} {options}: {summary(result)}")
    record_property("states", result.states)
    assert result.complete, summary(result)
    assert result.findings == [], result.findings[:1]
    assert result.verdict == "pass" and result.finals >= 1


@pytest.mark.slow
def test_three_bees_one_flower_one_reed_every_interleaving_is_safe_and_ends_properly():
    """P=3, K=1, T=1, one egg per bee and one cocoon per reed: one bee lays, two retire.

    717,117 states and 2,044,408 transitions, as explore() counts them (about 15 s of CPU with
    the checker, two minutes with explore()): marked slow."""
    result = check_colony(
        Colony(3, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}), max_states=3_000_000
    )
    print(f"\nbees P=3 K=1 T=1 eggs=1 cocoons=1: {summary(result)}")
    assert result.complete, summary(result)
    assert result.findings == []
    assert (result.states, result.transitions) == (717_117, 2_044_408) and result.finals >= 1


@pytest.mark.parametrize(
    "cls, processes, options",
    [
        (FlowerThresholdOneTooLow, 2, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}),
        (IgnoresReedOrder, 2, {"flowers": 2, "reeds": 1, "eggs": 1, "cocoons": 2}),
    ],
)
def test_exploration_finds_the_broken_bees(cls, processes, options):
    result = check_colony(Colony(processes, options, cls), max_states=200_000)
    assert [f.kind for f in result.findings] == ["capacity"]
    assert result.findings[0].path, "the finding names the steps that lead to it"
