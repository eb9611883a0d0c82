"""A sleep inside a rank's critical section is a step the director schedules (docs/mpi.md#threads).

``tests/mpi/grant_in_cs.c``: rank 0 prints, sleeps and prints (its section) while its
communication thread takes rank 1's request. Built with ``-DBROKEN_NO_EXCLUSION`` it grants at
once, inside or not: two ranks inside at once, but only when the request is answered during rank
0's sleep. Before sleeps inside became pauses, the whole section ran within one step and every
strategy, systematic search too, passed it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc, shared_cache

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests" / "mpi" / "grant_in_cs.c"
REGEX = "(?P<enter>enters)|(?P<exit>leaves)"


@pytest.fixture(scope="module")
def grant(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("pause")
    built = {}
    for name, flags in (("grant", []), ("grant-broken", ["-DBROKEN_NO_EXCLUSION"])):
        made = mpicc(
            shared_cache(tmp_path_factory),
            "-O2",
            "-Wall",
            "-Werror",
            *flags,
            "-o",
            str(out / name),
            str(SOURCE),
        )
        assert made.returncode == 0, made.stderr
        built[name] = str(out / name)
    return built


def test_a_grant_during_a_sleep_inside_is_found_and_replays(cli, grant, tmp_path):
    ce = tmp_path / "grant.json"
    ran = cli("test", "mutex", "--np", "2", "--regex", REGEX, "--counterexample", str(ce),
              "--mpi", grant["grant-broken"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "found by random" in ran.stdout
    again = cli("replay", str(ce), "--mpi", grant["grant-broken"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", grant["grant"])
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout


def test_systematic_search_finds_it_and_proves_the_fix(cli, grant):
    broken = cli("test", "mutex", "--np", "2", "--regex", REGEX, "--strategy", "systematic",
                 "--mpi", grant["grant-broken"])  # fmt: skip
    assert broken.returncode == 1 and "found by systematic" in broken.stdout, broken.stdout
    fixed = cli("test", "mutex", "--np", "2", "--entries", "1", "--regex", REGEX, "--strategy", "systematic",
                "--json", "--mpi", grant["grant"])  # fmt: skip
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    verdict = json.loads(fixed.stdout)
    assert verdict["exhaustive"] is True and verdict["runs"] == 2, verdict


def test_the_wake_is_a_step_of_the_schedule(cli, grant, tmp_path):
    """The correct program's every run wakes rank 0 once: a step named in the counterexample."""
    ce = tmp_path / "wake.json"
    ran = cli("test", "mutex", "--np", "2", "--entries", "2", "--regex", REGEX, "--runs", "1",
              "--no-shrink", "--counterexample", str(ce), "--mpi", grant["grant"])  # fmt: skip
    # each rank enters once only: --entries 2 makes every run end waiting, a finding kept unshrunk
    assert ran.returncode == 1 and "[deadlock]" in ran.stdout, ran.stdout + ran.stderr
    steps = json.loads(ce.read_text())["steps"]
    assert {"do": "wake", "node": 1} in steps, steps
    again = cli("replay", str(ce), "--mpi", grant["grant"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
