"""``mutexlab test`` on a node written with asyncio (tests/outsiders/central_asyncio.py: a central
coordinator, importing nothing of mutexlab), found broken, then fixed the way people fix a
script: in place, under the same command. The replay of its counterexample is then a replay on
another program — the finding gone, never the program's nondeterminism."""

from __future__ import annotations

import json
import shutil
import sys

from outsider_edits import OUTSIDERS, said

NODE = OUTSIDERS / "central_asyncio.py"


def test_the_asyncio_node_passes_every_strategy(cli, tmp_path):
    node = f"{sys.executable} {NODE}"
    for strategy, size in (("random", "3"), ("pct", "3"), ("systematic", "2")):
        done = cli("test", "mutex", "--node", node, "--nodes", size, "--strategy", strategy, "--runs", "30")
        assert done.returncode == 0 and "PASS" in done.stdout, said(done)


def test_a_node_fixed_in_place_is_another_program_on_replay(cli, tmp_path):
    """Before: the replay compared the fixed script's answers with the broken one's (the command
    was the same) and called the fix ``nondeterministic`` (exit 1): "it reads the clock, an
    unseeded random or its own timing"."""
    script = tmp_path / "coordinator.py"
    script.write_text(NODE.read_text().replace("GRANT_ALWAYS = False", "GRANT_ALWAYS = True"))
    node, found = f"{sys.executable} {script}", tmp_path / "found.json"
    done = cli("test", "mutex", "--node", node, "--nodes", "3", "--counterexample", found)
    assert done.returncode == 1 and "FINDING [violation]" in done.stdout, said(done)
    assert json.loads(found.read_text())["files"], found.read_text()
    done = cli("replay", found, "--node", node)  # unchanged: it reproduces
    assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)
    shutil.copy(NODE, script)  # the fix, made in place
    done = cli("replay", found, "--node", node)
    assert "nondeterministic" not in done.stdout, said(done)
    assert done.returncode == 3 and "the recorded finding [violation] did NOT reproduce" in done.stdout, said(
        done
    )


def test_a_nan_in_a_nodes_line_is_garbage_not_a_trace_report_refuses(cli, tmp_path):
    """Python's ``json.dumps(float("nan"))`` writes ``NaN``, which is no JSON. Before: the run
    passed and its trace held the NaN: ``verify`` read it, ``report`` refused it (exit 2)."""
    script = tmp_path / "nan_node.py"
    script.write_text(
        NODE.read_text().replace(
            'out({"type": "send", "to": 1, "body": {"type": "REQUEST"}})',
            'out({"type": "send", "to": 1, "body": {"type": "REQUEST", "priority": float("nan")}})',
        )
    )
    done = cli("test", "mutex", "--node", f"{sys.executable} {script}", "--nodes", "3", "--runs", "5")
    assert done.returncode == 1 and "FINDING [garbage]" in done.stdout, said(done)
    assert "a line that is not JSON: NaN is not a JSON number" in done.stdout, said(done)
