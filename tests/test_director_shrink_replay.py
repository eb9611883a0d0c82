"""A shrunk schedule is shown only when it replays: else the finding's schedule as found."""

from __future__ import annotations

import json
import sys

from mutexlab.director import runner
from mutexlab.director.search import Outcome

# Every node enters as soon as asked: two nodes inside at once, a violation any schedule shows.
GREEDY = """import json, sys
for line in sys.stdin:
    kind = json.loads(line)['type']
    if kind == 'request':
        print(json.dumps({'type': 'enter', 'resource': 'cs'}))
    elif kind == 'release':
        print(json.dumps({'type': 'exit', 'resource': 'cs'}))
    print(json.dumps({'type': 'done'}), flush=True)
"""


def _test(cli, tmp_path, *more):
    program = tmp_path / "greedy.py"
    program.write_text(GREEDY)
    scenario = tmp_path / "ce.json"
    ran = cli(
        "test",
        "mutex",
        "--node",
        f"{sys.executable} {program}",
        "-N",
        "3",
        "--requests",
        "2",
        "--counterexample",
        scenario,
        *more,
    )
    return ran, json.loads(scenario.read_text())


def test_a_shrunk_schedule_that_replays_is_shown(cli, tmp_path):
    ran, written = _test(cli, tmp_path, "--json")
    outcome = json.loads(ran.stdout)
    assert ran.returncode == 1 and "fallback" not in outcome["shrunk"]
    assert outcome["shrunk"]["steps"][1] < outcome["shrunk"]["steps"][0]  # it did shrink
    assert len(written["steps"]) == outcome["shrunk"]["steps"][1]


def test_a_shrunk_schedule_that_does_not_replay_falls_back_to_the_one_found(cli, tmp_path, monkeypatch):
    played = runner.play

    def replayed_differently(settings, pool, chooser, expected=None):  # only the exact re-play
        outcome = played(settings, pool, chooser, expected)
        return Outcome(None, outcome.steps, outcome.digests, outcome.events, outcome.trail, True)

    monkeypatch.setattr(runner, "play", replayed_differently)
    ran, written = _test(cli, tmp_path, "--json")
    outcome = json.loads(ran.stdout)
    assert ran.returncode == 1 and outcome["finding"]["rule"] == "violation"
    found = outcome["shrunk"]["steps"][0]
    assert outcome["shrunk"]["steps"][1] == found and len(written["steps"]) == found == len(
        outcome["schedule"]
    )
    assert written["nodes"] == 3 and "unshrunk" in outcome["shrunk"]["fallback"]
    text, _ = _test(cli, tmp_path)
    assert "gave no finding when played again" in text.stdout and "shrunk from" not in text.stdout


def test_an_interrupt_while_shrinking_keeps_the_finding_as_found(cli, tmp_path, monkeypatch):
    """Ctrl-C during the shrinking lost the finding (only "interrupted" was printed): the finding
    was found and stands, so it is shown with its schedule as found, and that schedule is written."""

    def interrupted(self, found):
        raise KeyboardInterrupt

    monkeypatch.setattr(runner.Shrinker, "shrink", interrupted)
    ran, written = _test(cli, tmp_path, "--json")
    outcome = json.loads(ran.stdout)
    assert ran.returncode == 1 and outcome["finding"]["rule"] == "violation", ran.stdout + ran.stderr
    assert "interrupted while shrinking" in outcome["shrunk"]["fallback"]
    assert len(written["steps"]) == outcome["shrunk"]["steps"][0] == len(outcome["schedule"])


# A central lock (node 1 keeps it) whose node 2 forgets to ask once it has heard all ten of node
# 1's HELLOs before its request: a deadlock. Node 1 greets its peers from the highest id down, so
# on three nodes its HELLOs to node 2 are node-1#11..#20 and on two nodes node-1#1..#10. A random
# run on two nodes delivers all ten before node 2's request about once in 60,000 runs.
TRAP = """import json, sys
me = hellos = 0; holder = None; queue = []
def out(o): print(json.dumps(o))
def grant(to):
    global holder
    holder = to
    if to == 1: out({'type': 'enter', 'resource': 'cs'})
    else: out({'type': 'send', 'to': to, 'body': {'type': 'GRANT'}})
def free():
    global holder
    holder = None
    if queue: grant(queue.pop(0))
def ask(who):
    if holder is None: grant(who)
    else: queue.append(who)
for line in sys.stdin:
    m = json.loads(line)
    kind = m['type']
    if kind == 'init':
        me, hellos, holder, queue = m['id'], 0, None, []
        if me == 1:
            for peer in sorted(m['peers'], reverse=True):
                for _ in range(10): out({'type': 'send', 'to': peer, 'body': {'type': 'HELLO'}})
    elif kind == 'request':
        if me == 1: ask(1)
        elif not (me == 2 and hellos == 10): out({'type': 'send', 'to': 1, 'body': {'type': 'ASK'}})
    elif kind == 'release':
        out({'type': 'exit', 'resource': 'cs'})
        if me == 1: free()
        else: out({'type': 'send', 'to': 1, 'body': {'type': 'FREE'}})
    else:
        body = m['body']['type']
        if body == 'HELLO': hellos += 1
        elif body == 'GRANT': out({'type': 'enter', 'resource': 'cs'})
        elif body == 'ASK': ask(m['from'])
        else: free()
    print(json.dumps({'type': 'done', 'reinit': True} if kind == 'init' else {'type': 'done'}), flush=True)
"""


def test_a_node_is_dropped_though_a_sender_numbers_its_messages_anew(cli, tmp_path):
    """Without node 3, node 1's HELLOs to node 2 are numbered from 1, not 11: the schedule's own
    steps (node-1#11→2 …) fit nothing, and a random search on two nodes hardly ever meets the
    trap; taken by their link (node 1's next message to node 2) they show the deadlock on two."""
    program = tmp_path / "trap.py"
    program.write_text(TRAP)
    node = f"{sys.executable} {program}"
    scenario = tmp_path / "ce.json"
    ran = cli("test", "mutex", "--node", node, "--strategy", "systematic", "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout
    assert "on 3 nodes to" in ran.stdout and "steps on 2 nodes" in ran.stdout, ran.stdout
    assert "deliver node-1#10→2" in ran.stdout and "#11" not in ran.stdout, ran.stdout
    replayed = cli("replay", scenario, "--node", node)
    assert replayed.returncode == 1 and "the recorded finding reproduced" in replayed.stdout, replayed.stdout
