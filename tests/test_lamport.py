"""Lamport's algorithm, array form (docs/architecture.md#lamport): the state table, safety and progress,
message counts."""

from pathlib import Path

import pytest
from conftest import audited, random_classic_runs
from hypothesis import strategies as st
from mutexlab_broken.lamport_variants import EnterOnEarliestRequest, NeverReplies

from mutexlab.audit import verify_events
from mutexlab.protocol import Enter, Exit, Note, ProtocolError, Schedule, Send
from mutexlab.protocols import lamport
from mutexlab.protocols.registry import make_setup
from mutexlab.sim.explore import explore
from mutexlab.sim.scripted import replay_scenario

SCENARIOS = Path(__file__).resolve().parent.parent / "examples" / "scenarios"


def _sends(effects):
    return [(e.to, e.msg.type, e.msg.ts) for e in effects if isinstance(e, Send)]


# -- the state table ---------------------------------------------------------------------


def test_request_stamps_own_entry_and_broadcasts_one_timestamp():
    node = lamport.LamportNode(2, 4, clock=5)
    effects = node.on_local("request")
    assert effects[0] == Note("request", {"resource": "cs"})
    assert _sends(effects) == [(1, "REQUEST", 6), (3, "REQUEST", 6), (4, "REQUEST", 6)]
    assert node.state == "WANTED" and node.q[2] == ("REQUEST", 6)
    with pytest.raises(ProtocolError, match="cannot request in state WANTED"):
        node.on_local("request")
    with pytest.raises(ProtocolError, match="not in the critical section"):
        node.on_local("exit")


def test_released_node_replies_with_a_later_stamp_and_records_the_request():
    node = lamport.LamportNode(1, 3)
    effects = node.on_message(lamport.Request(sender=2, ts=7))
    assert _sends(effects) == [(2, "REPLY", 9)]  # receive → 8, send → 9
    assert node.q[2] == ("REQUEST", 7) and node.state == "RELEASED"


@pytest.mark.parametrize("theirs", [1, 50])  # earlier or later than ours: no reply either way
def test_a_node_with_its_own_request_in_its_array_does_not_reply(theirs):
    node = lamport.LamportNode(1, 3, clock=9)
    node.on_local("request")  # q[1] = REQUEST(10)
    assert node.on_message(lamport.Request(sender=2, ts=theirs)) == []
    assert node.q[2] == ("REQUEST", theirs)


def test_holder_does_not_reply_and_its_release_replaces_the_entry():
    node = lamport.LamportNode(1, 2)
    node.on_local("request")
    node.on_message(lamport.Reply(sender=2, ts=5))
    assert node.state == "HELD"
    assert node.on_message(lamport.Request(sender=2, ts=6)) == []
    effects = node.on_local("exit")
    assert effects[0] == Exit("cs")
    assert _sends(effects) == [(2, "RELEASE", node.clock.time)]
    assert node.q[1] == ("RELEASE", node.clock.time) and node.state == "RELEASED"


def test_entry_needs_a_later_message_from_everyone():
    node = lamport.LamportNode(1, 3)
    node.on_local("request")  # REQUEST(1)
    assert node.on_message(lamport.Reply(sender=2, ts=3)) == []  # 3 is still (RELEASE, 0)
    assert node.waiting_for() == {"a later message": [3]}
    effects = node.on_message(lamport.Reply(sender=3, ts=2))
    assert Enter("cs") in effects and Schedule("exit", "cs") in effects
    assert node.state == "HELD"


def test_an_earlier_request_blocks_until_its_release_which_is_the_later_message():
    """The no-reply rule: 2 asked first and keeps quiet; its RELEASE is what lets 1 in."""
    node = lamport.LamportNode(1, 3, clock=3)
    node.on_local("request")  # REQUEST(4)
    node.on_message(lamport.Request(sender=2, ts=2))  # earlier request, no reply to us
    node.on_message(lamport.Reply(sender=3, ts=6))
    assert node.state == "WANTED" and not node.may_enter()
    assert node.waiting_for() == {"RELEASE": [2]}
    effects = node.on_message(lamport.Release(sender=2, ts=8))
    assert Enter("cs") in effects


def test_a_later_request_counts_as_the_later_message():
    node = lamport.LamportNode(1, 2)
    node.on_local("request")  # REQUEST(1)
    assert Enter("cs") in node.on_message(lamport.Request(sender=2, ts=1))  # (1, 2) is later than (1, 1)


def test_ties_on_timestamp_go_to_the_lower_pid():
    node = lamport.LamportNode(2, 2)
    node.on_local("request")  # REQUEST(1) of 2
    assert node.on_message(lamport.Request(sender=1, ts=1)) == []  # (1, 1) precedes (1, 2)
    assert node.state == "WANTED"


def test_a_single_node_enters_at_once():
    node = lamport.LamportNode(1, 1)
    assert Enter("cs") in node.on_local("request")


def test_bad_options_are_refused():
    from mutexlab.setups import ConfigError

    with pytest.raises(ConfigError, match="lamport does not take option"):
        make_setup("lamport", 3, {"quorums": "grid"})
    with pytest.raises(ConfigError, match="initial_clocks: pid 9 is outside 1..3"):
        make_setup("lamport", 3, {"initial_clocks": {"9": 1}})


# -- safety and progress -------------------------------------------------------------------


