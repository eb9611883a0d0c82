"""MPI programs written outside mutexlab, from the user docs alone, in styles not covered before,
and what they needed of mutexlab's MPI.

``tests/mpi/bees_poll.c``: the mason bees single-threaded, a loop of
``MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG)`` with a ``nanosleep`` nap when nothing came, a Lamport
queue per reed, Ricart–Agrawala with K places for the flowers (each ACK names the request it
answers), random initial clocks by ``rand_r``, a ``usleep`` of ``rand_r`` length on the flower,
``MPI_Bcast`` of the parameters at the start and ``MPI_Barrier`` at the end.
``tests/mpi/lamport_heap.c``: Lamport's mutual exclusion with pthreads and a binary heap of
(clock, rank), every call checked by a ``CHECK`` macro under ``MPI_ERRORS_RETURN`` with
``MPI_Error_string``. ``tests/mpi/pins_mprobe.cpp``: K safety pins by Ricart–Agrawala in C++17, a
``std::thread`` listener polling matched probes (``MPI_Improbe`` + ``MPI_Mrecv``) between
``yield``s, ``std::condition_variable`` with a predicate, ``sleep_for`` on the pin.
``tests/mpi/town_bcast.c``: the hamster killers with each round's contracts and its STOP sent by
``MPI_Bcast``, a pthread listener per elf, a Lamport queue per resource (contracts per round), a
final ``MPI_Barrier`` before the listeners quit. ``tests/mpi/token_until.cpp``: a token ring whose
holder works until ``std::this_thread::sleep_until`` a deadline; ``tests/mpi/deadline_loops.c``:
loops on ``time``, ``gettimeofday`` and ``clock_nanosleep`` until an absolute time, inside the
section.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
BEES = ["--regex-file", str(MPI / "bees_poll.regex")]
LAMPORT = "(?P<enter>>>> critical)|(?P<exit><<< critical)"
PINS = "(?P<enter>grabs a pin)|(?P<exit>hangs the pin back)"
CS = "(?P<enter>enters)|(?P<exit>leaves)"
TOWN = ["--regex-file", str(MPI / "town_bcast.regex")]
TOKEN = "(?P<enter>ENTER CS)|(?P<exit>EXIT CS)"
DEADLINES = r"^P\d+ (?:(?P<enter>in)|(?P<exit>out of)) CS"
# Sends to a rank that is not there and, under MPI_ERRORS_RETURN, reads the error and goes on (as
# under Open MPI and MPICH); built with -DFATAL it keeps MPI's default handler.
ERRORS_RETURN = r"""#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int me, n, x = 1, len, class_;
    char why[MPI_MAX_ERROR_STRING];
    MPI_Errhandler h;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
    if (h != MPI_ERRORS_ARE_FATAL) return 3;
#ifndef FATAL
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &h);
    if (h != MPI_ERRORS_RETURN) return 4;
