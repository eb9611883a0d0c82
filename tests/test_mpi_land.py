"""Messages that come in together between two polls (docs/mpi.md#landings).

``tests/mpi/ra_poll_replies.c -DBROKEN_ONE_PER_POLL`` takes one request a turn of its poll loop,
then asks whether every reply came, and stops listening once they have: a request that came in
with the last reply is never answered, and its sender waits for ever. Before landings every
delivery ran the receiving rank until it waited again, so each poll found at most one new
message: random (1,000 runs) said PASS, and systematic search said "searched exhaustively" (375
schedules at 3 ranks) of a program that hangs under Open MPI. The fix (replies asked first, then
every request taken) passes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "mpi" / "ra_poll_replies.c"
CS = "(?P<enter>enters)|(?P<exit>leaves)"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("land")
    found = {}
    for name, flags in (("fixed", []), ("broken", ["-DBROKEN_ONE_PER_POLL"])):
        made = mpicc(out / "cache", "-O2", "-Wall", "-Werror", *flags, "-o", str(out / name), str(SOURCE))
        assert made.returncode == 0, made.stderr
        found[name] = str(out / name)
    return found


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_a_request_that_came_in_with_the_last_reply_is_found_and_replays(cli, built, tmp_path, strategy):
    ce = tmp_path / "land.json"
    ran = cli("test", "mutex", "--np", "4", "--entries", "1", "--strategy", strategy, "--no-shrink",
              "--regex", CS, "--counterexample", str(ce), "--mpi", built["broken"])  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [deadlock]" in ran.stdout and "still wait" in ran.stdout, ran.stdout
    steps = json.loads(ce.read_text())["steps"]
    assert any(step["do"] == "land" for step in steps), steps  # only landings show it
    again = cli("replay", str(ce), "--mpi", built["broken"])
    assert "the recorded finding reproduced" in again.stdout, again.stdout + again.stderr
    fixed = cli("replay", str(ce), "--mpi", built["fixed"])  # the fix polls there too: no finding
    assert "FINDING" not in fixed.stdout, fixed.stdout


def test_systematic_search_finds_it_where_it_said_searched_exhaustively(cli, built):
    ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--strategy", "systematic", "--no-shrink",
              "--regex", CS, "--mpi", built["broken"])  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [deadlock]" in ran.stdout and "found by systematic" in ran.stdout, ran.stdout


@pytest.mark.parametrize("strategy", ["random", "pct"])
def test_the_fix_passes(cli, built, strategy):
    ran = cli("test", "mutex", "--np", "4", "--entries", "1", "--strategy", strategy, "--runs", "150",
              "--regex", CS, "--mpi", built["fixed"])  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "PASS" in ran.stdout, ran.stdout


def test_entries_rank_by_rank(cli, built):
    """Ranks 0 and 2 need not enter: the count a rank must reach is its own (0 for them)."""
    ran = cli("test", "mutex", "--np", "4", "--entries", "1,1,1,1", "--strategy", "pct", "--no-shrink",
              "--regex", CS, "--mpi", built["broken"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr
    none = cli("test", "mutex", "--np", "3", "--entries", "0,0,1", "--runs", "20", "--regex", CS,
               "--mpi", built["fixed"])  # fmt: skip
    assert none.returncode == 0, none.stdout + none.stderr


@pytest.mark.parametrize(
    ("entries", "said"),
    [
        ("1,1", "--entries gives 2 counts for 3 ranks: one per rank, rank 0 first"),
        ("0,0,0", "one of them ≥ 1"),
        ("1,x,1", "one whole number per rank"),
        ("1,-1,1", "one whole number per rank"),
    ],
)
def test_entries_rank_by_rank_that_do_not_fit_are_refused(cli, built, entries, said):
    ran = cli("test", "mutex", "--np", "3", "--entries", entries, "--regex", CS, "--mpi", built["fixed"])
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert said in ran.stderr, ran.stderr