@random_classic_runs(clocks=st.lists(st.integers(0, 30), min_size=15, max_size=15))
def test_random_runs_are_safe_and_serve_every_request(n, requests, seed, delay, think, cs, clocks):
    initial = {str(p): clocks[p - 1] for p in range(1, n + 1)}
    result, verdict = audited(
        make_setup("lamport", n, {"requests": requests, "initial_clocks": initial}),
        seed,
        delay=delay,
        dwell={"think": think, "cs": cs},
    )
    assert verdict.ok, verdict.render()
    assert result.ok, result.stalled
    assert result.entries["cs"] == n * requests
    # Message counts: N−1 REQUEST and N−1 RELEASE per entry, at most N−1 REPLY: ≤ 3(N−1).
    entries = result.entries["cs"]
    assert result.messages["REQUEST"] == result.messages["RELEASE"] == (n - 1) * entries
    assert result.messages.get("REPLY", 0) <= (n - 1) * entries
    assert result.total_messages <= 3 * (n - 1) * entries


def _broken(cls, n, requests):
    setup = make_setup("lamport", n, {"requests": requests})
    setup.protocols = {p: cls(p, n, requests) for p in setup.protocols}
    return setup


def test_audit_catches_entering_without_a_later_message_from_everyone():
    rules = set()
    for seed in range(10):
        _, verdict = audited(_broken(EnterOnEarliestRequest, 4, 2), seed)
        rules |= {v.rule for v in verdict.violations}
    assert "capacity" in rules
    for seed in range(10):
        assert audited(make_setup("lamport", 4, {"requests": 2}), seed).verdict.ok


def test_audit_catches_a_request_left_waiting():
    setup = _broken(NeverReplies, 3, 0)
    setup.protocols[1].requests_left = 1  # a lone request: only a REPLY could let it in
    result, verdict = audited(setup, 1)
    assert result.stalled == {"node-1": {"a later message": ["node-2", "node-3"]}}
    assert "request-unserved" in {v.rule for v in verdict.violations}
    assert "not-idle-at-end" in {v.rule for v in verdict.violations}


# -- message counts ------------------------------------------------------------------------


def _one_at_a_time(algorithm, n, options=None):
    steps = []
    for pid in range(1, n + 1):
        steps += [{"op": "request", "pid": pid}, {"op": "drain"}, {"op": "exit", "pid": pid}, {"op": "drain"}]
    return replay_scenario({"algorithm": algorithm, "processes": n, "options": options or {}, "steps": steps})


@pytest.mark.parametrize("n", [2, 3, 5, 8, 13])
def test_exactly_three_n_minus_one_messages_per_entry_when_no_request_overlaps(n):
    result = _one_at_a_time("lamport", n)
    assert result.entered == [f"node-{p}" for p in range(1, n + 1)]
    sends = [e for e in result.events if e["event"] == "send"]
    assert len(sends) == 3 * (n - 1) * n
    assert {t: sum(e["type"] == t for e in sends) for t in ("REQUEST", "REPLY", "RELEASE")} == {
        "REQUEST": (n - 1) * n,
        "REPLY": (n - 1) * n,
        "RELEASE": (n - 1) * n,
    }


# -- exhaustive exploration ----------------------------------------------------------------


def test_every_interleaving_for_three_nodes_two_of_them_asking_is_safe_and_live(capsys):
    def factory():
        setup = make_setup("lamport", 3)
        setup.protocols[1].requests_left = 1
        setup.protocols[2].requests_left = 1
        return setup

    found = explore(factory, max_states=100_000)
    with capsys.disabled():
        print(f"\nlamport N=3 (nodes 1, 2 ask once): {found.summary()}")
    assert found.complete and not found.violations and not found.deadlocks
    assert found.finals > 0


def test_exploration_finds_the_broken_variant_unsafe():
    def factory():
        setup = _broken(EnterOnEarliestRequest, 3, 0)
        setup.protocols[1].requests_left = 1
        setup.protocols[2].requests_left = 1
        return setup

    found = explore(factory, max_states=2_000)  # the first violation is near; no need to see all
    assert found.violations and "cs (capacity 1)" in found.violations[0].message


# -- scenarios -----------------------------------------------------------------------------


def test_scenario_quiet_reply():
    """1 and 2 ask at once: 2 keeps quiet about 1's request; 1 enters on 2's later REQUEST and
    3's REPLY; 2 enters on 1's RELEASE. Only 3 ever replies."""
    result = replay_scenario(SCENARIOS / "lamport-quiet-reply.json")
    assert result.entered == ["node-1", "node-2"]
    replies = [(e["pid"], e["to"]) for e in result.events if e["event"] == "send" and e["type"] == "REPLY"]
    assert replies == [("node-3", "node-1"), ("node-3", "node-2")]
    assert verify_events(result.events).ok
    assert set(result.states.values()) == {"RELEASED"} and result.in_flight == 0


def test_scenario_timestamps_not_arrival_decide():
    """1 asks first but its clock starts at 5: 2's request (ts 1) goes first."""
    result = replay_scenario(SCENARIOS / "lamport-timestamps.json")
    assert result.entered == ["node-2", "node-1"]
    stamps = {
        e["pid"]: e["msg"]["ts"] for e in result.events if e["event"] == "send" and e["type"] == "REQUEST"
    }
    assert stamps == {"node-1": 6, "node-2": 1}
    assert verify_events(result.events).ok
