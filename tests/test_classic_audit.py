"""The classic algorithms' progress audit: every request served, every node ends idle."""

import pytest
from conftest import audited

from mutexlab.audit import verify_events
from mutexlab.audit.verdict import family_checks
from mutexlab.protocols import classic_audit as classic
from mutexlab.protocols.registry import CLASSIC, make_setup

RUN = {
    "event": "run",
    "pid": "run",
    "algorithm": "lamport",
    "processes": {"1": "node-1", "2": "node-2"},
    "capacities": {"cs": 1},
    "params": {},
}


def _ev(kind, pid, own, **fields):
    return {"event": kind, "pid": pid, "vc": {pid: own}, **fields}


def _rules(events):
    return sorted(v.rule for v in classic.check(events, RUN))


def test_all_six_classic_algorithms_get_the_classic_checks():
    assert {name: family_checks(name) for name in CLASSIC} == dict.fromkeys(CLASSIC, classic.INVARIANTS)


def test_a_served_request_ending_idle_passes():
    events = [
        _ev("request", "node-1", 1, resource="cs"),
        _ev("state", "node-1", 2, state="WANTED"),
        _ev("enter", "node-1", 3, resource="cs"),
        _ev("state", "node-1", 4, state="HELD"),
        _ev("exit", "node-1", 5, resource="cs"),
        _ev("state", "node-1", 6, state="RELEASED"),
    ]
    assert _rules(events) == []


def test_each_way_of_ending_badly_is_named():
    assert _rules([_ev("request", "node-1", 1), _ev("state", "node-1", 2, state="WANTED")]) == [
        "not-idle-at-end",
        "request-unserved",
    ]
    assert _rules([_ev("enter", "node-2", 1, resource="cs"), _ev("exit", "node-2", 2, resource="cs")]) == [
        "enter-without-request"
    ]
    assert _rules([_ev("request", "node-1", 1), _ev("enter", "node-1", 2, resource="cs")]) == ["held-at-end"]
    message = classic.check(
        [
            _ev("request", "node-2", 1),
            _ev("request", "node-2", 2),
            _ev("enter", "node-2", 3, resource="cs"),
            _ev("exit", "node-2", 4, resource="cs"),
        ],
        RUN,
    )[0].message
    assert message == "node-2 asked for cs 2 times but entered 1 time: 1 request left waiting"


@pytest.mark.parametrize("algorithm", ["lamport", "ricart-agrawala", "maekawa"])
def test_a_run_cut_short_is_reported_and_the_whole_run_is_not(algorithm):
    events = audited(make_setup(algorithm, 4, {"requests": 2}), 5).events
    whole = verify_events(events)
    assert whole.ok, whole.render()
    assert "every request served" in whole.checks
    second_enter = [n for n, e in enumerate(events) if e["event"] == "enter"][1]
    cut = verify_events(events[: second_enter + 1])
    rules = {v.rule for v in cut.violations}
    assert {"request-unserved", "held-at-end", "not-idle-at-end"} <= rules
    assert "capacity" not in rules
