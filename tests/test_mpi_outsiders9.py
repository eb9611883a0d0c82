"""MPI programs written outside mutexlab, in styles not covered before, and what they needed of
mutexlab's MPI (docs/mpi.md#subset).

``tests/mpi/calls9.c``: the calls a course program reaches for that were missing —
``MPI_Get_library_version``, ``MPI_Is_thread_main``, ``MPI_Type_get_extent``, ``MPI_Aint_diff``,
``MPI_Scan``, ``MPI_Exscan``, ``MPI_Op_create`` on a struct type, ``MPI_Allgatherv``,
``MPI_Scatterv``, ``MPI_Alltoall``, ``MPI_Reduce_scatter_block``, ``MPI_Get_elements``,
``MPI_Comm_split_type``, ``MPI_Ibarrier`` (waited and tested); a wrong answer is an exit status.
``tests/mpi/handlers9.c``: error handlers per communicator (freed, inherited, another's) and one
the program made with ``MPI_Comm_create_errhandler``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import Builds

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
CS = "(?P<enter>enters)|(?P<exit>leaves)"
PROGRAMS = {  # name: its source and flags, built by the first test that runs it
    "calls": ("calls9.c", []),
    "freed": ("handlers9.c", ["-DFREED"]),
    "other": ("handlers9.c", ["-DOTHER"]),
    "inherit": ("handlers9.c", ["-DINHERIT"]),
    "made": ("handlers9.c", ["-DMADE"]),
    "made-returns": ("handlers9.c", ["-DMADE_RETURNS"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders9"), tmp_path_factory.getbasetemp() / "mpi-cache"
    return Builds(PROGRAMS, out, cache, strict=True)


# -- the calls that were missing -------------------------------------------------------------------


def test_scan_exscan_vector_collectives_ibarrier_and_the_rest_work(cli, programs):
    # Before: MPI_COMM_TYPE_SHARED, MPI_INFO_NULL, MPI_MAX_LIBRARY_VERSION_STRING … are not part
    # of mutexlab's MPI (exit 2 at build).
    for np in ("1", "3"):
        ran = cli("test", "mutex", "--np", np, "--runs", "10", "--regex", CS, "--mpi", programs["calls"])
        assert ran.returncode == 0 and "PASS" in ran.stdout, np + ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--strategy", "systematic", "--regex", CS, "--mpi", programs["calls"])
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


# -- error handlers, per communicator ----------------------------------------------------------------


def test_a_freed_communicators_handler_is_not_its_handles_next(cli, programs):
    # Before: the handle of a freed copy kept MPI_ERRORS_RETURN, and the next copy said so.
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["freed"])
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout and "MPI_ERR_RANK" in ran.stdout, (
        ran.stdout + ran.stderr
    )


def test_errors_return_on_one_communicator_leaves_the_worlds_errors_fatal(cli, programs):
    # Before: one communicator set to MPI_ERRORS_RETURN made every error "not judged" (exit 2).
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["other"])
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout and "MPI_ERR_RANK" in ran.stdout, (
        ran.stdout + ran.stderr
    )


def test_a_copy_inherits_its_parents_handler(cli, programs):
    # Before: MPI_Comm_dup's copy had MPI_ERRORS_ARE_FATAL (the program exits 5 when it asks).
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["inherit"])
    assert ran.returncode == 2 and "crashed" not in ran.stdout, ran.stdout + ran.stderr
    assert "error handler is MPI_ERRORS_RETURN" in ran.stderr and "not judged" in ran.stderr, ran.stderr


def test_a_handler_the_program_made_is_called(cli, programs):
    # Before: MPI_Comm_create_errhandler is not part of mutexlab's MPI (exit 2 at build).
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["made"])
    assert ran.returncode == 1 and "MPI_Abort with errorcode 3" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["made-returns"])
    assert ran.returncode == 2 and "error handler (MPI_Comm_create_errhandler) returned" in ran.stderr, (
        ran.stdout + ran.stderr
    )
    assert "not judged" in ran.stderr, ran.stderr
