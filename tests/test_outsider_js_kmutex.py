"""``mutexlab test`` on k-mutual exclusion in Node.js (tests/outsiders/kmutex_coordinator.js,
written outside mutexlab: an async readline loop, every answer one write, a nickname with a bee
in every message): it passes every strategy, its leak is found and replays, and two things a
JavaScript node does that mutexlab misjudged — half a UTF-16 pair in a line, a nondeterminism
that shows on every other run — are judged."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

NODE = OUTSIDERS / "kmutex_coordinator.js"


@pytest.fixture(scope="module")
def js() -> str:
    if shutil.which("node") is None:
        missing("node (Node.js) is not installed")
    return f"node {NODE}"


def test_the_javascript_coordinator_passes_every_strategy(cli, js):
    for strategy, size, runs in (("random", "4", "40"), ("pct", "4", "40"), ("systematic", "3", "200")):
        done = cli("test", "kmutex", "--node", js, "--nodes", size, "--strategy", strategy, "--runs", runs)
        assert done.returncode == 0 and "PASS" in done.stdout, said(done)
    assert "searched exhaustively: 143 schedules" in done.stdout, said(done)


def test_a_leaking_semaphore_is_found_and_replays(cli, js, tmp_path):
    found = tmp_path / "leak.json"
    leaky = f"{js} --leaky"
    done = cli(
        "test", "kmutex", "--node", leaky, "--nodes", "4", "--requests", "2", "--counterexample", found
    )
    assert done.returncode == 1 and "FINDING [violation]" in done.stdout, said(done)
    assert "cs (capacity 2) held by" in done.stdout, said(done)
    done = cli("replay", found, "--node", leaky)
    assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)
    done = cli("replay", found, "--node", js)  # the fix: the finding is gone, its run played to its end
    assert done.returncode == 0 and "did NOT reproduce" in done.stdout, said(done)
    assert "more, in the default order, to the run's end" in done.stdout and "kmutex: SAFE" in done.stdout


def test_half_a_utf16_pair_is_garbage_not_an_internal_error(cli, js):
    """``"🐝🐝🐝".slice(0, 5)`` ends in half a bee, which ``JSON.stringify`` writes ``\\ud83d``:
    JSON's grammar lets the escape through, no UTF-8 text holds it. Before: exit 4, "internal
    error", a UnicodeEncodeError digesting the answer; the whole bees (``🐝``) pass above."""
    done = cli("test", "kmutex", "--node", f"{js} --cut-nickname", "--nodes", "3", "--runs", "3")
    assert done.returncode == 1 and "FINDING [garbage]" in done.stdout, said(done)
    assert "a lone surrogate" in done.stdout and "\\ud83d" in done.stdout, said(done)
    assert "internal error" not in done.stdout + done.stderr, said(done)


def test_a_javascript_exception_is_named_not_only_its_stack(cli, js):
    """Node.js prints the error above its stack and ends with its version: the last three lines
    of standard error are stack frames. Before: "its standard error ended with: at … | at … |
    Node.js v20…", the TypeError nowhere; now the line naming the error comes first."""
    done = cli("test", "kmutex", "--node", f"{js} --typo", "--nodes", "2", "--runs", "1")
    assert done.returncode == 1 and "FINDING [crashed]" in done.stdout, said(done)
    assert "ended with: TypeError: Cannot read properties of undefined (reading 'toUpperCase') | … |" in (
        done.stdout
    ), said(done)


def test_states_in_its_own_words_are_no_deadlock(cli, js):
    """Every request served, nothing held, nothing in flight — and the last state line says
    ``idle``, not ``RELEASED``. Before: ``FINDING [deadlock]`` ("nothing can move and the run is not
    finished"), for a run where nobody waited for anything; now ``protocol``, naming the states."""
    done = cli("test", "kmutex", "--node", f"{js} --states", "--nodes", "3", "--runs", "3")
    assert done.returncode == 1 and "FINDING [protocol]" in done.stdout, said(done)
    assert "every request was served" in done.stdout and "no deadlock" in done.stdout, said(done)
    assert "ends in state idle, not RELEASED" in done.stdout, said(done)


def test_a_nondeterminism_replays_whichever_way_the_first_play_goes(cli, js, tmp_path):
    """Each node's state when it asks flips with the number of times it was started (counted in
    a file). Before: a replay whose one play happened to answer as recorded said "did NOT
    reproduce" (exit 3) — every other replay; now it plays again until the program differs."""
    counts, found = tmp_path / "starts", tmp_path / "flip.json"
    flip = f"{js} --flip {counts}"
    searched = ("--nodes", "2", "--strategy", "systematic", "--counterexample", found)
    done = cli("test", "kmutex", "--node", flip, *searched)
    assert done.returncode == 1 and "FINDING [nondeterministic]" in done.stdout, said(done)
    assert json.loads(found.read_text())["finding"]["rule"] == "nondeterministic"
    for parity in (0, 1):
        for node in (1, 2):
            (tmp_path / f"starts.{node}").write_text(str(parity))
        done = cli("replay", found, "--node", flip)
        assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)


@pytest.mark.parametrize(
    ("given", "shown"), [("k=true", "got true"), ('k="2"', 'got "2"'), ("k=2.0", "got 2.0")]
)
def test_an_option_refused_is_shown_as_it_was_written(cli, given, shown):
    """``-o k=true`` is JSON; before, the refusal said "got True" (and "got '2'"), Python's words."""
    done = cli("test", "kmutex", "--node", "node x.js", "-o", given)
    assert done.returncode == 2 and f"option 'k' must be a whole number, {shown}" in done.stderr, said(done)
