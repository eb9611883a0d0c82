"""MPI programs in styles not covered before (session 16), and what they needed of mutexlab.

``tests/mpi/o16_rma_ticket.c``: a ticket lock over one-sided communication — ``MPI_Win_allocate``
on rank 0, ``MPI_Fetch_and_op`` (``MPI_SUM``, ``MPI_NO_OP``) in shared-lock epochs, a spin reading
the ticket served, ``MPI_Accumulate`` to leave; its broken twin (``-DBROKEN_GET_PUT``) draws its
ticket by ``MPI_Get`` then ``MPI_Put``, not atomically. ``tests/mpi/o16_rma_mcs.c``: the MCS queue
lock of "Using Advanced MPI" in one ``MPI_Win_lock_all`` epoch — ``MPI_REPLACE`` swaps,
``MPI_Compare_and_swap``, ``MPI_Win_flush``, a spin on its own window; its broken twin
(``-DBROKEN_LINK_FIRST``) links itself to its predecessor before setting its own flag.
``tests/mpi/o16_rma_winlock.c``: ``MPI_Win_lock(MPI_LOCK_EXCLUSIVE)`` itself as the lock, a counter
read by ``MPI_Get`` and written by ``MPI_Put``, initialised between two ``MPI_Win_fence``; its
broken twin (``-DBROKEN_SHARED``) takes the shared lock. ``tests/mpi/o16_cart_ring.cpp``: a token
ring on a periodic one-dimensional ``MPI_Cart_create`` grid, neighbours by ``MPI_Cart_shift``,
``std::cout`` with ``std::endl`` and ``'\\n'`` beside ``std::cerr`` and ``fprintf(stderr)``,
``MPI_Abort`` on its error paths; its broken twin (``-DBROKEN_OPEN_GRID``) makes the grid not
periodic, so the last rank's token goes to ``MPI_PROC_NULL``.

What mutexlab needed: every one of them failed to build before (``MPI_Win``, ``MPI_Cart_create``
… were not part of mutexlab's MPI). One-sided communication is now driven (docs/mpi.md#rma): an
operation on another rank's window is a message the director delivers, applied by the target's
library and answered by another. Two things more were needed for the programs above: a spin that
re-reads a value until another rank changes it never came to rest under pct (a false ``no-rest``
finding on the correct ticket lock): a read that finds what its origin read last time is now held
until the bytes change; and the MCS lock's race needs another rank's operation applied between two
of a rank's own operations on its window, which a delivery between steps never was (300 random
runs passed ``-DBROKEN_LINK_FIRST``): an operation on the rank's own window is now a pause.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest
from conftest import missing
from test_mpi import ROOT, Builds, mpicc, shared_cache

MPI = ROOT / "tests" / "mpi"
TICKET = "(?P<enter>ENTER CS)|(?P<exit>EXIT CS)"
SECTION = "(?P<enter>entering)|(?P<exit>leaving)"
WINLOCK = "(?P<enter>in critical)|(?P<exit>out of critical)"
TOKEN = "(?P<enter>holds the token)|(?P<exit>passes the token)"
CS = "(?P<enter>enters)|(?P<exit>leaves)"

# Mistakes under any MPI: a put outside every epoch (MPI_ERR_RMA_SYNC), one past the end of the
# target's window (MPI_ERR_RMA_RANGE, the origin's error, said where it completes).
RMA_MISTAKES = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, *mem, one = 1;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 1) {
#if defined(PAST_THE_END) || defined(FAR_PAST)
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
#ifdef FAR_PAST
        MPI_Put(&one, 1, MPI_INT, 0, (MPI_Aint)1 << 62, 1, MPI_INT, win); /* 2^62 ints: 2^64 bytes, 0 wrapped */
#else
        MPI_Put(&one, 1, MPI_INT, 0, 5, 1, MPI_INT, win);
#endif
        MPI_Win_unlock(0, win);
#else
        MPI_Put(&one, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
#endif
    }
    printf("rank %d enters\nrank %d leaves\n", rank, rank);
    MPI_Win_free(&win);
    MPI_Finalize();
    return 0;
}
"""

# Rank 1 takes rank 0's window exclusively and never lets go; rank 0 then waits for its own lock
# for ever: a hang, named. With -DSPIN rank 1 instead spins reading a flag nobody sets: a loop of
# its own (under MPI it spins for ever), not claimed hung.
NEVER_UNLOCKED = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, *mem, flag = 0;
    MPI_Win win;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
