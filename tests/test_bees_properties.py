"""Property tests: random colonies, seeds, delays and dwell times — every run ends properly and
its trace passes the audit; the same seed writes the same trace file, byte for byte."""

from __future__ import annotations

from conftest import audited
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutexlab.protocols.bees import expected_eggs
from mutexlab.protocols.registry import make_setup
from mutexlab.trace import read_trace

colonies = st.fixed_dictionaries(
    {
        "bees": st.integers(1, 12),
        "flowers": st.integers(1, 5),
        "reeds": st.integers(1, 5),
        "eggs": st.sampled_from([1, 2, 5]),
        "per_reed": st.integers(1, 3),
        "seed": st.integers(0, 2**32 - 1),
        "delay": st.sampled_from(["exp", "uniform", "fixed"]),
        "dwell": st.fixed_dictionaries(
            {"rest": st.floats(0, 5), "reed": st.floats(0, 3), "flower": st.floats(0, 3)}
        ),
    }
)


def run(c: dict, path=None):
    options = {
        "flowers": c["flowers"],
        "reeds": c["reeds"],
        "eggs": c["eggs"],
        "cocoons": c["eggs"] * c["per_reed"],
    }
    setup = make_setup("bees", c["bees"], options, seed=c["seed"])
    return audited(setup, c["seed"], path, delay=c["delay"], dwell=c["dwell"])


@settings(max_examples=60, deadline=None)
@given(colonies)
def test_every_run_ends_properly_and_passes_the_audit(c):
    result, verdict = run(c)
    assert result.ok, (result.stalled, result.truncated)
    assert set(result.states.values()) <= {"DEAD", "RETIRED"}
    cocoons = c["eggs"] * c["per_reed"]
    assert result.notes.get("egg", 0) == expected_eggs(c["bees"], c["reeds"], c["eggs"], cocoons)
    assert result.notes.get("death", 0) == min(c["bees"], c["per_reed"] * c["reeds"])
    assert verdict.ok, verdict.render()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(colonies)
def test_the_same_seed_writes_the_same_trace_file(tmp_path, c):
    files = []
    for n in range(2):
        path = tmp_path / f"run{n}.jsonl"
        run(c, path)
        files.append(path.read_bytes())
    assert files[0] == files[1]
    assert read_trace(tmp_path / "run0.jsonl")[0]["algorithm"] == "bees"


def test_another_seed_gives_another_trace(tmp_path):
    c = {"bees": 6, "flowers": 2, "reeds": 2, "eggs": 5, "per_reed": 3, "delay": "exp", "dwell": {}}
    texts = []
    for seed in (1, 2):
        path = tmp_path / f"s{seed}.jsonl"
        run(dict(c, seed=seed), path)
        texts.append(path.read_bytes())
    assert texts[0] != texts[1]
