"""The shrinker tries every size from one node up, and at each size the sets of nodes the
finding's steps use (renumbered 1..n), not only the lowest ids: a finding between nodes 2 and 3
of three is shown on two nodes, and a node's own fault (garbage, a crash) on fewer nodes when the
same node, renumbered, shows it."""

from __future__ import annotations

from mutexlab.director import shrink
from mutexlab.director.judge import Finding
from mutexlab.director.problem import make_problem
from mutexlab.director.search import Outcome, Settings


def fake_play(shows):
    """``play`` on no program: the chooser is offered every step it asks for (``Lenient``'s
    queue), and the run has a finding of rule ``violation`` when ``shows(nodes, steps)``."""

    def play(settings, pool, chooser, expected=None, lingers=None):
        steps = []
        if isinstance(chooser, shrink.Lenient):
            while chooser.queue:
                step = chooser(len(steps), [chooser.queue[0]])
                if step is not None:
                    steps.append(step)
        finding = shows(settings.problem.nodes, steps)
        return Outcome(finding, steps, ["d"] * len(steps), [], [])

    return play


def shrinker(nodes: int, rule: str) -> shrink.Shrinker:
    settings = Settings(make_problem("mutex", nodes, 1, {}, 0), ["prog"])
    return shrink.Shrinker(settings, None, lambda n: make_problem("mutex", n, 1, {}, 0), rule)  # type: ignore[arg-type]


def test_a_finding_between_nodes_2_and_3_of_3_is_shown_on_2_nodes(monkeypatch):
    # the finding: both asked, and the first's REQUEST delivered to the second (node-1#1 on 2 nodes)
    def shows(nodes, steps):
        a, b = nodes - 1, nodes
        wanted = {("request", a, ""), ("request", b, ""), ("deliver", b, f"node-{a}#1")}
        return Finding("violation", "two inside", step=len(steps)) if wanted <= set(steps) else None

    monkeypatch.setattr(shrink, "play", fake_play(shows))
    steps = [("request", 1, ""), ("request", 2, ""), ("request", 3, ""), ("deliver", 3, "node-2#1")]
    found = Outcome(Finding("violation", "two inside"), steps, [], [], [])
    settings, best = shrinker(3, "violation").shrink(found)
    assert settings.problem.nodes == 2  # before: 3 (only nodes 1..2's steps were tried on two nodes)
    assert best.steps == [("request", 1, ""), ("request", 2, ""), ("deliver", 2, "node-1#1")]


def test_a_node_fault_is_tried_on_fewer_nodes_only_as_the_same_node(monkeypatch):
    # node 3's garbage needs one message from node 1; a fault of another node does not count
    def shows(nodes, steps):
        if ("deliver", nodes, "node-1#1") in steps:
            return Finding("garbage", "not JSON", node=nodes, step=len(steps))
        if ("deliver", 1, "node-2#1") in steps:
            return Finding("garbage", "not JSON", node=1, step=len(steps))
        return None

    monkeypatch.setattr(shrink, "play", fake_play(shows))
    steps = [("request", 1, ""), ("request", 2, ""), ("deliver", 1, "node-2#1"), ("deliver", 3, "node-1#1")]
    found = Outcome(Finding("garbage", "not JSON", node=3), steps, [], [], [])
    settings, best = shrinker(3, "garbage").shrink(found)
    assert settings.problem.nodes == 2 and best.finding is not None and best.finding.node == 2
    assert best.steps == [("deliver", 2, "node-1#1")]


def test_a_node_fault_in_other_words_on_fewer_nodes_is_another_fault(monkeypatch):
    # node 1 sends to node 2, then writes a bad line; alone, its send to 2 is the garbage: not it
    def shows(nodes, steps):
        if ("request", 1, "") not in steps:
            return None
        if nodes == 1:
            return Finding("garbage", "node 1 wrote a send to 2, not its peer", node=1, step=1)
        return Finding("garbage", "node 1 wrote a line that is not JSON", node=1, step=1)

    monkeypatch.setattr(shrink, "play", fake_play(shows))
    found = Outcome(
        Finding("garbage", "node 1 wrote a line that is not JSON", node=1), [("request", 1, "")], [], [], []
    )
    settings, best = shrinker(3, "garbage").shrink(found)
    assert settings.problem.nodes == 2 and best.finding is not None
    assert best.finding.message == "node 1 wrote a line that is not JSON"


def test_a_crash_with_another_exit_status_on_fewer_nodes_is_another_fault(monkeypatch):
    # node 1 exits with status 7 (its own check) on three nodes; on fewer it exits with status 1
    def shows(nodes, steps):
        if ("request", 1, "") not in steps:
            return None
        status = 7 if nodes == 3 else 1
        return Finding("crashed", f"node-1 exited with status {status}", node=1, step=1)

    monkeypatch.setattr(shrink, "play", fake_play(shows))
    found = Outcome(
        Finding("crashed", "node-1 exited with status 7", node=1), [("request", 1, "")], [], [], []
    )
    settings, best = shrinker(3, "crashed").shrink(found)
    assert settings.problem.nodes == 3 and best.finding is not None  # before: shrunk to 1 node, status 1
    assert best.finding.message == "node-1 exited with status 7"


