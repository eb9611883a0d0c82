"""The exhaustive explorer: it finds every reachable world, and it catches what is wrong."""

from mutexlab.protocols import ricart_agrawala as ra
from mutexlab.protocols.registry import make_setup
from mutexlab.sim.explore import explore


class EagerNode(ra.RicartAgrawalaNode):
    """Broken: replies to every request at once, even while holding the critical section."""

    def on_message(self, msg):
        if msg.type == "REQUEST":
            self.clock.receive(msg.ts)
            return [self._reply(msg.sender)]
        return super().on_message(msg)


class SilentNode(ra.RicartAgrawalaNode):
    """Broken: defers every request forever."""

    def _release(self):
        self.deferred = []
        return []


def _setup_with(node_class, n, requests):
    def factory():
        setup = make_setup("ricart-agrawala", n, {"requests": requests})
        setup.protocols = {p: node_class(p, n, requests) for p in setup.protocols}
        return setup

    return factory


def test_ricart_agrawala_two_nodes_is_safe_and_always_ends():
    result = explore(lambda: make_setup("ricart-agrawala", 2, {"requests": 1}))
    assert result.ok, result.summary()
    assert result.states > 10 and result.finals >= 1


def test_explorer_finds_the_mutual_exclusion_violation_of_an_eager_node():
    result = explore(_setup_with(EagerNode, 2, 1))
    assert result.violations, result.summary()
    finding = result.violations[0]
    assert "cs (capacity 1)" in finding.message
    assert finding.path and finding.path[-1].startswith("deliver REPLY")


def test_explorer_finds_the_deadlock_of_a_node_that_never_replies():
    result = explore(_setup_with(SilentNode, 2, 1))
    assert result.deadlocks and not result.violations
    assert "REPLY" in result.deadlocks[0].message
