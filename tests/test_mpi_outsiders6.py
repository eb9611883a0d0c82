"""MPI programs written outside mutexlab, from the user docs alone, in styles not covered before,
and what they needed of mutexlab's MPI.

``tests/mpi/lamport_pq.cpp``: Lamport with ACK counting in C++17, a ``std::thread`` receiver
polling ``MPI_Iprobe`` between ``nanosleep``s, a ``std::priority_queue`` of (clock, rank),
``MPI_Type_create_struct``, ``std::cout`` never flushed, clocks from ``rand()`` seeded by rank.
``tests/mpi/ra_serialized.c``: K printers by Ricart–Agrawala under ``MPI_THREAD_SERIALIZED`` with
one global lock round every MPI call, a communicator by ``MPI_Comm_group``, ``MPI_Group_incl`` and
``MPI_Comm_create``, the listener's last word to main on a copy of ``MPI_COMM_SELF``, lines stamped
with ``MPI_Wtime``. ``tests/mpi/philo_testsome.c``: the dining philosophers single-threaded,
``MPI_Testsome`` over one posted receive per neighbour between ``sched_yield``s, an
``MPI_Sendrecv`` hello round the table, ``MPI_Cancel`` of the receives at the end.
``tests/mpi/groups_self.c``: what MPI says of groups, ``MPI_Comm_create`` and ``MPI_COMM_SELF``.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import Builds, mpicc, shared_cache

from mutexlab.commands.mpitest import unsupported

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
LAMPORT = "(?P<enter>entering)|(?P<exit>leaving)"
PRINTERS = "(?P<enter>printing job)|(?P<exit>printer released)"
PHILO_REGEX = (ROOT / "examples" / "mpi" / "philosophers.regex").read_text().strip()
BAD_ROOT = r"""#include <mpi.h>
int main(int argc, char **argv) {
    int x = 1, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD); /* the ranks are 0 to size - 1 */
    MPI_Finalize();
    return 0;
}
"""
# A token between the ranks; the holder's work is five sleeps in a row, nothing printed between
# them: work, which ends by itself under any MPI (before: the third sleep waited for a message no
# one would send, and the run was a false deadlock with the rank inside).
WORK_IN_SLEEPS = r"""#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int me, n, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (me > 0) MPI_Recv(&token, 1, MPI_INT, me - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("Process %d: entering section\n", me);
    for (int i = 0; i < 5; i++) usleep(1000);
    printf("Process %d: leaving section\n", me);
    if (me + 1 < n) MPI_Send(&token, 1, MPI_INT, me + 1, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""
PROGRAMS = {  # name: its source and flags, built by the tests that run it
    "lamport": ("lamport_pq.cpp", ["-std=c++17"]),
    "lamport-acks": ("lamport_pq.cpp", ["-std=c++17", "-DBROKEN_ACKS"]),
    "lamport-clock": ("lamport_pq.cpp", ["-std=c++17", "-DBROKEN_NO_CLOCK_UPDATE"]),
    "printers": ("ra_serialized.c", []),
    "printers-compare": ("ra_serialized.c", ["-DBROKEN_COMPARE"]),
    "philo": ("philo_testsome.c", []),
    "philo-early": ("philo_testsome.c", ["-DBROKEN_EARLY_RELEASE"]),
    "philo-stamps": ("philo_testsome.c", ["-DBROKEN_TWO_STAMPS"]),
    "groups": ("groups_self.c", []),
    "groups-order": ("groups_self.c", ["-DBROKEN_ORDER"]),
    "groups-outsider": ("groups_self.c", ["-DOUTSIDER"]),
    "bad-root": ("bad_root.c", []),
    "work-in-sleeps": ("work_in_sleeps.c", []),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders6"), shared_cache(tmp_path_factory)
    written = {"bad_root.c": BAD_ROOT, "work_in_sleeps.c": WORK_IN_SLEEPS}
    return Builds(PROGRAMS, out, cache, written, strict=True)


def found_and_replayed(
    cli, programs, tmp_path, problem, flags, broken, correct, args=(), says="FINDING [violation]"
):
    """The broken program's finding, its counterexample replayed on it (exit 1) and on the correct one."""
    ce = tmp_path / f"{broken}.json"
    ran = cli("test", problem, *flags, "--counterexample", str(ce), "--mpi", programs[broken], *args)
    assert ran.returncode == 1 and says in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", programs[broken], *args)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs[correct], *args)
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout
    return ran


# -- Lamport with a priority queue -------------------------------------------------------------


def test_lamport_with_a_priority_queue_passes(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "15", "--regex", LAMPORT,
              "--mpi", programs["lamport"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_lamport_one_ack_short_is_caught_and_replays(cli, programs, tmp_path):
    found_and_replayed(
        cli, programs, tmp_path, "mutex", ["--np", "3", "--regex", LAMPORT], "lamport-acks", "lamport"
    )


def test_lamport_whose_clock_never_takes_the_senders_is_caught_and_replays(cli, programs, tmp_path):
    # before: PASS in 300 runs: its two ranks inside at once need a REQUEST answered while one
    # sleeps in its section, and that sleep ran within one step (now a pause, woken by the director)
    found_and_replayed(
        cli,
        programs,
        tmp_path,
        "mutex",
        ["--np", "3", "--regex", LAMPORT],
        "lamport-clock",
        "lamport",
        args=("2",),
    )


def test_sleeps_in_a_row_inside_a_section_are_work_not_a_wait(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--strategy", "systematic", "--regex", LAMPORT,
              "--mpi", programs["work-in-sleeps"])  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


# -- K printers under MPI_THREAD_SERIALIZED, on a communicator of MPI_Comm_create --------------


def test_serialized_printers_on_a_created_communicator_pass(cli, programs):
    # before: MPI_Group, MPI_Comm_group, MPI_Group_incl, MPI_Comm_create were undeclared and
    # MPI_COMM_SELF refused: the program did not build
    for k, np in (("1", "3"), ("2", "4")):
        ran = cli("test", "kmutex", "-o", f"k={k}", "--np", np, "--entries", "2", "--runs", "20",
                  "--regex", PRINTERS, "--mpi", programs["printers"], k, "2")  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_printers_comparing_clock_or_rank_are_caught_and_replay(cli, programs, tmp_path):
    flags = ["-o", "k=1", "--np", "3", "--entries", "2", "--regex", PRINTERS]
    found_and_replayed(cli, programs, tmp_path, "kmutex", flags, "printers-compare", "printers", ("1", "2"))


# -- philosophers polling MPI_Testsome -------------------------------------------------------


def test_philosophers_polling_testsome_pass(cli, programs):
    ran = cli("test", "philosophers", "--np", "3", "--entries", "2", "--runs", "30", "--regex", PHILO_REGEX,
              "--mpi", programs["philo"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    # one meal each: a rank that polls while messages queue for it has many more schedules with
    # landings (docs/mpi.md#landings) and lingers: two meals each pass 10,000, one is 813
    ran = cli("test", "philosophers", "--np", "2", "--entries", "1", "--strategy", "systematic",
              "--regex", PHILO_REGEX, "--mpi", programs["philo"], "1")  # fmt: skip
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_philosophers_releasing_before_leaving_are_caught_and_replay(cli, programs, tmp_path):
    flags = ["--np", "3", "--entries", "1", "--regex", PHILO_REGEX]
    ran = found_and_replayed(cli, programs, tmp_path, "philosophers", flags, "philo-early", "philo")
    assert "[capacity] fork:" in ran.stdout, ran.stdout


def test_philosophers_stamping_each_request_anew_deadlock(cli, programs, tmp_path):
    flags = ["--np", "3", "--entries", "1", "--regex", PHILO_REGEX]
    found_and_replayed(
        cli, programs, tmp_path, "philosophers", flags, "philo-stamps", "philo", says="FINDING [deadlock]"
    )


# -- groups, MPI_Comm_create, MPI_COMM_SELF --------------------------------------------------


def every_rank_enters(cli, program: str, *flags: str):
    return cli("test", "kmutex", "-o", "k=4", "--np", "4", "--entries", "1", *flags, "--mpi", program)


def test_groups_comm_create_and_comm_self_give_what_mpi_says(cli, programs):
    ran = every_rank_enters(cli, programs["groups"], "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    # played again prefix by prefix, the ranks answer alike: nothing of a group differs run to run
    ran = every_rank_enters(cli, programs["groups"], "--strategy", "systematic", "--runs", "20")
    assert ran.returncode in (0, 3) and "nondeterministic" not in ran.stdout, ran.stdout


def test_the_group_checks_can_fail(cli, programs):
    ran = every_rank_enters(cli, programs["groups-order"], "--runs", "2")
    assert ran.returncode == 1 and "MPI_Comm_create ranks by world rank" in ran.stdout, ran.stdout


def test_a_group_outside_its_communicator_is_mpi_err_group(cli, programs):
    ran = every_rank_enters(cli, programs["groups-outsider"], "--runs", "2")
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "exited with status 8" in ran.stdout and "MPI_ERR_GROUP: MPI_Comm_create" in ran.stdout, ran.stdout


def test_a_collectives_bad_root_is_mpi_err_root(cli, programs):
    # before: the test stopped, exit 2, as if mutexlab's MPI lacked something; MPI makes it an
    # error of the program, fatal under the default handler: the crashed finding
    ran = cli("test", "mutex", "--np", "2", "--runs", "2", "--regex", LAMPORT, "--mpi", programs["bad-root"])
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    # shrunk to one rank, the bad root is 1 there (the program names its size as the root)
    assert "exited with status 7" in ran.stdout, ran.stdout
    assert re.search(r"MPI_ERR_ROOT: MPI_Bcast with root [12] \(there are ranks 0 to [01]\)", ran.stdout), (
        ran.stdout
    )


@pytest.mark.parametrize(
    ("source", "command"),
    (
        ("int main(int c, char **v) { MPI_Init(&c, &v); MPI_File f; (void)f; return 0; }\n", "mpicc"),
        ("MPI_File f;\nint main(int c, char **v) { MPI_Init(&c, &v); return 0; }\n", "mpicxx"),
    ),
)
def test_an_mpi_type_mutexlab_lacks_is_named(programs, tmp_path, source, command):
    # before: gcc's "unknown type name" and g++'s "does not name a type" went unread: exit 1
    path = tmp_path / ("file.c" if command == "mpicc" else "file.cpp")
    path.write_text("#include <mpi.h>\n" + source)
    made = mpicc(programs.cache, "-o", str(tmp_path / "file"), str(path), command=command)
    assert made.returncode == 2, made.stderr
    assert "MPI_File is not part of mutexlab's MPI" in made.stderr, made.stderr


@pytest.mark.parametrize(
    ("reason", "page"),
    (
        (
            "MPI_Type_create_resized with a lower bound other than 0 is not supported by mutexlab's MPI",
            "docs/mpi.md lists what mutexlab's MPI implements",
        ),
        ("MPI_Comm_dup: more than 64 communicators at once (besides MPI_COMM_WORLD)", "docs/mpi.md#limits"),
        ("MPI_Buffer_detach with no buffer attached", "docs/mpi.md)"),
    ),
)
def test_a_stopped_rank_points_to_the_page_that_explains_it(reason, page):
    said = unsupported([reason])
    assert said.endswith(f"({page}" if page.endswith(")") else f"({page})"), said
    if "not supported" not in reason:
        assert "lists what mutexlab's MPI implements" not in said, said
