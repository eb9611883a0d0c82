"""MPI programs in styles not covered before, and what they needed of mutexlab's MPI.

``tests/mpi/probe_under_lock.c`` and ``tests/mpi/ra_serialized.c``: a thread polling with nothing
new (``MPI_Iprobe``, a sleep) while it holds a mutex another thread waits for goes on, as under any
MPI its poll returns (before: it was held there, and the waiter waited for ever: a false deadlock,
a rank that never ended). ``tests/mpi/ra_typed.c``: Ricart–Agrawala with a request struct sent as
``MPI_Type_create_struct`` resized to ``sizeof`` (an array of them in one message, a field that is
not part of the type left alone by a receive), and a table's column sent as ``MPI_Type_vector`` and
received as plain ints, then back into the column (before: ``MPI_Type_vector`` and
``MPI_Type_create_resized`` stopped the test, exit 2). ``tests/mpi/lamport_text.c``: Lamport,
single-threaded, its messages text found by ``MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG)`` and sized by
``MPI_Get_count`` into a ``malloc``'d buffer, the ranks split by role into teams
(``MPI_Comm_split``, a team ``MPI_Bcast`` and ``MPI_Reduce``), an ``MPI_Ibarrier`` served while
tested. ``tests/mpi/suzuki_kasami.cpp``: Suzuki–Kasami's broadcast token in C++17, a
``std::thread`` listener in ``MPI_Probe`` sizing a ``std::vector`` by ``MPI_Get_count`` (the token's
queue varies), ``std::condition_variable::wait`` with a predicate, ``std::atomic``, requests by
``MPI_Isend`` and ``MPI_Waitall``. Both needed nothing new of mutexlab's MPI.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest
from conftest import missing
from test_mpi import ROOT, Builds, shared_cache

MPI = ROOT / "tests" / "mpi"
INCLUDE = ROOT / "shared" / "mutexlab" / "mpi" / "include"
CS = "(?P<enter>enters)|(?P<exit>leaves)"
# K printers: the rank's last line ("P2: done") is the idle state; a rank that leaves its last job
# and never says done ends WAITING, which the audit reports (not-idle-at-end)
PRINTERS = "(?P<enter>printing job)|(?P<exit>printer released)(?P<state_WAITING>)|(?P<state_RELEASED>: done)"
PROGRAMS = {
    "under-lock": ("probe_under_lock.c", []),
    "printers": ("ra_serialized.c", []),
    "typed": ("ra_typed.c", []),
    "typed-no-defer": ("ra_typed.c", ["-DBROKEN_NO_DEFER"]),
    "text": ("lamport_text.c", []),
    "text-ties": ("lamport_text.c", ["-DBROKEN_NO_TIEBREAK"]),
    "token": ("suzuki_kasami.cpp", ["-std=c++17"]),
    "token-in-cs": ("suzuki_kasami.cpp", ["-std=c++17", "-DBROKEN_IN_CS"]),
    "token-done": ("suzuki_kasami.cpp", ["-std=c++17", "-DBROKEN_DONE_OTHERS"]),
}
TEXT = "(?P<enter>entering section)|(?P<exit>leaving section)"
TOKEN = "(?P<enter>in the critical)|(?P<exit>out of the critical)"


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders10"), shared_cache(tmp_path_factory)
    return Builds(PROGRAMS, out, cache, strict=True)


# -- a poll while holding a mutex another thread waits for ---------------------------------------


@pytest.mark.parametrize("strategy", ("random", "systematic"))
def test_a_poller_holding_a_mutex_lets_the_thread_waiting_for_it_in(cli, programs, strategy):
    # before: FINDING [deadlock], every rank short of its entry: main waited in its probe with the
    # mutex held, its helper for the mutex
    ran = cli("test", "kmutex", "-o", "k=3", "--np", "3", "--entries", "1", "--runs", "30", "--strategy", strategy,
              "--regex", CS, "--mpi", programs["under-lock"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_every_serialized_printer_ends(cli, programs):
    # before: the listener, paused in its sleep, woke wanting the lock main held in its probe: that
    # rank never took its own STOP, never said done (not-idle-at-end, node-3 ends WAITING)
    for np, k in (("3", "1"), ("4", "2")):
        ran = cli("test", "kmutex", "-o", f"k={k}", "--np", np, "--runs", "30", "--regex", PRINTERS,
                  "--mpi", programs["printers"], k, "1")  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


# -- derived datatypes: a resized struct, a vector --------------------------------------------


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_typed_ricart_agrawala_passes(cli, programs, strategy):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "40", "--strategy", strategy,
              "--regex", CS, "--mpi", programs["typed"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_typed_ricart_agrawala_is_searched_exhaustively(cli, programs):
    ran = cli(
        "test", "mutex", "--np", "2", "--strategy", "systematic", "--regex", CS, "--mpi", programs["typed"]
    )
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_typed_ricart_agrawala_without_deferring_is_caught_shrunk_and_replays(cli, programs, tmp_path):
    ce = tmp_path / "typed.json"
    ran = cli("test", "mutex", "--np", "3", "--regex", CS, "--counterexample", str(ce),
              "--mpi", programs["typed-no-defer"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "to 4 steps on 2 nodes" in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", programs["typed-no-defer"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs["typed"])
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout


def found_and_replayed(cli, programs, tmp_path, broken, correct, regex, says="FINDING [violation]"):
    ce = tmp_path / f"{broken}.json"
    ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--regex", regex, "--counterexample", str(ce),
              "--mpi", programs[broken])  # fmt: skip
    assert ran.returncode == 1 and says in ran.stdout, ran.stdout + ran.stderr
    assert "shrunk from" in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", programs[broken])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs[correct])
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout
    return ran


# -- Lamport in text, teams by MPI_Comm_split; Suzuki-Kasami in C++ ------------------------------


@pytest.mark.parametrize(("name", "regex"), (("text", TEXT), ("token", TOKEN)))
@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_two_more_styles_pass(cli, programs, name, regex, strategy):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "30", "--strategy", strategy,
              "--regex", regex, "--mpi", programs[name], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--strategy", "systematic",
              "--regex", regex, "--mpi", programs[name])  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_lamport_in_text_ordering_ties_by_arrival_is_caught(cli, programs, tmp_path):
    ran = found_and_replayed(cli, programs, tmp_path, "text-ties", "text", TEXT)
    assert "on 2 nodes" in ran.stdout, ran.stdout


def test_suzuki_kasami_handing_the_token_on_from_inside_is_caught(cli, programs, tmp_path):
    ran = found_and_replayed(cli, programs, tmp_path, "token-in-cs", "token", TOKEN)
    assert "to 2 steps on 2 nodes" in ran.stdout, ran.stdout


def test_suzuki_kasami_whose_listeners_never_end_is_a_hang(cli, programs, tmp_path):
    ran = found_and_replayed(cli, programs, tmp_path, "token-done", "token", TOKEN, says="FINDING [hang]")
    assert "waits in pthread_join" in ran.stdout, ran.stdout


STRIDES = r"""#include <mpi.h>
#include <stdio.h>
#include <string.h>
/* What MPI says of strided types, checked on one rank: a crash (status 3) names the first wrong. */
#define CHECK(c, what) if (!(c)) { fprintf(stderr, "wrong: %s\n", what); MPI_Abort(MPI_COMM_WORLD, 3); }
int main(int argc, char **argv) {
    int me, a[12], b[12], size, count;
    MPI_Aint lb, extent;
    MPI_Datatype vec, idx, res, two;
    MPI_Status st;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    for (int i = 0; i < 12; i++) a[i] = i, b[i] = -1;
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec); /* ints 0 1, 4 5, 8 9 */
    MPI_Type_commit(&vec);
    MPI_Type_size(vec, &size);
    MPI_Type_get_extent(vec, &lb, &extent);
    CHECK(size == 24 && lb == 0 && extent == 40, "vector size and extent");
    MPI_Sendrecv(a, 1, vec, me, 1, b, 6, MPI_INT, me, 1, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 6 && b[0] == 0 && b[1] == 1 && b[2] == 4 && b[3] == 5 && b[4] == 8 && b[5] == 9 && b[6] == -1,
          "a vector received as ints");
    for (int i = 0; i < 12; i++) b[i] = -1;
    MPI_Sendrecv(a, 6, MPI_INT, me, 2, b, 1, vec, me, 2, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, vec, &count);
    CHECK(count == 1 && b[0] == 0 && b[1] == 1 && b[2] == -1 && b[4] == 2 && b[8] == 4 && b[9] == 5,
          "ints received into a vector, its gaps left alone");
    int lens[2] = {1, 2}, displs[2] = {0, 3};
    MPI_Type_indexed(2, lens, displs, MPI_INT, &idx); /* ints 0, 3 4 */
    MPI_Type_commit(&idx);
    for (int i = 0; i < 12; i++) b[i] = -1;
    MPI_Sendrecv(a, 2, idx, me, 3, b, 2, idx, me, 3, MPI_COMM_WORLD, &st);
    CHECK(b[0] == 0 && b[3] == 3 && b[4] == 4 && b[5] == 5 && b[8] == 8 && b[9] == 9 && b[1] == -1 && b[6] == -1,
          "indexed into indexed");
    MPI_Type_create_resized(MPI_INT, 0, 3 * sizeof(int), &res); /* every third int */
    MPI_Type_commit(&res);
    for (int i = 0; i < 12; i++) b[i] = -1;
    MPI_Sendrecv(a, 4, res, me, 4, b, 4, res, me, 4, MPI_COMM_WORLD, &st);
    CHECK(b[0] == 0 && b[3] == 3 && b[6] == 6 && b[9] == 9 && b[1] == -1 && b[11] == -1, "resized int");
    MPI_Type_contiguous(2, vec, &two);
    MPI_Type_commit(&two);
    MPI_Type_size(two, &size);
    CHECK(size == 48, "a contiguous pair of vectors");
    printf("rank %d enters\nrank %d leaves\n", me, me);
    MPI_Type_free(&two);
    MPI_Type_free(&res);
    MPI_Type_free(&idx);
    MPI_Type_free(&vec);
    MPI_Finalize();
    return 0;
}
"""


def test_strided_types_give_what_mpi_says(cli, programs, tmp_path):
    source = tmp_path / "strides.c"
    source.write_text(STRIDES)
    programs.table["strides"] = (str(source), [])
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "2", "--entries", "1", "--runs", "3", "--regex", CS,
              "--mpi", programs["strides"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mpi", ("openmpi", "mpich"))
@pytest.mark.parametrize(
    "source", ("ra_typed.c", "probe_under_lock.c", "lamport_text.c", "suzuki_kasami.cpp")
)
def test_the_sources_run_under_a_real_mpi(tmp_path, mpi, source):
    if shutil.which(f"mpicc.{mpi}") is None:
        missing(f"mpicc.{mpi} is needed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)")
    exe = tmp_path / "program"
    cc = [f"mpicxx.{mpi}", "-std=c++17"] if source.endswith(".cpp") else [f"mpicc.{mpi}"]
    built = subprocess.run([*cc, "-O2", "-idirafter", str(INCLUDE), "-o", str(exe), str(MPI / source)],
                           capture_output=True, text=True)  # fmt: skip
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
    entered = {"ra_typed.c": 6, "probe_under_lock.c": 3}.get(source, 6)
    assert out.count("enters") + out.count("entering") + out.count("in the critical") == entered, out
