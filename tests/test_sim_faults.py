"""Fault injection in the simulator.

Duplicates and delay spikes stay within the algorithms' model — a duplicate is dropped by its
message id on the receiving side (as the RabbitMQ transport drops it by the link's sequence
number), a spike delays a message without letting it overtake its link — so every algorithm
must stay safe and live under them. Reordering within one link leaves the model (the
algorithms assume FIFO links): the audit must catch the violation it causes. The bees are the
example: an ACKreed that overtakes the same bee's REQreed makes the receiver count the ack
without knowing the earlier request, so it computes a too-low rank and two bees take one reed.
"""

import pytest
from conftest import audited
from hypothesis import given, settings
from hypothesis import strategies as st

from mutexlab.protocols.registry import SPECS, make_setup
from mutexlab.setups import ConfigError
from mutexlab.sim import SimConfig

# Algorithm → (processes, options): a small bounded workload; every algorithm of the project.
WORKLOADS = {
    "bees": (4, {"flowers": 2, "reeds": 2, "eggs": 2, "cocoons": 4}),
    "elves": (3, {"rounds": 2}),
    "lamport": (4, {"requests": 2}),
    "ricart-agrawala": (4, {"requests": 2}),
    "maekawa": (5, {"requests": 2}),
    "sanders": (5, {"requests": 2}),
    "suzuki-kasami": (4, {"requests": 2}),
    "raymond": (5, {"requests": 2}),
}


def test_every_algorithm_has_a_workload():
    assert set(WORKLOADS) == set(SPECS)


def run(algorithm, n, options, **config):
    return audited(make_setup(algorithm, n, options, seed=config.get("seed", 0)), **config)


@settings(max_examples=100, deadline=None)
@given(
    algorithm=st.sampled_from(sorted(WORKLOADS)),
    seed=st.integers(0, 10_000),
    duplicate=st.floats(0, 0.5),
    spike=st.floats(0, 0.3),
    spike_delay=st.floats(0, 80),
)
def test_duplicates_and_spikes_keep_every_algorithm_safe_and_live(
    algorithm, seed, duplicate, spike, spike_delay
):
    n, options = WORKLOADS[algorithm]
    result, verdict = run(
        algorithm, n, options, seed=seed, duplicate=duplicate, spike=spike, spike_delay=spike_delay
    )
    assert result.ok, result.stalled
    assert verdict.ok, verdict.render()


@pytest.mark.parametrize("algorithm", sorted(WORKLOADS))
def test_heavy_duplication_and_spikes_per_algorithm(algorithm):
    """Every algorithm, not just the ones hypothesis happens to draw: half the messages twice,
    a fifth delayed by 50 mean delays; duplicates really happen and are all dropped."""
    n, options = WORKLOADS[algorithm]
    for seed in (1, 2, 3):
        result, verdict = run(algorithm, n, options, seed=seed, duplicate=0.5, spike=0.2, spike_delay=50)
        assert result.ok, (seed, result.stalled)
        assert verdict.ok, verdict.render()
        assert result.duplicates_dropped > 0


def test_duplicates_are_counted_when_dropped():
    result, verdict = run("ricart-agrawala", 4, {"requests": 3}, seed=2, duplicate=0.5)
    assert result.duplicates_dropped > 0
    assert verdict.ok


def test_spikes_stretch_the_run_but_keep_its_outcome():
    base, _ = run("ricart-agrawala", 4, {"requests": 3}, seed=7)
    spiked, verdict = run("ricart-agrawala", 4, {"requests": 3}, seed=7, spike=0.3, spike_delay=100)
    assert spiked.duration > base.duration + 100  # at least one message really was held back
    assert spiked.entries == base.entries and verdict.ok


def test_reordering_within_a_link_lets_the_bees_share_a_reed_and_the_audit_catches_it():
    n, options = 4, {"flowers": 1, "reeds": 2}
    caught = []
    for seed in range(40):
        result, verdict = run("bees", n, options, seed=seed, reorder=True)
        capacity = [v for v in verdict.violations if "[capacity] reed" in v.describe()]
        if capacity:
            caught.append(seed)
            # The same seed with FIFO links is safe: the reordering did it.
            _, fifo = run("bees", n, options, seed=seed)
            assert fifo.ok, fifo.render()
    assert len(caught) >= 3, f"reordering never broke the reed ranking in 40 seeds: {caught}"


@pytest.mark.parametrize("bad", [{"duplicate": 1.5}, {"spike": -0.1}, {"spike_delay": -3}])
def test_fault_settings_are_validated(bad):
    with pytest.raises(ConfigError):
        SimConfig(**bad)
