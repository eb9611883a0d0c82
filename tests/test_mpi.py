"""MPI programs unchanged under the director (docs/mpi.md): built with ``mutexlab mpicc`` against
mutexlab's own MPI, their ranks directed as nodes by ``test --mpi`` and ``replay --mpi``.

The programs are built once per module into a temporary directory, the library into a
temporary cache (a skip without gcc, a failure under CI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing

ROOT = Path(__file__).resolve().parent.parent
SHARED = str(ROOT / "shared")
MPI = ROOT / "tests" / "mpi"
RA = ROOT / "examples" / "mpi" / "ricart_agrawala.c"
BEES = ROOT / "examples" / "mpi" / "bees.c"
PRINTED_BEES = ROOT / "examples" / "mpi" / "bees_printf.c"
PRINTED_REGEX = (ROOT / "examples" / "mpi" / "bees_printf.regex").read_text().strip()
COLONY = ["-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2"]
COLONY_ARGS = ["2", "1", "1", "2"]  # the same, as the program's arguments
FEATURES = ROOT / "tests" / "mpi" / "features.c"
RING = ROOT / "tests" / "mpi" / "ring.cpp"
REGEX = "(?P<enter>enters)|(?P<exit>leaves)"
STRATEGIES = ("random", "pct", "systematic")

UNSUPPORTED_AT_RUN = """#include <mpi.h>
int main(int argc, char **argv) {
    MPI_Datatype shifted;
    MPI_Init(&argc, &argv);
    MPI_Type_create_resized(MPI_INT, 4, 8, &shifted);
    MPI_Finalize();
    return 0;
}
"""
GIVES_UP = """#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) exit(4);
    printf("rank %d enters\\n", rank);
    printf("rank %d leaves\\n", rank);
    return 0;
}
"""
TRUNCATES = """#include <mpi.h>
#include <stdio.h>
#ifndef ROOM
#define ROOM 1 /* too small for the pair rank 0 sends: MPI_ERR_TRUNCATE */
#endif
#ifndef TAG
#define TAG 0
#endif
int main(int argc, char **argv) {
    int rank, pair[2] = {7, 8}, got[2] = {0, 0};
    MPI_Request request;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) MPI_Send(pair, 2, MPI_INT, 1, TAG, MPI_COMM_WORLD);
    if (rank == 1) {
        MPI_Irecv(got, ROOM, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &request);
        MPI_Wait(&request, MPI_STATUS_IGNORE);
        printf("rank %d enters\\n", got[0]);
        printf("rank %d leaves\\n", got[1]);
    }
    MPI_Finalize();
    return 0;
}
"""
UNKNOWN_AT_LINK = """#include <mpi.h>
int MPI_Alltoallv(const void *, const int *, const int *, MPI_Datatype, void *, const int *, const int *,
                  MPI_Datatype, MPI_Comm);
int main(int argc, char **argv) {
    int x = 1, c = 1, d = 0;
    MPI_Init(&argc, &argv);
    MPI_Alltoallv(&x, &c, &d, MPI_INT, &x, &c, &d, MPI_INT, MPI_COMM_WORLD);
    return 0;
}
"""


def shared_cache(tmp_path_factory) -> Path:
    """The session's one cache for mutexlab's MPI library, shared by every module and by both
    xdist workers (their base directories' parent): the library's directory is named by its
    sources' digest and appears by an atomic rename, so sharing is safe, and the library (about
    9 s under load) is built once per session instead of once per module or per test."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "mpi-cache"


