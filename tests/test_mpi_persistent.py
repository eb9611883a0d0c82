"""Persistent requests and MPI_Comm_split in mutexlab's MPI (docs/mpi.md#subset): a started send
is a send, a started receive a receive posted then, both ordered by the director; a split's
communicator numbers its ranks by key, then old rank, and its messages match only on it.
``tests/mpi/persistent_split.c`` checks what MPI says on each rank and crashes on a wrong value."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess

import pytest
from conftest import missing
from test_mpi import ROOT, mpicc, shared_cache

PROGRAM = ROOT / "tests" / "mpi" / "persistent_split.c"
INCLUDE = ROOT / "shared" / "mutexlab" / "mpi" / "include"
REGEX = "(?P<enter>enters)|(?P<exit>leaves)"


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("mpi-persistent")
    found = {}
    for name, flags in (
        ("ok", []),
        ("key-order", ["-DBROKEN_KEY_ORDER"]),
        ("start-active", ["-DSTART_ACTIVE"]),
    ):
        built = mpicc(
            shared_cache(tmp_path_factory),
            "-O2",
            "-Wall",
            "-Werror",
            *flags,
            "-o",
            str(out / name),
            str(PROGRAM),
        )
        assert built.returncode == 0, built.stderr
        found[name] = str(out / name)
    return found


def every_rank_enters(cli, program: str, *flags: str):
    return cli("test", "kmutex", "-o", "k=4", "--np", "4", "--entries", "1", *flags, "--mpi", program)


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_persistent_requests_and_split_give_what_mpi_says(cli, made, strategy):
    # restarted sends and receives (Startall over both), inactive requests, posting order, a
    # synchronous persistent send; split by two colors with reversed keys, a world message not
    # taken on the half, collectives on the half and a copy of it, MPI_UNDEFINED
    ran = every_rank_enters(cli, made["ok"], "--strategy", strategy, "--runs", "30")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_the_checks_can_fail(cli, made):
    ran = every_rank_enters(cli, made["key-order"], "--runs", "3")
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "ranks by old rank" in ran.stdout, ran.stdout


def test_a_start_of_an_active_request_is_mpi_err_request(cli, made, tmp_path):
    ce = tmp_path / "start.json"
    ran = every_rank_enters(cli, made["start-active"], "--runs", "3", "--counterexample", str(ce))
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "exited with status 19" in ran.stdout, ran.stdout
    assert "MPI_ERR_REQUEST: MPI_Start of a persistent request that is active" in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", made["start-active"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_a_split_program_searched_and_replayed(cli, made):
    # every delivery chosen by the director: systematic search plays prefixes again and finds the
    # ranks deterministic (the split's allgather and the restarted requests included)
    ran = every_rank_enters(cli, made["ok"], "--strategy", "systematic", "--runs", "40")
    assert "nondeterministic" not in ran.stdout, ran.stdout
    assert ran.returncode in (0, 3) and (
        "searched exhaustively" in ran.stdout or "budget ended" in ran.stdout
    )


@pytest.mark.slow
@pytest.mark.parametrize("mpi", ("openmpi", "mpich"))
def test_the_source_runs_under_a_real_mpi(tmp_path, mpi):
    if shutil.which(f"mpicc.{mpi}") is None:
        missing(f"mpicc.{mpi} is needed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)")
    exe = tmp_path / "persistent_split"
    built = subprocess.run(
        [f"mpicc.{mpi}", "-O2", "-idirafter", str(INCLUDE), "-o", str(exe), str(PROGRAM)],
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    run = (
        ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"] if mpi == "openmpi" else ["mpirun.mpich"]
    )
    proc = subprocess.Popen(
        [*run, "-np", "4", str(exe)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"did not end under mpirun.{mpi}")
    assert proc.returncode == 0, err
    assert len(re.findall(r"enters$", out, re.MULTILINE)) == 4, out
