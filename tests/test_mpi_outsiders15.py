"""MPI programs in styles not covered before (session 15), and what they needed of mutexlab.

``tests/mpi/o15_ra_detached.cpp``: Ricart–Agrawala in C++17 where every thread calls MPI
(``MPI_THREAD_MULTIPLE``): a ``std::thread`` listener probing ``MPI_ANY_SOURCE``/``MPI_ANY_TAG``,
tags as message types sized by ``MPI_Get_count``, a detached ``std::thread`` per REPLY,
``std::scoped_lock`` and a ``condition_variable`` with a predicate, ``MPI_Bcast`` at the start and
``MPI_Barrier`` at the end; its broken twin (``-DBROKEN_NO_TIE``) defers only older stamps, not a
tie from a lower rank. ``tests/mpi/o15_ring_iprobe.c``: a token ring on its own communicator
(``MPI_Comm_split`` with the keys reversed), the token a ``MPI_Type_contiguous`` struct awaited by
``MPI_Iprobe`` + ``usleep`` in a loop; its broken twin (``-DBROKEN_PASS_EARLY``) sends the token on
before it says it leaves. ``tests/mpi/o15_lamport_waitsome.c``: Lamport's algorithm in one thread
on an ``MPI_Comm_dup``, one ``MPI_Irecv(MPI_ANY_TAG)`` per peer served by ``MPI_Waitsome``,
fan-outs by ``MPI_Isend`` + ``MPI_Waitall``, its receives taken back by ``MPI_Cancel`` at the end;
its broken twin (``-DBROKEN_HEAD_ONLY``) enters at the head of its queue without hearing from
every peer. ``tests/mpi/o15_bees_keeper.c``: the bees served by a keeper thread in rank 0, which
is a bee too and asks its own keeper by ``MPI_Sendrecv`` to itself, its requests a struct type;
its broken twins grant a flower too many (``-DBROKEN_FLOWER_COUNT``) and answer with the request's
own tag (``-DBROKEN_SAME_TAG``: rank 0's bee receives its own request as its answer).

What mutexlab needed: a rank's stretch (its stopped threads running alone up to 1.5 s of processor
time, docs/mpi.md#busy) was due within ``--timeout`` on the clock, so on a loaded machine, or with a
``--timeout`` shorter than the stretch, a long computation was a false ``stalled`` finding (the
flaky ``-DBROKEN_EARLY_BYE`` test of test_mpi_outsiders13.py); the director now waits while the
rank uses processor time. A busy wait reading a flag under a ``pthread_spin_lock`` ran in the C
library, where it is never stopped: a false ``stalled`` (the library now has its own spin locks). A
stall after a slow step was described as a buffered pipe (the rank's words on its wait were told
once a run; now once a step). A program reading its parameters on rank 0's standard input
(``mpirun -np 3 ./ring < FILE``) read ``/dev/null``: ``--stdin FILE`` now gives it the file.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import missing
from test_mpi import ROOT, Builds, shared_cache

MPI = ROOT / "tests" / "mpi"
ENTER_CS = "(?P<enter>ENTER CS)|(?P<exit>EXIT CS)"
BEES = (ROOT / "examples" / "mpi" / "bees_printf.regex").read_text().strip()
COLONY = ["-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2"]
RING = r"^P\d+ (?:(?P<enter>in)|(?P<exit>out of)) CS"
SECTION = "(?P<enter>entering)|(?P<exit>leaving)"
CS = "(?P<enter>enters)|(?P<exit>leaves)"

# Rank 0 computes for 1.4 s of its own processor time before it sends: its thread is stopped as
# a busy wait, and at rest runs alone (a stretch) to the end of the computation.
LONG_COMPUTATION = r"""
#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double cpu(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv) {
    int me, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        volatile unsigned long sink = 0;
        double start = cpu();
        while (cpu() - start < 1.4)
            for (int i = 0; i < 1000000; i++) sink += (unsigned long)i;
        printf("rank 0 enters\nrank 0 leaves\n");
        MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\nrank 1 leaves\n");
    }
    MPI_Finalize();
    return 0;
}
"""

# A ring whose rounds rank 0 reads from its standard input and broadcasts (mpirun -np 3 ./ring < FILE).
STDIN_ROUNDS = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int me, np, rounds = 0, tok = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (me == 0 && scanf("%d", &rounds) != 1) {
        fprintf(stderr, "rank 0: expected the number of rounds on stdin\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Bcast(&rounds, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; r < rounds; r++) {
        if (me != 0 || r > 0) MPI_Recv(&tok, 1, MPI_INT, (me + np - 1) % np, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("P%d in CS\nP%d out of CS\n", me, me);
        if (!(me == np - 1 && r == rounds - 1)) MPI_Send(&tok, 1, MPI_INT, (me + 1) % np, 0, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
"""