#endif
    MPI_Error_class(MPI_ERR_TRUNCATE, &class_);
    MPI_Error_string(MPI_ERR_RANK, why, &len);
    if (class_ != MPI_ERR_TRUNCATE || len <= 0 || why[len] != 0) return 5;
    int rc = MPI_Send(&x, 1, MPI_INT, n, 0, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, why, &len);
        printf("rank %d: send failed (%s), going on\n", me, why);
    }
    printf("rank %d enters\nrank %d leaves\n", me, me);
    MPI_Finalize();
    return 0;
}
"""
# Matched probes: rank 0 enters and leaves, then MPI_Ssends (complete once rank 1's MPI_Mrecv takes
# it) and sends; rank 1 takes the first by MPI_Mprobe + MPI_Mrecv (an MPI_Iprobe between finds it
# gone from the queue), the second by an MPI_Improbe loop + MPI_Imrecv, and one of MPI_PROC_NULL,
# then enters. A wrong answer is an exit status: the crashed finding.
MATCHED = r"""#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int me, v[4] = {0}, flag = 0, cnt;
    MPI_Message msg;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        int a[3] = {1, 2, 3};
        printf("rank 0 enters\nrank 0 leaves\n");
        MPI_Ssend(a, 3, MPI_INT, 1, 7, MPI_COMM_WORLD);
        MPI_Send(a, 1, MPI_INT, 1, 8, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Mprobe(0, 7, MPI_COMM_WORLD, &msg, &st);
        MPI_Get_count(&st, MPI_INT, &cnt);
        MPI_Iprobe(0, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag || cnt != 3) return 3;
        MPI_Mrecv(v, cnt, MPI_INT, &msg, &st);
        if (msg != MPI_MESSAGE_NULL || v[2] != 3 || st.MPI_SOURCE != 0 || st.MPI_TAG != 7) return 4;
        do MPI_Improbe(MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &flag, &msg, &st); while (!flag);
        MPI_Request r;
        MPI_Imrecv(v, 1, MPI_INT, &msg, &r);
        MPI_Wait(&r, &st);
        if (v[0] != 1 || st.MPI_TAG != 8) return 5;
        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
        if (msg != MPI_MESSAGE_NO_PROC) return 6;
        MPI_Mrecv(v, 1, MPI_INT, &msg, &st);
        if (st.MPI_SOURCE != MPI_PROC_NULL || msg != MPI_MESSAGE_NULL) return 7;
        printf("rank 1 enters\nrank 1 leaves\n");
    }
    MPI_Finalize();
    return 0;
}
"""
# Rank 0 enters and waits for a message no one sends: a deadlock with rank 0 inside.
HELD = r"""#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int me, x;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        printf("P0 in CS\n");
        MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("P0 out of CS\n");
    }
    MPI_Finalize();
    return 0;
}
"""
# MPI_Request_get_status polled until the receive is done; the request stays for MPI_Wait.
GET_STATUS = r"""#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int me, x = 0, flag = 0;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        printf("rank 0 enters\nrank 0 leaves\n");
        x = 42;
        MPI_Send(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Request r;
        MPI_Irecv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, &r);
        while (!flag) {
            MPI_Request_get_status(r, &flag, &st);
            if (!flag) usleep(100);
        }
        if (r == MPI_REQUEST_NULL || st.MPI_TAG != 3 || x != 42) return 3;
        MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE); /* still there, still done */
        if (!flag) return 4;
        MPI_Wait(&r, &st);
        if (r != MPI_REQUEST_NULL || st.MPI_SOURCE != 0) return 5;
        MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
        if (!flag) return 6;
        printf("rank 1 enters\nrank 1 leaves\n");
    }
    MPI_Finalize();
    return 0;
}
"""
PROGRAMS = {  # name: its source and flags, built by the first test that runs it
    "bees": ("bees_poll.c", []),
    "bees-tie": ("bees_poll.c", ["-DBROKEN_TIE"]),
    "bees-late": ("bees_poll.c", ["-DBROKEN_LATE_ACK"]),
    "lamport": ("lamport_heap.c", []),
    "lamport-lost": ("lamport_heap.c", ["-DBROKEN_LOST_REPLY"]),
    "pins": ("pins_mprobe.cpp", ["-std=c++17"]),
    "pins-stamp": ("pins_mprobe.cpp", ["-std=c++17", "-DBROKEN_STAMP"]),
    "town": ("town_bcast.c", []),
    "town-rounds": ("town_bcast.c", ["-DBROKEN_ROUNDS"]),
    "town-quit": ("town_bcast.c", ["-DBROKEN_EARLY_QUIT"]),
    "until-system": ("token_until.cpp", ["-DWALLCLOCK=system_clock"]),
    "until-steady": ("token_until.cpp", ["-DWALLCLOCK=steady_clock"]),
    "deadlines": ("deadline_loops.c", []),
    "held": ("held.c", []),
    "get-status": ("get_status.c", []),
    "errors-return": ("errors_return.c", []),
    "errors-fatal": ("errors_return.c", ["-DFATAL"]),
    "matched": ("matched.c", []),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders8"), shared_cache(tmp_path_factory)
    written = {
        "errors_return.c": ERRORS_RETURN,
        "matched.c": MATCHED,
        "held.c": HELD,
        "get_status.c": GET_STATUS,
    }
    return Builds(PROGRAMS, out, cache, written, strict=True)


# -- the bees by an MPI_Iprobe loop ---------------------------------------------------------------


def test_bees_polling_iprobe_pass(cli, programs):
    ran = cli("test", "bees", "--np", "4", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2",
              "--runs", "30", *BEES, "--mpi", programs["bees"], "2", "1", "1", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_bees_ack_without_a_tie_break_share_the_flower(cli, programs):
    ran = cli("test", "bees", "--np", "4", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2",
              *BEES, "--mpi", programs["bees-tie"], "2", "1", "1", "2")  # fmt: skip
    assert ran.returncode == 1 and "[capacity] flower (capacity 1)" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.slow
def test_bees_counting_a_late_ack_crowd_the_flowers(cli, programs):
    # Three reeds and two flowers: a bee that counts an ACK of its previous visit enters on one
    # ACK too few, a third bee on two flowers.
    flags = [
        "-o",
        "reeds=3",
        "-o",
        "flowers=2",
        "-o",
        "eggs=2",
        "-o",
        "cocoons=4",
        "--seed",
        "1",
        "--no-shrink",
    ]
    ran = cli("test", "bees", "--np", "5", *flags, *BEES, "--mpi", programs["bees-late"], "3", "2", "2", "4")
    assert ran.returncode == 1 and "[capacity] flower (capacity 2)" in ran.stdout, ran.stdout + ran.stderr
    ran = cli(
        "test",
        "bees",
        "--np",
        "5",
        *flags,
        "--runs",
        "20",
        *BEES,
        "--mpi",
        programs["bees"],
        "3",
        "2",
        "2",
        "4",
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


# -- error handlers: a CHECK macro under MPI_ERRORS_RETURN ------------------------------------------


def test_lamport_checking_every_call_passes(cli, programs):
    # Before: MPI_ERRORS_RETURN, MPI_MAX_ERROR_STRING are not part of mutexlab's MPI (exit 2).
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "30", "--regex", LAMPORT,
              "--mpi", programs["lamport"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_lamport_skipping_a_reply_while_inside_deadlocks(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--regex", LAMPORT,
              "--mpi", programs["lamport-lost"], "2")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr


def test_an_error_under_errors_return_stops_the_run_unjudged(cli, programs):
    # MPI would return MPI_ERR_RANK and the program go on: no crash is claimed, nothing judged.
    ran = cli("test", "mutex", "--np", "2", "--regex", CS, "--mpi", programs["errors-return"])
    assert ran.returncode == 2 and "crashed" not in ran.stdout, ran.stdout + ran.stderr
    assert "MPI_ERR_RANK: MPI_Send to rank 2" in ran.stderr and "MPI_ERRORS_RETURN" in ran.stderr, ran.stderr
    assert "not judged" in ran.stderr, ran.stderr
    fatal = cli("test", "mutex", "--np", "2", "--regex", CS, "--mpi", programs["errors-fatal"])
    assert fatal.returncode == 1 and "FINDING [crashed]" in fatal.stdout and "MPI_ERR_RANK" in fatal.stdout


# -- matched probes ----------------------------------------------------------------------------------


def test_matched_probes_take_the_message_off_the_queue(cli, programs):
    ran = cli(
        "test", "mutex", "--np", "2", "--strategy", "systematic", "--regex", CS, "--mpi", programs["matched"]
    )
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "3", "--runs", "20", "--regex", CS, "--mpi", programs["matched"])
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_pins_by_matched_probes_pass(cli, programs):
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--runs", "30", "--regex", PINS,
              "--mpi", programs["pins"], "2", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_pins_deferring_by_rank_alone_deadlock(cli, programs):
    # "ties go to the smaller id" without comparing stamps: elf 1 defers elf 0 always, elf 0 defers
    # elf 1 when its own stamp is earlier, and both wait.
    ran = cli("test", "mutex", "--np", "2", "--entries", "3", "--strategy", "systematic", "--regex", PINS,
              "--mpi", programs["pins-stamp"], "1", "3")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr


# -- the hamster killers by MPI_Bcast --------------------------------------------------------------


def test_town_by_broadcasts_passes(cli, programs):
    ran = cli("test", "elves", "--np", "4", "--runs", "20", *TOWN, "--mpi", programs["town"])
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_town_with_one_contract_list_for_all_rounds_deadlocks_and_says_no_state_was_printed(cli, programs):
    # Round 2's requests counted after round 1's: every elf finds no contract left, the mayor waits.
    # Before: the note told a user whose --regex reads states to add state_ groups.
    ran = cli("test", "elves", "--np", "4", *TOWN, "--mpi", programs["town-rounds"])
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr
    assert "[contract-not-done] contract 2.1 was never done" in ran.stdout, ran.stdout
    assert "though --regex reads states (ELF_DONE, ELF_WAIT_FOR_RELEASE, MAYOR_DONE)" in ran.stdout, (
        ran.stdout
    )
    assert "give --regex groups state_NAME" not in ran.stdout, ran.stdout


def test_town_whose_listeners_quit_early_leaves_an_elf_waiting(cli, programs):
    # No barrier before the listeners quit: an elf still asking for a contract never hears from one.
    # The deadlock does not shrink (every shorter schedule is cut short, not at rest): said so.
    ran = cli("test", "elves", "--np", "4", *TOWN, "--mpi", programs["town-quit"])
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr
    assert "not ELF_DONE" in ran.stdout, ran.stdout
    assert "shrunk from" in ran.stdout or "not shrunk: no smaller run showed [deadlock]" in ran.stdout


# -- deadlines on the machine's clock ---------------------------------------------------------------


def test_sleep_until_a_system_clock_deadline_ends(cli, programs):
    # Before: sleep_until(system_clock) looped on sleep_for, which takes no time, until the real
    # clock passed: it never did, and the rank inside its section was a false deadlock.
    for name in ("until-system", "until-steady"):
        ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "20", "--regex", TOKEN,
                  "--mpi", programs[name], "2")  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, name + ran.stdout + ran.stderr


def test_time_gettimeofday_and_absolute_sleeps_see_the_sleeps(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--runs", "10", "--regex", DEADLINES,
              "--mpi", programs["deadlines"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    assert (
        "not covered: a message arriving before an MPI_Wtime deadline passed (or one on the machine's clock)"
        in ran.stdout
    )


def test_a_mutex_deadlock_is_not_told_to_read_states(cli, programs):
    # mutex has no states to end in: before, its deadlock with a rank inside ([held-at-end]) told
    # the user to give --regex groups state_NAME.
    ran = cli("test", "mutex", "--np", "2", "--regex", DEADLINES, "--mpi", programs["held"])
    assert ran.returncode == 1 and "[held-at-end] node-1 still holds cs" in ran.stdout, (
        ran.stdout + ran.stderr
    )
    assert "no rank reported a state" not in ran.stdout, ran.stdout


def test_request_get_status_leaves_the_request_for_its_wait(cli, programs):
    # Before: MPI_Request_get_status is not part of mutexlab's MPI (exit 2).
    ran = cli(
        "test",
        "mutex",
        "--np",
        "2",
        "--strategy",
        "systematic",
        "--regex",
        CS,
        "--mpi",
        programs["get-status"],
    )
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr
