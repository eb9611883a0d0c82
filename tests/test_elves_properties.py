"""Properties of the hamster killers over random configurations, seeds, delays and dwell times:
every run finishes every round, every contract is done exactly once, and the audit finds
the trace safe. Scarce pins and poison (one elf's need ≈ the whole supply) are included, so
holding pins while waiting for poison is exercised (decision 4)."""

from conftest import audited
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mutexlab.protocols.elves import ElfState, MayorState
from mutexlab.protocols.registry import make_setup


@st.composite
def configurations(draw):
    elves = draw(st.integers(1, 6))
    pins = draw(st.integers(1, 5))
    pins_per_elf = draw(st.integers(1, pins))
    high = draw(st.integers(1, 6))
    low = draw(st.integers(1, high))
    per_hamster = draw(st.integers(1, 2))
    poison = draw(st.integers(high * per_hamster, high * per_hamster + 8))
    options = dict(
        pins=pins,
        poison=poison,
        contracts=draw(st.integers(1, 8)),
        hamsters=[low, high],
        rounds=draw(st.integers(1, 3)),
        pins_per_elf=pins_per_elf,
        poison_per_hamster=per_hamster,
    )
    return elves, options


dwell = st.fixed_dictionaries({k: st.sampled_from([0.0, 0.3, 1.0, 4.0]) for k in ("work", "rest", "pause")})


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configurations(), st.integers(0, 10**6), st.sampled_from(["exp", "uniform", "fixed"]), dwell)
def test_every_run_finishes_all_rounds_and_passes_the_audit(config, seed, delay, dwells):
    elves, options = config
    setup = make_setup("elves", elves, options, seed)
    result, verdict = audited(setup, seed, delay=delay, dwell=dwells)
    assert result.ok, result.stalled
    assert result.states == {
        "mayor": MayorState.MAYOR_DONE,
        **{f"elf-{i}": ElfState.ELF_DONE for i in range(1, elves + 1)},
    }
    total = options["contracts"] * options["rounds"]
    assert result.notes["contract_done"] == total
    assert result.entries == {"contract": total, "pins": total, "poison": total}
    done = sorted(
        (r, i) for elf in setup.protocols.values() for r, ids in getattr(elf, "done", {}).items() for i in ids
    )
    assert done == [
        (r, i) for r in range(1, options["rounds"] + 1) for i in range(1, options["contracts"] + 1)
    ]
    assert verdict.ok, verdict.render()


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 5), st.integers(0, 10**6))
def test_the_mayor_plan_is_seeded_and_within_bounds(contracts, seed):
    options = dict(contracts=contracts, hamsters=[2, 4], rounds=3, poison=10)
    one = make_setup("elves", 2, options, seed).params["plan"]
    assert one == make_setup("elves", 2, options, seed).params["plan"]
    assert len(one) == 3 and all(len(r) == contracts and all(2 <= h <= 4 for h in r) for r in one)
