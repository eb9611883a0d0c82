"""MPI programs in styles not covered before (session 18), and what they needed of mutexlab.

``tests/mpi/o18_bees_auction.cpp``: the bees with an auctioneer ``std::thread`` in rank 0
(``MPI_THREAD_MULTIPLE``), bids for reeds in a ``std::priority_queue``, requests and answers on two
duplicated communicators; its broken twin (``-DBROKEN_OUTBID``) hands a busy reed to a better bid.
``tests/mpi/o18_elves_heap.c``: the hamster killers with the mayor as the arbiter, serving from one
``MPI_Iprobe`` + ``usleep`` poll loop, tool requests waiting in a binary min-heap by the poison they
need; its broken twin (``-DBROKEN_PINS_ONLY``) grants tools when a pin is free, the poison not looked
at. ``tests/mpi/o18_kmutex_testsome.c``: k-mutual exclusion by a coordinator serving one
``MPI_Irecv`` per client from a loop of ``MPI_Testsome`` and ``usleep``, each client polling a while
for its hello first; its broken twin (``-DBROKEN_DOUBLE_FREE``) counts a pass handed on to a waiting
client as given back too. ``tests/mpi/o18_chandy_misra.cpp``: Chandy and Misra's dirty and clean
forks in a C++ class with no threads, one ``MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG)`` loop; its broken
twin (``-DBROKEN_NO_ASK_BACK``) gives up a dirty fork while hungry and never asks for it back.

What mutexlab needed: a rank polling in a loop of its own that gives up after a count
(``MPI_Iprobe``, ``MPI_Test``, ``MPI_Testsome`` or a timed wait, with ``usleep``) waited for ever
once the run came to rest, where under any MPI nothing can arrive and the loop ends: a false
``deadlock`` (``tests/mpi/o18_impatient.c``), and what the program does after giving up never ran.
At rest the director now gives such a rank a ``linger`` (docs/mpi.md#linger). And an input at rest
(a ``linger``, a ``stretch``) kept a digest of its answer among the steps' ones: every later digest
shifted, and a systematic search called a correct program nondeterministic.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import missing
from test_mpi import ROOT, Builds, shared_cache

BEES = (ROOT / "examples" / "mpi" / "bees_printf.regex").read_text().strip()
ELVES = (ROOT / "examples" / "mpi" / "elves.regex").read_text().strip()
PHILOSOPHERS = (ROOT / "examples" / "mpi" / "philosophers.regex").read_text().strip()
COLONY = ["-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2"]
TOWN = ["-o", "contracts=3", "-o", "rounds=2", "-o", "poison=6"]
TOWN_ARGS = ["3", "6", "3", "2"]  # pins poison contracts rounds, as the options above
CS = "(?P<enter>enters)|(?P<exit>leaves)"

# Rank 0 takes a hello from each other rank in the order they come and acknowledges it, then waits
# a while (a bounded poll) for a word nobody sends, gives up, tells the others, and enters: an
# input at rest (the linger) comes between steps whose order a systematic search varies.
HELLOS_THEN_POLL = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, flag = 0, x = 0, tries;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        for (int i = 1; i < size; i++) {
            MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            MPI_Send(&i, 1, MPI_INT, st.MPI_SOURCE, 2, MPI_COMM_WORLD);
        }
        for (tries = 0; tries < 100 && !flag; tries++) {
            MPI_Iprobe(MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(500);
        }
        for (int i = 1; i < size; i++) MPI_Send(&tries, 1, MPI_INT, i, 4, MPI_COMM_WORLD);
        printf("rank 0 enters\nrank 0 leaves\n");
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(&x, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
"""

# Rank 0 polls for ever for a word nobody sends: a loop with no count, which no linger ends.
POLLS_FOR_EVER = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, flag = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        while (!flag) {
            MPI_Iprobe(1, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(100);
        }
    printf("rank %d enters\nrank %d leaves\n", rank, rank);
    MPI_Finalize();
    return 0;
}
"""

# Rank 0 polls a while for the GO rank 1 sends at once, then a while for a word nobody sends: under
# an MPI the first loop may give up before the GO comes (a slow rank 1), which a linger step tries.
GIVES_UP_WHILE_HELD = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, flag = 0, x = 0, tries;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        for (tries = 0; tries < 100 && !flag; tries++) {
            MPI_Iprobe(1, 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(500);
        }
        if (flag) MPI_Recv(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        flag = 0;
        for (tries = 0; tries < 100 && !flag; tries++) {
            MPI_Iprobe(1, 9, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            usleep(500);
        }
        printf("rank 0 enters\nrank 0 leaves\n");
        MPI_Send(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD);
    } else {
        MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\nrank 1 leaves\n");
    }
    MPI_Finalize();
    return 0;
}
"""