# A chain: each rank's main thread busy-waits for its listener's flag, read under a pthread spin
# lock, then enters, leaves and hands the token on.
SPIN_CHAIN = r"""
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
static pthread_spinlock_t s;
static int token, me, np;
static void *listener(void *unused) {
    int x;
    (void)unused;
    MPI_Recv(&x, 1, MPI_INT, me - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    pthread_spin_lock(&s);
    token = 1;
    pthread_spin_unlock(&s);
    return NULL;
}
int main(int argc, char **argv) {
    int p, mine = 0;
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
    token = me == 0;
    if (me > 0) pthread_create(&t, NULL, listener, NULL);
    while (!mine) {
        pthread_spin_lock(&s);
        mine = token;
        pthread_spin_unlock(&s);
    }
    printf("rank %d enters\nrank %d leaves\n", me, me);
    if (me + 1 < np) MPI_Send(&me, 1, MPI_INT, me + 1, 1, MPI_COMM_WORLD);
    if (me > 0) pthread_join(t, NULL);
    pthread_spin_destroy(&s);
    MPI_Finalize();
    return 0;
}
"""

# Rank 1 waits 2 s at init in a raw system call the library cannot see (a slow step, not a stall),
# then, at the next step, on a named semaphore nobody posts (a stall).
SLOW_THEN_SEM = r"""
#include <fcntl.h>
#include <mpi.h>
#include <semaphore.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int me, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        struct timespec two = {2, 0};
        char name[64];
        syscall(SYS_nanosleep, &two, NULL); /* a real wait of 2 s at init, unseen by the library */
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        snprintf(name, sizeof name, "/mutexlab-test-%d", (int)getpid());
        sem_t *never = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
        sem_unlink(name);
        sem_wait(never); /* nobody posts it */
    }
    printf("rank %d enters\nrank %d leaves\n", me, me);
    MPI_Finalize();
    return 0;
}
"""