def fake_play_searching(shows, searched):
    """``fake_play``, and a random run (the shrinker's search on fewer nodes: no ``Lenient``)
    that takes ``searched(nodes)``'s steps."""
    lenient = fake_play(shows)

    def play(settings, pool, chooser, expected=None, lingers=None):
        if isinstance(chooser, shrink.Lenient):
            return lenient(settings, pool, chooser, expected)
        steps = searched(settings.problem.nodes)
        return Outcome(shows(settings.problem.nodes, steps), steps, ["d"] * len(steps), [], [])

    return play


SEGV = "node {} was killed by signal 11 (SIGSEGV) while handling recv"


def test_a_crash_no_renumbered_schedule_shows_is_found_on_fewer_nodes_by_a_search(monkeypatch):
    # node 3 crashes on node 1's fifth message; on two nodes the messages are numbered otherwise,
    # so only a random run shows it there (a worker crashing in the same words)
    def shows(nodes, steps):
        if nodes == 3 and ("deliver", 3, "node-1#5") in steps:
            return Finding("crashed", SEGV.format(3), node=3, step=len(steps))
        if nodes == 2 and ("deliver", 1, "node-2#2") in steps:
            return Finding("crashed", SEGV.format(1), node=1, step=len(steps))
        return None

    monkeypatch.setattr(
        shrink, "play", fake_play_searching(shows, lambda n: [("request", 2, ""), ("deliver", 1, "node-2#2")])
    )
    steps = [("request", 1, ""), ("request", 3, ""), ("deliver", 3, "node-1#5")]
    found = Outcome(Finding("crashed", SEGV.format(3), node=3), steps, [], [], [])
    shrinker_ = shrinker(3, "crashed")
    settings, best = shrinker_.shrink(found)
    assert settings.problem.nodes == 2  # before: 3 (a node's own fault was never searched for)
    assert best.steps == [("deliver", 1, "node-2#2")] and best.finding is not None
    assert best.finding.message == SEGV.format(1)
    assert shrinker_.not_shown == [1] and not shrinker_.cut


def test_a_search_on_fewer_nodes_counts_only_the_same_words_of_the_same_role(monkeypatch):
    # on fewer nodes a random run shows a crash of another signal, or the mayor's: another fault
    def shows(nodes, steps):
        if nodes == 3 and ("deliver", 3, "node-1#5") in steps:
            return Finding("crashed", SEGV.format(3), node=3, step=len(steps))
        if nodes == 2 and steps:
            return Finding("crashed", "node 1 was killed by signal 6 (SIGABRT) while handling recv", node=1)
        if nodes == 1 and steps:
            return Finding("crashed", SEGV.format(0), node=0)
        return None

    monkeypatch.setattr(shrink, "play", fake_play_searching(shows, lambda n: [("request", 1, "")]))
    steps = [("request", 1, ""), ("request", 3, ""), ("deliver", 3, "node-1#5")]
    found = Outcome(Finding("crashed", SEGV.format(3), node=3), steps, [], [], [])
    shrinker_ = shrinker(3, "crashed")
    settings, best = shrinker_.shrink(found)
    assert settings.problem.nodes == 3 and best.finding is not None
    assert best.finding.message == SEGV.format(3) and best.steps == [("deliver", 3, "node-1#5")]
    assert shrinker_.not_shown == [1, 2]  # said: not shown on 1 or 2 nodes


def test_shrinking_steps_keeps_a_crash_in_its_own_words(monkeypatch):
    # without its first step node 1 exits 1 instead of 7 (another fault): both steps stay
    def shows(nodes, steps):
        if ("request", 2, "") not in steps:
            return None
        status = 7 if ("request", 1, "") in steps else 1
        return Finding("crashed", f"node 2 exited with status {status} while handling request", node=2)

    monkeypatch.setattr(shrink, "play", fake_play(shows))
    steps = [("request", 1, ""), ("request", 2, "")]
    found = Outcome(
        Finding("crashed", "node 2 exited with status 7 while handling request", node=2), steps, [], [], []
    )
    settings, best = shrinker(2, "crashed").shrink(found)
    assert best.finding is not None and "status 7" in best.finding.message  # before: status 1
    assert best.steps == steps


def test_a_node_that_ended_unasked_is_shrunk_with_the_end_wait(monkeypatch):
    # the search saw a kept node's end without waiting (it ended quickly); the shrinking's runs
    # must wait for it, as a replay does, or whether it shows is a race
    from mutexlab.director import runner
    from mutexlab.director.search import END_GRACE, Searched

    message = "node 1 exited with status 0 after answering release, with nothing asked of it: …"
    found = Outcome(
        Finding("crashed", message, node=1, step=2), [("request", 1, ""), ("release", 1, "")], [], [], []
    )
    seen = {}

    class Shrinker:
        def __init__(self, settings, *args, **kwargs):
            seen["end_grace"] = settings.end_grace
            self.settings, self.tests, self.not_shown, self.cut = settings, 1, [], False

        def shrink(self, outcome):
            return self.settings, outcome

    monkeypatch.setattr(runner, "search", lambda *a, **k: Searched(1, 2, 0.1, False, found, found, 2))
    monkeypatch.setattr(runner, "Shrinker", Shrinker)
    monkeypatch.setattr(runner, "play", lambda settings, pool, chooser, expected=None: found)
    settings = Settings(make_problem("mutex", 2, 1, {}, 0), ["prog"])
    tested = runner.test(settings, None, 1, None, 5.0, {})
    assert seen["end_grace"] == END_GRACE  # before: 0.0, the search's
    assert tested.finding is not None and tested.finding.message == message