PROGRAMS = {
    "impatient": ("o18_impatient.c", []),
    "impatient-test": ("o18_impatient.c", ["-DPOLL_TEST"]),
    "impatient-testsome": ("o18_impatient.c", ["-DPOLL_TESTSOME"]),
    "impatient-timedwait": ("o18_impatient.c", ["-DPOLL_TIMEDWAIT"]),
    "impatient-thread": ("o18_impatient.c", ["-DPOLL_THREAD"]),
    "impatient-no-wait": ("o18_impatient.c", ["-DBROKEN_NO_WAIT"]),
    "hellos": ("hellos_then_poll.c", []),
    "for-ever": ("polls_for_ever.c", []),
    "gives-up-while-held": ("gives_up_while_held.c", []),
    "bees": ("o18_bees_auction.cpp", []),
    "bees-outbid": ("o18_bees_auction.cpp", ["-DBROKEN_OUTBID"]),
    "elves": ("o18_elves_heap.c", []),
    "elves-pins-only": ("o18_elves_heap.c", ["-DBROKEN_PINS_ONLY"]),
    "kmutex": ("o18_kmutex_testsome.c", []),
    "kmutex-double-free": ("o18_kmutex_testsome.c", ["-DBROKEN_DOUBLE_FREE"]),
    "philosophers": ("o18_chandy_misra.cpp", []),
    "philosophers-no-ask-back": ("o18_chandy_misra.cpp", ["-DBROKEN_NO_ASK_BACK"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders18"), shared_cache(tmp_path_factory)
    written = {
        "hellos_then_poll.c": HELLOS_THEN_POLL,
        "polls_for_ever.c": POLLS_FOR_EVER,
        "gives_up_while_held.c": GIVES_UP_WHILE_HELD,
    }
    return Builds(PROGRAMS, out, cache, written, strict=True)


def found_and_replayed(cli, program: str, args: list[str], flags: list[str], tmp_path, finding: str) -> str:
    ce = tmp_path / "found.json"
    ran = cli("test", *flags, "--counterexample", str(ce), "--mpi", program, *args)
    assert ran.returncode == 1 and f"FINDING [{finding}]" in ran.stdout, ran.stdout + ran.stderr
    assert "shrunk from" in ran.stdout or "not shrunk" in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", program, *args)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    return ran.stdout


# -- a bounded poll loop at rest gives up (the linger) ---------------------------------------------


@pytest.mark.parametrize("poll", ("impatient", "impatient-test", "impatient-testsome", "impatient-thread"))
def test_a_bounded_poll_loop_gives_up_at_rest_and_the_run_goes_on(cli, programs, poll):
    # before: FINDING [deadlock] — rank 0's loop waited for ever for a GO nobody sends until nudged
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "5", "--regex", CS,
              "--mpi", programs[poll])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", "systematic", "--regex", CS,
              "--mpi", programs[poll])  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_a_bounded_loop_of_timed_waits_gives_up_at_rest(cli, programs):
    # it reads the clock for its deadlines: a PASS that says what a jumping clock leaves out
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "5", "--regex", CS,
              "--mpi", programs["impatient-timedwait"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout and "not covered" in ran.stdout, ran.stdout


def test_what_a_program_does_after_giving_up_is_tested_and_its_bug_replays(cli, programs, tmp_path):
    # before: the false deadlock above, never the violation after the loop gave up
    flags = ["mutex", "--np", "2", "--entries", "1", "--regex", CS]
    out = found_and_replayed(cli, programs["impatient-no-wait"], [], flags, tmp_path, "violation")
    assert "node-1" in out and "node-2" in out, out


def test_inputs_at_rest_leave_no_digest_so_a_systematic_search_is_not_called_nondeterministic(cli, programs):
    # before the linger: FINDING [deadlock]; with it, but its answer kept among the steps' digests:
    # FINDING [nondeterministic] (node 1 answered message node-3#1 differently …) in 2 runs
    ran = cli("test", "mutex", "--np", "3", "--entries", "1,0,0", "--strategy", "systematic", "--regex", CS,
              "--mpi", programs["hellos"])  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_a_loop_that_gives_up_while_a_message_is_held_is_searched(cli, programs):
    # before linger steps: INCOMPLETE with a "not covered" note (giving up before the GO came was
    # never tried); before that, "PASS — searched exhaustively". Now a linger step lets the loop
    # give up while the GO is held, and either way the program enters: every schedule is run.
    args = ["mutex", "--np", "2", "--entries", "1", "--regex", CS, "--mpi", programs["gives-up-while-held"]]
    ran = cli("test", "--strategy", "systematic", "--json", *args)
    summary = json.loads(ran.stdout)
    assert ran.returncode == 0 and summary["verdict"] == "PASS" and summary["exhaustive"], summary
    assert summary["runs"] >= 2, summary  # the linger's branch ran: 1 run without lingers
    ran = cli("test", "--runs", "3", "--json", *args)
    summary = json.loads(ran.stdout)
    assert ran.returncode == 0 and summary["verdict"] == "PASS" and "not_covered" not in summary, summary


def test_a_poll_loop_with_no_count_still_waits_for_ever(cli, programs):
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "2", "--regex", CS,
              "--mpi", programs["for-ever"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout and "node-1" in ran.stdout, ran.stdout
    # what the deadlock rests on: a loop that went round 20,000 polls (a longer count would give up)
    assert "rank 0 still polls in a loop of its own, 20,000 polls on" in ran.stdout, ran.stdout
    ran = cli("test", "mutex", "--np", "2", "--runs", "2", "--regex", CS, "--mpi", programs["for-ever"])
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout  # astir: no hang claimed


# -- C++ bees, an auction for reeds ----------------------------------------------------------------


def test_bees_bidding_for_reeds_pass(cli, programs):
    ran = cli("test", "bees", "--np", "5", *COLONY, "--runs", "10", "--regex", BEES,
              "--mpi", programs["bees"], "2", "1", "1", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_busy_reed_auctioned_again_is_found_shrunk_and_replays(cli, programs, tmp_path):
    flags = ["bees", "--np", "5", *COLONY, "--regex", BEES]
    out = found_and_replayed(cli, programs["bees-outbid"], ["2", "1", "1", "2"], flags, tmp_path, "violation")
    assert "[capacity] reed" in out, out


# -- C elves, a heap and a poll loop ---------------------------------------------------------------


def test_elves_served_from_a_heap_pass(cli, programs):
    ran = cli("test", "elves", "--np", "4", *TOWN, "--runs", "10", "--regex", ELVES,
              "--mpi", programs["elves"], *TOWN_ARGS)  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_tools_granted_by_pins_alone_are_found_shrunk_and_replay(cli, programs, tmp_path):
    flags = ["elves", "--np", "4", *TOWN, "--regex", ELVES]
    out = found_and_replayed(cli, programs["elves-pins-only"], TOWN_ARGS, flags, tmp_path, "violation")
    assert "[capacity] poison" in out, out


# -- C k-mutex by MPI_Testsome ---------------------------------------------------------------------


def test_a_k_mutex_served_by_testsome_passes(cli, programs):
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "0,2,2,2", "--runs", "10",
              "--regex", CS, "--mpi", programs["kmutex"], "2", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_pass_counted_back_twice_is_found_shrunk_and_replays(cli, programs, tmp_path):
    flags = ["kmutex", "-o", "k=2", "--np", "4", "--entries", "0,2,2,2", "--regex", CS]
    out = found_and_replayed(cli, programs["kmutex-double-free"], ["2", "2"], flags, tmp_path, "violation")
    assert "cs (capacity 2)" in out, out


# -- C++ Chandy–Misra ------------------------------------------------------------------------------


def test_chandy_misra_passes_and_is_searched_exhaustively(cli, programs):
    ran = cli("test", "philosophers", "--np", "3", "--entries", "2", "--runs", "10", "--regex", PHILOSOPHERS,
              "--mpi", programs["philosophers"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "philosophers", "--np", "2", "--entries", "2", "--strategy", "systematic",
              "--regex", PHILOSOPHERS, "--mpi", programs["philosophers"], "2")  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_a_fork_given_up_and_never_asked_back_is_found_and_replays(cli, programs, tmp_path):
    flags = ["philosophers", "--np", "3", "--entries", "2", "--regex", PHILOSOPHERS]
    out = found_and_replayed(cli, programs["philosophers-no-ask-back"], ["2"], flags, tmp_path, "deadlock")
    assert "still waits for the resource" in out, out
