"""Sanders' generalized protocol: the notes' example, the state table, the sets' condition, and
random schedules audited by happened-before."""

import random
from pathlib import Path

import pytest
from conftest import audited, random_classic_runs
from hypothesis import strategies as st
from mutexlab_broken.sanders_variants import AnswersOnlyAtInquire, FailsOnlyOnArrival, NotesOnly

from mutexlab.audit import verify_events
from mutexlab.protocol import Enter, Send
from mutexlab.protocols import sanders
from mutexlab.protocols.registry import make_setup
from mutexlab.setups import ConfigError
from mutexlab.sim import replay_scenario
from mutexlab.sim.explore import explore

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "sanders-notes.json"
NOTES_SETS = {
    "request_sets": {"1": [1, 2, 3], "2": [1, 2, 3], "3": [2, 3]},
    "inform_sets": {"1": [1, 3], "2": [2], "3": [3]},
}


# -- the notes' worked example (docs/classic-b.md) ----------------------------------------------
def test_notes_example_p3_enters_before_p1_and_everything_ends_empty():
    result = replay_scenario(SCENARIO)
    assert result.entered == ["node-3", "node-1"]
    assert result.in_flight == 0
    nodes = result.protocols
    assert {p: n.tracks for p, n in nodes.items()} == {1: {1}, 2: {2}, 3: {1, 3}}  # ST derived from I
    for node in nodes.values():
        assert node.queue == [] and node.lock is None and node.state == "RELEASED"
    verdict = verify_events(result.events)
    assert verdict.ok, verdict.render()


def test_notes_example_p2_grants_twice_because_it_tracks_neither_p1_nor_p3():
    """The subtle point: p2 ∉ I_1, I_3, so CSSTAT_2 stays free and p2 grants both requesters;
    safety then rests on p3, which is in I_1 ∩ I_3 and locks on one of them at a time."""
    result = replay_scenario(SCENARIO)
    grants_by_p2 = [e["to"] for e in result.events if e["event"] == "send" and e["pid"] == "node-2"]
    assert grants_by_p2 == ["node-1", "node-3"]
    # Both grants were out while p3 was inside (p1 held p2's grant, waiting for p3's).
    p3_enter = next(n for n, e in enumerate(result.events) if e["event"] == "enter" and e["pid"] == "node-3")
    p1_enter = next(n for n, e in enumerate(result.events) if e["event"] == "enter" and e["pid"] == "node-1")
    p3_exit = next(n for n, e in enumerate(result.events) if e["event"] == "exit" and e["pid"] == "node-3")
    grant_to_p1 = [
        n
        for n, e in enumerate(result.events)
        if e["event"] == "recv" and e["pid"] == "node-1" and e["from"] == "node-2"
    ][0]
    assert grant_to_p1 < p3_enter < p3_exit < p1_enter


def test_notes_example_exhaustively_over_every_interleaving():
    """p1 and p3 ask once with the notes' sets: no schedule breaks safety or deadlocks."""

    def factory():
        setup = make_setup("sanders", 3, dict(NOTES_SETS, requests=1))
        setup.protocols[2].requests_left = 0
        return setup

    found = explore(factory)
    assert found.ok, found.summary()
    assert found.finals > 1 and found.states > 100
    print("sanders notes sets, p1 and p3 once:", found.summary())


# -- the sets ------------------------------------------------------------------------------------
def test_default_sets_are_ricart_agrawala_like():
    setup = make_setup("sanders", 4, {})
    node = setup.protocols[2]
    assert node.asks == (1, 2, 3, 4) and node.informs == (2,) and node.tracks == {2}
    assert setup.params["inform_sets"]["3"] == [3]


@pytest.mark.parametrize(
    "options, words",
    [
        ({"inform_sets": {"1": [2], "2": [2], "3": [3]}}, "process 1 must be in its own inform set"),
        (
            {
                "request_sets": {"1": [1], "2": [1, 2, 3], "3": [1, 2, 3]},
                "inform_sets": {"1": [1, 2], "2": [2], "3": [3]},
            },
            r"I_1 must be a subset of R_1, but \[2\]",
        ),
        (
            {"request_sets": {"1": [1, 2, 3], "2": [1, 2, 3], "3": [1, 3]}},
            "processes 2 and 3 could be in the critical section together: I_2 ∩ I_3 is empty and 2 ∉ R_3",
        ),
        ({"request_sets": {"1": [1, 2], "2": [1, 2]}}, "no set for process"),
        ({"request_sets": {"1": [1, 7], "2": [1, 2], "3": [3]}}, r"names \[7\], outside 1..3"),
        ({"request_sets": {"x": [1]}}, "'x' is not a pid"),
        ({"request_sets": [[1, 2, 3]]}, "must map each pid"),
        ({"request_sets": {"1": "all", "2": [2], "3": [3]}}, "must be a list of pids"),
        ({"quorums": {}}, "does not take option"),
    ],
)
def test_bad_sets_are_refused_naming_the_problem(options, words):
    with pytest.raises(ConfigError, match=words):
        make_setup("sanders", 3, options)


