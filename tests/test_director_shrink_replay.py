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
