"""MPI programs written outside mutexlab, from the user docs alone, in styles not covered before.

``tests/mpi/k_ring_sendrecv.c``: K tokens round a ring, every rank swapping with its neighbours
by ``MPI_Sendrecv`` (int[3] with a Lamport clock), ``MPI_Bcast`` of the arguments,
``MPI_Barrier`` and ``MPI_Reduce`` at both ends, ``rand_r`` seeded by rank, ``usleep`` work,
``MPI_Abort`` on bad arguments. ``tests/mpi/philo_waitany.cpp``: the dining philosophers as a
C++ class (``std::thread``, ``std::mutex``, ``std::condition_variable``), a listener in
``MPI_Waitany`` over one pre-posted ``MPI_Irecv`` per neighbour on an ``MPI_Comm_dup``,
``std::cout`` with ``'\\n'`` and ``std::endl``. ``tests/mpi/kprint_bsend.c``: Raymond's K-entry
Ricart–Agrawala, ``MPI_Bsend`` through ``MPI_Buffer_attach``, int[4] messages, a pthread worker
and a main thread in ``pthread_cond_timedwait`` with a busy flag, ``setvbuf(stdout, _IOFBF)``,
``stderr`` chatter. ``tests/mpi/bees_waitany.c``: the bees single-threaded, ``MPI_Waitany``
(``-DUSE_TESTSOME``: ``MPI_Testsome`` and ``usleep``; ``-DUSE_PERSISTENT``: ``MPI_Recv_init``,
``MPI_Startall``, ``MPI_Start``)
over pre-posted receives, ``printf`` without ``fflush``. ``tests/mpi/elves_token.c``: the
hamster killers with one token round the elves carrying the round's contracts, pins and poison,
the mayor in ``MPI_Waitall`` over a round's pre-posted completions.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
RING = r"^P\d+ (?:(?P<enter>in)|(?P<exit>out of)) CS"
CS = "(?P<enter>ENTER CS)|(?P<exit>EXIT CS)"
PHILO_REGEX = (MPI / "philo_waitany.regex").read_text().strip()
BEES_REGEX = (MPI / "bees_waitany.regex").read_text().strip()
# one reed, one flower: the second bee gets the reed once the first is dead, and then needs
# nobody's permission: its three flower visits (print, usleep, print) come in one step
LAST_BEE = ["-o", "reeds=1", "-o", "flowers=1", "-o", "eggs=3", "-o", "cocoons=6"]
LAST_BEE_ARGS = ["1", "1", "3", "6"]
SMALL = ["-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2"]
SMALL_ARGS = ["2", "1", "1", "2"]
ELVES_REGEX = (MPI / "elves_token.regex").read_text().strip()
TWO_CONTRACTS = ["-o", "contracts=2", "-o", "rounds=1"]
# A student's wait: the main thread prints while it waits for the listener's flag, sleeping
# between lines; rank 1 tells rank 0 it may go, then waits for rank 0 to be done.
PRINTS_WHILE_WAITING = r"""#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
static volatile int go;
static void *listen_(void *a) {
    int x;
    (void)a;
    MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    go = 1;
    return NULL;
}
int main(int argc, char **argv) {
    int me, p, x = 1;
    pthread_t t;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        pthread_create(&t, NULL, listen_, NULL);
        while (!go) {
            printf("rank 0 waits for its turn\n");
            usleep(1000);
        }
        pthread_join(t, NULL);
        printf("rank 0 enters\n");
        printf("rank 0 leaves\n");
        MPI_Send(&x, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
    } else {
        MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        MPI_Recv(&x, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 enters\n");
        printf("rank 1 leaves\n");
    }
    MPI_Finalize();
    return 0;
}
"""
PROGRAMS = {  # name: its source and flags, built by the tests that run it
    "ring": ("k_ring_sendrecv.c", []),
    "ring-extra": ("k_ring_sendrecv.c", ["-DBROKEN_EXTRA_TOKEN"]),
    "ring-keep": ("k_ring_sendrecv.c", ["-DBROKEN_KEEP"]),
    "philo": ("philo_waitany.cpp", ["-std=c++17"]),
    "philo-tie": ("philo_waitany.cpp", ["-std=c++17", "-DBROKEN_TIE"]),
    "philo-done-early": ("philo_waitany.cpp", ["-std=c++17", "-DBROKEN_DONE_EARLY"]),
    "kprint": ("kprint_bsend.c", []),
    "kprint-stale": ("kprint_bsend.c", ["-DBROKEN_STALE_ACK"]),
    "kprint-split": ("kprint_bsend.c", ["-DUSE_SPLIT"]),
    "kprint-split-stale": ("kprint_bsend.c", ["-DUSE_SPLIT", "-DBROKEN_STALE_ACK"]),
    "bees": ("bees_waitany.c", []),
    "bees-testsome": ("bees_waitany.c", ["-DUSE_TESTSOME"]),
    "bees-flower": ("bees_waitany.c", ["-DBROKEN_FLOWER_COUNT"]),
    "bees-persistent": ("bees_waitany.c", ["-DUSE_PERSISTENT"]),
    "bees-persistent-flower": ("bees_waitany.c", ["-DUSE_PERSISTENT", "-DBROKEN_FLOWER_COUNT"]),
    "waits-printing": ("prints_while_waiting.c", []),
    "elves": ("elves_token.c", []),
    "elves-poison": ("elves_token.c", ["-DBROKEN_POISON"]),
    "elves-early-stop": ("elves_token.c", ["-DBROKEN_EARLY_STOP"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders5"), shared_cache(tmp_path_factory)
    return Builds(PROGRAMS, out, cache, {"prints_while_waiting.c": PRINTS_WHILE_WAITING})


def left_behind(program: str) -> list[str]:
    """Processes of ``program`` still running (zombies not yet reaped are no leak)."""
    ps = subprocess.run(["ps", "-eo", "pid=,stat=,args="], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if program in line and not line.split()[1].startswith("Z")]


# -- a sleep between printed lines is work -----------------------------------------------------


def test_a_last_bee_sleeping_between_its_lines_is_not_a_deadlock(cli, programs):
    # Before: a single-threaded rank's third usleep with nothing new in between made it wait
    # until something happened; nothing could (every other bee was dead): [deadlock], 5 eggs of 6.
    ran = cli(
        "test", "bees", "--np", "2", *LAST_BEE, "--runs", "3", "--regex", BEES_REGEX,
        "--mpi", programs["bees"], *LAST_BEE_ARGS,
    )  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    assert not left_behind(programs["bees"])


def test_a_thread_printing_while_it_waits_still_comes_to_wait(cli, programs):
    # the lines count as work a hundred sleeps in a row, no more: then the listener's message comes
    ran = cli(
        "test", "mutex", "--np", "2", "--entries", "1", "--runs", "2", "--json",
        "--regex", "(?P<enter>enters)|(?P<exit>leaves)", "--mpi", programs["waits-printing"],
    )  # fmt: skip
    assert ran.returncode == 0 and '"verdict": "PASS"' in ran.stdout, ran.stdout + ran.stderr


# -- K tokens round a ring by MPI_Sendrecv -----------------------------------------------------


def ring(cli, program: str, *flags: str, np: str = "4", k: str = "2"):
    return cli(
        "test", "kmutex", "-o", f"k={k}", "--np", np, "--regex", RING, *flags, "--mpi", program, k, "1"
    )


def test_a_ring_of_sendrecv_passes_every_way(cli, programs):
    ran = ring(cli, programs["ring"], "--entries", "2", "--runs", "10")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = ring(cli, programs["ring"], "--strategy", "pct", "--runs", "10")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ran = ring(cli, programs["ring"], "--strategy", "systematic", np="2", k="1")
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_a_token_kept_as_well_as_passed_is_found_and_replays(cli, programs, tmp_path):
    ce = tmp_path / "keep.json"
    ran = ring(cli, programs["ring-keep"], "--no-shrink", "--counterexample", str(ce), np="3", k="1")
    assert ran.returncode == 1 and "[capacity] cs (capacity 1)" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", programs["ring-keep"], "1", "1")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs["ring"], "1", "1")
    assert fixed.returncode == 0 and "did NOT reproduce" in fixed.stdout, fixed.stdout
    extra = ring(cli, programs["ring-extra"])
    assert extra.returncode == 1 and "(capacity 2) held by" in extra.stdout, extra.stdout


def test_mpi_abort_on_bad_arguments_is_a_crash_with_its_words(cli, programs):
    ran = cli("test", "kmutex", "--np", "3", "--regex", RING, "--mpi", programs["ring"], "5", "1")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "[crashed]: node 1 exited with status 3" in ran.stdout, ran.stdout
    # the shrinker may show the crash on fewer ranks, where the program names its own bound
    assert "MPI_Abort with errorcode 3" in ran.stdout, ran.stdout
    assert re.search(r"need 1 <= K <= [23]\b", ran.stdout), ran.stdout


# -- philosophers in a C++ class, MPI_Waitany over pre-posted receives --------------------------


def philo(cli, program: str, *flags: str, args: tuple[str, ...] = ()):
    return cli("test", "philosophers", "--np", "3", "--regex", PHILO_REGEX, *flags, "--mpi", program, *args)


def test_philosophers_in_a_class_pass_and_their_tie_bug_replays(cli, programs, tmp_path):
    ran = philo(cli, programs["philo"], "--entries", "2", "--runs", "10", args=("2",))
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ce = tmp_path / "tie.json"
    found = philo(cli, programs["philo-tie"], "--no-shrink", "--counterexample", str(ce))
    assert found.returncode == 1 and "[capacity] fork:" in found.stdout, found.stdout + found.stderr
    again = cli("replay", str(ce), "--mpi", programs["philo-tie"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_a_listener_deaf_after_done_is_a_deadlock(cli, programs):
    # a neighbour's REPLY sent after its DONE lands where no receive is posted any more
    ran = philo(
        cli, programs["philo-done-early"], "--entries", "2", "--strategy", "pct", "--runs", "30",
        "--no-shrink", args=("2",),
    )  # fmt: skip
    assert ran.returncode == 1 and "[deadlock]" in ran.stdout, ran.stdout + ran.stderr
    assert re.search(r"still waits? for the resource", ran.stdout), ran.stdout


# -- K printers by MPI_Bsend, a timed condition wait, full buffering ----------------------------


def kprint(cli, program: str, *flags: str):
    return cli(
        "test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "2", "--regex", CS, *flags,
        "--mpi", program, "2", "2",
    )  # fmt: skip


def test_bsend_and_a_timed_wait_pass_and_a_stale_ack_is_found(cli, programs):
    # setvbuf(stdout, _IOFBF): the lines still come back in order with the messages
    ran = kprint(cli, programs["kprint"], "--runs", "10")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    found = kprint(cli, programs["kprint-stale"], "--runs", "100", "--no-shrink")
    assert found.returncode == 1 and "[capacity] cs (capacity 2)" in found.stdout, found.stdout


def test_comm_split_runs_and_a_stale_ack_on_it_is_found(cli, programs, tmp_path):
    # Before: MPI_Comm_split stopped the test, exit 2, "not supported by mutexlab's MPI".
    ran = kprint(cli, programs["kprint-split"], "--runs", "10")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ce = tmp_path / "split-stale.json"
    found = kprint(cli, programs["kprint-split-stale"], "--runs", "100", "--counterexample", str(ce))
    assert found.returncode == 1 and "[capacity] cs (capacity 2)" in found.stdout, found.stdout
    again = cli("replay", str(ce), "--mpi", programs["kprint-split-stale"], "2", "2")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    assert not left_behind(programs["kprint-split"])


# -- the bees single-threaded -------------------------------------------------------------------


def test_bees_by_testsome_pass_and_a_flower_bug_is_found(cli, programs):
    ran = cli(
        "test", "bees", "--np", "4", *SMALL, "--runs", "10", "--regex", BEES_REGEX,
        "--mpi", programs["bees-testsome"], *SMALL_ARGS,
    )  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    found = cli(
        "test", "bees", "--np", "4", *SMALL, "--regex", BEES_REGEX, "--no-shrink",
        "--mpi", programs["bees-flower"], *SMALL_ARGS,
    )  # fmt: skip
    assert found.returncode == 1 and "[capacity] flower (capacity 1)" in found.stdout, found.stdout


def test_bees_by_persistent_receives_pass_and_a_flower_bug_is_found(cli, programs, tmp_path):
    # Before: the program did not link, "MPI_Recv_init, MPI_Start, MPI_Startall are not part of
    # mutexlab's MPI" (exit 2). A restarted receive is a posted receive, ordered by the director.
    ran = cli(
        "test", "bees", "--np", "4", *SMALL, "--runs", "10", "--regex", BEES_REGEX,
        "--mpi", programs["bees-persistent"], *SMALL_ARGS,
    )  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    last = cli(
        "test", "bees", "--np", "2", *LAST_BEE, "--runs", "3", "--regex", BEES_REGEX,
        "--mpi", programs["bees-persistent"], *LAST_BEE_ARGS,
    )  # fmt: skip
    assert last.returncode == 0 and "PASS" in last.stdout, last.stdout + last.stderr
    ce = tmp_path / "flower.json"
    found = cli(
        "test", "bees", "--np", "4", *SMALL, "--regex", BEES_REGEX, "--counterexample", str(ce),
        "--mpi", programs["bees-persistent-flower"], *SMALL_ARGS,
    )  # fmt: skip
    assert found.returncode == 1 and "[capacity] flower (capacity 1)" in found.stdout, found.stdout
    again = cli("replay", str(ce), "--mpi", programs["bees-persistent-flower"], *SMALL_ARGS)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    assert not left_behind(programs["bees-persistent"])


# -- the hamster killers by one token ----------------------------------------------------------


def test_elves_by_one_token_pass_and_short_poison_is_found_and_replays(cli, programs, tmp_path):
    ran = cli(
        "test", "elves", "--np", "4", "--runs", "10", "--regex", ELVES_REGEX, "--mpi", programs["elves"]
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    ce = tmp_path / "poison.json"
    found = cli(
        "test", "elves", "--np", "4", "--regex", ELVES_REGEX, "--no-shrink", "--counterexample", str(ce),
        "--mpi", programs["elves-poison"],
    )  # fmt: skip
    assert found.returncode == 1 and "[capacity] poison (capacity 10)" in found.stdout, found.stdout
    again = cli("replay", str(ce), "--mpi", programs["elves-poison"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_an_elf_going_home_with_its_tools_is_a_violation(cli):
    # the mayor stopped the last round one completion early; elf-2 got STOP before the token and
    # went home holding contract 1.2, a pin and 3 poison. Before: SAFE, "every elf ends ELF_DONE".
    ran = cli("verify", str(MPI / "elves_token_home_holding.log"))
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "[went-home-holding] elf-2 ended ELF_DONE still holding contract 1.2, pins, poison" in ran.stdout


def test_a_mayor_stopping_a_completion_early_is_found(cli, programs):
    ran = cli(
        "test", "elves", "--np", "3", *TWO_CONTRACTS, "--regex", ELVES_REGEX, "--no-shrink",
        "--mpi", programs["elves-early-stop"], "3", "10", "2", "1",
    )  # fmt: skip
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "[stop-before-done]" in ran.stdout or "[went-home-holding]" in ran.stdout, ran.stdout


# -- the same sources under a real mpirun ---------------------------------------------------------


@pytest.mark.slow
def test_the_sources_run_under_mpich(tmp_path):
    if shutil.which("mpicc.mpich") is None or shutil.which("mpicxx.mpich") is None:
        missing("MPICH is needed (apt-get install mpich libmpich-dev)")
    runs = (  # source, compiler, ranks, arguments, what an entry prints, how many
        ("k_ring_sendrecv.c", "mpicc.mpich", "4", ["2", "1"], r"^P\d+ in CS", 8),
        ("kprint_bsend.c", "mpicc.mpich", "3", ["1", "2"], r"ENTER CS", 6),
        ("philo_waitany.cpp", "mpicxx.mpich", "3", ["2"], r"starts eating", 6),
        ("bees_waitany.c", "mpicc.mpich", "2", LAST_BEE_ARGS, r"laid in reed", 6),
        ("elves_token.c", "mpicc.mpich", "4", [], r"hamsters killed", 12),
    )
    runs += (  # the persistent receives and the split communicator
        ("kprint_bsend.c", "mpicc.mpich", "3", ["1", "2"], r"ENTER CS", 6, "-DUSE_SPLIT"),
        ("bees_waitany.c", "mpicc.mpich", "2", LAST_BEE_ARGS, r"laid in reed", 6, "-DUSE_PERSISTENT"),
    )
    for source, compiler, np, args, entry, entries, *flags in runs:
        exe = tmp_path / source.split(".")[0]
        built = subprocess.run(
            [compiler, "-O2", *flags, "-o", str(exe), str(MPI / source)], capture_output=True, text=True
        )
        assert built.returncode == 0, built.stderr
        proc = subprocess.Popen(
            ["mpirun.mpich", "-np", np, str(exe), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            pytest.fail(f"{source} did not end under mpirun.mpich")
        assert proc.returncode == 0, err
        assert len(re.findall(entry, out, re.MULTILINE)) == entries, out
