"""A rank that ends by ``_exit`` or ``_Exit``, as a program does to end past a detached thread.

Under any MPI a process may end so after ``MPI_Finalize``. ``_exit`` runs no ``on_exit`` handler,
so mutexlab's MPI never learned that the rank had ended well: the director saw its process end
in the middle of the run, ``FINDING [crashed] … exited with status 0``. Now ``_exit`` and
``_Exit`` end a rank as ``exit`` does: a status of 0 is a rank done, any other a crash. A forked
child's ``_exit`` ends the child alone.

And a thread of the program that calls MPI after its rank's ``MPI_Finalize`` (a detached listener
still serving) stopped the test with an error, exit 2, as if mutexlab could not go on; under Open
MPI and MPICH it aborts the job: it is the ``crashed`` finding now, with its schedule.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

CS = "(?P<enter>enters)|(?P<exit>leaves)"

ENDS = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank > 0) MPI_Recv(&x, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d enters\n", rank);
    printf("rank %d leaves\n", rank);
    fflush(stdout);
    if (rank + 1 < size) MPI_Send(&x, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
#ifdef FORK
    pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
#endif
    MPI_Finalize();
#ifdef UPPER
    _Exit(CODE);
#else
    _exit(CODE);
#endif
}
"""

# Rank 0's detached listener serves releases for ever; main finalizes once it has granted.
AFTER_FINALIZE = r"""
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
static void *listen_(void *unused) {
    (void)unused;
    for (;;) {
        int t;
        MPI_Recv(&t, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return NULL;
}
int main(int argc, char **argv) {
    int provided, rank, size, t = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        pthread_t th;
        pthread_create(&th, NULL, listen_, NULL);
        pthread_detach(th);
        printf("rank 0 enters\nrank 0 leaves\n");
        fflush(stdout);
        for (int i = 1; i < size; i++) MPI_Send(&t, 1, MPI_INT, i, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&t, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank %d enters\nrank %d leaves\n", rank, rank);
        fflush(stdout);
        MPI_Send(&t, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    }
    MPI_Finalize();
    return 0;
}
"""

PROGRAMS = {
    "exit-0": ("ends.c", ["-DCODE=0"]),
    "Exit-0": ("ends.c", ["-DCODE=0", "-DUPPER"]),
    "exit-3": ("ends.c", ["-DCODE=3"]),
    "fork-exit-0": ("ends.c", ["-DCODE=0", "-DFORK"]),
    "after-finalize": ("after_finalize.c", []),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    out, cache = tmp_path_factory.mktemp("ends"), shared_cache(tmp_path_factory)
    return Builds(PROGRAMS, out, cache, {"ends.c": ENDS, "after_finalize.c": AFTER_FINALIZE}, strict=True)


@pytest.mark.parametrize("name", ("exit-0", "Exit-0", "fork-exit-0"))
def test_a_rank_that_ends_by_exit_0_after_finalize_is_done(cli, programs, name):
    # before: FINDING [crashed] (step 0): node 1 exited with status 0 …
    for strategy in ("random", "systematic"):
        ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--runs", "5", "--strategy", strategy,
                  "--regex", CS, "--mpi", programs[name])  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_rank_that_ends_by_exit_3_is_a_crash(cli, programs):
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "5", "--regex", CS,
              "--mpi", programs["exit-3"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "exited with status 3" in ran.stdout, ran.stdout


def test_a_thread_calling_mpi_after_finalize_is_a_crash_that_replays(cli, programs, tmp_path):
    # before: "mutexlab: error: the program stopped: MPI_Irecv called after MPI_Finalize …", exit 2
    ce = tmp_path / "after.json"
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "5", "--regex", CS,
              "--counterexample", str(ce), "--mpi", programs["after-finalize"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "called after MPI_Finalize" in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", programs["after-finalize"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
