"""A loop of polls that gives up while other ranks still move (docs/mpi.md#linger).

Under any MPI a rank's own loop that gives up after a count (``while (!flag && ms < 500) {
MPI_Test(…); usleep(1000); ms++; }``) may give up while the run is not at rest: the rank it waits
for is slower. Before, the director let such a loop go round only at rest, so
``tests/mpi/o19_keeper_timeout.c`` — a lock keeper that takes a silent holder for dead and enters,
the holder still inside — passed every strategy, systematic search "searched exhaustively: 1
schedule". Now a ``linger`` step is offered wherever other steps are possible; a linger that
changes nothing is not tried again in the same state of the rank, so a correct polling program
stays cheap to search.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

CS = "(?P<enter>enters)|(?P<exit>leaves)"

# Every program's rank 1 (its main's other branch, to the end): it works inside a while, then
# sends rank 0 its word (tag 1).
HOLDER = r"""
        printf("rank 1 enters\n");
        fflush(stdout);
        usleep(100000);
        printf("rank 1 leaves\n");
        fflush(stdout);
        MPI_Send(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
""".lstrip("\n")

# Rank 0 waits a while for rank 1's READY, which rank 1 sends once it has worked inside; a rank 0
# that gave up goes silently on to wait, for ever, for a word nobody sends: it never enters. The
# giving up says nothing and sends nothing: only where rank 0's loop waits tells it from a loop
# that went round (a search that took that linger for one that changed nothing missed it).
SILENT_SWITCH = (
    r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
static int wait_for(int tag, int patience) {
    int flag = 0, polls = 0;
    while (!flag && (patience == 0 || polls < patience)) {
        MPI_Iprobe(1, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (!flag) { usleep(1000); polls++; }
    }
    return flag;
}
int main(int argc, char **argv) {
    int rank, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        if (!wait_for(1, 300)) wait_for(2, 0);
        MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 0 enters\nrank 0 leaves\n");
    } else {
"""
    + HOLDER
)

