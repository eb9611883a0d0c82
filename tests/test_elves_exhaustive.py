"""Exhaustive exploration of small hamster-killer configurations (one round): every interleaving
FIFO links and local decisions allow. In every reachable global state pins, poison and each
contract stay within capacity, no participant rejects an input, and every world where nothing
can move is final (mayor and elves done) — no deadlock, in particular none from holding pins
while waiting for poison (decision 4). The counts are printed (``pytest -s``) and quoted in
docs/elves.md.
"""

import pytest
from mutexlab_broken.elves_variants import IgnoresUnitsAhead

from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.protocols.registry import make_setup

TWO_ELVES = [
    # (options, seed: it picks the mayor's plan)
    # scarce pins: the second elf must wait for the first one's release
    (dict(pins=1, poison=2, contracts=2, hamsters=[1, 2], rounds=1), 0),
    # scarce poison: both hold pins, one waits for poison while holding them
    (dict(pins=2, poison=3, contracts=2, hamsters=[2, 3], rounds=1), 0),
    # more contracts than elves: an elf comes back for a second (and third) contract
    (dict(pins=1, poison=2, contracts=3, hamsters=[1, 2], rounds=1), 2),
    # multi-unit: 2 pins each (4 exist), contracts of 1 and 3 hamsters sharing 3 poison portions
    (dict(pins=4, poison=3, contracts=2, hamsters=[1, 3], rounds=1, pins_per_elf=2), 3),
]


def check(setup, max_states=200_000):
    """Every reachable world (``mutexlab check``'s engine, no reductions: explore()'s worlds)."""
    return run_check(
        CheckConfig("elves", len(setup.protocols) - 1, {}, max_states=max_states, reductions=False),
        setup=setup,
    )[0]


def explored(elves, options, seed=0, max_states=200_000):
    result = check(make_setup("elves", elves, options, seed), max_states=max_states)
    print(
        f"\n{elves} elves {options} (plan {make_setup('elves', elves, options, seed).params['plan']}): "
        f"{result.states} states, {result.transitions} transitions, {result.finals} final states, "
        f"depth {result.depth}, {result.verdict}"
    )
    return result


@pytest.mark.parametrize(
    "options, seed", TWO_ELVES, ids=["scarce-pins", "scarce-poison", "second-contract", "multi-unit"]
)
def test_two_elves_one_round_every_interleaving_is_safe_and_finishes(options, seed):
    result = explored(2, options, seed)
    assert result.complete
    assert result.findings == [] and result.verdict == "pass"
    assert result.finals > 0 and result.states > 100


@pytest.mark.slow
def test_three_elves_one_contract_every_interleaving_is_safe_and_finishes():
    result = explored(3, dict(pins=1, poison=2, contracts=1, hamsters=[2, 2], rounds=1))
    assert result.complete
    assert result.findings == [] and result.verdict == "pass"
    assert result.finals > 0


def test_exploration_finds_the_overfull_pins_of_a_broken_elf():
    def broken():
        setup = make_setup("elves", 2, TWO_ELVES[0][0], 0)
        for pid in (1, 2):
            setup.protocols[pid] = IgnoresUnitsAhead(pid, 2, pins=1, poison=2)
        return setup

    result = check(broken(), max_states=200_000)
    assert [f.kind for f in result.findings] == ["capacity"]
    assert "pins (capacity 1)" in result.findings[0].message
    assert result.findings[0].path  # with the steps that lead there
