"""The bees' counts kept beside their sets (``Bee._reed_missing``, ``Bee._flower_live``): after every
input they equal what they stand for, ``len(alive - reed_acks)`` and ``len(flower_acks & alive)``,
so "try reed" and "try flower" decide as the set expressions did."""

from __future__ import annotations

import copy

import pytest

from mutexlab.protocol import HandlerError
from mutexlab.protocols.bees import ACKreed, Bee, RELEASEreed, make_setup
from mutexlab.sim import SimConfig, Simulation


def counts_kept(bee: Bee) -> None:
    assert bee._reed_missing == len(bee.alive - bee.reed_acks), "reed ACKs missing"  # noqa: SLF001 - the counts under test
    assert bee._flower_live == len(bee.flower_acks & bee.alive), "live flower ACKs"  # noqa: SLF001 - see above


class Counted(Bee):
    """A bee whose counts are held to their sets after every input."""

    def on_message(self, msg):
        effects = super().on_message(msg)
        counts_kept(self)
        return effects

    def on_local(self, action):
        effects = super().on_local(action)
        counts_kept(self)
        return effects


class ForgetsTheGone(Counted):
    """Broken: takes a RELEASEreed's sender off ``alive`` without its counts (the set alone)."""

    def _on_gone(self, msg):
        self.clock.receive(msg.ts)
        self.alive.discard(msg.sender)
        return []


RUNS = [
    (6, {"flowers": 2, "reeds": 2, "eggs": 2, "cocoons": 4}, {}),
    (7, {"flowers": 3, "reeds": 1, "eggs": 1, "cocoons": 2}, {"duplicate": 0.3}),  # some retire
    (9, {"flowers": 3, "reeds": 3, "eggs": 3, "cocoons": 6}, {"reorder": True}),
    (12, {"flowers": 4, "reeds": 4, "eggs": 2, "cocoons": 6}, {"delay": "fixed"}),
]


def run_as(kind: type[Bee], processes: int, options: dict, config: dict, seed: int) -> bool:
    setup = make_setup(processes, options, seed)
    for bee in setup.protocols.values():
        bee.__class__ = kind
    return Simulation(setup, SimConfig(seed=seed, **config)).run().ok


@pytest.mark.parametrize("processes, options, config", RUNS)
def test_the_counts_equal_their_sets_after_every_input(processes, options, config):
    for seed in range(3):
        assert run_as(Counted, processes, options, config, seed)


def test_counts_not_kept_on_a_death_are_caught():
    # (the simulator reports the failed check as the bee's own error: a HandlerError naming it)
    with pytest.raises((AssertionError, HandlerError), match="reed ACKs missing|live flower ACKs"):
        run_as(ForgetsTheGone, *RUNS[0], seed=0)


def test_a_copy_keeps_the_counts():
    bee = make_setup(4, {"flowers": 2, "reeds": 2}, 0).protocols[1]
    bee.on_local("request")
    twin = copy.deepcopy(bee)
    counts_kept(twin)
    assert twin._reed_missing == 3  # noqa: SLF001 - the count under test


def test_the_counts_stand_in_for_the_sets_in_try_reed_and_try_flower():
    """Before the last ACKreed "try reed" waits; a death of a bee that never acked completes it."""
    bee = make_setup(3, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 3}, 0).protocols[1]
    bee.on_local("request")
    req_ts = bee.requests[1][0]
    assert bee.on_message(ACKreed(sender=2, ts=5, req_ts=req_ts)) == [] and bee.state == "WAIT_REED"
    bee.on_message(RELEASEreed(sender=3, ts=6, reed=0, status="NO_ROOM", cocoons=0))
    assert bee.state == "ON_REED"
