"""Suzuki–Kasami: the notes' example, the state table, the token holder option, random
schedules and an exhaustive check, with a broken variant the audit must catch."""

from pathlib import Path

import pytest
from conftest import audited, random_classic_runs
from hypothesis import strategies as st
from mutexlab_broken.suzuki_kasami_variants import Generous

from mutexlab.audit import verify_events
from mutexlab.protocol import Enter, ProtocolError, Send
from mutexlab.protocols import suzuki_kasami as sk
from mutexlab.protocols.registry import make_setup
from mutexlab.setups import ConfigError
from mutexlab.sim import SimConfig, Simulation, replay_scenario
from mutexlab.sim.explore import explore
from mutexlab.trace import TraceWriter

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "suzuki-kasami-notes.json"


def test_notes_example_p1_then_p3_and_the_final_token():
    result = replay_scenario(SCENARIO)
    assert result.entered == ["node-1", "node-3"]
    nodes = result.protocols
    assert nodes[3].token_view() == ([1, 0, 1], [])  # L = [1,0,1], Q empty
    assert nodes[1].token is None and nodes[2].token is None
    assert [n.R[1:] for n in nodes.values()] == [[1, 0, 1]] * 3
    # p1 left with Q = (3): the token went straight to p3 with L = [1,0,0].
    token_to_p3 = [
        e for e in result.events if e["event"] == "send" and e["type"] == "TOKEN" and e["to"] == "node-3"
    ]
    assert [(e["msg"]["last"], e["msg"]["queue"]) for e in token_to_p3] == [([1, 0, 0], [])]
    assert verify_events(result.events).ok


# -- the state table -----------------------------------------------------------------------------
def test_idle_holder_enters_without_messages_and_keeps_the_token_while_inside():
    node = sk.SuzukiKasamiNode(1, 3, has_token=True)
    effects = node.on_local("request")
    assert [type(e) for e in effects if not isinstance(e, Send)].count(Enter) == 1
    assert not [e for e in effects if isinstance(e, Send)] and node.state == "HELD"
    assert node.on_message(sk.Request(sender=2, ts=1, seq=1)) == []  # in use: keep it
    effects = node.on_local("exit")
    sends = [e for e in effects if isinstance(e, Send)]
    assert [(e.to, e.msg.last, e.msg.queue) for e in sends] == [(2, [0, 0, 0], [])]
    assert node.token is None and node.state == "RELEASED"


def test_exit_queues_every_outstanding_request_in_pid_order_and_passes_to_the_first():
    node = sk.SuzukiKasamiNode(2, 4, has_token=True)
    node.on_local("request")
    for j in (4, 1):
        node.on_message(sk.Request(sender=j, ts=3, seq=1))
    sends = [e for e in node.on_local("exit") if isinstance(e, Send)]
    assert [(e.to, e.msg.last, e.msg.queue) for e in sends] == [(1, [0, 0, 0, 0], [4])]


def test_stale_requests_are_ignored_by_the_idle_holder():
    node = sk.SuzukiKasamiNode(1, 2, has_token=True)
    node.token[0][2] = 3  # p2's third request was already served
    assert node.on_message(sk.Request(sender=2, ts=1, seq=2)) == []
    assert node.R[2] == 2 and node.token is not None
    sends = node.on_message(sk.Request(sender=2, ts=9, seq=4))
    assert [e.to for e in sends] == [2] and node.token is None


def test_a_requester_without_token_broadcasts_its_sequence_number():
    node = sk.SuzukiKasamiNode(3, 4, has_token=False)
    sends = [e for e in node.on_local("request") if isinstance(e, Send)]
    assert sorted(e.to for e in sends) == [1, 2, 4] and {e.msg.seq for e in sends} == {1}
    assert node.state == "WANTED" and node.waiting_for() == {"TOKEN": []}
    effects = node.on_message(sk.Token(sender=1, ts=5, last=[0, 0, 0, 0], queue=[]))
    assert any(isinstance(e, Enter) for e in effects)


@pytest.mark.parametrize(
    "holder, words", [(0, "token_holder"), (4, "in 1..3"), ("2", "token_holder"), (True, "token_holder")]
)
def test_bad_token_holder_is_refused(holder, words):
    with pytest.raises(ConfigError, match=words):
        make_setup("suzuki-kasami", 3, {"token_holder": holder})
    with pytest.raises(ConfigError, match="does not take option"):
        make_setup("suzuki-kasami", 3, {"parents": {}})


def test_default_holder_is_1_and_the_option_moves_it():
    assert [p for p, n in make_setup("suzuki-kasami", 4, {}).protocols.items() if n.has_token] == [1]
    assert [
        p for p, n in make_setup("suzuki-kasami", 4, {"token_holder": 3}).protocols.items() if n.has_token
    ] == [3]


# -- random schedules ----------------------------------------------------------------------------
@random_classic_runs(think=(0.1, 1.0, 5.0), data=st.data())
def test_random_runs_are_safe_serve_every_request_and_cost_0_or_n(n, requests, seed, delay, think, cs, data):
    holder = data.draw(st.integers(1, n))
    setup = make_setup("suzuki-kasami", n, {"requests": requests, "token_holder": holder})
    result, verdict = audited(setup, seed, delay=delay, dwell={"think": think, "cs": cs})
    assert verdict.ok, verdict.render()
    assert result.ok, result.stalled
    assert result.entries == {"cs": n * requests}
    # Each entry costs 0 messages (token already here) or exactly N (N−1 REQUESTs, one TOKEN).
    assert result.messages.get("TOKEN", 0) * (n - 1) == result.messages.get("REQUEST", 0)
    assert result.total_messages % n == 0 and result.total_messages <= n * n * requests
    assert sum(node.has_token for node in result.protocols.values()) == 1


# -- broken variant ------------------------------------------------------------------------------
def _generous(n, requests):
    setup = make_setup("suzuki-kasami", n, {"requests": requests})
    setup.protocols = {p: Generous(p, n, p == 1, requests) for p in range(1, n + 1)}
    return setup


def _audit_broken(setup, seed):
    """The audit of a broken run. The token it gave away may come back to the broken node when it
    did not ask for it (still inside, or RELEASED), which the protocol refuses (ProtocolError):
    the trace up to there is audited."""
    writer = TraceWriter(None, keep=True)
    try:
        Simulation(setup, SimConfig(seed=seed), writer).run()
    except ProtocolError as exc:
        assert "cannot take TOKEN in state" in str(exc)
    return verify_events(writer.events)


def test_audit_catches_a_holder_that_gives_the_token_away_while_inside():
    caught = [seed for seed in range(20) if not _audit_broken(_generous(4, 3), seed).safe]
    assert caught
    found = explore(lambda: _generous(3, 1))
    assert any("cs (capacity 1)" in v.message for v in found.violations), found.summary()
    for seed in range(20):
        assert audited(make_setup("suzuki-kasami", 4, {"requests": 3}), seed).verdict.ok


# -- exhaustive ----------------------------------------------------------------------------------
@pytest.mark.parametrize("n, requests, holder", [(3, 1, 1), (3, 1, 3), (2, 2, 2)])
def test_exhaustive(n, requests, holder):
    found = explore(lambda: make_setup("suzuki-kasami", n, {"requests": requests, "token_holder": holder}))
    assert found.ok, found.summary()
    assert found.finals > 1
    print(f"suzuki-kasami exhaustive N={n}, {requests} request(s) each, token at {holder}:", found.summary())
