"""A client that sends its request again at each timeout (``tests/mpi/o20_retry_coord.c``).

Its loop polls for the grant and, past an ``MPI_Wtime`` deadline, sends the request again; the
server ignores a repeat. Correct under every order of delivery. Before, a ``linger`` (its loop
let go round with nothing arriving, docs/mpi.md#linger) ran its 20,000 polls with the clock
moved on to each deadline in turn, so the client sent its request a thousand times in one step:
``FINDING [flood] … node 2 wrote more than 1000 lines in answer to one input (linger)``, under
every strategy, replayed. A send ends a linger now: each repeat is a step of its own.

The broken server queues repeats and grants one to a client that has left: the others wait for
ever, sending again at each timeout. At ``--max-steps`` that run had no step left but the
lingers at rest the cut left untried, and it was called a deadlock ("nothing can move") that
replay could not reproduce; the lingers are tried at the cut too now, and it is ``no-rest``.

A send ending a linger, a loop that sends at every round (a heartbeat) acts at most 8 times in a
row before another input of its rank: what it would do after more rounds never runs, and the
verdict says so (never "searched exhaustively").
"""

from __future__ import annotations

import shutil

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

CS = "(?P<enter>enters)|(?P<exit>leaves)"

# Rank 0 grants rank 1 the lock, then waits for the release sending a heartbeat every 100 polls.
HEARTBEAT = r"""
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, x = 0, flag = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Request r;
        MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
        MPI_Irecv(&x, 1, MPI_INT, 1, 2, MPI_COMM_WORLD, &r);
        for (long i = 0; !flag; i++) {
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            if (!flag && i % 100 == 99) MPI_Send(&x, 1, MPI_INT, 1, 3, MPI_COMM_WORLD);
            usleep(100);
        }
        printf("rank 0 enters\nrank 0 leaves\n");
    } else {
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\n");
        fflush(stdout);
        usleep(100000);
        printf("rank 1 leaves\n");
        fflush(stdout);
        MPI_Send(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        for (int f = 1; f;) {
            MPI_Iprobe(0, 3, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE);
            if (f) MPI_Recv(&x, 1, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }
    MPI_Finalize();
    return 0;
}
"""
PROGRAMS = {
    "retry": ("o20_retry_coord.c", []),
    "retry-broken": ("o20_retry_coord.c", ["-DBROKEN"]),
    "heartbeat": ("heartbeat.c", []),
}
ACTING = "not covered: a rank's loop that acts as it waits"


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    out = tmp_path_factory.mktemp("retries")
    return Builds(PROGRAMS, out, shared_cache(tmp_path_factory), {"heartbeat.c": HEARTBEAT})


def run_retry(cli, program: str, *more: str):
    return cli(
        "test", "mutex", "--np", "3", "--entries", "0,1,1", "--regex", CS, *more, "--mpi", program, "1"
    )


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_a_client_sending_again_at_each_timeout_passes(cli, programs, strategy):
    # before: FINDING [flood] (step 1): node 2 wrote more than 1000 lines … (linger)
    ran = run_retry(cli, programs["retry"], "--strategy", strategy, "--runs", "40")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    assert "flood" not in ran.stdout, ran.stdout


def test_a_server_granting_a_repeat_again_never_rests_and_replays(cli, programs, tmp_path):
    # before: FINDING [deadlock] (step 2000): nothing can move …, which replay did not reproduce
    ce = tmp_path / "retry.json"
    ran = run_retry(cli, programs["retry-broken"], "--counterexample", str(ce))
    assert ran.returncode == 1 and "FINDING [no-rest]" in ran.stdout, ran.stdout + ran.stderr
    assert "did not come to rest within 2,000 steps" in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", programs["retry-broken"], "1")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs["retry"], "1")
    assert fixed.returncode in (0, 3) and "did NOT reproduce" in fixed.stdout, fixed.stdout


def test_a_heartbeat_loop_cut_at_its_eighth_linger_is_never_searched_exhaustively(cli, programs):
    # without the cut told: "PASS — searched exhaustively: 173 schedules" (before sends ended a
    # linger: 200 heartbeats a linger, 9,633 runs in 300 s, INCOMPLETE for the budget)
    for strategy, code, verdict in (("systematic", 3, "INCOMPLETE"), ("random", 0, "PASS")):
        ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--regex", CS, "--strategy", strategy,
                  "--runs", "400", "--mpi", programs["heartbeat"])  # fmt: skip
        assert ran.returncode == code and f": {verdict} —" in ran.stdout, ran.stdout + ran.stderr
        assert ACTING in ran.stdout and "searched exhaustively" not in ran.stdout, ran.stdout
