"""The exhaustive explorer: it finds every reachable world, and it catches what is wrong."""

from conftest import broken

from mutexlab.protocols.registry import make_setup
from mutexlab.sim.explore import explore

EAGER = broken("ricart_agrawala_eager")  # replies to every request at once, even while holding the section
FORGETFUL = broken("ricart_agrawala_forgetful")  # never answers the requests it deferred


def test_ricart_agrawala_two_nodes_is_safe_and_always_ends():
    result = explore(lambda: make_setup("ricart-agrawala", 2, {"requests": 1}))
    assert result.ok, result.summary()
    assert result.states > 10 and result.finals >= 1


def test_explorer_finds_the_mutual_exclusion_violation_of_an_eager_node():
    result = explore(lambda: EAGER.make_setup(2, {"requests": 1}))
    assert result.violations, result.summary()
    finding = result.violations[0]
    assert "cs (capacity 1)" in finding.message
    assert finding.path and finding.path[-1].startswith("deliver REPLY")


def test_explorer_finds_the_deadlock_of_a_node_that_never_replies():
    result = explore(lambda: FORGETFUL.make_setup(2, {"requests": 1}))
    assert result.deadlocks and not result.violations
    # in words, by name (once a dict of pids: "{'node-2': {'REPLY': [1]}}")
    said = result.deadlocks[0].message
    assert said.startswith("nothing can move; waiting: node-") and "REPLY from node-" in said, said
    assert "{" not in said
