"""Raymond: the tree option, the state table, a scenario, random trees and schedules, an
exhaustive check, and a broken variant the audit must catch."""

import random
from pathlib import Path

import pytest
from conftest import audited, random_classic_runs
from hypothesis import strategies as st
from mutexlab_broken.raymond_variants import Impatient

from mutexlab.audit import verify_events
from mutexlab.protocol import Enter, Send
from mutexlab.protocols import raymond, trees
from mutexlab.protocols.registry import make_setup
from mutexlab.setups import ConfigError
from mutexlab.sim import replay_scenario
from mutexlab.sim.explore import explore

SCENARIO = Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "raymond-tree.json"


# -- the tree ------------------------------------------------------------------------------------
def test_default_tree_is_heap_shaped_with_the_token_at_the_root():
    setup = make_setup("raymond", 7, {})
    assert {p: n.holder for p, n in setup.protocols.items()} == {1: 1, 2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 3}
    assert setup.params["parents"] == {"2": 1, "3": 1, "4": 2, "5": 2, "6": 3, "7": 3}


def test_holder_pointers_lead_to_a_token_away_from_the_root():
    setup = make_setup("raymond", 5, {"parents": {"2": 1, "3": 1, "4": 2, "5": 2}, "token_holder": 5})
    # 5 holds it; 2 points down to 5, 1 to 2, 3 to 1, 4 to 2.
    assert {p: n.holder for p, n in setup.protocols.items()} == {1: 2, 2: 5, 3: 1, 4: 2, 5: 5}


@pytest.mark.parametrize(
    "parents, words",
    [
        ({"1": 2, "2": 1, "3": 1}, "exactly one root"),  # no root: 1 ↔ 2 and 3 → 1
        ({"2": 3, "3": 2}, "cycle 2 → 3 → 2"),  # 1 is the root, 2 ↔ 3 detached
        ({"2": 1}, r"found 2: \[1, 3\]"),  # two roots
        ({"2": 9, "3": 1}, "parent of 2 must be a pid in 1..3"),
        ({"4": 1}, "outside 1..3"),
        ({"2": 2, "3": 1}, "cannot be its own parent"),
        ({"x": 1}, "'x' is not a pid"),
        ([1, 1], "must map each pid"),
    ],
)
def test_anything_but_a_tree_is_refused(parents, words):
    with pytest.raises(ConfigError, match=words):
        make_setup("raymond", 3, {"parents": parents})


def test_bad_token_holder_and_unknown_options_are_refused():
    with pytest.raises(ConfigError, match="token_holder"):
        make_setup("raymond", 3, {"token_holder": 4})
    with pytest.raises(ConfigError, match="does not take option"):
        make_setup("raymond", 3, {"quorums": {}})


def test_null_parent_marks_the_root():
    setup = make_setup("raymond", 3, {"parents": {"1": 2, "2": None, "3": 2}})
    assert setup.params["token_holder"] == 2


# -- the state table -----------------------------------------------------------------------------
def _types(effects):
    return [(e.to, e.msg.type) for e in effects if isinstance(e, Send)]


def test_requests_are_forwarded_once_toward_the_holder():
    node = raymond.RaymondNode(2, 5, holder=1)
    assert _types(node.on_local("request")) == [(1, "REQUEST")] and node.asked
    assert _types(node.on_message(raymond.Request(sender=4, ts=1))) == []  # already asked
    assert list(node.queue) == [2, 4]
    effects = node.on_message(raymond.Token(sender=1, ts=5))  # head is itself
    assert any(isinstance(e, Enter) for e in effects) and node.holder == 2 and list(node.queue) == [4]
    assert _types(node.on_local("exit")) == [(4, "TOKEN")] and node.holder == 4


def test_token_passes_through_and_asks_back_when_others_wait():
    node = raymond.RaymondNode(2, 5, holder=1)
    node.on_message(raymond.Request(sender=4, ts=1))
    node.on_message(raymond.Request(sender=5, ts=1))
    effects = node.on_message(raymond.Token(sender=1, ts=3))
    assert _types(effects) == [(4, "TOKEN"), (4, "REQUEST")]
    assert node.holder == 4 and node.asked and list(node.queue) == [5]


