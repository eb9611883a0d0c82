"""Fault injection in the simulator: duplicates and delay spikes stay within the model (the
audit still passes, duplicates are dropped by message id); reordering within a link leaves it."""

import pytest
from hypothesis import given, settings, strategies as st

from mutexlab.audit import verify_events
from mutexlab.protocols.registry import make_setup
from mutexlab.setup import ConfigError
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter

# Algorithm → options giving a small bounded workload; every algorithm of the project.
WORKLOADS = {
    "ricart-agrawala": (4, {"requests": 2}),
}


def run(algorithm, n, options, **config):
    writer = TraceWriter(None, keep=True)
    result = Simulation(make_setup(algorithm, n, options, seed=config.get("seed", 0)),
                        SimConfig(**config), writer).run()
    return result, verify_events([dict(e, _line=i) for i, e in enumerate(writer.events, 1)])


@settings(max_examples=15, deadline=None)
@given(algorithm=st.sampled_from(sorted(WORKLOADS)), seed=st.integers(0, 10_000),
       duplicate=st.floats(0, 0.5), spike=st.floats(0, 0.3))
def test_duplicates_and_spikes_keep_every_algorithm_safe_and_live(algorithm, seed, duplicate, spike):
    n, options = WORKLOADS[algorithm]
    result, verdict = run(algorithm, n, options, seed=seed, duplicate=duplicate, spike=spike)
    assert result.ok, result.stalled
    assert verdict.safe, verdict.render()


def test_duplicates_are_counted_when_dropped():
    result, verdict = run("ricart-agrawala", 4, {"requests": 3}, seed=2, duplicate=0.5)
    assert result.duplicates_dropped > 0
    assert verdict.safe


@pytest.mark.parametrize("bad", [{"duplicate": 1.5}, {"spike": -0.1}, {"spike_delay": -3}])
def test_fault_settings_are_validated(bad):
    with pytest.raises(ConfigError):
        SimConfig(**bad)
