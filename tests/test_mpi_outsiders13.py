"""MPI programs in styles not covered before, and what they needed of mutexlab's MPI.

``tests/mpi/spin_ra.c``: Ricart–Agrawala whose shared state is guarded by a spin lock on an
``atomic_flag`` and whose main thread busy-waits on an atomic count of replies (before: the
``stalled`` finding, the spinner keeping its rank's turn for ever); its first version ended its
listener on the others' BYEs alone, and mutexlab found the REPLY sent after a BYE never received
(``-DBROKEN_EARLY_BYE``; now undecided: the waiting thread spins, and a spin is not told from a long
computation). ``tests/mpi/omp_permits.c``: K permits served by rank 0 with OpenMP — a
parallel region of two threads, ``#pragma omp critical`` and ``atomic`` (before: ``stalled``,
libgomp's own waits unseen). ``tests/mpi/sendrecv_ledger.cpp``: a 5,000-byte ledger shifted round
a ring by ``MPI_Sendrecv`` on a duplicated communicator, then ``MPI_Allreduce`` (before: a
Sendrecv whose message no rank received completed, and ``-DBROKEN_LAST_SEND``, which hangs under
Open MPI, passed). ``tests/mpi/ready_server.c``: a lock server answering with ``MPI_Rsend`` to
receives posted first, ``MPI_Waitany`` over one receive per client, and receives left pending at
``MPI_Finalize`` (before: nothing said so).
"""

from __future__ import annotations

import json
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
LEDGER = "(?P<enter>takes the ledger)|(?P<exit>passes it on)"
SERVER = "(?P<enter>ENTER)|(?P<exit>EXIT)"
CS = "(?P<enter>enters)|(?P<exit>leaves)"

# Ready sends of 5,000 bytes to each other before either receives: erroneous for a ready send (no
# receive posted), and under Open MPI a wait for ever, as two MPI_Sends of that size.
RSEND_FIRST = r"""
#include <mpi.h>
#include <stdio.h>
static char out[5000], in[5000];
int main(int argc, char **argv) {
    int me;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Rsend(out, sizeof out, MPI_CHAR, 1 - me, 1, MPI_COMM_WORLD);
    MPI_Recv(in, sizeof in, MPI_CHAR, 1 - me, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (me == 0) printf("rank %d enters\nrank %d leaves\n", me, me);
    MPI_Finalize();
    return 0;
}
"""

# A main thread waiting for its listener on a named semaphore (sem_open), the C library's own.
NAMED_SEM = r"""
#include <fcntl.h>
#include <mpi.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <unistd.h>
static sem_t *ready;
static void *listener(void *unused) {
    int x;
    (void)unused;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    sem_post(ready);
    return NULL;
}
int main(int argc, char **argv) {
    int me, p;
    char name[64];
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    snprintf(name, sizeof name, "/mutexlab-test-%d-%d", (int)getpid(), me);
    ready = sem_open(name, O_CREAT | O_EXCL, 0600, 0);
    sem_unlink(name);
    pthread_t t;
    pthread_create(&t, NULL, listener, NULL);
    if (me == 0) MPI_Send(&me, 1, MPI_INT, 1, 1, MPI_COMM_WORLD); /* the token to rank 1 */
    sem_wait(ready);
    printf("rank %d enters\n", me);
    printf("rank %d leaves\n", me);
    if (me == 1) MPI_Send(&me, 1, MPI_INT, 0, 1, MPI_COMM_WORLD); /* and back */
    pthread_join(t, NULL);
    MPI_Finalize();
    return 0;
}
"""

