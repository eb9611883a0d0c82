"""A run at rest with an MPI rank whose main thread never ends is a hang (docs/mpi.md#hangs).

``tests/mpi/hang_after_cs.c``: rank 1 waits, after its last critical section, in an
``MPI_Recv`` nobody sends to; every entry was served, so before the ``hang`` finding every
strategy said PASS (systematic search "searched exhaustively") of a program that never ends under
any MPI. With ``-DHELPER`` a helper thread waits there while the main thread reaches
``MPI_Finalize``: no hang. ``tests/mpi/kra_waitany_scan.c -DBROKEN_OVERWRITE``: a peer's newer
request overwrites its deferred one, whose reply is never sent, and that peer waits for ever in
its final ``MPI_Waitany`` loop (found under MPICH's mpirun first, as a run that never ended).
``-DLINGER`` and ``-DTESTSOME``: loops of the program's own that end by a count, which mutexlab's
model holds (a peer's, a rank's own): they end under MPICH, so no hang may be claimed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
CS = "(?P<enter>enters)|(?P<exit>leaves)"
PRINTERS = "(?P<enter>printer taken)|(?P<exit>given back)"
PROGRAMS = {
    "hang": ("hang_after_cs.c", []),
    "helper": ("hang_after_cs.c", ["-DHELPER"]),
    "linger": ("hang_after_cs.c", ["-DLINGER"]),
    "testsome": ("hang_after_cs.c", ["-DTESTSOME"]),
    "printers": ("kra_waitany_scan.c", []),
    "printers-overwrite": ("kra_waitany_scan.c", ["-DBROKEN_OVERWRITE"]),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("hang")
    found = {}
    for name, (source, flags) in PROGRAMS.items():
        made = mpicc(
            out / "cache", "-O2", "-Wall", "-Werror", *flags, "-o", str(out / name), str(MPI / source)
        )
        assert made.returncode == 0, made.stderr
        found[name] = str(out / name)
    return found


def test_a_rank_waiting_for_ever_after_its_last_entry_is_a_hang_that_replays(cli, built, tmp_path):
    ce = tmp_path / "hang.json"
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "3", "--regex", CS,
              "--counterexample", str(ce), "--mpi", built["hang"])  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert (
        "FINDING [hang] (step 1): nothing can move and node-2 never ended: rank 1 waits in MPI_Recv "
        "(source 0, tag 7)" in ran.stdout
    ), ran.stdout
    again = cli("replay", str(ce), "--mpi", built["hang"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    searched = cli(
        "test", "mutex", "--np", "2", "--strategy", "systematic", "--regex", CS, "--mpi", built["hang"]
    )
    assert searched.returncode == 1 and "FINDING [hang]" in searched.stdout, searched.stdout
    assert "searched exhaustively" not in searched.stdout
    # A helper thread waiting there while the main thread reaches MPI_Finalize: the rank ended.
    for strategy in ("random", "systematic"):
        ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "3", "--strategy", strategy,
                  "--regex", CS, "--mpi", built["helper"])  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, strategy + ran.stdout + ran.stderr


def test_a_deferred_request_overwritten_by_the_same_peers_next_is_a_hang(cli, built):
    for np in ("3", "4"):
        ran = cli("test", "kmutex", "-o", "k=2", "--np", np, "--entries", "2", "--strategy", "pct", "--runs", "200",
                  "--no-shrink", "--regex", PRINTERS, "--mpi", built["printers-overwrite"])  # fmt: skip
        assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, np + ran.stdout + ran.stderr
        assert "waits in MPI_Waitany" in ran.stdout, ran.stdout
    # The fix answers the older request when the newer one is deferred.
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "3", "--entries", "2", "--strategy", "pct", "--runs", "60",
              "--regex", PRINTERS, "--mpi", built["printers"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_loop_that_ends_by_a_count_is_no_hang_of_its_rank_or_its_peers(cli, built):
    # Before: rank 1, waiting for what rank 0 sends after its 2,000 polls, was claimed hung (rank
    # 0's loop said a plain done); and a bounded MPI_Testsome loop "waits in MPI_Testsome".
    for name in ("linger", "testsome"):
        ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "3", "--no-shrink",
                  "--regex", CS, "--mpi", built[name])  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, name + ran.stdout + ran.stderr


def test_a_hang_under_reorder_does_not_speak_for_any_mpi(cli, built):
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "3", "--no-shrink", "--reorder",
              "--regex", CS, "--mpi", built["hang"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, ran.stdout + ran.stderr
    assert "with --reorder or --duplicate, which no MPI does" in ran.stdout, ran.stdout
    assert "under any MPI" not in ran.stdout, ran.stdout
