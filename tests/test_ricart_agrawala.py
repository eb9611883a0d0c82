"""Ricart–Agrawala (docs/architecture.md#ricart-agrawala): the state table, safety and progress, 2(N−1) messages."""

import pytest
from conftest import audited, broken, random_classic_runs
from mutexlab_broken import recast

from mutexlab.protocol import Enter, Exit, Note, ProtocolError, Send
from mutexlab.protocols import ricart_agrawala as ra
from mutexlab.protocols.registry import make_setup
from mutexlab.setups import ConfigError
from mutexlab.sim.explore import explore
from mutexlab.sim.scripted import replay_scenario

EAGER = broken("ricart_agrawala_eager")
FORGETFUL = broken("ricart_agrawala_forgetful")


def _sends(effects):
    return [(e.to, e.msg.type) for e in effects if isinstance(e, Send)]


# -- the state table (rules 1–4) -----------------------------------------------------------


def test_request_broadcasts_and_waits_for_every_other_node():
    node = ra.RicartAgrawalaNode(1, 3)
    effects = node.on_local("request")
    assert effects[0] == Note("request", {"resource": "cs"})
    assert _sends(effects) == [(2, "REQUEST"), (3, "REQUEST")]
    assert node.state == "WANTED" and node.waiting_for() == {"REPLY": [2, 3]}
    assert node.on_message(ra.Reply(sender=3, ts=4)) == []
    assert Enter("cs") in node.on_message(ra.Reply(sender=2, ts=5))  # rule 3
    assert node.state == "HELD"


def test_rule_2b_a_node_not_asking_replies_at_once():
    node = ra.RicartAgrawalaNode(2, 3)
    assert _sends(node.on_message(ra.Request(sender=1, ts=4))) == [(1, "REPLY")]


def test_rule_2c_and_2d_a_waiting_node_defers_later_requests_and_answers_earlier_ones():
    node = ra.RicartAgrawalaNode(2, 3, clock=4)
    node.on_local("request")  # (5, 2)
    assert node.on_message(ra.Request(sender=3, ts=5)) == []  # (5, 3) follows: defer
    assert _sends(node.on_message(ra.Request(sender=1, ts=5))) == [(1, "REPLY")]  # (5, 1) precedes
    assert node.deferred == [3]


def test_rule_2a_and_4_the_holder_defers_and_answers_every_pending_request_on_leaving():
    node = ra.RicartAgrawalaNode(1, 3)
    node.on_local("request")
    node.on_message(ra.Reply(sender=2, ts=2))
    node.on_message(ra.Reply(sender=3, ts=2))
    assert node.on_message(ra.Request(sender=3, ts=1)) == []  # even an earlier stamp waits
    assert node.on_message(ra.Request(sender=2, ts=7)) == []
    effects = node.on_local("exit")
    assert effects[0] == Exit("cs")
    assert _sends(effects) == [(3, "REPLY"), (2, "REPLY")]
    assert node.state == "RELEASED" and node.deferred == []
    with pytest.raises(ProtocolError):
        node.on_local("exit")


def test_a_single_node_enters_at_once_and_options_are_checked():
    assert Enter("cs") in ra.RicartAgrawalaNode(1, 1).on_local("request")
    with pytest.raises(ConfigError, match="ricart-agrawala does not take option"):
        make_setup("ricart-agrawala", 3, {"parents": {}})
    with pytest.raises(ConfigError, match="'requests' must be a whole number"):
        make_setup("ricart-agrawala", 3, {"requests": "many"})


# -- safety, progress and the exact message count -----------------------------------------


@random_classic_runs()
def test_random_runs_are_safe_serve_every_request_and_cost_exactly_2_n_minus_1(
    n, requests, seed, delay, think, cs
):
    result, verdict = audited(
        make_setup("ricart-agrawala", n, {"requests": requests}),
        seed,
        delay=delay,
        dwell={"think": think, "cs": cs},
    )
    assert verdict.ok, verdict.render()
    assert result.ok, result.stalled
    entries = result.entries["cs"]
    assert entries == n * requests
    assert result.messages == {"REPLY": (n - 1) * entries, "REQUEST": (n - 1) * entries}
    assert result.total_messages == 2 * (n - 1) * entries


@pytest.mark.parametrize("n", [2, 4, 9])
def test_two_n_minus_1_also_one_at_a_time(n):
    steps = []
    for pid in range(1, n + 1):
        steps += [{"op": "request", "pid": pid}, {"op": "drain"}, {"op": "exit", "pid": pid}, {"op": "drain"}]
    result = replay_scenario({"algorithm": "ricart-agrawala", "processes": n, "steps": steps})
    assert len(result.entered) == n
    assert sum(e["event"] == "send" for e in result.events) == 2 * (n - 1) * n


def test_audit_catches_replying_from_inside():
    """A node that replies even while it holds the critical section breaks mutual exclusion; the
    correct protocol passes on the same seeds."""
    rules = set()
    for seed in range(10):
        rules |= {v.rule for v in audited(EAGER.make_setup(4, {"requests": 3}), seed).verdict.violations}
        assert audited(make_setup("ricart-agrawala", 4, {"requests": 3}), seed).verdict.ok
    assert "capacity" in rules


def test_audit_catches_deferred_requests_never_answered():
    result, verdict = audited(FORGETFUL.make_setup(4, {"requests": 2}), 3)
    assert result.stalled
    rules = {v.rule for v in verdict.violations}
    assert {"request-unserved", "not-idle-at-end"} <= rules
    assert "capacity" not in rules


# -- exhaustive exploration ----------------------------------------------------------------


def _bounded(budgets, cls=None):
    def factory():
        setup = make_setup("ricart-agrawala", 3)
        if cls is not None:
            recast(setup, cls)
        for pid, budget in budgets.items():
            setup.protocols[pid].requests_left = budget
        return setup

    return factory


def test_every_interleaving_for_three_nodes_is_safe_and_live(capsys):
    found = explore(_bounded({1: 1, 2: 1, 3: 1}), max_states=100_000)
    with capsys.disabled():
        print(f"\nricart-agrawala N=3 (each asks once): {found.summary()}")
    assert found.complete and not found.violations and not found.deadlocks
    assert found.finals > 0


def test_exploration_catches_the_broken_variants():
    assert explore(_bounded({1: 1, 2: 1}, EAGER.EagerNode), max_states=2_000).violations
    stuck = explore(_bounded({1: 1, 2: 1}, FORGETFUL.ForgetfulNode), max_states=20_000)
    assert stuck.deadlocks and "REPLY" in stuck.deadlocks[0].message
