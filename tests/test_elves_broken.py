"""Every elves check of the audit catches a deliberately broken variant.

Each variant changes one thing in a correct participant. The same configurations and seeds
run with the correct participants are audited safe (the control), so what the audit reports
comes from the breakage alone. A broken run may also trip a participant (ProtocolError): the
trace written up to that point is audited all the same.
"""

import contextlib
from collections import Counter

import pytest
from conftest import audited
from mutexlab_broken.elves_variants import (
    DropsEarly,
    IgnoresUnitsAhead,
    ReusesContracts,
    RoundBlind,
    StopsOneEarly,
)

from mutexlab.audit import verify_events
from mutexlab.protocol import ProtocolError
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter

SEEDS = range(12)


def audited_run(elves, options, seed, elf=None, mayor=None, dwell=None):
    setup = make_setup("elves", elves, options, seed)
    p = setup.params
    if elf is not None:
        for pid in range(1, elves + 1):
            setup.protocols[pid] = elf(
                pid, elves, p["pins"], p["poison"], p["pins_per_elf"], p["poison_per_hamster"]
            )
    if mayor is not None:
        setup.protocols[0] = mayor(elves, [tuple(c) for c in p["plan"]])
    writer = TraceWriter(None, keep=True)
    # a broken participant may confuse a correct one (ProtocolError): the trace so far is still evidence
    with contextlib.suppress(ProtocolError):
        Simulation(setup, SimConfig(seed=seed, dwell=dwell or {}), writer).run()
    return verify_events(writer.events)


def rules_over_seeds(elves, options, dwell=None, **broken):
    rules = Counter()
    for seed in SEEDS:
        verdict = audited_run(elves, options, seed, dwell=dwell, **broken)
        rules.update({v.rule for v in verdict.violations})
    return rules


CASES = [
    # (variant, elves, options, dwell, the rule that must catch it)
    (
        {"elf": IgnoresUnitsAhead},
        4,
        dict(pins=2, poison=6, contracts=6, hamsters=[2, 5], rounds=1),
        {"work": 3},
        "capacity",
    ),
    ({"elf": ReusesContracts}, 4, dict(contracts=6, rounds=1), None, "contract-twice"),
    ({"elf": RoundBlind}, 4, dict(contracts=3, rounds=3), {"pause": 0}, "round-mixed"),
    ({"mayor": StopsOneEarly}, 4, dict(contracts=4, rounds=2), None, "stop-before-done"),
]


@pytest.mark.parametrize(
    "broken, elves, options, dwell, rule",
    CASES,
    ids=["units-ahead-ignored", "contract-reused", "round-blind", "stop-early"],
)
def test_the_audit_catches_the_broken_variant(broken, elves, options, dwell, rule):
    assert rules_over_seeds(elves, options, dwell, **broken)[rule] > 0
    assert rules_over_seeds(elves, options, dwell) == Counter()  # control: the correct protocol


def test_ignoring_units_ahead_overfills_pins_or_poison_specifically():
    verdicts = [audited_run(4, CASES[0][2], seed, elf=IgnoresUnitsAhead, dwell={"work": 3}) for seed in SEEDS]
    messages = " ".join(v.message for verdict in verdicts for v in verdict.violations)
    assert "pins (capacity 2)" in messages or "poison (capacity 6)" in messages


def test_a_reused_contract_is_reported_by_number_and_holders():
    verdict = audited_run(4, dict(contracts=6, rounds=1), 0, elf=ReusesContracts)
    twice = [v for v in verdict.violations if v.rule == "contract-twice"]
    assert twice and "contract:1." in twice[0].message and "elf-" in twice[0].message


def test_a_trace_without_the_last_round_is_unfinished():
    setup = make_setup("elves", 2, dict(contracts=2, rounds=2), 3)
    events = audited(setup, 3).events
    assert verify_events(events).ok
    second = next(n for n, e in enumerate(events) if e["event"] == "round" and e["round"] == 2)
    rules = {v.rule for v in verify_events(events[:second]).violations}
    assert {"rounds-unfinished", "not-finished", "contract-not-done"} <= rules


def test_dropping_early_requests_instead_of_buffering_them_stalls_a_round():
    """Why decision 3 buffers: the requester would wait for a reply forever."""
    stalls, rules = 0, Counter()
    for seed in SEEDS:
        setup = make_setup("elves", 4, dict(contracts=3, rounds=3), seed)
        p = setup.params
        for pid in range(1, 5):
            setup.protocols[pid] = DropsEarly(pid, 4, p["pins"], p["poison"])
        writer = TraceWriter(None, keep=True)
        result = Simulation(setup, SimConfig(seed=seed, dwell={"pause": 0}), writer).run()
        if result.stalled:
            stalls += 1
            assert any("CONTRACT_REPLY" in lacks for lacks in result.stalled.values())
        rules.update(v.rule for v in verify_events(writer.events).violations)
    assert stalls > 0 and rules["not-finished"] > 0
