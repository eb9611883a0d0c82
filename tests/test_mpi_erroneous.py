"""A program's MPI mistake that Open MPI and MPICH end the job for is the ``crashed`` finding.

``MPI_Init`` twice, an MPI call before ``MPI_Init``, ``MPI_Bsend`` with no buffer attached (or
one too small), a second ``MPI_Buffer_attach``, ``MPI_Comm_free(MPI_COMM_WORLD)``, a wait on a
handle that is no request (MPICH reports it; under Open MPI a freed one's is undefined, a crash at
best): each is an error under MPI, which its default handler
(``MPI_ERRORS_ARE_FATAL``) ends the job for. They stopped the test with an error, exit 2, "the
program stopped", as if mutexlab could not go on; the program is what is wrong, so each is now
the finding, exit 1, its last words naming the error class, kept and replayed like any crash.
A program that asked for ``MPI_ERRORS_RETURN`` is still not judged (mutexlab's MPI returns no
error codes), and a limit of mutexlab's own still stops the test (``test_mpi_outsiders6``).
"""

from __future__ import annotations

import shutil

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

CS = "(?P<enter>enters)|(?P<exit>leaves)"

MISTAKES = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, size, x = 0;
#ifdef BEFORE_INIT
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
#endif
    MPI_Init(&argc, &argv);
#ifdef TWICE
    MPI_Init(&argc, &argv);
#endif
#ifdef RETURN
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
#endif
#ifdef SELF_RETURNS /* another communicator's handler, the thread's last call on it */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
#endif
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank > 0) MPI_Recv(&x, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d enters\nrank %d leaves\n", rank, rank);
    fflush(stdout);
#ifdef ATTACH_TWICE
    static char one[1024], two[1024];
    MPI_Buffer_attach(one, sizeof one);
    MPI_Buffer_attach(two, sizeof two);
#endif
    if (rank + 1 < size) {
        int self_rank;
        MPI_Comm_rank(MPI_COMM_SELF, &self_rank); /* the last call before the send: on MPI_COMM_SELF */
#if defined(BSEND) || defined(RETURN) || defined(SELF_RETURNS)
        MPI_Bsend(&x, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD); /* no buffer attached */
#else
        MPI_Send(&x, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
#endif
    }
#ifdef FREE_WORLD
    MPI_Comm world = MPI_COMM_WORLD;
    MPI_Comm_free(&world);
#endif
#ifdef STALE_REQUEST
    MPI_Request r;
    MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &r);
    MPI_Request kept = r;
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE); /* r is MPI_REQUEST_NULL now; kept names a freed request */
    MPI_Wait(&kept, MPI_STATUS_IGNORE);
#endif
    MPI_Finalize();
    return 0;
}
"""

# each variant: the words of its finding
MISTAKEN = {
    "twice": ("-DTWICE", "MPI_ERR_OTHER: MPI_Init called twice"),
    "before-init": ("-DBEFORE_INIT", "MPI_ERR_OTHER: MPI_Comm_rank called before MPI_Init"),
    "bsend": ("-DBSEND", "MPI_ERR_BUFFER: MPI_Bsend with no buffer attached"),
    "self-returns": ("-DSELF_RETURNS", "MPI_ERR_BUFFER: MPI_Bsend with no buffer attached"),
    "attach-twice": ("-DATTACH_TWICE", "MPI_ERR_BUFFER: MPI_Buffer_attach while a buffer is attached"),
    "free-world": ("-DFREE_WORLD", "MPI_ERR_COMM: MPI_Comm_free of MPI_COMM_WORLD"),
    "stale-request": ("-DSTALE_REQUEST", "MPI_ERR_REQUEST: MPI_Wait of a request that is not active"),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    out, cache = tmp_path_factory.mktemp("erroneous"), shared_cache(tmp_path_factory)
    table = {name: ("mistakes.c", [flag]) for name, (flag, _) in MISTAKEN.items()}
    table |= {"fine": ("mistakes.c", []), "return": ("mistakes.c", ["-DRETURN"])}
    return Builds(table, out, cache, {"mistakes.c": MISTAKES})


def test_the_program_without_its_mistakes_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "3", "--regex", CS,
              "--mpi", programs["fine"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("name", sorted(MISTAKEN))
def test_an_mpi_mistake_is_a_crash_named_by_its_error_class(cli, programs, name, tmp_path):
    # before: "mutexlab: error: the program stopped: MPI_Init called twice (docs/mpi.md)", exit 2
    ce = tmp_path / "mistake.json"
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "3", "--regex", CS,
              "--counterexample", str(ce), "--mpi", programs[name])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert MISTAKEN[name][1] in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", programs[name])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_a_mistake_under_errors_return_is_not_judged(cli, programs):
    # MPI would return MPI_ERR_BUFFER to a program that checks it; mutexlab's MPI returns none.
    # The send's communicator's handler, not that of the thread's last call (MPI_COMM_SELF, fatal):
    # before, that one's, and this was a false crash (and self-returns an error not judged)
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "3", "--regex", CS,
              "--mpi", programs["return"])  # fmt: skip
    assert ran.returncode == 2 and "FINDING" not in ran.stdout, ran.stdout + ran.stderr
    assert "MPI_Bsend with no buffer attached" in ran.stderr and "not judged" in ran.stderr, ran.stderr