def test_condition_accepts_a_common_inform_member_instead_of_mutual_requests():
    # 1 and 2 do not ask each other, but both inform 3, which therefore arbitrates between them.
    make_setup(
        "sanders",
        3,
        {
            "request_sets": {"1": [1, 3], "2": [2, 3], "3": [1, 2, 3]},
            "inform_sets": {"1": [1, 3], "2": [2, 3], "3": [3]},
        },
    )


# -- the state table -----------------------------------------------------------------------------
def _node(pid, R, I, ST, n=3):
    return sanders.SandersNode(pid, n, R, I, ST)


def test_arbiter_locks_only_on_tracked_processes():
    p2 = _node(2, {1, 2, 3}, {2}, {2})  # tracks only itself
    effects = p2.on_message(sanders.Request(sender=1, ts=1))
    assert [(e.to, e.msg.type) for e in effects] == [(1, "GRANT")]
    assert p2.lock is None  # p1 ∉ ST_2: still free
    p3 = _node(3, {2, 3}, {3}, {1, 3})  # tracks p1
    p3.on_message(sanders.Request(sender=1, ts=1))
    assert p3.lock == (1, 1)
    effects = p3.on_message(sanders.Request(sender=2, ts=5))
    assert [(e.to, e.msg.type) for e in effects] == [(2, "FAILED")]  # later than the lock
    effects = p3.on_message(sanders.Release(sender=1, ts=9))
    assert [(e.to, e.msg.type) for e in effects] == [(2, "GRANT")] and p3.lock is None


def test_arbiter_inquires_the_lock_holder_once_for_an_earlier_request():
    arb = _node(3, {1, 2, 3}, {1, 2, 3}, {1, 2, 3})
    arb.on_message(sanders.Request(sender=1, ts=10))
    effects = arb.on_message(sanders.Request(sender=2, ts=3))
    assert [(e.to, e.msg.type, e.msg.req) for e in effects] == [(1, "INQUIRE", 10)]
    assert arb.on_message(sanders.Request(sender=3, ts=1)) == []  # already inquired
    effects = arb.on_message(sanders.Yield(sender=1, ts=12))
    # the earliest gets the grant; p2, now behind a better lock, is told it FAILED; p1 yielded,
    # so it knows it waits and is not told again
    assert [(e.to, e.msg.type) for e in effects] == [(3, "GRANT"), (2, "FAILED")]
    assert arb.lock == (1, 3) and arb.queue == [(3, 2), (10, 1)]


def test_requester_yields_an_inquired_grant_only_once_it_failed_somewhere():
    req = _node(1, {1, 2, 3}, {1}, {1})
    req.on_local("request")
    mine = req.my_request[0]
    req.on_message(sanders.Grant(sender=2, ts=5))
    assert req.on_message(sanders.Inquire(sender=2, ts=6, req=mine)) == []  # may still win: wait
    effects = req.on_message(sanders.Failed(sender=3, ts=7, req=mine))
    assert [(e.to, e.msg.type) for e in effects] == [(2, "YIELD")]
    assert 2 not in req.grants and req.yielded == {2}
    assert req.on_message(sanders.Inquire(sender=2, ts=8, req=mine - 1)) == []  # stale: not my request


def test_requester_enters_with_every_grant_and_releases_to_its_inform_set():
    node = _node(3, {2, 3}, {1, 3}, {3})
    effects = node.on_local("request")
    assert sorted(e.to for e in effects if isinstance(e, Send)) == [2, 3]
    node.on_message(sanders.Grant(sender=3, ts=2))
    effects = node.on_message(sanders.Grant(sender=2, ts=3))
    assert any(isinstance(e, Enter) for e in effects) and node.state == "HELD"
    effects = node.on_local("exit")
    assert sorted((e.to, e.msg.type) for e in effects if isinstance(e, Send)) == [
        (1, "RELEASE"),
        (3, "RELEASE"),
    ]


# -- random schedules ----------------------------------------------------------------------------
def random_valid_sets(n: int, rng: random.Random) -> dict:
    """Random I_i ∋ i, R_i ⊇ I_i, then repair each pair breaking the condition by mutual requests."""
    inform = {i: {i} | {j for j in range(1, n + 1) if rng.random() < 0.3} for i in range(1, n + 1)}
    request = {i: set(inform[i]) | {j for j in range(1, n + 1) if rng.random() < 0.3} for i in inform}
    for i in inform:
        for j in inform:
            if i < j and not inform[i] & inform[j]:
                request[i].add(j)
                request[j].add(i)
    return {
        "request_sets": {str(i): sorted(s) for i, s in request.items()},
        "inform_sets": {str(i): sorted(s) for i, s in inform.items()},
    }


