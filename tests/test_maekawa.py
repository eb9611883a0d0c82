"""Maekawa with INQUIRE / FAILED / YIELD (docs/architecture.md#maekawa): the two state tables, safety,
deadlock freedom."""

from pathlib import Path

import pytest
from conftest import audited
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutexlab_broken.maekawa_variants import GrantsEveryone, NoInquire, SeedRuleOnly

from mutexlab.audit import verify_events
from mutexlab.protocol import Enter, Exit, Note, Send
from mutexlab.protocols import maekawa as mk
from mutexlab.protocols.quorums import plane
from mutexlab.protocols.registry import make_setup
from mutexlab.sim.explore import explore
from mutexlab.sim.scripted import ScriptedRun, load_scenario, replay_scenario
from mutexlab.trace import TraceWriter

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"
CYCLE = {"1": [1, 2], "2": [2, 3], "3": [3, 1]}  # each pair meets in exactly one mediator


def _sends(effects):
    return [(e.to, e.msg.type) for e in effects if isinstance(e, Send)]


def _msg(kind, sender, ts=1):
    return mk.CODEC.models[kind](sender=sender, ts=ts)


# -- arbiter table -------------------------------------------------------------------------


def test_a_free_arbiter_grants_and_a_locked_one_fails_later_requests():
    arb = mk.MaekawaNode(5, 6, (5,))
    assert _sends(arb.on_message(_msg("REQUEST", 1, 3))) == [(1, "REPLY")]
    assert arb.lock == (3, 1)
    assert _sends(arb.on_message(_msg("REQUEST", 2, 7))) == [(2, "FAILED")]
    assert arb.queue == [(7, 2)]


def test_an_earlier_request_inquires_the_lock_holder_once_per_grant():
    arb = mk.MaekawaNode(5, 6, (5,))
    arb.on_message(_msg("REQUEST", 1, 3))
    assert _sends(arb.on_message(_msg("REQUEST", 3, 1))) == [(1, "INQUIRE")]
    assert _sends(arb.on_message(_msg("REQUEST", 4, 2))) == []  # already inquired
    assert arb.queue == [(1, 3), (2, 4)]


def test_release_grants_the_head_and_fails_requests_the_new_lock_overtakes():
    arb = mk.MaekawaNode(5, 6, (5,))
    arb.on_message(_msg("REQUEST", 1, 3))
    arb.on_message(_msg("REQUEST", 2, 7))  # FAILED at once
    arb.on_message(_msg("REQUEST", 3, 1))  # INQUIRE to 1
    arb.on_message(_msg("REQUEST", 4, 2))  # precedes the lock: nothing yet
    # (2, 4) is now behind the lock (1, 3): it learns with a FAILED; (7, 2) was told already.
    assert _sends(arb.on_message(_msg("RELEASE", 1, 3))) == [(3, "REPLY"), (4, "FAILED")]
    assert arb.lock == (1, 3) and arb.queue == [(2, 4), (7, 2)]


def test_yield_requeues_the_yielder_and_grants_the_earlier_request():
    arb = mk.MaekawaNode(5, 6, (5,))
    arb.on_message(_msg("REQUEST", 1, 3))
    arb.on_message(_msg("REQUEST", 3, 1))  # INQUIRE to 1
    assert _sends(arb.on_message(_msg("YIELD", 1, 9))) == [(3, "REPLY")]  # no FAILED to the yielder
    assert arb.lock == (1, 3) and arb.queue == [(3, 1)]
    assert _sends(arb.on_message(_msg("RELEASE", 3, 1))) == [(1, "REPLY")]
    assert _sends(arb.on_message(_msg("RELEASE", 1, 3))) == [] and arb.lock is None


# -- requester table -----------------------------------------------------------------------


def _asking(pid=1, quorum=(1, 4, 5)):
    node = mk.MaekawaNode(pid, 6, quorum)
    effects = node.on_local("request")
    return node, effects


def test_request_goes_to_the_whole_quorum_including_oneself():
    node, effects = _asking()
    assert effects[0] == Note("request", {"resource": "cs"})
    assert _sends(effects) == [(1, "REQUEST"), (4, "REQUEST"), (5, "REQUEST")]
    assert node.waiting_for() == {"REPLY": [1, 4, 5]}


def test_enters_with_every_reply_and_releases_the_whole_quorum_with_the_request_stamp():
    node, _ = _asking()
    for m in (1, 4):
        assert node.on_message(_msg("REPLY", m)) == []
    effects = node.on_message(_msg("REPLY", 5))
    assert Enter("cs") in effects and node.state == "HELD"
    effects = node.on_local("exit")
    assert effects[0] == Exit("cs")
    assert [(e.to, e.msg.type, e.msg.ts) for e in effects if isinstance(e, Send)] == [
        (1, "RELEASE", 1),
        (4, "RELEASE", 1),
        (5, "RELEASE", 1),
    ]