def mpicc(cache: Path, *args: str, command: str = "mpicc") -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": SHARED, "MUTEXLAB_CACHE": str(cache)}
    return subprocess.run(
        [sys.executable, "-m", "mutexlab", command, *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


class Builds(dict):
    """Programs of a table (name: (source, extra flags)) built on first use with mutexlab's
    mpicc or mpicxx (by the source's suffix), into ``out``; ``written``: sources the test module
    holds as text, written into ``out`` first and found there before tests/mpi/."""

    def __init__(
        self, table: dict, out: Path, cache: Path, written: dict | None = None, strict: bool = False
    ):
        super().__init__()
        self.table, self.out, self.cache = table, out, cache
        self.flags = ["-O2", "-Wall", "-Werror"] if strict else ["-O2"]
        for source, text in (written or {}).items():
            (out / source).write_text(text)

    def __missing__(self, name: str) -> str:
        source, flags = self.table[name]
        path = self.out / source if (self.out / source).exists() else MPI / source
        command = "mpicxx" if source.endswith(".cpp") else "mpicc"
        made = mpicc(self.cache, *self.flags, *flags, "-o", str(self.out / name), str(path), command=command)
        assert made.returncode == 0, made.stderr
        self[name] = str(self.out / name)
        return self[name]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("mpi")
    cache = shared_cache(tmp_path_factory)
    (out / "vector.c").write_text(UNSUPPORTED_AT_RUN)
    (out / "gives_up.c").write_text(GIVES_UP)
    (out / "truncates.c").write_text(TRUNCATES)
    found = {}
    for name, source, flags in (
        ("ra", RA, []),
        ("ra-broken", RA, ["-DBROKEN_NO_PRIORITY"]),
        ("ra-forget", RA, ["-DBROKEN_FORGET_DEFERRED"]),
        ("features", FEATURES, []),
        ("bees", BEES, []),
        ("bees-reed", BEES, ["-DBROKEN_REED"]),
        ("bees-broken", BEES, ["-DBROKEN_FLOWERS"]),
        ("bees-printf", PRINTED_BEES, []),
        ("bees-printf-reed", PRINTED_BEES, ["-DBROKEN_REED"]),
        ("bees-printf-flower", PRINTED_BEES, ["-DBROKEN_FLOWER"]),
        ("bees-printf-stale", PRINTED_BEES, ["-DBROKEN_STALE_COCOONS"]),
        ("vector", out / "vector.c", []),
        ("gives-up", out / "gives_up.c", []),
        ("truncates", out / "truncates.c", []),
        ("fits", out / "truncates.c", ["-DROOM=2"]),
        ("big-tag", out / "truncates.c", ["-DROOM=2", "-DTAG=100000"]),
    ):
        made = mpicc(cache, "-O2", "-Wall", "-Werror", *flags, "-o", str(out / name), str(source))
        assert made.returncode == 0, made.stderr
        found[name] = str(out / name)
    if shutil.which("g++") is not None:
        for name, source in (("ring", RING),):
            made = mpicc(cache, "-O2", "-Wall", "-o", str(out / name), str(source), command="mpicxx")
            assert made.returncode == 0, made.stderr
            found[name] = str(out / name)
    found["cache"] = str(cache)
    found["dir"] = str(out)
    return found


def run_mpi(cli, program: str, *flags: str, np: int = 3, problem: str = "mutex", regex: str | None = REGEX):
    given = [*flags, "--np", str(np)] + (["--regex", regex] if regex else [])
    return cli("test", problem, *given, "--mpi", program)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_threaded_ricart_agrawala_passes_every_strategy(cli, built, strategy):
    # The communication thread blocked in MPI_Recv(ANY_SOURCE, ANY_TAG) and the main thread waiting
    # on a condition variable: a step ends when both wait, under every strategy (no harness deadlock).
    np, runs = (2, "10000") if strategy == "systematic" else (3, "40")
    ran = run_mpi(cli, built["ra"], "--strategy", strategy, "--runs", runs, "--json", np=np)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    outcome = json.loads(ran.stdout)
    assert outcome["verdict"] == "PASS" and outcome["program"] == [built["ra"]]
    if strategy == "systematic":
        assert outcome["exhaustive"] is True


def test_the_correct_program_enters_twice_per_rank_when_asked(cli, built, tmp_path):
    trace = tmp_path / "t.jsonl"
    ran = cli(
        "test",
        "mutex",
        "--np",
        "3",
        "--runs",
        "5",
        "--regex",
        REGEX,
        "--trace",
        trace,
        "--mpi",
        built["ra"],
        "2",
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    enters = [e["pid"] for e in events if e["event"] == "enter"]
    assert sorted(enters) == ["node-1", "node-1", "node-2", "node-2", "node-3", "node-3"]
    assert any(e["event"] == "recv" and e.get("type") == "tag 1" for e in events)  # REQUEST's MPI tag


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_broken_program_is_caught_shrunk_and_replays(cli, built, tmp_path, strategy):
    scenario = tmp_path / "ce.json"
    ran = run_mpi(cli, built["ra-broken"], "--strategy", strategy, "--counterexample", str(scenario))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [violation]" in ran.stdout and "cs (capacity 1) held by" in ran.stdout
    assert f"mutexlab replay {scenario} --mpi {built['ra-broken']}" in ran.stdout
    data = json.loads(scenario.read_text())
    assert data["finding"]["rule"] == "violation" and data["nodes"] == 2 and len(data["steps"]) <= 4
    again = cli("replay", scenario, "--mpi", built["ra-broken"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", scenario, "--mpi", built["ra"])  # the fix: the same steps, no violation
    assert fixed.returncode == 0 and "did NOT reproduce" in fixed.stdout, fixed.stdout


def test_the_subset_works_polled_probed_and_typed(cli, built):
    # Nonblocking calls polled with MPI_Test, a probe, struct and contiguous types, a barrier, a
    # thread polled with usleep; each rank checks what it got and reports through mutexlab.h.
    for strategy, np, runs in (("systematic", 3, "10000"), ("random", 4, "20"), ("pct", 3, "20")):
        ran = run_mpi(
            cli,
            built["features"],
            "--strategy",
            strategy,
            "--runs",
            runs,
            "-o",
            f"k={np}",
            np=np,
            problem="kmutex",
            regex=None,
        )
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_the_capacity_audit_is_live_on_the_ranks(cli, built):
    # features run with k=1: two ranks inside at once is the violation the audit finds — the
    # kmutex check is live on this program, not a PASS whatever happens.
    ran = run_mpi(cli, built["features"], "--runs", "20", "-o", "k=1", np=3, problem="kmutex", regex=None)
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout


def test_nothing_entered_proves_nothing(cli, built):
    ran = run_mpi(cli, built["ra"], "--runs", "5", regex="(?P<enter>never printed)")
    assert ran.returncode == 3 and "INCOMPLETE — no rank entered the resource" in ran.stdout, ran.stdout


def test_an_unsupported_call_stops_the_run_naming_it(cli, built):
    ran = run_mpi(cli, built["vector"], "--runs", "5", np=2)
    assert ran.returncode == 2
    said = "MPI_Type_create_resized with a lower bound other than 0 is not supported by mutexlab's MPI"
    assert said in ran.stderr, ran.stderr


def test_a_receive_too_small_for_its_message_is_a_crash(cli, built):
    """MPI_ERRORS_ARE_FATAL: a receive too small for its message ends the program (exit 14,
    MPI_ERR_TRUNCATE), a crash found, never a silently cut message that passes."""
    ran = run_mpi(cli, built["truncates"], "--runs", "3", np=2)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [crashed]" in ran.stdout and "exited with status 14" in ran.stdout, ran.stdout
    fits = run_mpi(cli, built["fits"], "--runs", "3", np=2)
    assert fits.returncode == 0 and "PASS" in fits.stdout, fits.stdout + fits.stderr


def test_a_tag_above_32767_is_a_tag(cli, built):
    """MPI promises tags up to 32767 at least; Open MPI and MPICH take far larger ones."""
    ran = run_mpi(cli, built["big-tag"], "--runs", "3", np=2)
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_an_mpi_call_mutexlab_lacks_fails_at_link_time_naming_it(built, tmp_path):
    (tmp_path / "a2a.c").write_text(UNKNOWN_AT_LINK)
    made = mpicc(Path(built["cache"]), "-o", str(tmp_path / "a2a"), str(tmp_path / "a2a.c"))
    assert made.returncode == 2
    assert "MPI_Alltoallv is not part of mutexlab's MPI" in made.stderr, made.stderr


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--regex", "(?P<who>x)"], "no named group 'enter' or 'exit'"),
        (["--regex", "(?P<enter>"], "is not a regular expression"),
        (["--node", "x"], "not both"),
        (["--regex", "(?P<enter>x)", "--np", "2"], "no named group 'resource'"),
    ],
)
def test_bad_flags_are_refused(cli, built, flags, says):
    problem = "bees" if "--np" in flags else "mutex"
    ran = cli("test", problem, *flags, "--mpi", built["ra"])
    assert ran.returncode == 2 and says in ran.stderr, ran.stderr


def test_bad_programs_are_refused(cli, tmp_path):
    assert "cannot start" in cli("test", "mutex", "--mpi", str(tmp_path / "none")).stderr
    assert "names no program" in cli("test", "mutex", "--mpi").stderr
    # a misspelt flag of mutexlab's after --mpi is the first word not one of them: named as a flag
    misspelt = cli("test", "mutex", "--mpi", "--np", "2", "--sed", "1", str(tmp_path / "none"))
    assert misspelt.returncode == 2 and "'--sed' is no option of mutexlab test" in misspelt.stderr


def test_a_rank_started_by_hand_says_how_to_run_it(built):
    ran = (
        subprocess.run(
            ["script", "-qec", built["ra"], "/dev/null"], capture_output=True, text=True, timeout=30
        )
        if shutil.which("script")
        else None
    )
    if ran is None:
        missing("util-linux script is not installed: no terminal to start a rank on")
    assert "mutexlab test PROBLEM --mpi" in ran.stdout


def test_cxx_through_mpicxx(cli, built):
    if "ring" not in built:
        missing("g++ is not installed: mutexlab mpicxx cannot be tried")
    ran = run_mpi(
        cli, built["ring"], "--strategy", "systematic", "-o", "k=3", np=3, problem="kmutex", regex=None
    )
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_the_mpi_bees_pass_and_their_broken_flowers_are_caught(cli, built, tmp_path, strategy):
    # Several resources (reed:<i>, flower), eggs and deaths reported through mutexlab.h: the
    # bees' own audit judges the ranks.
    ok = cli(
        "test",
        "bees",
        "--np",
        "4",
        *COLONY,
        "--strategy",
        strategy,
        "--runs",
        "40",
        "--mpi",
        built["bees"],
        *COLONY_ARGS,
    )
    assert ok.returncode == 0 and "PASS" in ok.stdout, ok.stdout + ok.stderr
    scenario = tmp_path / "bees.json"
    broken = cli(
        "test",
        "bees",
        "--np",
        "4",
        *COLONY,
        "--strategy",
        strategy,
        "--counterexample",
        scenario,
        "--mpi",
        built["bees-broken"],
        *COLONY_ARGS,
    )
    assert broken.returncode == 1 and "flower (capacity 1) held by" in broken.stdout, broken.stdout
    again = cli("replay", scenario, "--mpi", built["bees-broken"], *COLONY_ARGS)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def printed_bees(cli, program: str, *flags: str, regex: str = PRINTED_REGEX, np: int = 4):
    return cli(
        "test", "bees", "--np", str(np), *COLONY, *flags, "--regex", regex, "--mpi", program, *COLONY_ARGS
    )


def test_printed_bees_are_judged_from_their_lines_alone(cli, built, tmp_path):
    # No mutexlab.h: reeds (resource + index), eggs, deaths and states all come from --regex.
    # Five bees on two reeds of two cocoons: one retires.
    ok = printed_bees(cli, built["bees-printf"], "--runs", "30", np=5)
    assert ok.returncode == 0 and "PASS" in ok.stdout, ok.stdout + ok.stderr
    scenario = tmp_path / "reed.json"
    reed = printed_bees(cli, built["bees-printf-reed"], "--counterexample", scenario)
    assert reed.returncode == 1 and "reed:1 (capacity 1) held by" in reed.stdout, reed.stdout
    again = cli("replay", scenario, "--mpi", built["bees-printf-reed"], *COLONY_ARGS)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    # The correct bees wait in that schedule where the broken ones entered: the schedule does
    # not fit them, and replay says so rather than pass or fail them.
    fixed = cli("replay", scenario, "--mpi", built["bees-printf"], *COLONY_ARGS)
    assert fixed.returncode == 3 and "did NOT reproduce" in fixed.stdout, fixed.stdout
    flower = printed_bees(cli, built["bees-printf-flower"])
    assert flower.returncode == 1 and "flower (capacity 1) held by" in flower.stdout, flower.stdout
    # The egg events read from the lines are audited too: a reed overfilled by a stale count.
    # pct: with a bee's sleeps inside its reed steps of their own, random's 300 runs may miss it
    stale = printed_bees(cli, built["bees-printf-stale"], "--no-shrink", "--strategy", "pct", np=5)
    assert stale.returncode == 1 and re.search(r"\[eggs-per-reed\] reed:\d got a 3rd egg", stale.stdout), (
        stale.stdout
    )


def test_printed_bees_without_their_states_are_not_passed(cli, built):
    # The same program judged on its entries alone: nobody ends DEAD, no egg is laid.
    entries_only = PRINTED_REGEX.split("|(?P<event_egg>")[0]
    ran = printed_bees(cli, built["bees-printf"], "--runs", "5", regex=entries_only)
    assert ran.returncode != 0 and "PASS" not in ran.stdout, ran.stdout
    assert "reported no state" in ran.stdout, ran.stdout
    assert "note: no rank reported a state in this run" in ran.stdout, ran.stdout


def test_an_exit_the_regex_cannot_name_is_an_error_not_a_finding(cli, built):
    # 'leaves' has no resource in a problem of several: the regex's fault, not the program's.
    ran = printed_bees(
        cli, built["bees-printf"], "--runs", "5", regex=r"enters (?P<resource>\w+)|(?P<exit>leaves)"
    )
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "--regex matched an exit without its group 'resource'" in ran.stderr, ran.stderr
    # (what the shrinking's smaller runs report is no longer counted: test_mpi_outsiders.py)
    assert "MPI implements" not in ran.stderr, ran.stderr


def test_what_a_printed_line_means():
    from mutexlab.mpi.rank import meaning

    assert meaning({"enter": "enters", "resource": "reed", "index": "2"}, "") == [
        {"type": "enter", "resource": "reed:2", "units": 1}
    ]
    assert meaning({"exit": "leaves", "resource": None, "units": "3"}, "cs") == [
        {"type": "exit", "resource": "cs", "units": 3}
    ]
    assert meaning({"state_DEAD": "dies", "event_death": "dies", "f_eggs": "5", "f_who": "b1"}, "") == [
        {"type": "state", "state": "DEAD"},
        {"type": "event", "event": "death", "eggs": 5, "who": "b1"},
    ]
    assert meaning({"enter": None, "state_DEAD": None}, "cs") == []
    assert "without its group 'resource'" in meaning({"enter": "enters", "resource": None}, "")
    # a group resource_NAME names the resource whatever it matched ("KWIATEK", "FLOWER")
    assert meaning({"enter": "+", "resource_flower": "KWIATEK", "resource": None}, "") == [
        {"type": "enter", "resource": "flower", "units": 1}
    ]


def test_a_findings_notes_do_not_hide_each_other():
    """A rank taking other options than the test's and printing no state: both notes shown, the
    options' first (once the options' note hid the unread states'); a stall's note beside it."""
    from mutexlab.commands.mpitest import hints
    from mutexlab.director.judge import DEADLOCK, UNFINISHED, Finding

    events = [{"event": "event", "pid": "bee-1", "eggs": 2}, {"event": "enter", "pid": "bee-1"}]
    got = hints(events, {"eggs": 5}, Finding(DEADLOCK, UNFINISHED))
    assert len(got) == 2, got
    assert "says eggs 2 where the test's options say eggs=5" in got[0]
    assert got[1].startswith("note: no rank reported a state in this run")
    stalled = hints(events, {"eggs": 5}, Finding("stalled", "bee-1 did not answer"))
    assert len(stalled) == 2 and stalled[1].startswith("note: a rank answers once every thread"), stalled
    assert hints(events, {"eggs": 2}, Finding("stalled", "bee-1 did not answer")) == stalled[1:]
    assert hints([], {}, Finding(DEADLOCK, "nothing can move and node-1 still waits for the resource")) == []


def test_entries_turn_a_rank_waiting_for_ever_into_a_deadlock(cli, built, tmp_path):
    scenario = tmp_path / "dl.json"
    caught = run_mpi(cli, built["ra-forget"], "--entries", "1", "--counterexample", str(scenario))
    assert caught.returncode == 1 and "FINDING [deadlock]" in caught.stdout, caught.stdout
    assert "still waits for the resource" in caught.stdout
    assert "note: no rank reported a state" not in caught.stdout  # mutex is judged by entries
    again = cli("replay", scenario, "--mpi", built["ra-forget"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    # Without --entries nothing says a rank still wants to enter, but its main thread never ends:
    # a hang (before: PASS), naming what each rank's main thread waits in.
    hung = run_mpi(cli, built["ra-forget"], "--runs", "30")
    assert hung.returncode == 1 and "FINDING [hang]" in hung.stdout, hung.stdout
    assert "waits in pthread_cond_wait" in hung.stdout, hung.stdout
    # Two rounds each, two entries each: every strategy's runs end with every rank served.
    for strategy in ("random", "pct"):
        ran = cli(
            "test",
            "mutex",
            "--np",
            "3",
            "--entries",
            "2",
            "--regex",
            REGEX,
            "--strategy",
            strategy,
            "--runs",
            "60",
            "--mpi",
            built["ra"],
            "2",
        )
        assert ran.returncode == 0, ran.stdout + ran.stderr
    assert cli("test", "mutex", "--entries", "1", "--node", "x").returncode == 2  # for --mpi only


def test_a_rank_ending_in_failure_is_a_crash_and_one_ending_well_is_not(cli, built):
    # Rank 1 exits with status 4; rank 0 returns from main (0) and stays, quiet, till the run ends.
    ran = run_mpi(cli, built["gives-up"], "--runs", "3", np=2)
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout
    assert "node 2 exited with status 4" in ran.stdout
    alone = run_mpi(cli, built["gives-up"], "--runs", "3", np=1)
    assert alone.returncode == 0 and "PASS" in alone.stdout, alone.stdout + alone.stderr


def test_options_may_come_between_mpi_and_the_program(cli, built):
    # The order a user writes from the docs' own first line: `test PROBLEM --mpi --np N ./program`.
    ok = cli("test", "mutex", "--mpi", "--np", "3", "--regex", REGEX, "--runs", "5", built["ra"])
    assert ok.returncode == 0 and "PASS" in ok.stdout, ok.stdout + ok.stderr
    caught = cli("test", "mutex", "--mpi", "--np=3", "--regex", REGEX, built["ra-broken"])
    assert caught.returncode == 1 and "FINDING [violation]" in caught.stdout, caught.stdout + caught.stderr


def test_options_first_moves_only_mutexlabs_own_options():
    from mutexlab.cli import build_parser
    from mutexlab.commands.mpitest import options_first

    parser = build_parser("test")
    given = ["test", "bees", "--mpi", "--np", "5", "--runs=3", "./bees", "--np", "2", "-x"]
    assert options_first(parser, given) == [
        "test",
        "bees",
        "--np",
        "5",
        "--runs=3",
        "--mpi",
        "./bees",
        "--np",
        "2",
        "-x",
    ]
    already = ["test", "bees", "--np", "5", "--mpi", "./bees", "-v"]
    assert options_first(parser, already) == already
    unknown = ["test", "bees", "--mpi", "--nope", "./bees"]  # not mutexlab's: left to the program check
    assert options_first(parser, unknown) == unknown


def test_the_bees_example_at_the_problems_defaults_as_a_user_first_types_it(cli, built, tmp_path):
    # `mutexlab test bees --mpi --np 5 ./bees`: the example's own defaults are the problem's
    # (3 reeds, 3 flowers, 5 eggs, 15 cocoons), so nothing needs to be said twice.
    ok = cli("test", "bees", "--mpi", "--np", "5", "--runs", "20", built["bees"])
    assert ok.returncode == 0 and "PASS" in ok.stdout, ok.stdout + ok.stderr
    scenario = tmp_path / "reed.json"
    caught = cli("test", "bees", "--mpi", "--np", "5", "--counterexample", scenario, built["bees-reed"])
    assert caught.returncode == 1 and "reed:" in caught.stdout and "(capacity 1) held by" in caught.stdout
    again = cli("replay", scenario, "--mpi", built["bees-reed"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
