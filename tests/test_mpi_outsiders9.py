"""MPI programs written outside mutexlab, in styles not covered before, and what they needed of
mutexlab's MPI (docs/mpi.md#subset).

``tests/mpi/calls9.c``: the calls a course program reaches for that were missing —
``MPI_Get_library_version``, ``MPI_Is_thread_main``, ``MPI_Type_get_extent``, ``MPI_Aint_diff``,
``MPI_Scan``, ``MPI_Exscan``, ``MPI_Op_create`` on a struct type, ``MPI_Allgatherv``,
``MPI_Scatterv``, ``MPI_Alltoall``, ``MPI_Reduce_scatter_block``, ``MPI_Get_elements``,
``MPI_Comm_split_type``, ``MPI_Ibarrier`` (waited and tested); a wrong answer is an exit status.
``tests/mpi/leader_loc.c``: ``MPI_MAXLOC`` and ``MPI_MINLOC`` on ``MPI_2INT`` and
``MPI_DOUBLE_INT``, a leader elected as course programs do.
``tests/mpi/handlers9.c``: error handlers per communicator (freed, inherited, another's) and one
the program made with ``MPI_Comm_create_errhandler``.

``tests/mpi/lamport_sendrecv.cpp``: Lamport in C++17, a ``std::thread`` listener, a
``std::set`` queue, ``MPI_Sendrecv`` ring at the start, a struct type by ``MPI_Aint_diff`` and
``MPI_Type_get_extent``, clocks from ``rand_r``; ``-DBROKEN_NO_CLOCK_UPDATE`` forgets the max on
receive. ``tests/mpi/kra_waitany_scan.c``: K printers by Raymond's Ricart–Agrawala,
single-threaded in ``MPI_Waitany`` over a posted receive per peer, set up by ``MPI_Allreduce``,
``MPI_Exscan`` and ``MPI_Scan``, receives cancelled at the end; ``-DBROKEN_OFF_BY_ONE`` enters on
one reply too few (``-DBROKEN_OVERWRITE``, a hang: tests/test_mpi_hang.py).
``tests/mpi/ra_ibarrier.c``: Ricart–Agrawala in C, ``MPI_THREAD_MULTIPLE``, a receiver pthread
on an ``MPI_Comm_dup`` with a handler the program made, a condition variable, an ``MPI_Ibarrier``
polled by ``MPI_Test`` + ``usleep`` before the receiver stops;
``-DBROKEN_OFF_BY_ONE``. ``tests/mpi/town_ledger.c``: the hamster killers, every elf keeping a
copy of the town's ledger changed under one Ricart–Agrawala lock, a receiver pthread and a
condition variable, the mayor drawing by ``rand()``, an ``MPI_Ibarrier`` at the end;
``-DBROKEN_POISON`` takes poison one portion short. Each builds and runs under Debian's Open MPI
and MPICH too.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
CS = "(?P<enter>enters)|(?P<exit>leaves)"
LAMPORT = r"^P\d+ (?:(?P<enter>in)|(?P<exit>out of)) CS"
PRINTERS = "(?P<enter>printer taken)|(?P<exit>given back)"
RA = "(?P<enter>entering)|(?P<exit>leaving)"
ELVES = [
    "--regex-file",
    str(ROOT / "examples" / "mpi" / "elves.regex"),
]  # its lines follow docs/mpi.md's table
PROGRAMS = {  # name: its source and flags, built by the first test that runs it
    "calls": ("calls9.c", []),
    "leader": ("leader_loc.c", []),
    "freed": ("handlers9.c", ["-DFREED"]),
    "other": ("handlers9.c", ["-DOTHER"]),
    "inherit": ("handlers9.c", ["-DINHERIT"]),
    "group": ("handlers9.c", ["-DGROUP"]),
    "many": ("handlers9.c", ["-DMANY"]),
    "made": ("handlers9.c", ["-DMADE"]),
    "made-returns": ("handlers9.c", ["-DMADE_RETURNS"]),
    "lamport": ("lamport_sendrecv.cpp", ["-std=c++17"]),
    "lamport-clock": ("lamport_sendrecv.cpp", ["-std=c++17", "-DBROKEN_NO_CLOCK_UPDATE"]),
    "printers": ("kra_waitany_scan.c", []),
    "printers-one-short": ("kra_waitany_scan.c", ["-DBROKEN_OFF_BY_ONE"]),
    "ra": ("ra_ibarrier.c", []),
    "ra-one-short": ("ra_ibarrier.c", ["-DBROKEN_OFF_BY_ONE"]),
    "town": ("town_ledger.c", []),
    "town-poison": ("town_ledger.c", ["-DBROKEN_POISON"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders9"), shared_cache(tmp_path_factory)
    return Builds(PROGRAMS, out, cache, strict=True)


# -- the calls that were missing -------------------------------------------------------------------


def test_scan_exscan_vector_collectives_ibarrier_and_the_rest_work(cli, programs):
    # Before: MPI_COMM_TYPE_SHARED, MPI_INFO_NULL, MPI_MAX_LIBRARY_VERSION_STRING … are not part
    # of mutexlab's MPI (exit 2 at build).
    for np in ("1", "3"):
        ran = cli("test", "mutex", "--np", np, "--runs", "10", "--regex", CS, "--mpi", programs["calls"])
        assert ran.returncode == 0 and "PASS" in ran.stdout, np + ran.stdout + ran.stderr
    ran = cli(
        "test", "mutex", "--np", "2", "--strategy", "systematic", "--regex", CS, "--mpi", programs["calls"]
    )
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_maxloc_and_minloc_elect_the_leader_real_mpis_elect(cli, programs):
    # Before: MPI_2INT and MPI_DOUBLE_INT are not part of mutexlab's MPI (exit 2 at build), and
    # MPI_MAXLOC, MPI_MINLOC stopped the test. tests/mpi/leader_loc.c exits 1 on a wrong answer.
    for np in ("1", "4"):
        ran = cli("test", "mutex", "--np", np, "--runs", "5", "--regex", CS, "--mpi", programs["leader"])
        assert ran.returncode == 0 and "PASS" in ran.stdout, np + ran.stdout + ran.stderr
    ran = cli(
        "test", "mutex", "--np", "3", "--strategy", "systematic", "--regex", CS, "--mpi", programs["leader"]
    )
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


def test_a_group_calls_error_goes_to_the_worlds_handler_not_the_last_communicators(cli, programs):
    # Before: MPI_Group_translate_ranks's MPI_ERR_RANK went to the handler of the thread's last
    # communicator (a copy set to MPI_ERRORS_ARE_FATAL): a crash finding, where MPI gives the world's
    # handler, MPI_ERRORS_RETURN, and the program the code (not judged).
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["group"])
    assert ran.returncode == 2 and "crashed" not in ran.stdout, ran.stdout + ran.stderr
    assert "MPI_ERR_RANK" in ran.stderr and "error handler is MPI_ERRORS_RETURN" in ran.stderr, ran.stderr


def test_handlers_made_and_freed_one_at_a_time_are_not_counted_at_once(cli, programs):
    # Before: MPI_Errhandler_free kept the handler's slot, so the 17th handler made, with one
    # alive at a time, stopped the test: "more than 16 error handlers at once" (exit 2).
    ran = cli("test", "mutex", "--np", "2", "--runs", "3", "--regex", CS, "--mpi", programs["many"])
    assert ran.returncode == 1 and "MPI_Abort with errorcode 3" in ran.stdout, ran.stdout + ran.stderr


def test_a_handler_the_program_made_is_called(cli, programs):
    # Before: MPI_Comm_create_errhandler is not part of mutexlab's MPI (exit 2 at build).
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["made"])
    assert ran.returncode == 1 and "MPI_Abort with errorcode 3" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--runs", "5", "--regex", CS, "--mpi", programs["made-returns"])
    assert ran.returncode == 2 and "error handler (MPI_Comm_create_errhandler) returned" in ran.stderr, (
        ran.stdout + ran.stderr
    )
    assert "not judged" in ran.stderr, ran.stderr


# -- Lamport in C++ ------------------------------------------------------------------------------------


def test_lamport_with_a_set_queue_passes_random_pct_and_systematic(cli, programs):
    for strategy in ("random", "pct"):
        ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--strategy", strategy, "--runs", "25",
                  "--regex", LAMPORT, "--mpi", programs["lamport"])  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, strategy + ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", "systematic", "--regex", LAMPORT,
              "--mpi", programs["lamport"], "1")  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.slow
def test_lamport_without_the_clock_update_is_found_shrunk_and_replayed(cli, programs, tmp_path):
    # A rank whose clock started low stamps a later request before one it has seen and replied to.
    found = tmp_path / "lamport.json"
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--regex", LAMPORT, "--counterexample", str(found),
              "--mpi", programs["lamport-clock"])  # fmt: skip
    assert ran.returncode == 1 and "[capacity] cs (capacity 1)" in ran.stdout, ran.stdout + ran.stderr
    assert "shrunk from" in ran.stdout, ran.stdout
    again = cli("replay", str(found), "--mpi", programs["lamport-clock"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, (
        again.stdout + again.stderr
    )


# -- K printers in an MPI_Waitany loop ---------------------------------------------------------------


def test_printers_in_a_waitany_loop_pass_and_one_reply_short_is_found(cli, programs):
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--runs", "20", "--regex", PRINTERS,
              "--mpi", programs["printers"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--strategy", "pct", "--no-shrink",
              "--regex", PRINTERS, "--mpi", programs["printers-one-short"])  # fmt: skip
    assert ran.returncode == 1 and "[capacity] cs (capacity 2)" in ran.stdout, ran.stdout + ran.stderr
    for name, code in (("printers", 0), ("printers-one-short", 1)):
        ran = cli("test", "kmutex", "-o", "k=1", "--np", "2", "--entries", "2", "--strategy", "systematic",
                  "--regex", PRINTERS, "--mpi", programs[name], "1", "2")  # fmt: skip
        assert ran.returncode == code, name + ran.stdout + ran.stderr
        assert ("searched exhaustively" if code == 0 else "[capacity] cs (capacity 1)") in ran.stdout, (
            ran.stdout
        )


# -- Ricart–Agrawala ending in an MPI_Ibarrier ------------------------------------------------------------


def test_ra_ending_in_an_ibarrier_passes_and_one_reply_short_is_found_and_replayed(cli, programs, tmp_path):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--strategy", "pct", "--runs", "25", "--regex", RA,
              "--mpi", programs["ra"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--entries", "2", "--strategy", "systematic", "--regex", RA,
              "--mpi", programs["ra"])  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr
    found = tmp_path / "ra.json"
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--regex", RA, "--counterexample", str(found),
              "--mpi", programs["ra-one-short"])  # fmt: skip
    assert ran.returncode == 1 and "[capacity] cs (capacity 1)" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(found), "--mpi", programs["ra-one-short"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, (
        again.stdout + again.stderr
    )


# -- the same sources under Debian's Open MPI and MPICH -----------------------------------------------


# -- the hamster killers by a replicated ledger ----------------------------------------------------------


@pytest.mark.slow
def test_town_by_a_ledger_passes_and_poison_one_short_is_found_and_replayed(cli, programs, tmp_path):
    town = ["--np", "4", "-o", "pins=2", "-o", "poison=6", "-o", "contracts=3", "-o", "rounds=2", *ELVES]
    ran = cli("test", "elves", *town, "--runs", "12", "--mpi", programs["town"], "2", "6", "3", "2")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    found = tmp_path / "town.json"
    ran = cli("test", "elves", *town, "--counterexample", str(found), "--mpi", programs["town-poison"],
              "2", "6", "3", "2")  # fmt: skip
    assert ran.returncode == 1 and "[capacity] poison (capacity 6)" in ran.stdout, ran.stdout + ran.stderr
    assert "shrunk from" in ran.stdout, ran.stdout
    again = cli("replay", str(found), "--mpi", programs["town-poison"], "2", "6", "3", "2")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, (
        again.stdout + again.stderr
    )


def test_town_by_a_ledger_passes_pct_and_poison_one_short_is_found_by_pct(cli, programs):
    town = ["--np", "4", "-o", "pins=2", "-o", "poison=6", "-o", "contracts=3", "-o", "rounds=2", *ELVES]
    ran = cli("test", "elves", *town, "--strategy", "pct", "--runs", "12", "--mpi", programs["town"],
              "2", "6", "3", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "elves", *town, "--strategy", "pct", "--no-shrink", "--mpi", programs["town-poison"],
              "2", "6", "3", "2")  # fmt: skip
    assert ran.returncode == 1 and "[capacity] poison (capacity 6)" in ran.stdout, ran.stdout + ran.stderr


# -- the same sources under Debian's Open MPI and MPICH -----------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["openmpi", "mpich"])
def test_the_programs_run_under_open_mpi_and_mpich(impl, tmp_path):
    # calls9.c checks what MPI says of each call it makes: under a real MPI too, it exits 0.
    cc, cxx, run = (shutil.which(f"{tool}.{impl}") for tool in ("mpicc", "mpicxx", "mpirun"))
    if not (cc and cxx and run):
        missing(f"Debian's {impl} is not installed (mpicc.{impl}, mpicxx.{impl}, mpirun.{impl})")
    launcher = [run, "--allow-run-as-root", "--oversubscribe"] if impl == "openmpi" else [run]
    for source, np, line, count in (
        ("calls9.c", 3, r"^rank \d (enters|leaves)$", 6),
        ("leader_loc.c", 4, r"^rank 1 (enters|leaves)$", 2),
        ("lamport_sendrecv.cpp", 3, r"^P\d (in|out of) CS", 12),
        # It hung under MPICH once: a deferred request overwritten by the same peer's next, its reply
        # never sent (found since by mutexlab as a hang, tests/test_mpi_hang.py; now fixed).
        ("kra_waitany_scan.c", 3, r"printer (taken|given back)", 12),
        ("ra_ibarrier.c", 3, r"^\d: (entering|leaving)", 12),
        ("town_ledger.c", 4, r"^elf \d: goes home$", 3),
    ):
        compiler = cxx if source.endswith(".cpp") else cc
        exe = tmp_path / source.split(".")[0]
        standard = "-std=c++17" if compiler == cxx else "-std=gnu11"
        made = subprocess.run([compiler, "-O2", standard, "-o", str(exe), str(MPI / source)],
                              capture_output=True, text=True, timeout=120)  # fmt: skip
        assert made.returncode == 0, made.stderr
        ran = subprocess.run(
            [*launcher, "-np", str(np), str(exe)], capture_output=True, text=True, timeout=120
        )
        assert ran.returncode == 0, source + ran.stdout + ran.stderr
        assert len(re.findall(line, ran.stdout, re.MULTILINE)) == count, source + ran.stdout