def test_inquire_before_failed_is_remembered_and_answered_when_failed_arrives():
    node, _ = _asking()
    node.on_message(_msg("REPLY", 4))
    assert node.on_message(_msg("INQUIRE", 4)) == []  # no FAILED yet: keep the grant
    assert node.inquiries == {4}
    assert _sends(node.on_message(_msg("FAILED", 5))) == [(4, "YIELD")]
    assert node.grants == set() and node.yielded == {4} and node.inquiries == set()


def test_inquire_after_failed_is_answered_at_once():
    node, _ = _asking()
    node.on_message(_msg("FAILED", 5))
    node.on_message(_msg("REPLY", 4))
    assert _sends(node.on_message(_msg("INQUIRE", 4))) == [(4, "YIELD")]


def test_having_yielded_counts_as_failed_until_that_member_replies_again():
    node, _ = _asking()
    node.on_message(_msg("REPLY", 1))
    node.on_message(_msg("REPLY", 4))
    node.on_message(_msg("FAILED", 5))
    node.on_message(_msg("INQUIRE", 4))  # YIELD to 4
    node.on_message(_msg("REPLY", 5))  # 5 now grants: FAILED from 5 resolved
    assert node.failed == set() and node.yielded == {4}
    assert _sends(node.on_message(_msg("INQUIRE", 1))) == [(1, "YIELD")]  # rule 3, second case
    node.on_message(_msg("REPLY", 4))
    node.on_message(_msg("REPLY", 1))
    assert node.state == "HELD"


def test_stale_inquires_are_ignored():
    node, _ = _asking()
    assert node.on_message(_msg("INQUIRE", 4)) == []  # 4 does not grant us: stale
    assert node.inquiries == set()
    for m in (1, 4, 5):
        node.on_message(_msg("REPLY", m))
    assert node.on_message(_msg("INQUIRE", 4)) == []  # inside: the RELEASE answers it
    node.on_local("exit")
    assert node.on_message(_msg("INQUIRE", 5)) == []  # after leaving: stale
    assert node.finished


# -- safety and progress -------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(2, 15),
    requests=st.integers(1, 3),
    seed=st.integers(0, 10**6),
    construction=st.sampled_from([None, "grid"]),
    delay=st.sampled_from(["exp", "uniform", "fixed"]),
    think=st.sampled_from([0.0, 0.2, 1.0, 5.0]),
    cs=st.sampled_from([0.0, 0.5, 2.0]),
)
def test_random_runs_are_safe_and_serve_every_request(n, requests, seed, construction, delay, think, cs):
    options = {"requests": requests} | ({"quorums": construction} if construction else {})
    result, verdict = audited(
        make_setup("maekawa", n, options), seed, delay=delay, dwell={"think": think, "cs": cs}
    )
    assert verdict.ok, verdict.render()
    assert result.ok, result.stalled
    assert result.entries["cs"] == n * requests


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(2, 10), seed=st.integers(0, 10**6), data=st.data())
def test_random_runs_with_arbitrary_intersecting_quorums(n, seed, data):
    """Any valid family works, not only the constructions: the grid with random extra members."""
    from mutexlab.protocols.quorums import grid

    sets = {
        str(p): sorted(set(members) | set(data.draw(st.lists(st.integers(1, n), max_size=n), label=f"S{p}")))
        for p, members in grid(n).items()
    }
    result, verdict = audited(
        make_setup("maekawa", n, {"requests": 2, "quorums": sets}), seed, dwell={"think": 0.3, "cs": 0.5}
    )
    assert verdict.ok, verdict.render()
    assert result.ok, result.stalled


@pytest.mark.parametrize("n", [7, 13])
def test_three_k_minus_one_messages_per_entry_without_contention_on_the_plane(n):
    k = len(plane(n)[1])
    steps = []
    for pid in range(1, n + 1):
        steps += [{"op": "request", "pid": pid}, {"op": "drain"}, {"op": "exit", "pid": pid}, {"op": "drain"}]
    result = replay_scenario({"algorithm": "maekawa", "processes": n, "steps": steps})
    assert len(result.entered) == n
    sends = [e["type"] for e in result.events if e["event"] == "send"]
    assert len(sends) == 3 * (k - 1) * n
    assert set(sends) == {"REQUEST", "REPLY", "RELEASE"}


def _variant(cls, n, requests, options=None):
    setup = make_setup("maekawa", n, {"requests": requests} | (options or {}))
    setup.protocols = {p: cls(p, n, node.asks, requests) for p, node in setup.protocols.items()}
    return setup


def _bounded(budgets, cls=mk.MaekawaNode, options=None):
    def factory():
        setup = _variant(cls, 3, 0, options)
        for pid, budget in budgets.items():
            setup.protocols[pid].requests_left = budget
        return setup

    return factory


