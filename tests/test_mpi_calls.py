"""The MPI calls beyond point-to-point (docs/mpi.md#subset): collectives made of messages the
director orders, copies of MPI_COMM_WORLD, MPI_Wtime as mutexlab's clock, C++ threads
(std::thread, std::condition_variable, std::this_thread::sleep_for) taking turns, --regex-file,
and examples/mpi/hive.cpp, the C++ bees that used them all first (docs/mpi.md#hive)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import COLONY, COLONY_ARGS, PRINTED_BEES, ROOT, mpicc, shared_cache

COLLECTIVES = ROOT / "tests" / "mpi" / "collectives.c"
STD_THREAD = ROOT / "tests" / "mpi" / "std_thread.cpp"
PRINTED_REGEX_FILE = ROOT / "examples" / "mpi" / "bees_printf.regex"
HIVE = ROOT / "examples" / "mpi" / "hive.cpp"
HIVE_REGEX_FILE = ROOT / "examples" / "mpi" / "hive.regex"
KMUTEX_LAMPORT = ROOT / "tests" / "mpi" / "kmutex_lamport.c"
KMUTEX_LINES = r"(?P<enter>>>> CS)|(?P<exit><<< CS)"
NAPS = ("NAP_CLOCK", "NAP_SELECT", "NAP_POLL")  # clock_nanosleep, select and poll of no descriptor


# Rank 0 cancels an MPI_Issend rank 1 never receives: its wait ends, cancelled, and rank 1, told
# to look once rank 0's wait has ended, finds no such message. Then each rank enters once.
CANCELS_ISSEND = r"""#include <mpi.h>
#include <mutexlab.h>
int main(int argc, char **argv) {
    int rank, x = 7, flag = 0, go = 0;
    MPI_Request r;
    MPI_Status s;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Issend(&x, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r);
        MPI_Cancel(&r);
        MPI_Wait(&r, &s);
        MPI_Test_cancelled(&s, &flag);
        if (!flag) return 3;
        MPI_Send(&go, 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(&go, 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Iprobe(0, 5, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        if (flag) return 4; /* a send cancelled was received all the same */
    }
    mutexlab_enter("cs");
    mutexlab_exit("cs");
    MPI_Finalize();
    return 0;
}
"""
REPLACES_TO_NOBODY = r"""#include <mpi.h>
int main(int argc, char **argv) {
    int x = 1;
    MPI_Init(&argc, &argv);
    MPI_Sendrecv_replace(&x, 1, MPI_INT, 9, 0, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return 0;
}
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("mpi-calls")
    cache = shared_cache(tmp_path_factory)
    (out / "cancels.c").write_text(CANCELS_ISSEND)
    (out / "replaces.c").write_text(REPLACES_TO_NOBODY)
    found = {}
    for name, source, flags, command in (
        ("cancels", out / "cancels.c", [], "mpicc"),
        ("replaces", out / "replaces.c", [], "mpicc"),
        *((nap, KMUTEX_LAMPORT, ["-DPOLLING", f"-D{nap}"], "mpicc") for nap in NAPS),
        ("collectives", COLLECTIVES, [], "mpicc"),
        ("collectives-wrong", COLLECTIVES, ["-DBROKEN_EXPECTATION"], "mpicc"),
        ("bees-printf", PRINTED_BEES, [], "mpicc"),
        ("std-thread", STD_THREAD, [], "mpicxx"),
        ("std-thread-wait-for", STD_THREAD, ["-DWAIT_FOR"], "mpicxx"),
        ("hive", HIVE, [], "mpicxx"),
        ("hive-broken", HIVE, ["-DBROKEN_COUNT"], "mpicxx"),
    ):
        if command == "mpicxx" and shutil.which("g++") is None:
            continue
        built = mpicc(
            cache, "-O2", "-Wall", "-Werror", *flags, "-o", str(out / name), str(source), command=command
        )
        assert built.returncode == 0, built.stderr
        found[name] = str(out / name)
    return found


def every_rank_enters(cli, program: str, *flags: str, np: int = 4):
    return cli("test", "kmutex", "-o", f"k={np}", "--np", str(np), "--entries", "1", *flags, "--mpi", program)


@pytest.mark.parametrize("flags", (["--strategy", "random"], ["--strategy", "pct"], ["--reorder"]))
def test_collectives_and_a_copied_communicator_give_what_mpi_says(cli, made, flags):
    # Each rank checks every result and crashes on a wrong one; all well, every rank enters.
    ran = every_rank_enters(cli, made["collectives"], *flags, "--runs", "40")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_the_collectives_checks_can_fail(cli, made):
    ran = every_rank_enters(cli, made["collectives-wrong"], "--runs", "5")
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr


def test_a_schedule_played_again_reads_the_same_clock(cli, made):
    # The ring's message carries MPI_Wtime: with the real clock, systematic search (which plays
    # prefixes again) reports the rank nondeterministic; mutexlab's clock repeats.
    ran = every_rank_enters(cli, made["collectives"], "--strategy", "systematic", "--runs", "60", np=3)
    assert "nondeterministic" not in ran.stdout, ran.stdout
    assert ran.returncode in (0, 3) and (
        "searched exhaustively" in ran.stdout or "budget ended" in ran.stdout
    )


def test_cxx_threads_condition_variables_and_sleeps_are_seen_waiting(cli, made):
    if "std-thread" not in made:
        missing("g++ is not installed: mutexlab mpicxx cannot be tried")
    for strategy in ("random", "systematic"):
        for program in ("std-thread", "std-thread-wait-for"):
            ran = cli(
                "test", "mutex", "--np", "3", "--entries", "1", "--strategy", strategy, "--runs", "30",
                "--timeout", "2", "--mpi", made[program],
            )  # fmt: skip
            assert ran.returncode == 0 and "PASS" in ran.stdout, program + ran.stdout + ran.stderr


def test_the_regex_may_come_from_a_file(cli, made, tmp_path):
    ran = cli(
        "test", "bees", "--np", "5", *COLONY, "--runs", "10", "--regex-file", str(PRINTED_REGEX_FILE),
        "--mpi", made["bees-printf"], *COLONY_ARGS,
    )  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    two = tmp_path / "two.regex"
    two.write_text("(?P<enter>a)\n(?P<exit>b)\n")
    for flags, says in (
        (["--regex-file", str(tmp_path / "none")], "No such file"),
        (["--regex-file", str(two)], "write the regex on one line"),
        (["--regex-file", str(PRINTED_REGEX_FILE), "--regex", "(?P<enter>x)"], "not both"),
    ):
        refused = cli("test", "bees", "--np", "5", *flags, "--mpi", made["bees-printf"])
        assert refused.returncode == 2 and says in refused.stderr, refused.stderr
    assert Path(made["bees-printf"]).exists()


def hive(cli, program: str, *flags: str):
    return cli(
        "test", "bees", "--np", "5", *COLONY, "--regex-file", str(HIVE_REGEX_FILE), *flags,
        "--mpi", program, *COLONY_ARGS,
    )  # fmt: skip


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_the_cxx_hive_passes_and_its_broken_count_is_caught_and_replays(cli, made, tmp_path, strategy):
    if "hive" not in made:
        missing("g++ is not installed: mutexlab mpicxx cannot be tried")
    passed = hive(cli, made["hive"], "--strategy", strategy, "--runs", "30")
    assert passed.returncode == 0 and "PASS" in passed.stdout, passed.stdout + passed.stderr
    scenario = tmp_path / "hive.json"
    caught = hive(cli, made["hive-broken"], "--strategy", strategy, "--counterexample", str(scenario))
    assert caught.returncode == 1 and "[capacity] flower" in caught.stdout, caught.stdout + caught.stderr
    again = cli("replay", str(scenario), "--mpi", made["hive-broken"], *COLONY_ARGS)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_two_threads_sending_in_one_step_replay_the_same(cli, made):
    # The hive's listener and main thread both send within one step. Before the threads took
    # turns, systematic search (which plays prefixes again) called the correct hive nondeterministic
    # on its second run; now a budget of runs ends with nothing found.
    if "hive" not in made:
        missing("g++ is not installed: mutexlab mpicxx cannot be tried")
    ran = hive(cli, made["hive"], "--strategy", "systematic", "--runs", "30")
    assert "nondeterministic" not in ran.stdout, ran.stdout
    assert ran.returncode == 3 and "budget ended" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("flags", (["--strategy", "random"], ["--strategy", "systematic"], ["--reorder"]))
def test_a_cancelled_issend_no_receive_matched_completes_cancelled(cli, made, flags):
    # Before, MPI_Cancel left a pending MPI_Issend pending, and its wait blocked for ever: the
    # deadlock finding on a program MPI lets end (MPI_Test_cancelled true, the message gone).
    ran = cli("test", "kmutex", "-o", "k=2", "--np", "2", "--entries", "1", *flags, "--runs", "20",
              "--mpi", made["cancels"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_sendrecv_replace_to_a_rank_not_there_is_its_own_crash(cli, made):
    # Before, it said "MPI_Send to rank 9", a call the program never made, and stopped the test
    # unjudged (exit 2), where mpirun ends the program in MPI_ERR_RANK: a finding, as MPI_ERR_TAG is.
    ran = cli("test", "mutex", "--np", "2", "--mpi", made["replaces"])
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "status 6" in ran.stdout and "MPI_ERR_RANK: MPI_Sendrecv_replace to rank 9" in ran.stdout


@pytest.mark.parametrize("nap", NAPS)
def test_a_sleep_by_clock_nanosleep_select_or_poll_is_a_poll(cli, made, nap):
    # Before, the rank slept for real in them and its loop never waited where the library saw:
    # [stalled] on a program that is right (its mutexlab clock, and replay, were off too).
    ran = cli(
        "test", "kmutex", "-o", "k=2", "--np", "3", "--entries", "2", "--runs", "20", "--start-timeout", "5",
        "--timeout", "3", "--regex", KMUTEX_LINES, "--mpi", made[nap], "2", "2",
    )  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