def test_idle_holder_gives_the_token_and_a_busy_one_queues():
    idle = raymond.RaymondNode(1, 3, holder=1)
    assert _types(idle.on_message(raymond.Request(sender=2, ts=1))) == [(2, "TOKEN")] and idle.holder == 2
    busy = raymond.RaymondNode(1, 3, holder=1)
    busy.on_local("request")
    assert busy.state == "HELD"
    assert _types(busy.on_message(raymond.Request(sender=3, ts=1))) == [] and list(busy.queue) == [3]


def test_scenario_with_the_token_at_a_leaf():
    result = replay_scenario(SCENARIO)
    assert result.entered == ["node-3", "node-4", "node-5"]
    nodes = result.protocols
    assert nodes[5].holder == 5 and all(not n.queue and not n.asked for n in nodes.values())
    # The pointers again form a tree oriented toward node-5.
    assert {p: n.holder for p, n in nodes.items()} == {1: 2, 2: 5, 3: 1, 4: 2, 5: 5}
    assert verify_events(result.events).ok


# -- random trees and schedules ------------------------------------------------------------------
def random_tree(n: int, rng: random.Random) -> dict[str, int]:
    labels = list(range(1, n + 1))
    rng.shuffle(labels)
    return {str(labels[i]): labels[rng.randrange(i)] for i in range(1, n)}


def _diameter(parents: dict[str, int], n: int) -> int:
    holder = trees.holders_toward({int(c): p for c, p in parents.items()}, 1)

    def depth(p):
        d = 0
        while holder[p] != p:
            p, d = holder[p], d + 1
        return d

    far = max(range(1, n + 1), key=depth)
    holder = trees.holders_toward({int(c): p for c, p in parents.items()}, far)
    return max(depth(p) for p in range(1, n + 1))


@random_classic_runs(think=(0.1, 1.0, 5.0), shape=st.sampled_from(["default", "random"]), data=st.data())
def test_random_runs_are_safe_and_serve_every_request(n, requests, seed, delay, think, cs, shape, data):
    options = {"requests": requests, "token_holder": data.draw(st.integers(1, n))}
    if shape == "random":
        options["parents"] = random_tree(n, random.Random(seed))
    setup = make_setup("raymond", n, options)
    result, verdict = audited(setup, seed, delay=delay, dwell={"think": think, "cs": cs})
    assert verdict.ok, verdict.render()
    assert result.ok, result.stalled
    assert result.entries == {"cs": n * requests}
    # Each entry moves the token at most a diameter and its request as far: ≤ 2·D messages.
    assert result.total_messages <= 2 * _diameter(setup.params["parents"], n) * n * requests
    assert sum(node.holder == node.pid for node in result.protocols.values()) == 1


# -- broken variant ------------------------------------------------------------------------------
def test_audit_catches_a_node_that_enters_without_the_token():
    def broken(n, requests):
        setup = make_setup("raymond", n, {"requests": requests})
        holders = {p: node.holder for p, node in setup.protocols.items()}
        setup.protocols = {
            p: (Impatient if p == n else raymond.RaymondNode)(p, n, holders[p], requests)
            for p in range(1, n + 1)
        }
        return setup

    assert [seed for seed in range(20) if not audited(broken(4, 3), seed).verdict.ok]
    found = explore(lambda: broken(3, 1))
    assert found.violations and "cs (capacity 1)" in found.violations[0].message
    for seed in range(20):
        assert audited(make_setup("raymond", 4, {"requests": 3}), seed).verdict.ok


# -- exhaustive ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "label, options",
    [
        ("star rooted at 1", {}),
        ("chain 1-2-3, token at the leaf 3", {"parents": {"1": 2, "3": 2}, "token_holder": 3}),
    ],
)
def test_exhaustive_n3_two_requests_each(label, options):
    found = explore(lambda: make_setup("raymond", 3, dict(options, requests=2)))
    assert found.ok, found.summary()
    assert found.finals > 1
    print(f"raymond exhaustive N=3, 2 requests each, {label}:", found.summary())
