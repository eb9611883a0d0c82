"""A thread stopped running with nothing new in its rank (docs/mpi.md#busy), at a run's rest.

A computation of a few hundred milliseconds between two MPI calls, in a rank where nothing else
happens, was stopped as a busy wait and left there: a false ``deadlock`` finding. At rest such a
thread now runs alone a longer stretch, and one that still spins makes the run undecided.
"""

from __future__ import annotations

import shutil

import pytest
from conftest import missing
from test_mpi import Builds, shared_cache

TOKEN = "(?P<enter>in CS)|(?P<exit>out of CS)"

# Rank 0 computes (about 0.3 s of processor time), enters, and sends the sum to rank 1, which
# enters once it has it: nothing else happens in rank 0 meanwhile.
LONG_WORK = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int me;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        volatile unsigned long sum = 0;
        for (unsigned long i = 0; i < 300000000UL; i++) sum += i ^ (sum >> 3);
        unsigned long got = sum;
        printf("rank 0 in CS\nrank 0 out of CS\n");
        MPI_Send(&got, 1, MPI_UNSIGNED_LONG, 1, 1, MPI_COMM_WORLD);
    } else {
        unsigned long got;
        MPI_Recv(&got, 1, MPI_UNSIGNED_LONG, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("rank 1 in CS\nrank 1 out of CS\n");
    }
    MPI_Finalize();
    return 0;
}
"""

# Rank 0's helper thread spins on a flag nobody sets; its main thread waits for it to end.
SPIN_FOREVER = r"""
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
static atomic_int go;
static void *helper(void *unused) {
    (void)unused;
    while (!atomic_load(&go)) ;
    return NULL;
}
int main(int argc, char **argv) {
    int me, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        pthread_t t;
        pthread_create(&t, NULL, helper, NULL);
        pthread_join(t, NULL);
    }
    printf("rank %d in CS\nrank %d out of CS\n", me, me);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    out, cache = tmp_path_factory.mktemp("stretch13"), shared_cache(tmp_path_factory)
    written = {"long_work.c": LONG_WORK, "spin_forever.c": SPIN_FOREVER}
    table = {"long-work": ("long_work.c", []), "spin-forever": ("spin_forever.c", [])}
    return Builds(table, out, cache, written, strict=True)


def test_a_long_computation_alone_in_its_rank_passes(cli, programs):
    # before: FINDING [deadlock] — rank 0's computation was stopped after 30 ms and left there
    # (without --entries: INCOMPLETE, no rank entered)
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "2", "--regex", TOKEN,
              "--mpi", programs["long-work"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_thread_spinning_for_ever_is_undecided_naming_it(cli, programs):
    # before: FINDING [deadlock], a finding that needs the spinning thread to run on (without
    # --entries: PASS, though rank 0 never ends)
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "1", "--regex", TOKEN,
              "--mpi", programs["spin-forever"])  # fmt: skip
    assert ran.returncode == 3 and "INCOMPLETE" in ran.stdout, ran.stdout + ran.stderr
    assert "FINDING" not in ran.stdout and "PASS" not in ran.stdout, ran.stdout
    assert "rank 0's thread 1 kept running without a call mutexlab can direct" in ran.stdout, ran.stdout
    assert "the deadlock finding this run would give needs it never to run on" in ran.stdout, ran.stdout
    # the headline names the cause (before: "the audit could not decide everything", an audit's words)
    head = ran.stdout.split("INCOMPLETE", 1)[1].splitlines()[0]
    assert "but rank 0's thread 1 kept running without an MPI call mutexlab can direct" in head, head
    assert "audit" not in head, head


def test_the_stretch_is_the_directors_to_give(cli, programs, monkeypatch):
    # The library takes the stretch's length from the director's `stretch` line (its "ns"), so
    # STRETCH_SECONDS is the one limit: 20 ms cannot hold rank 0's 0.3 s, which 1.5 s does above.
    # before: mpi.c's own STRETCH_NS (1.5 s) ran it through anyway, whatever the director said
    from mutexlab.director import search, world

    monkeypatch.setattr(world, "STRETCH_SECONDS", 0.02)
    monkeypatch.setattr(search, "STRETCH_SECONDS", 0.02)
    ran = cli("test", "mutex", "--np", "2", "--entries", "1", "--runs", "1", "--regex", TOKEN,
              "--mpi", programs["long-work"])  # fmt: skip
    assert ran.returncode == 3 and "INCOMPLETE" in ran.stdout, ran.stdout + ran.stderr
    assert "rank 0's thread 0 kept running" in ran.stdout, ran.stdout