#ifdef SPIN
        while (!flag) {
            MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
            MPI_Get(&flag, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
            MPI_Win_unlock(0, win);
        }
#else
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
#endif
        MPI_Send(&flag, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&flag, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        printf("rank 0 enters\nrank 0 leaves\n");
        MPI_Win_unlock(0, win);
    }
    MPI_Finalize();
    return 0;
}
"""

PROGRAMS = {
    "ticket": ("o16_rma_ticket.c", []),
    "ticket-get-put": ("o16_rma_ticket.c", ["-DBROKEN_GET_PUT"]),
    "mcs": ("o16_rma_mcs.c", []),
    "mcs-link-first": ("o16_rma_mcs.c", ["-DBROKEN_LINK_FIRST"]),
    "winlock": ("o16_rma_winlock.c", []),
    "winlock-shared": ("o16_rma_winlock.c", ["-DBROKEN_SHARED"]),
    "cart": ("o16_cart_ring.cpp", []),
    "cart-open": ("o16_cart_ring.cpp", ["-DBROKEN_OPEN_GRID"]),
    "outside-epoch": ("rma_mistakes.c", []),
    "past-the-end": ("rma_mistakes.c", ["-DPAST_THE_END"]),
    "far-past": ("rma_mistakes.c", ["-DFAR_PAST"]),  # before: its offset wrapped to the window's start
    "never-unlocked": ("never_unlocked.c", []),
    "spin-forever": ("never_unlocked.c", ["-DSPIN"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders16"), shared_cache(tmp_path_factory)
    written = {"rma_mistakes.c": RMA_MISTAKES, "never_unlocked.c": NEVER_UNLOCKED}
    return Builds(PROGRAMS, out, cache, written, strict=True)


def found_and_replayed(
    cli, program: str, args: list[str], flags: list[str], tmp_path, findings: tuple
) -> str:
    ce = tmp_path / "found.json"
    ran = cli("test", *flags, "--counterexample", str(ce), "--mpi", program, *args)
    assert ran.returncode == 1 and any(f"FINDING [{f}]" in ran.stdout for f in findings), (
        ran.stdout + ran.stderr
    )
    again = cli("replay", str(ce), "--mpi", program, *args)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    return ran.stdout


# -- a ticket lock over RMA ------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_a_ticket_lock_over_rma_passes(cli, programs, strategy):
    # before the held reads, pct: FINDING [no-rest] within 4 runs — the spinner's reads went round
    # while pct starved the holder's MPI_Accumulate
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "25", "--strategy", strategy,
              "--regex", TICKET, "--mpi", programs["ticket"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_ticket_drawn_by_get_then_put_is_found_and_replays(cli, programs, tmp_path):
    # two ranks draw one ticket: both enter (violation) or the served count passes a ticket by (deadlock)
    flags = ["mutex", "--np", "3", "--entries", "2", "--regex", TICKET]
    found_and_replayed(cli, programs["ticket-get-put"], ["2"], flags, tmp_path, ("violation", "deadlock"))


# -- the MCS lock over RMA -------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_the_mcs_lock_over_rma_passes(cli, programs, strategy):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "25", "--strategy", strategy,
              "--regex", SECTION, "--mpi", programs["mcs"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_an_mcs_lock_linking_before_its_flag_is_set_deadlocks_and_replays(cli, programs, tmp_path):
    # before the pause on a rank's own window: PASS in 300 random runs (its predecessor's clear was
    # only ever applied between steps, never between the link and the flag)
    flags = ["mutex", "--np", "3", "--entries", "2", "--regex", SECTION]
    out = found_and_replayed(cli, programs["mcs-link-first"], ["2"], flags, tmp_path, ("deadlock",))
    assert "still waits for the resource" in out, out


# -- MPI_Win_lock as the lock ----------------------------------------------------------------------


def test_an_exclusive_window_lock_passes_and_is_searched_exhaustively(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "20", "--regex", WINLOCK,
              "--mpi", programs["winlock"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", "systematic", "--regex", WINLOCK,
              "--mpi", programs["winlock"], "1")  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_a_shared_window_lock_taken_for_the_section_is_found_and_replays(cli, programs, tmp_path):
    flags = ["mutex", "--np", "3", "--entries", "2", "--regex", WINLOCK]
    out = found_and_replayed(cli, programs["winlock-shared"], ["2"], flags, tmp_path, ("violation",))
    assert "[capacity] cs (capacity 1) held by" in out, out


# -- a ring on a Cartesian grid, in C++ ------------------------------------------------------------


def test_a_ring_on_a_periodic_cartesian_grid_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "4", "--entries", "2", "--runs", "15", "--regex", TOKEN,
              "--mpi", programs["cart"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_ring_on_a_grid_that_is_not_periodic_is_found_and_replays(cli, programs, tmp_path):
    flags = ["mutex", "--np", "4", "--entries", "2", "--regex", TOKEN]
    out = found_and_replayed(cli, programs["cart-open"], ["2"], flags, tmp_path, ("violation",))
    assert "[capacity] cs (capacity 1) held by" in out, out


# -- what one-sided communication refuses, and what it never claims --------------------------------


@pytest.mark.parametrize(
    ("program", "said"),
    (
        ("outside-epoch", "MPI_ERR_RMA_SYNC: MPI_Put on rank 0's window outside an access epoch"),
        ("past-the-end", "MPI_ERR_RMA_RANGE: an operation past the end of rank 0's window (MPI_Win_unlock)"),
        ("far-past", "MPI_ERR_RMA_RANGE: an operation past the end of rank 0's window (MPI_Win_unlock)"),
    ),
)
def test_an_rma_mistake_is_the_crash_naming_it(cli, programs, program, said):
    ran = cli("test", "mutex", "--np", "2", "--runs", "1", "--regex", CS, "--mpi", programs[program])
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout and said in ran.stdout, ran.stdout


def test_a_window_lock_never_let_go_is_a_hang_naming_it(cli, programs):
    ran = cli("test", "mutex", "--np", "2", "--runs", "3", "--no-shrink", "--regex", CS,
              "--mpi", programs["never-unlocked"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, ran.stdout + ran.stderr
    assert "rank 0 waits in MPI_Win_lock" in ran.stdout, ran.stdout


def test_a_spin_on_a_value_nobody_changes_comes_to_rest_and_is_not_claimed_hung(cli, programs):
    # the held read makes the run come to rest (no no-rest at 2,000 steps), and its wait is a
    # poll's, so the rank is not called hung; with --entries it is short of its entry: a deadlock
    ran = cli("test", "mutex", "--np", "2", "--runs", "3", "--regex", CS, "--mpi", programs["spin-forever"])
    assert "FINDING [hang]" not in ran.stdout and "no-rest" not in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--runs", "3", "--entries", "1", "--no-shrink", "--regex", CS,
              "--mpi", programs["spin-forever"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr


def test_an_rma_call_mutexlab_lacks_is_named_at_build(programs, tmp_path):
    source = tmp_path / "pscw.c"
    source.write_text(
        "#include <mpi.h>\nint MPI_Win_post(MPI_Group group, int assert_, MPI_Win win);\n"
        "int main(int c, char **v) { MPI_Win w = MPI_WIN_NULL; MPI_Init(&c, &v);\n"
        "  MPI_Win_post(MPI_GROUP_EMPTY, 0, w); return 0; }\n"
    )
    made = mpicc(programs.cache, "-o", str(tmp_path / "pscw"), str(source))
    assert made.returncode == 2 and "MPI_Win_post is not part of mutexlab's MPI" in made.stderr, made.stderr


@pytest.mark.parametrize("how", ("include", "library"))
def test_a_boost_mpi_program_is_refused_naming_boost(programs, tmp_path, how):
    # before: g++'s "boost/mpi.hpp: No such file or directory" (exit 1), or, with libboost-mpi-dev
    # installed, a build against Open MPI's ABI
    source = tmp_path / "ring.cpp"
    source.write_text(
        ("#include <boost/mpi.hpp>\n" if how == "include" else "#include <mpi.h>\n")
        + "int main(int argc, char **argv) { MPI_Init(&argc, &argv); MPI_Finalize(); return 0; }\n"
    )
    extra = ["-lboost_mpi"] if how == "library" else []
    made = mpicc(programs.cache, "-o", str(tmp_path / "ring"), str(source), *extra, command="mpicxx")
    assert made.returncode == 2 and "Boost.MPI is not part of mutexlab's MPI" in made.stderr, made.stderr


# The MCS lock only under Open MPI: under MPICH (Debian's, ch3) its spin on its own window waits for
# passive-target progress MPICH makes only inside MPI calls, and mpirun.mpich hung 2 runs in 6 here
# (20 s each, 3 ranks spinning) — a property of that MPI, not of the program under mutexlab.
REAL_RUNS = [
    (source, word, mpi)
    for source, word in (
        ("o16_rma_ticket.c", "ENTER CS"),
        ("o16_rma_mcs.c", "entering"),
        ("o16_rma_winlock.c", "in critical"),
        ("o16_cart_ring.cpp", "holds the token"),
    )
    for mpi in ("openmpi", "mpich")
    if (source, mpi) != ("o16_rma_mcs.c", "mpich")
]


@pytest.mark.slow
@pytest.mark.parametrize(("source", "word", "mpi"), REAL_RUNS)
def test_the_sources_run_under_a_real_mpi(tmp_path, mpi, source, word):
    if shutil.which(f"mpicc.{mpi}") is None:
        missing(f"mpicc.{mpi} is needed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)")
    exe = tmp_path / "program"
    cc = [f"mpicxx.{mpi}"] if source.endswith(".cpp") else [f"mpicc.{mpi}"]
    built = subprocess.run([*cc, "-O2", "-o", str(exe), str(MPI / source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    run = (
        ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"] if mpi == "openmpi" else ["mpirun.mpich"]
    )
    proc = subprocess.Popen([*run, "-np", "3", str(exe), "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{source} did not end under mpirun.{mpi}")
    assert proc.returncode == 0, err
    assert out.count(word) == 6, out
