"""A line that races its ``done`` (another thread's, a worker's ``console.log``): written before
the done one time, so counted in the step's answer, and after it the next, so a late line. Both
are the same fault. Before, a schedule played again to confirm it (the shrunk one, or ``replay``)
compared the answers with the recorded ones and called the program ``nondeterministic``; the
line's own finding, with its reason, is what the user is told now.
"""

from __future__ import annotations

import sys

import pytest

from mutexlab.director.problem import make_problem
from mutexlab.director.process import Pool
from mutexlab.director.search import Settings, play

pytestmark = pytest.mark.slow

# One node alone: asked, it enters. Its n-th request (counted in a file beside it, across
# processes and runs) writes the entry after its done when n is odd: a race, made regular.
RACER = r"""
import json, sys, pathlib, time
count = pathlib.Path(__file__).with_name("count")  # not an argument: replay hashes those

def out(line):
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()

for raw in sys.stdin:
    msg = json.loads(raw)
    if msg["type"] == "request":
        n = int(count.read_text() or 0) + 1 if count.exists() else 1
        count.write_text(str(n))
        enter = {"type": "enter", "resource": msg["resource"]}
        if n % 2:
            out({"type": "done"})
            time.sleep(0.001)  # another thread's moment: the done is read alone
            out(enter)
        else:
            out(enter)
            out({"type": "done"})
    elif msg["type"] == "release":
        out({"type": "exit", "resource": msg["resource"]})
        out({"type": "done"})
    else:
        out({"type": "done", "reinit": True} if msg["type"] == "init" else {"type": "done"})
"""


@pytest.fixture
def racer(tmp_path):
    program = tmp_path / "racer.py"
    program.write_text(RACER)
    return f"{sys.executable} {program}"


def test_a_racing_line_found_shrunk_and_replayed_is_its_own_finding(cli, racer, tmp_path):
    scenario = tmp_path / "ce.json"
    ran = cli("test", "mutex", "--node", racer, "--nodes", "1", "--runs", "1", "--counterexample", scenario)
    # before: [nondeterministic]
    assert ran.returncode == 1 and "FINDING [protocol]" in ran.stdout, ran.stdout
    assert "wrote after its done line" in ran.stdout or "wrote past its done line" in ran.stdout, ran.stdout
    for _ in range(2):  # whichever parity the count is at: played until it shows
        again = cli("replay", scenario, "--node", racer)
        assert again.returncode == 1 and "FINDING [protocol]" in again.stdout, again.stdout


def test_an_answer_that_differs_by_a_line_written_past_its_done_is_that_late_line(racer, tmp_path):
    # an earlier run of the same schedule counted the entry in the request's answer; this one's
    # entry comes after the done: the late line is the finding, not "answered differently"
    settings = Settings(make_problem("mutex", 1, 1, {}, 0), racer.split())
    pool = Pool(racer.split(), 5.0)
    try:
        first = play(settings, pool, lambda depth, enabled: enabled[0])
        assert first.finding is not None and first.finding.rule == "protocol", first.finding  # odd: late
        (tmp_path / "count").write_text("2")  # the next request is odd again: late
        expected = first.digests[:1] + ["an answer with the entry in it"]
        again = play(settings, pool, lambda depth, enabled: enabled[0], expected)
        # before: [nondeterministic]
        assert again.finding is not None and again.finding.rule == "protocol", again.finding
    finally:
        pool.close()