# The same, but the loop that gave up goes on at the very same line, for another tag: only what
# its poll asks for tells it from the loop that went round.
SAME_LINE_SWITCH = (
    r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, x = 0, flag = 0, tags[2] = {1, 2}, which = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        while (!flag) {
            for (int polls = 0; !flag && (which == 1 || polls < 300); polls++) {
                MPI_Iprobe(1, tags[which], MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
                if (!flag) usleep(1000);
            }
            which = 1;
        }
        MPI_Recv(&x, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 0 enters\nrank 0 leaves\n");
    } else {
"""
    + HOLDER
)

# Two threads of rank 0 each poll for ever (main for rank 1's word, a helper for a word nobody
# sends, until main tells it to stop): a linger wakes both, and both must wait again where they
# waited for it to change nothing (before: lingers that never went quiet, a false no-rest).
TWO_POLLERS = (
    r"""
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static volatile int stop;
static void *helper(void *unused) {
    (void)unused;
    int flag = 0;
    while (!flag && !stop) {
        MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        usleep(500);
    }
    return NULL;
}
int main(int argc, char **argv) {
    int provided, rank, x = 0, flag = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        pthread_t t;
        pthread_create(&t, NULL, helper, NULL);
        while (!flag) {
            MPI_Iprobe(1, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(1000);
        }
        MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        stop = 1;
        pthread_join(t, NULL);
        printf("rank 0 enters\nrank 0 leaves\n");
    } else {
"""
    + HOLDER
)

PROGRAMS = {
    "keeper": ("o19_keeper_timeout.c", []),
    "patient": ("o19_keeper_timeout.c", ["-DPATIENT"]),
    "blocking": ("o19_keeper_timeout.c", ["-DBLOCKING"]),
    "silent-switch": ("silent_switch.c", []),
    "same-line-switch": ("same_line_switch.c", []),
    "two-pollers": ("two_pollers.c", []),
    "keeper-cv": ("o19_keeper_cv.cpp", []),
    "patient-cv": ("o19_keeper_cv.cpp", ["-DPATIENT"]),
    "patient-timed-cv": ("o19_keeper_cv.cpp", ["-DPATIENT_TIMED"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("lingers"), shared_cache(tmp_path_factory)
    return Builds(
        PROGRAMS,
        out,
        cache,
        {
            "silent_switch.c": SILENT_SWITCH,
            "same_line_switch.c": SAME_LINE_SWITCH,
            "two_pollers.c": TWO_POLLERS,
        },
        strict=True,
    )


@pytest.mark.parametrize("strategy", ("random", "pct", "systematic"))
def test_a_keeper_that_gives_up_on_a_slow_holder_is_found_and_replays(cli, programs, tmp_path, strategy):
    # before: PASS under each strategy; systematic "searched exhaustively: 1 schedule"
    ce = tmp_path / "keeper.json"
    ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--strategy", strategy, "--runs", "200",
              "--regex", CS, "--counterexample", str(ce), "--mpi", programs["keeper"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "[capacity] cs" in ran.stdout and "linger 1" in ran.stdout, ran.stdout
    steps = json.loads(ce.read_text())["steps"]
    assert {"do", "node", "id"} <= set(next(s for s in steps if s["do"] == "linger")), steps
    again = cli("replay", str(ce), "--mpi", programs["keeper"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs["patient"])  # polls there: it lingers
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout
    assert "passed over" not in fixed.stdout, fixed.stdout
    # a fix that never polls: the recorded linger is nothing to it, and the replay says so
    fixed = cli("replay", str(ce), "--json", "--mpi", programs["blocking"])
    summary = json.loads(fixed.stdout)
    assert fixed.returncode != 1 and summary["lingers_passed_over"] == 1, summary


@pytest.mark.parametrize("np", ("2", "3", "4"))
def test_a_patient_keeper_is_searched_exhaustively_in_a_few_schedules(cli, programs, np):
    # its loop has no count: each linger changes nothing, and each state of rank 0 is lingered once
    ran = cli("test", "mutex", "--np", np, "--entries", "1", "--strategy", "systematic", "--json",
              "--regex", CS, "--mpi", programs["patient"])  # fmt: skip
    summary = json.loads(ran.stdout)
    assert ran.returncode == 0 and summary["verdict"] == "PASS" and summary["exhaustive"], summary
    assert summary["runs"] <= 2 * int(np), summary  # 2, 3 and 4 here; without the memory of quiet
    # lingers a linger at every step of every schedule, each a schedule of its own


def test_a_patient_keeper_passes_random_and_pct(cli, programs):
    for strategy in ("random", "pct"):
        ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--strategy", strategy, "--runs", "30",
                  "--regex", CS, "--mpi", programs["patient"])  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("name", ("silent-switch", "same-line-switch"))
def test_a_loop_that_gives_up_silently_for_another_is_no_quiet_linger(cli, programs, name):
    # giving up said and sent nothing; the loop it went on to waits elsewhere (or at the same line
    # for another tag), for ever
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", "systematic",
              "--regex", CS, "--mpi", programs[name])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr
    assert "linger 1" in ran.stdout and "rank 0 still polls in a loop of its own" in ran.stdout, ran.stdout


def test_a_keeper_timing_out_on_a_condition_variable_is_found_and_its_fix_passes(cli, programs):
    # C++: the keeper waits with std::condition_variable::wait_for for a listener thread to see
    # the release; a timed wait is a poll, which a linger lets time out while the holder works
    found = cli("test", "mutex", "--np", "3", "--entries", "1", "--strategy", "systematic", "--regex", CS,
                "--mpi", programs["keeper-cv"])  # fmt: skip
    assert found.returncode == 1 and "FINDING [violation]" in found.stdout, found.stdout + found.stderr
    assert "linger 1" in found.stdout, found.stdout
    for fix in ("patient-cv", "patient-timed-cv"):  # the second's timed waits linger, quietly
        fixed = cli("test", "mutex", "--np", "3", "--entries", "1", "--strategy", "systematic", "--json",
                    "--regex", CS, "--mpi", programs[fix])  # fmt: skip
        summary = json.loads(fixed.stdout)
        assert fixed.returncode == 0 and summary["exhaustive"] and summary["runs"] <= 6, summary


def test_two_threads_polling_for_ever_linger_quietly(cli, programs):
    for strategy in ("systematic", "pct", "random"):
        ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", strategy, "--runs", "30",
                  "--json", "--regex", CS, "--mpi", programs["two-pollers"])  # fmt: skip
        summary = json.loads(ran.stdout)
        assert ran.returncode == 0 and summary["verdict"] == "PASS", summary
        assert strategy != "systematic" or (summary["exhaustive"] and summary["runs"] <= 6), summary