@random_classic_runs(think=(0.1, 1.0, 5.0), custom=st.booleans())
def test_random_runs_are_safe_and_serve_every_request(n, requests, seed, delay, think, cs, custom):
    options = random_valid_sets(n, random.Random(seed)) if custom else {}
    setup = make_setup("sanders", n, dict(options, requests=requests))
    result, verdict = audited(setup, seed, delay=delay, dwell={"think": think, "cs": cs})
    assert verdict.ok, verdict.render()
    assert result.ok, result.stalled
    assert result.entries == {"cs": n * requests}
    assert all(node.queue == [] and node.lock is None for node in result.protocols.values())


# -- broken variants -----------------------------------------------------------------------------
def _forced(n, request, inform, requests):
    """Sets that break the condition, built past make_setup's validation."""
    status = sanders.status_sets({i: frozenset(s) for i, s in inform.items()})
    setup = make_setup("sanders", n, {"requests": requests})
    setup.protocols = {
        i: sanders.SandersNode(i, n, request[i], inform[i], status[i], requests) for i in range(1, n + 1)
    }
    return setup


BAD_REQUEST = {1: {1, 2, 3}, 2: {1, 2, 3}, 3: {1, 3}}  # 2 ∉ R_3 and I_2 ∩ I_3 = ∅
BAD_INFORM = {1: {1}, 2: {2}, 3: {3}}


def test_audit_catches_sets_that_break_the_condition():
    with pytest.raises(ConfigError, match="processes 2 and 3"):
        make_setup("sanders", 3, {"request_sets": {str(k): sorted(v) for k, v in BAD_REQUEST.items()}})
    caught = next(
        (seed for seed in range(40) if not audited(_forced(3, BAD_REQUEST, BAD_INFORM, 3), seed).verdict.ok),
        None,
    )
    assert caught is not None, "no run of the broken sets was caught by the audit"

    def pair_2_3():
        setup = _forced(3, BAD_REQUEST, BAD_INFORM, 1)
        setup.protocols[1].requests_left = 0
        return setup

    found = explore(pair_2_3)
    assert found.violations and "cs (capacity 1)" in found.violations[0].message
    for seed in range(40):  # the same runs with valid sets are safe
        assert audited(make_setup("sanders", 3, {"requests": 3}), seed).verdict.ok


def test_the_notes_protocol_without_inquire_deadlocks_and_ours_does_not():
    def factory(cls):
        def make():
            setup = make_setup("sanders", 2, {"requests": 1})
            setup.protocols = {i: cls(i, 2, {1, 2}, {i}, {i}, 1) for i in (1, 2)}
            return setup

        return make

    literal = explore(factory(NotesOnly))
    assert literal.deadlocks, literal.summary()  # both lock on themselves and wait for each other
    ours = explore(factory(sanders.SandersNode))
    assert ours.ok, ours.summary()


@pytest.mark.parametrize(
    "label, options, idle",
    [
        ("default sets, p1 and p2 once", {}, (3,)),
        ("notes sets, all three once", NOTES_SETS, ()),
    ],
)
def test_exhaustive_n3(label, options, idle):
    def factory():
        setup = make_setup("sanders", 3, dict(options, requests=1))
        for pid in idle:
            setup.protocols[pid].requests_left = 0
        return setup

    found = explore(factory, max_states=100_000)
    assert found.ok, found.summary() + str(found.deadlocks[:1] + found.violations[:1])
    print(f"sanders exhaustive N=3, {label}:", found.summary())


# -- each part of the deadlock resolution is needed ------------------------------------------------
MIXED_SETS = {
    "request_sets": {"1": [1, 2, 3, 4], "2": [2, 3, 4], "3": [2, 3, 4], "4": [1, 2, 3, 4]},
    "inform_sets": {"1": [1, 3, 4], "2": [2, 4], "3": [3], "4": [1, 3, 4]},
}


@pytest.mark.parametrize(
    "variant, n, options", [(AnswersOnlyAtInquire, 4, {}), (FailsOnlyOnArrival, 4, MIXED_SETS)]
)
def test_weaker_deadlock_resolution_stalls_where_ours_does_not(variant, n, options):
    def runs(cls):
        stalled = []
        for seed in range(30):
            setup = make_setup("sanders", n, dict(options, requests=3))
            setup.protocols = {
                p: cls(p, n, o.asks, o.informs, o.tracks, 3) for p, o in setup.protocols.items()
            }
            result, verdict = audited(setup, seed, dwell={"think": 0.1, "cs": 0.1})
            assert verdict.ok or not result.ok  # weaker liveness, never weaker safety
            if not result.ok:
                stalled.append(seed)
        return stalled

    assert runs(variant), f"{variant.__name__} never stalled"
    assert runs(sanders.SandersNode) == []