PROGRAMS = {
    "spin": ("spin_ra.c", []),
    "spin-ties": ("spin_ra.c", ["-DBROKEN_TIES"]),
    "spin-bye": ("spin_ra.c", ["-DBROKEN_EARLY_BYE"]),
    "permits": ("omp_permits.c", ["-fopenmp"]),
    "permits-double": ("omp_permits.c", ["-fopenmp", "-DBROKEN_DOUBLE_GRANT"]),
    "ledger": ("sendrecv_ledger.cpp", []),
    "ledger-last": ("sendrecv_ledger.cpp", ["-DBROKEN_LAST_SEND"]),
    "server": ("ready_server.c", []),
    "server-free": ("ready_server.c", ["-DBROKEN_FREE_ON_GRANT"]),
    "rsend-first": ("rsend_first.c", []),
    "named-sem": ("named_sem.c", []),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders13"), shared_cache(tmp_path_factory)
    written = {"rsend_first.c": RSEND_FIRST, "named_sem.c": NAMED_SEM}
    return Builds(PROGRAMS, out, cache, written, strict=True)


def found_and_replayed(cli, program: str, args: list[str], flags: list[str], tmp_path, finding: str) -> str:
    ce = tmp_path / "found.json"
    ran = cli("test", *flags, "--counterexample", str(ce), "--mpi", program, *args)
    assert ran.returncode == 1 and f"FINDING [{finding}]" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", program, *args)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    return ran.stdout


# -- a spin lock and a busy wait on atomics -------------------------------------------------------


def test_a_main_thread_spinning_on_an_atomic_count_passes(cli, programs):
    # before: FINDING [stalled], rank 0's main thread spinning while its listener never got its turn
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "6", "--regex", TOKEN,
              "--mpi", programs["spin"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_spinning_ranks_answering_tied_requests_are_found_and_replay(cli, programs, strategy, tmp_path):
    flags = ["mutex", "--np", "3", "--strategy", strategy, "--regex", TOKEN]
    out = found_and_replayed(cli, programs["spin-ties"], [], flags, tmp_path, "violation")
    assert "[capacity] cs (capacity 1) held by" in out, out


def test_a_listener_ending_on_the_others_byes_alone_is_undecided(cli, programs):
    # the main thread waiting for the lost REPLY spins: at rest it ran 1.5 s alone and still spun,
    # which a computation that long would too, so the deadlock is not claimed (docs/mpi.md#busy)
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "20", "--regex", TOKEN,
              "--mpi", programs["spin-bye"], "2")  # fmt: skip
    assert ran.returncode == 3 and "INCOMPLETE" in ran.stdout and "FINDING" not in ran.stdout, ran.stdout
    assert "thread 0 kept running without a call mutexlab can direct" in ran.stdout, ran.stdout
    assert "the deadlock finding this run would give needs it never to run on" in ran.stdout, ran.stdout


# -- OpenMP ------------------------------------------------------------------------------------------


def test_permits_served_by_an_openmp_thread_pass(cli, programs):
    # before: FINDING [stalled]: the threads waited in libgomp's barrier and critical section, unseen
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--runs", "8", "--regex", PERMITS,
              "--mpi", programs["permits"], "2", "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_permit_counted_twice_by_an_openmp_server_is_found_and_replays(cli, programs, tmp_path):
    flags = ["kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--regex", PERMITS]
    out = found_and_replayed(cli, programs["permits-double"], ["2", "2"], flags, tmp_path, "violation")
    assert "[capacity] cs (capacity 2) held by" in out, out


# -- MPI_Sendrecv and MPI_Rsend: standard sends -----------------------------------------------------


@pytest.mark.parametrize("sync", ([], ["--sync-sends"]))
def test_a_ledger_shifted_by_sendrecv_passes(cli, programs, sync):
    # the receive of a Sendrecv is posted before its send waits: a ring of them never waits for itself
    ran = cli("test", "mutex", "--np", "3", "--runs", "10", *sync, "--regex", LEDGER,
              "--mpi", programs["ledger"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_sendrecv_no_rank_receives_is_a_hang_naming_it(cli, programs):
    # before: PASS — the Sendrecv's 5,000 bytes never waited, where Open MPI waits for ever
    ran = cli("test", "mutex", "--np", "3", "--runs", "3", "--no-shrink", "--regex", LEDGER,
              "--mpi", programs["ledger-last"], "2")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, ran.stdout + ran.stderr
    assert "waits in MPI_Sendrecv (a standard send to rank 2, tag 7, communicator #1" in ran.stdout, (
        ran.stdout
    )


def test_ready_sends_to_each_other_before_a_receive_hang(cli, programs):
    # before: PASS — MPI_Rsend never waited, while MPI gives it a standard send's semantics
    ran = cli("test", "mutex", "--np", "2", "--runs", "3", "--regex", CS, "--mpi", programs["rsend-first"])
    assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, ran.stdout + ran.stderr
    assert "waits in MPI_Rsend (a standard send to rank" in ran.stdout, ran.stdout


def test_ready_sends_to_posted_receives_pass_and_pending_receives_are_noted(cli, programs):
    # before: a bare PASS, though every client left a receive pending at MPI_Finalize
    ran = cli("test", "mutex", "--np", "3", "--runs", "20", "--json", "--regex", SERVER,
              "--mpi", programs["server"], "2")  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    outcome = json.loads(ran.stdout)
    assert outcome["verdict"] == "PASS" and outcome["finalize_pending_runs"] == 20, outcome
    assert (
        "called MPI_Finalize with a request still pending: a receive (source" in outcome["finalize_pending"]
    )
    text = cli(
        "test", "mutex", "--np", "3", "--runs", "5", "--regex", SERVER, "--mpi", programs["server"], "2"
    )
    assert text.returncode == 0 and "PASS" in text.stdout, text.stdout
    assert "MPI says every request completes before MPI_Finalize" in text.stdout, text.stdout


def test_a_lock_freed_when_granted_is_found_and_replays(cli, programs, tmp_path):
    flags = ["mutex", "--np", "3", "--regex", SERVER]
    found_and_replayed(cli, programs["server-free"], ["2"], flags, tmp_path, "violation")


# -- what still keeps a rank busy is named ----------------------------------------------------------


def test_a_named_semaphore_stall_names_it(cli, programs):
    # before: "did not answer init … it is running, not waiting" or nothing: no word of the semaphore
    ran = cli("test", "mutex", "--np", "2", "--runs", "1", "--start-timeout", "3", "--timeout", "3",
              "--regex", CS, "--mpi", programs["named-sem"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, ran.stdout + ran.stderr
    assert "sem_wait on a semaphore shared between processes (sem_open" in ran.stdout, ran.stdout


# -- the same sources under Open MPI and MPICH ----------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mpi", ("openmpi", "mpich"))
@pytest.mark.parametrize(
    "source, args, entered",
    (
        ("spin_ra.c", ["2"], 6),
        ("omp_permits.c", ["2", "2"], 6),
        ("sendrecv_ledger.cpp", ["2"], 6),
        ("ready_server.c", ["2"], 4),
    ),
)
def test_the_sources_run_under_a_real_mpi(tmp_path, mpi, source, args, entered):
    if shutil.which(f"mpicc.{mpi}") is None:
        missing(f"mpicc.{mpi} is needed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)")
    exe = tmp_path / "program"
    cc = [f"mpicxx.{mpi}"] if source.endswith(".cpp") else [f"mpicc.{mpi}"]
    openmp = ["-fopenmp"] if source.startswith("omp_") else []
    built = subprocess.run(
        [*cc, "-O2", *openmp, "-o", str(exe), str(MPI / source)], capture_output=True, text=True
    )
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
    assert sum(out.count(word) for word in ("in CS", "acquired", "takes the ledger", "ENTER")) == entered, out
