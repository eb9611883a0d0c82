"""The dining philosophers as an MPI program, tested unchanged (docs/mpi.md#philosophers): rank r
is philosopher r+1; its forks and meals are read from its lines, and the philosophers' rules judge
them. ``examples/mpi/philosophers.c`` is built once per module with ``mutexlab mpicc`` into a
temporary directory, the library into a temporary cache (a skip without gcc, a failure under CI)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc, shared_cache

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "examples" / "mpi" / "philosophers.c"
REGEX = (ROOT / "examples" / "mpi" / "philosophers.regex").read_text().strip()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("mpi-philosophers")
    found = {}
    for name, flags in (("phil", []), ("broken", ["-DBROKEN_NO_PRIORITY"])):
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
        found[name] = str(out / name)
    return found


def phil(cli, program: str, *flags: str, np: int = 3, meals: str = "1"):
    return cli("test", "philosophers", "--np", str(np), *flags, "--regex", REGEX, "--mpi", program, meals)


@pytest.mark.parametrize("strategy", ("random", "pct", "systematic"))
def test_the_correct_philosophers_pass_judged_by_the_problems_rules(cli, built, tmp_path, strategy):
    np = 2 if strategy == "systematic" else 3
    trace = tmp_path / "t.jsonl"
    ran = phil(cli, built["phil"], "--strategy", strategy, "--runs", "40", "--trace", trace, np=np, meals="2")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    if strategy == "systematic":
        return  # its last run may be one cut short as equivalent to one searched
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    # One request per meal, none for the forks a meal needs: every hungry philosopher ate.
    requests = [(e["pid"], e["resource"]) for e in events if e["event"] == "request"]
    assert sorted(requests) == sorted((f"philosopher-{p}", "meal") for p in range(1, np + 1) for _ in "12")
    assert {e["resource"] for e in events if e["event"] == "enter"} == {"meal"} | {
        f"fork:{f}" for f in range(1, np + 1)
    }


def test_neighbours_without_priority_are_caught_shrunk_and_replayed(cli, built, tmp_path):
    scenario = tmp_path / "phil.json"
    ran = phil(cli, built["broken"], "--counterexample", scenario)
    assert ran.returncode == 1 and "[capacity] fork:" in ran.stdout, ran.stdout + ran.stderr
    assert json.loads(scenario.read_text())["nodes"] == 2
    again = cli("replay", scenario, "--mpi", built["broken"], "1")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", scenario, "--mpi", built["phil"], "1")
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout


def test_entries_count_meals_not_the_forks_they_need(cli, built):
    # Two meals each are six entries (two forks and a meal each time) but two meals: three
    # meals asked of a philosopher that eats two is one waiting for ever.
    short = phil(cli, built["phil"], "--entries", "3", "--no-shrink", meals="2")
    assert short.returncode == 1 and "FINDING [deadlock]" in short.stdout, short.stdout
    enough = phil(cli, built["phil"], "--entries", "2", "--runs", "20", meals="2")
    assert enough.returncode == 0 and "PASS" in enough.stdout, enough.stdout
