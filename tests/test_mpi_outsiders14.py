"""MPI programs in styles not covered before (session 14), and what they needed of mutexlab's MPI.

``tests/mpi/o14_issend_ring.c``: a token ring whose token is handed on by ``MPI_Issend`` polled
to its end with ``MPI_Test`` in a loop, and awaited by ``MPI_Irecv`` polled the same way; its
broken twin (``-DBROKEN_TWO_TOKENS``) lets rank 1 start as if it held the token too, and mutexlab
finds two ranks inside at once. ``tests/mpi/o14_kmutex_getcount.c``: K permits kept by a
coordinator that probes ``MPI_ANY_SOURCE``, sizes each text message with ``MPI_Get_count`` and
receives it into a buffer of that size (requests of a different length each time); its broken twin
(``-DBROKEN_OFF_BY_ONE``) grants K+1 permits, and mutexlab finds three holders of two.
``tests/mpi/o14_persistent_ra.c``: Ricart–Agrawala in one thread, its requests fanned out by
``MPI_Startall`` over ``MPI_Send_init`` requests and its messages taken by one persistent receive
of any source and tag, restarted per message due; its broken twin (``-DBROKEN_TIE``) defers a
request of its own timestamp whoever made it, and mutexlab finds the two ranks waiting for each
other. None needed anything new of mutexlab's MPI.
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
TOKEN = "(?P<enter>in CS)|(?P<exit>out of CS)"
PERMITS = "(?P<enter>acquired)|(?P<exit>released)"


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    out, cache = tmp_path_factory.mktemp("outsiders14"), shared_cache(tmp_path_factory)
    table = {
        "issend-ring": ("o14_issend_ring.c", []),
        "issend-ring-two-tokens": ("o14_issend_ring.c", ["-DBROKEN_TWO_TOKENS"]),
        "permits": ("o14_kmutex_getcount.c", []),
        "permits-off-by-one": ("o14_kmutex_getcount.c", ["-DBROKEN_OFF_BY_ONE"]),
        "persistent-ra": ("o14_persistent_ra.c", []),
        "persistent-ra-tie": ("o14_persistent_ra.c", ["-DBROKEN_TIE"]),
    }
    return Builds(table, out, cache, strict=True)


def test_a_ring_handing_its_token_by_polled_issend_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "20", "--regex", TOKEN,
              "--mpi", programs["issend-ring"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_ring_with_two_tokens_is_a_violation(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "20", "--regex", TOKEN,
              "--mpi", programs["issend-ring-two-tokens"], "2")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "held by node-1" in ran.stdout and "node-2" in ran.stdout, ran.stdout


def test_permits_sized_by_get_count_pass(cli, programs):
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--runs", "20", "--regex", PERMITS,
              "--mpi", programs["permits"], "2", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_one_permit_too_many_is_a_violation(cli, programs):
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--runs", "40", "--regex", PERMITS,
              "--mpi", programs["permits-off-by-one"], "2", "2")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "(capacity 2) held by" in ran.stdout, ran.stdout


def test_ricart_agrawala_fanned_out_by_startall_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "20", "--regex", TOKEN,
              "--mpi", programs["persistent-ra"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_ricart_agrawala_deferring_both_of_a_tie_deadlocks(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "40", "--regex", TOKEN,
              "--mpi", programs["persistent-ra-tie"], "2")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.slow
@pytest.mark.parametrize("mpi", ("openmpi", "mpich"))
@pytest.mark.parametrize(
    "source, np, args, word, entered",
    (
        ("o14_issend_ring.c", 3, ["2"], "in CS", 6),
        ("o14_kmutex_getcount.c", 4, ["2", "2"], "acquired", 8),
        ("o14_persistent_ra.c", 3, ["2"], "in CS", 6),
    ),
)
def test_the_sources_run_under_a_real_mpi(tmp_path, mpi, source, np, args, word, entered):
    if shutil.which(f"mpicc.{mpi}") is None:
        missing(f"mpicc.{mpi} is needed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)")
    exe = tmp_path / "program"
    cc = [f"mpicxx.{mpi}"] if source.endswith(".cpp") else [f"mpicc.{mpi}"]
    built = subprocess.run([*cc, "-O2", "-o", str(exe), str(MPI / source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    run = (
        ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"] if mpi == "openmpi" else ["mpirun.mpich"]
    )
    proc = subprocess.Popen([*run, "-np", str(np), str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{source} did not end under mpirun.{mpi}")
    assert proc.returncode == 0, err
    assert out.count(word) == entered, out
