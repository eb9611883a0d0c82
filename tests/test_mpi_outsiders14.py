"""MPI programs in styles not covered before (session 14), and what they needed of mutexlab's MPI.

``tests/mpi/o14_issend_ring.c``: a token ring whose token is handed on by ``MPI_Issend`` polled
to its end with ``MPI_Test`` in a loop, and awaited by ``MPI_Irecv`` polled the same way; its
broken twin (``-DBROKEN_TWO_TOKENS``) lets rank 1 start as if it held the token too, and mutexlab
finds two ranks inside at once. It needed nothing new of mutexlab's MPI.
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


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    out, cache = tmp_path_factory.mktemp("outsiders14"), shared_cache(tmp_path_factory)
    table = {
        "issend-ring": ("o14_issend_ring.c", []),
        "issend-ring-two-tokens": ("o14_issend_ring.c", ["-DBROKEN_TWO_TOKENS"]),
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


@pytest.mark.slow
@pytest.mark.parametrize("mpi", ("openmpi", "mpich"))
@pytest.mark.parametrize("source, args, entered", (("o14_issend_ring.c", ["2"], 6),))
def test_the_sources_run_under_a_real_mpi(tmp_path, mpi, source, args, entered):
    if shutil.which(f"mpicc.{mpi}") is None:
        missing(f"mpicc.{mpi} is needed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)")
    exe = tmp_path / "program"
    cc = [f"mpicxx.{mpi}"] if source.endswith(".cpp") else [f"mpicc.{mpi}"]
    built = subprocess.run([*cc, "-O2", "-o", str(exe), str(MPI / source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    run = (
        ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"] if mpi == "openmpi" else ["mpirun.mpich"]
    )
    proc = subprocess.Popen([*run, "-np", "3", str(exe), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{source} did not end under mpirun.{mpi}")
    assert proc.returncode == 0, err
    assert out.count("in CS") == entered, out
