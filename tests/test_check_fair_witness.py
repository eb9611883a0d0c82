"""The liveness witness is weakly fair by docs/check.md's definition: every step enabled in all
the worlds its loop passes (a link's next delivery, a pending local decision) is taken in the
loop. Raymond serving its queue newest first (a LIFO queue) starves a node under an endless
workload; the loop printed and written for it must not leave a step waiting throughout, and the
replay must not call an unfair loop starvation."""

from __future__ import annotations

import json

import pytest

from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.check.properties import unfair_steps
from mutexlab.cli import main

LIFO = "mutexlab_broken.raymond_newest_first"


def witness(nodes: int, search: str):
    result, model = run_check(CheckConfig(LIFO, nodes, {"requests": 0}, endless=True, search=search))
    (finding,) = result.findings
    assert finding.kind == "liveness" and finding.cycle, finding
    world, _ = model.initial()
    for label in finding.path:
        world, _, _ = model.step(world, label)
    return model, world, finding


@pytest.mark.parametrize("nodes, search", [(3, "dfs"), (4, "dfs"), (4, "bfs"), (5, "bfs")])
def test_the_lasso_of_a_lifo_raymond_is_weakly_fair(nodes, search):
    # before the fix: N=4 depth-first printed a 12-step loop in which node-4's pending request
    # was enabled throughout and never taken (N=5 breadth-first: node-3's)
    model, start, finding = witness(nodes, search)
    assert unfair_steps(model, start, finding.cycle) == set()
    end = start
    for label in finding.cycle:
        end, _, _ = model.step(end, label)
    assert end == start  # a loop of the (normalised) state graph


def test_unfair_steps_names_a_step_left_waiting_throughout():
    """The fairness test itself can fail: the witness's loop taken twice is still fair; its
    first step alone leaves every other step enabled in its world untaken."""
    model, start, finding = witness(4, "dfs")
    assert unfair_steps(model, start, finding.cycle + finding.cycle) == set()
    first = model.fairness_label(finding.cycle[0])
    others = {model.fairness_label(lb) for lb in model.steps(start)} - {first}
    assert others and unfair_steps(model, start, finding.cycle[:1]) == others


def test_replay_does_not_call_a_loop_with_a_request_in_flight_throughout_starvation(tmp_path, capsys):
    """The issue's witness: a loop that returns to its world while a REQUEST stays in flight,
    undelivered, throughout. The lasso written for 3 nodes, played with a 4th whose REQUEST
    (sent first) is never delivered: the loop still returns to its start, and today's replay
    called it starvation of node-1 and node-4."""
    written = tmp_path / "starve.json"
    assert main(["check", "mutex", "-a", LIFO, "-N", "3", "--endless", "--counterexample", str(written)]) == 1
    capsys.readouterr()
    scenario = json.loads(written.read_text())
    assert main(["replay", str(written), "--json"]) == 1
    fair = json.loads(capsys.readouterr().out)["loop"]
    assert fair["closes"] and fair["waiting"] and fair["unfair"] == []
    scenario["processes"] = 4
    scenario["steps"].insert(0, {"op": "request", "pid": 4})
    scenario["loop"] += 1
    unfair = tmp_path / "unfair.json"
    unfair.write_text(json.dumps(scenario))
    assert main(["replay", str(unfair), "--json"]) != 1
    loop = json.loads(capsys.readouterr().out)["loop"]
    assert loop["closes"] and "node-4" in loop["waiting"]
    assert loop["unfair"] == ["deliver node-4→node-2"], loop
    main(["replay", str(unfair)])
    out = capsys.readouterr().out
    assert "not weakly fair: deliver node-4→node-2" in out and "LIVENESS" not in out