def test_without_inquire_and_yield_the_cycle_of_three_deadlocks_and_with_them_it_does_not():
    broken = explore(_bounded({1: 1, 2: 1, 3: 1}, NoInquire, {"quorums": CYCLE}), max_states=50_000)
    assert broken.deadlocks
    assert (
        "waiting: node-1 for cs: REPLY from node-2; node-2 for cs: REPLY from node-3; node-3 for cs: REPLY from node-1"
        in broken.deadlocks[0].message
    )
    found = explore(_bounded({1: 1, 2: 1, 3: 1}, options={"quorums": CYCLE}), max_states=50_000)
    print(
        f"\nmaekawa N=3, cyclic quorums, each asks once: {found.summary()}"
        f"\n  without INQUIRE/YIELD: {broken.summary()}"
    )
    assert found.complete and not found.violations and not found.deadlocks and found.finals > 0


def test_every_interleaving_with_the_default_grid_is_safe_and_live():
    found = explore(_bounded({1: 1, 2: 1, 3: 1}), max_states=50_000)
    print(f"\nmaekawa N=3, default grid quorums, each asks once: {found.summary()}")
    assert found.complete and not found.violations and not found.deadlocks and found.finals > 0


def test_without_inquire_random_runs_deadlock_and_the_audit_says_who_waits():
    stalled = []
    for seed in range(20):
        result, verdict = audited(_variant(NoInquire, 7, 2), seed)
        if result.stalled:
            stalled.append(seed)
            assert "request-unserved" in {v.rule for v in verdict.violations}
    assert stalled
    for seed in stalled:
        result, verdict = audited(make_setup("maekawa", 7, {"requests": 2}), seed)
        assert result.ok and verdict.ok


def test_the_seed_rule_alone_deadlocks_failing_overtaken_requests_fixes_it():
    """Why the arbiter also sends FAILED to queued requests a later grant overtakes."""
    stalled = [
        seed
        for seed in range(60)
        if audited(_variant(SeedRuleOnly, 13, 3), seed, dwell={"think": 0.3, "cs": 0.3}).result.stalled
    ]
    assert stalled
    for seed in stalled:
        result, verdict = audited(
            make_setup("maekawa", 13, {"requests": 3}), seed, dwell={"think": 0.3, "cs": 0.3}
        )
        assert result.ok and verdict.ok


def test_audit_catches_an_arbiter_that_grants_everyone():
    rules = set()
    for seed in range(5):
        rules |= {v.rule for v in audited(_variant(GrantsEveryone, 7, 2), seed).verdict.violations}
    assert "capacity" in rules
    assert explore(_bounded({1: 1, 2: 1}, GrantsEveryone, {"quorums": CYCLE}), max_states=2_000).violations


# -- the scenario --------------------------------------------------------------------------


def test_scenario_inquire_before_failed():
    """Requesters 1, 2, 3 each win one arbiter (4, 5, 6) and need the next one: a cycle. 3 is
    inquired by 6 before 4's FAILED reaches it; the FAILED makes it YIELD, and 2 gets in."""
    result = replay_scenario(SCENARIOS / "maekawa-inquire-yield.json")
    assert result.entered == ["node-2", "node-1", "node-3"]
    received = [(e["pid"], e["type"], e["from"]) for e in result.events if e["event"] == "recv"]
    at_3 = [r for r in received if r[0] == "node-3"]
    assert at_3[:3] == [
        ("node-3", "REPLY", "node-6"),
        ("node-3", "INQUIRE", "node-6"),
        ("node-3", "FAILED", "node-4"),
    ]
    sent = [e["type"] for e in result.events if e["event"] == "send"]
    assert (sent.count("INQUIRE"), sent.count("FAILED"), sent.count("YIELD")) == (2, 1, 1)
    assert verify_events(result.events).ok
    assert set(result.states.values()) == {"RELEASED"} and result.in_flight == 0


def test_the_same_schedule_deadlocks_without_inquire():
    scenario = load_scenario(SCENARIOS / "maekawa-inquire-yield.json")
    setup = make_setup("maekawa", 6, scenario.options)
    setup.protocols = {p: NoInquire(p, 6, node.asks) for p, node in setup.protocols.items()}
    run = ScriptedRun(setup, TraceWriter(None, keep=True))
    run.start_all()
    for step in scenario.steps[:9]:  # three requests, then each arbiter's first two
        if step.op == "request":
            run.feed(step.pid, lambda p: p.on_local("request"))
        else:
            run.deliver_oldest(step.frm, step.to)
    run.drain()
    assert run.entries["cs"] == 0 and all(run.protocols[p].state == "WANTED" for p in (1, 2, 3))
    # The cycle: 1 waits for 5, which holds for 2; 2 waits for 6, which holds for 3; 3 waits for 4 ...
    assert run.waiting() == {
        "node-1": {"REPLY": ["node-5"]},
        "node-2": {"REPLY": ["node-6"]},
        "node-3": {"REPLY": ["node-4"]},
        "node-4": {"RELEASE": ["node-1"]},
        "node-5": {"RELEASE": ["node-2"]},
        "node-6": {"RELEASE": ["node-3"]},
    }
