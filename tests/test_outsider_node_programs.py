"""Nodes written outside mutexlab from docs/test-any-program.md alone.

A dining philosopher in Tcl (tests/outsiders/philosopher.tcl: Chandy–Misra forks, lines read
with ``regexp``): it passes every strategy, and its twin that forgets a fork it owes deadlocks,
found, shrunk and replayed.

A node that exits once it has released (``sys.exit`` after its last answer) though it promised
``reinit``: before, it showed only at the next run's ``init`` — a finding of no step ("schedule:
none"), whose counterexample did not replay (exit 3), and a shrinker that took a 0-step candidate
for it. Now the run it ended in is the finding, and it replays.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

ROOT = OUTSIDERS.parent.parent
TCL = OUTSIDERS / "philosopher.tcl"


@pytest.fixture
def tclsh() -> str:
    path = shutil.which("tclsh")
    if path is None:
        missing("tclsh is needed (Debian's tcl)")
    return path


def test_the_tcl_philosopher_passes_every_strategy(cli, tclsh):
    node = f"{tclsh} {TCL}"
    done = cli("test", "philosophers", "--node", node, "-N", "2", "--strategy", "systematic")
    assert done.returncode == 0, said(done)
    assert "PASS — searched exhaustively: 18 schedules" in done.stdout, said(done)
    done = cli("test", "philosophers", "--node", node, "-R", "2", "--strategy", "pct", "--runs", "20")
    assert done.returncode == 0 and "PASS — no finding in pct: 20 runs" in done.stdout, said(done)


def test_the_tcl_philosopher_that_keeps_a_fork_deadlocks_and_replays(cli, tclsh, tmp_path):
    node, found = f"{tclsh} {TCL} -broken", tmp_path / "phil.json"
    done = cli("test", "philosophers", "--node", node, "-N", "2", "-R", "2", "--counterexample", found)
    assert done.returncode == 1, said(done)
    assert "FINDING [deadlock]" in done.stdout and "still waits" in done.stdout, said(done)
    again = cli("replay", found, "--node", node)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)
    fixed = cli("replay", found, "--node", f"{tclsh} {TCL}")
    assert fixed.returncode == 3 and "did NOT reproduce" in fixed.stdout, said(fixed)


def _leaver(tmp_path):
    """examples/nodes/ricart_agrawala.py ending once it has answered its release."""
    source = (ROOT / "examples" / "nodes" / "ricart_agrawala.py").read_text()
    done = '            out({"type": "done"})\n'
    assert done in source
    path = tmp_path / "ra_leaver.py"
    path.write_text(
        source.replace(
            done,
            done
            + '            if line["type"] == "release":\n                sys.stdout.flush(); sys.exit(0)\n',
        )
    )
    return f"python3 {path}"


def test_a_node_that_ends_after_its_release_is_that_runs_finding_and_replays(cli, tmp_path):
    node, found = _leaver(tmp_path), tmp_path / "left.json"
    done = cli("test", "mutex", "--node", node, "--runs", "10", "--no-shrink", "--counterexample", found)
    assert done.returncode == 1 and "FINDING [crashed] (step " in done.stdout, said(done)
    assert "after answering release, with nothing asked of it" in done.stdout, said(done)
    assert "schedule: none" not in done.stdout, said(done)
    again = cli("replay", found, "--node", node)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)


def test_a_crash_found_without_waiting_for_the_end_still_replays(cli, tmp_path):
    """A search may see a node's end at its run's end without the wait (the node was quick), and
    write no end_grace: the replay of a recorded crash on the same program waits for it anyway
    (and plays it again if it did not show), so it does not depend on how fast the node ended."""
    node, found = _leaver(tmp_path), tmp_path / "left.json"
    done = cli("test", "mutex", "--node", node, "--runs", "10", "--no-shrink", "--counterexample", found)
    assert done.returncode == 1 and "FINDING [crashed] (step " in done.stdout, said(done)
    scenario = json.loads(found.read_text())
    scenario.pop("end_grace", None)
    unwaited = tmp_path / "unwaited.json"
    unwaited.write_text(json.dumps(scenario))
    again = cli("replay", unwaited, "--node", node)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)


def test_the_shrinker_takes_no_candidate_for_the_run_before(cli, tmp_path):
    """Two nodes: the first finding is node 1 reached after it ended (while handling recv); a shrink
    candidate after which node 1 had ended made the next one's init fail, a 0-step "reproduction"
    that did not confirm: the schedule was shown unshrunk."""
    node = _leaver(tmp_path)
    done = cli("test", "mutex", "--node", node, "-N", "2", "--runs", "10")
    assert done.returncode == 1 and "FINDING [crashed] (step " in done.stdout, said(done)
    assert "unshrunk" not in done.stdout and "schedule: request 1," in done.stdout, said(done)


def test_a_reinit_that_is_no_boolean_is_garbage_not_a_silent_restart(cli, tmp_path):
    """``"reinit": "yes"`` (or 1) was taken as no promise, silently: every run started the node
    anew, several times slower, and the program's author never learnt why."""
    source = (ROOT / "examples" / "nodes" / "ricart_agrawala.py").read_text()
    assert '"reinit": True' in source
    path = tmp_path / "ra_yes.py"
    path.write_text(source.replace('"reinit": True', '"reinit": "yes"'))
    done = cli("test", "mutex", "--node", f"python3 {path}", "-N", "2", "--runs", "3")
    assert done.returncode == 1 and "FINDING [garbage]" in done.stdout, said(done)
    assert 'a done whose reinit is "yes": it is true or false' in done.stdout, said(done)


def test_pct_reorders_links_when_asked(cli, tmp_path):
    node, found = f"python3 {OUTSIDERS / 'lamport_fifo.py'}", tmp_path / "lamport.json"
    done = cli("test", "mutex", "--node", node, "-N", "2", "--strategy", "pct", "--runs", "20")
    assert done.returncode == 0 and "PASS" in done.stdout, said(done)  # FIFO links: correct
    done = cli(
        "test",
        "mutex",
        "--node",
        node,
        "-N",
        "2",
        "--reorder",
        "--strategy",
        "pct",
        "--runs",
        "100",
        "--counterexample",
        found,
    )
    assert done.returncode == 1 and "FINDING [violation]" in done.stdout, said(done)
    assert "found by pct" in done.stdout, said(done)
    again = cli("replay", found, "--node", node)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)