PROGRAMS = {
    "ra": ("o15_ra_detached.cpp", []),
    "ra-no-tie": ("o15_ra_detached.cpp", ["-DBROKEN_NO_TIE"]),
    "ring": ("o15_ring_iprobe.c", []),
    "ring-early": ("o15_ring_iprobe.c", ["-DBROKEN_PASS_EARLY"]),
    "lamport": ("o15_lamport_waitsome.c", []),
    "lamport-head": ("o15_lamport_waitsome.c", ["-DBROKEN_HEAD_ONLY"]),
    "keeper": ("o15_bees_keeper.c", []),
    "keeper-count": ("o15_bees_keeper.c", ["-DBROKEN_FLOWER_COUNT"]),
    "keeper-same-tag": ("o15_bees_keeper.c", ["-DBROKEN_SAME_TAG"]),
    "long": ("long_computation.c", []),
    "stdin-rounds": ("stdin_rounds.c", []),
    "spin-chain": ("spin_chain.c", []),
    "slow-then-sem": ("slow_then_sem.c", []),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders15"), shared_cache(tmp_path_factory)
    return Builds(
        PROGRAMS,
        out,
        cache,
        {
            "long_computation.c": LONG_COMPUTATION,
            "stdin_rounds.c": STDIN_ROUNDS,
            "spin_chain.c": SPIN_CHAIN,
            "slow_then_sem.c": SLOW_THEN_SEM,
        },
        strict=True,
    )


def found_and_replayed(cli, program: str, args: list[str], flags: list[str], tmp_path, finding: str) -> str:
    ce = tmp_path / "found.json"
    ran = cli("test", *flags, "--counterexample", str(ce), "--mpi", program, *args)
    assert ran.returncode == 1 and f"FINDING [{finding}]" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", program, *args)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    return ran.stdout


# -- C++17, every thread calling MPI ----------------------------------------------------------------


def test_ricart_agrawala_replying_from_detached_threads_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "8", "--regex", ENTER_CS,
              "--mpi", programs["ra"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_ricart_agrawala_without_its_tie_break_is_found_and_replays(cli, programs, tmp_path):
    flags = ["mutex", "--np", "3", "--entries", "2", "--regex", ENTER_CS]
    out = found_and_replayed(cli, programs["ra-no-tie"], ["2"], flags, tmp_path, "violation")
    assert "[capacity] cs (capacity 1) held by" in out, out


# -- a ring on a split communicator, polled with MPI_Iprobe and usleep -----------------------------


def test_a_ring_polled_with_iprobe_on_a_split_communicator_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "8", "--regex", RING,
              "--mpi", programs["ring"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_token_sent_on_before_leaving_is_found_and_replays(cli, programs, tmp_path):
    flags = ["mutex", "--np", "3", "--entries", "2", "--regex", RING]
    out = found_and_replayed(cli, programs["ring-early"], ["2"], flags, tmp_path, "violation")
    assert "[capacity] cs (capacity 1) held by" in out, out


# -- Lamport served by MPI_Waitsome ---------------------------------------------------------------


def test_lamport_served_by_waitsome_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "8", "--regex", SECTION,
              "--mpi", programs["lamport"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_lamport_entering_at_the_head_of_its_queue_alone_is_found_and_replays(cli, programs, tmp_path):
    flags = ["mutex", "--np", "3", "--entries", "2", "--regex", SECTION]
    out = found_and_replayed(cli, programs["lamport-head"], ["2"], flags, tmp_path, "violation")
    assert "[capacity] cs (capacity 1) held by" in out, out


# -- the bees served by a keeper thread in rank 0 -------------------------------------------------


def test_bees_served_by_a_keeper_thread_pass(cli, programs):
    ran = cli("test", "bees", "--np", "5", *COLONY, "--runs", "8", "--regex", BEES,
              "--mpi", programs["keeper"], "2", "1", "1", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "bees", "--np", "5", "--runs", "2", "--regex", BEES, "--mpi", programs["keeper"])
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_keeper_granting_a_flower_too_many_is_found_and_replays(cli, programs, tmp_path):
    flags = ["bees", "--np", "4", *COLONY, "--regex", BEES]
    out = found_and_replayed(
        cli, programs["keeper-count"], ["2", "1", "1", "2"], flags, tmp_path, "violation"
    )
    assert "[capacity] flower (capacity 1) held by" in out, out


def test_a_bee_taking_its_own_request_for_its_answer_is_a_crash_naming_it(cli, programs, tmp_path):
    flags = ["bees", "--np", "3", *COLONY, "--regex", BEES]
    out = found_and_replayed(
        cli, programs["keeper-same-tag"], ["2", "1", "1", "2"], flags, tmp_path, "crashed"
    )
    assert "MPI_ERR_TRUNCATE: a message of 12 bytes from rank 0" in out, out


# -- a stretch is timed by the rank's processor time ----------------------------------------------


def test_a_long_computation_outlasting_the_timeout_on_the_clock_passes(cli, programs):
    # before: FINDING [stalled] "did not answer stretch within 1.2 s": 1.4 s of processor time never
    # fits in 1.2 s on the clock, as 1.5 s did not in 5 s on a machine loaded 4-fold
    ran = cli("test", "mutex", "--np", "2", "--runs", "1", "--timeout", "1.2", "--regex", CS,
              "--mpi", programs["long"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


# -- a busy wait through pthread spin locks --------------------------------------------------------


def test_a_busy_wait_reading_a_flag_under_a_pthread_spin_lock_passes(cli, programs):
    # before: FINDING [stalled] — the loop ran in the C library's pthread_spin_lock and unlock,
    # where a busy wait is never stopped, so the listener never got its turn
    ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--runs", "3", "--regex", CS,
              "--mpi", programs["spin-chain"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_stall_after_a_slow_step_still_names_its_wait(cli, programs):
    # before: "it waits reading from a process it started … its output sits in its buffer (jq needs
    # --unbuffered …)": the rank's words on its wait were told once a run, spent on the slow init
    ran = cli("test", "mutex", "--np", "2", "--runs", "1", "--timeout", "3", "--regex", CS,
              "--mpi", programs["slow-then-sem"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [stalled] (step 1)" in ran.stdout, ran.stdout + ran.stderr
    assert "rank 1's thread 0 waits in sem_wait on a semaphore shared between processes" in ran.stdout, (
        ran.stdout
    )


# -- rank 0's standard input ----------------------------------------------------------------------


def test_rank_zero_reads_the_file_of_stdin_and_replay_reads_it_again(cli, programs, tmp_path):
    # before: no --stdin (exit 2), and without it rank 0 read /dev/null: the crashed finding, its
    # MPI_Abort, for a program mpirun runs with `< rounds.txt`
    rounds = tmp_path / "rounds.txt"
    rounds.write_text("2\n")
    flags = ["mutex", "--np", "3", "--runs", "5", "--regex", RING, "--stdin", str(rounds)]
    ran = cli("test", *flags, "--entries", "2", "--mpi", programs["stdin-rounds"])
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    # wanting 3 entries of a ring told 2 rounds: the deadlock, replayed with the same input
    found_and_replayed(cli, programs["stdin-rounds"], [], [*flags, "--entries", "3"], tmp_path, "deadlock")
    without = cli(
        "test", "mutex", "--np", "3", "--runs", "1", "--regex", RING, "--mpi", programs["stdin-rounds"]
    )
    assert without.returncode == 1 and "expected the number of rounds on stdin" in without.stdout, (
        without.stdout
    )
    missing_file = cli("test", *flags[:-1], str(tmp_path / "none.txt"), "--mpi", programs["stdin-rounds"])
    assert missing_file.returncode == 2 and "none.txt: No such file" in missing_file.stderr, (
        missing_file.stderr
    )
    for_node = cli("test", "mutex", "--stdin", str(rounds), "--node", "cat")
    assert for_node.returncode == 2 and "--stdin is for --mpi" in for_node.stderr, for_node.stderr
