"""``mutexlab test`` on a dining philosopher in bash and jq (tests/outsiders/philosopher_jq.sh,
written outside mutexlab: fork tokens, a jq process per input line, printf for every output):
it passes, a greedy twin deadlocks and replays, a one-fork twin eats without its forks. Slow: a
bash and a jq per step."""

from __future__ import annotations

import shutil

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

NODE = str(OUTSIDERS / "philosopher_jq.sh")
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module", autouse=True)
def jq() -> None:
    if shutil.which("jq") is None or shutil.which("bash") is None:
        missing("bash and jq are needed")


def test_the_bash_philosopher_passes(cli):
    done = cli("test", "philosophers", "--node", NODE, "--nodes", "3", "--requests", "2", "--runs", "4")
    assert done.returncode == 0 and "PASS" in done.stdout, said(done)


def test_a_greedy_philosopher_deadlocks_and_replays(cli, tmp_path):
    found, greedy = tmp_path / "greedy.json", f"{NODE} greedy"
    done = cli(
        "test",
        "philosophers",
        "--node",
        greedy,
        "--nodes",
        "2",
        "--strategy",
        "systematic",
        "--counterexample",
        found,
    )
    assert done.returncode == 1 and "FINDING [deadlock]" in done.stdout, said(done)
    assert "philosopher-1, philosopher-2 still wait" in done.stdout, said(done)
    done = cli("replay", found, "--node", greedy)
    assert done.returncode == 1 and "the recorded finding reproduced" in done.stdout, said(done)


def test_a_philosopher_eating_with_one_fork_is_caught(cli):
    done = cli(
        "test",
        "philosophers",
        "--node",
        f"{NODE} one-fork",
        "--nodes",
        "3",
        "--strategy",
        "pct",
        "--runs",
        "5",
    )
    assert done.returncode == 1 and "[eats-without-forks]" in done.stdout, said(done)
