"""MPI programs written outside mutexlab, from docs/mpi.md alone, in their authors' own styles.

``tests/mpi/hivekeeper.cpp``: the bees in C++ — a keeper thread on rank 0 arbitrating reeds and
flowers, a helper thread per rank in ``MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG)``, ``MPI_Isend`` with
``MPI_Wait``, Lamport clocks by hand, ``MPI_Barrier`` at both ends, ``std::cout`` lines (with
``-DUNSYNCED``, after ``std::ios_base::sync_with_stdio(false)``). ``tests/mpi/town.c``: the
hamster killers as a student writes them — the mayor at rank 0 keeps pins and poison, ``printf``
without ``fflush``, ``stderr`` chatter, ``rand()``, ``usleep``. ``tests/mpi/colony.c``: the bees in C,
a pthread listener in ``MPI_Recv(MPI_ANY_SOURCE, MPI_ANY_TAG)``, the main thread on a
``pthread_cond``, structs as ``MPI_BYTE``, ANSI-coloured lines in its own words (``FLOWER+``).
``tests/mpi/token_ssend.c`` and ``tests/mpi/ssend_ra.c``: ``MPI_Ssend``/``MPI_Issend``,
``MPI_Waitsome``/``MPI_Testsome``, ``MPI_Sendrecv_replace``, ``MPI_Bcast`` of ``argv``.
``tests/mpi/kmutex_cond.c``: K-mutex with a listener thread, ``fprintf(stdout)`` and ``puts``.
``tests/mpi/lamport_set.cpp``: Lamport in C++17, ``std::set`` queue, ``cv.wait`` with a predicate.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import Builds, mpicc, shared_cache

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
HIVE_REGEX = (MPI / "hivekeeper.regex").read_text().strip()
TOWN_REGEX = (MPI / "town.regex").read_text().strip()
COLONY_REGEX = (MPI / "colony.regex").read_text().strip()
CS = "(?P<enter>ENTER CS)|(?P<exit>EXIT CS)"
COLONY = ["-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=4"]
COLONY_ARGS = ["2", "1", "2", "4"]
# A student's "mutex": rank 0 greets rank 1 (by number), then every rank enters at once.
GREETS_RANK_1 = """#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int me, x = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    if (me == 1) MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d enters\\n", me);
    printf("rank %d leaves\\n", me);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out = tmp_path_factory.mktemp("outsiders")
    cache = shared_cache(tmp_path_factory)  # the library, built once for both fixtures
    found = {}
    # every line on standard error, as a student who learnt that stderr is not buffered writes it
    (out / "town_stderr.c").write_text(
        re.sub(r"\bprintf\(", "fprintf(stderr, ", (MPI / "town.c").read_text())
    )
    (out / "greets.c").write_text(GREETS_RANK_1)
    for name, source, flags, command in (
        ("town-stderr", out / "town_stderr.c", [], "mpicc"),
        ("greets", out / "greets.c", [], "mpicc"),
        ("hive", "hivekeeper.cpp", [], "mpicxx"),
        ("hive-unsynced", "hivekeeper.cpp", ["-DUNSYNCED"], "mpicxx"),
        ("hive-unsynced-broken", "hivekeeper.cpp", ["-DUNSYNCED", "-DBROKEN_FLOWERS"], "mpicxx"),
        ("hive-forget", "hivekeeper.cpp", ["-DBROKEN_FORGET"], "mpicxx"),
        ("hive-yield", "hivekeeper.cpp", ["-DYIELD"], "mpicxx"),
        ("hive-yield-broken", "hivekeeper.cpp", ["-DYIELD", "-DBROKEN_FLOWERS"], "mpicxx"),
        ("town", "town.c", [], "mpicc"),
        ("town-last-words", "town.c", ["-DLAST_WORDS"], "mpicc"),
        ("town-pins", "town.c", ["-DBROKEN_PINS"], "mpicc"),
        ("town-crash", "town.c", ["-DBROKEN_CRASH"], "mpicc"),
    ):
        made = mpicc(cache, "-O2", *flags, "-o", str(out / name), str(MPI / source), command=command)
        assert made.returncode == 0, made.stderr
        found[name] = str(out / name)
    return found


C_PROGRAMS = {  # name: its source and flags, built by the tests that run it (each build is seconds of gcc)
    "colony": ("colony.c", []),
    "colony-stamp": ("colony.c", ["-DBROKEN_STAMP"]),
    "token": ("token_ssend.c", []),
    "token-early": ("token_ssend.c", ["-DBROKEN_EARLY"]),
    "ssend-ra": ("ssend_ra.c", []),
    "issend-ra": ("ssend_ra.c", ["-DISSEND"]),
    "kmutex": ("kmutex_cond.c", []),
    "kmutex-broken": ("kmutex_cond.c", ["-DBROKEN_K"]),
    "lamport": ("lamport_set.cpp", ["-std=c++17"]),
    "lamport-head": ("lamport_set.cpp", ["-std=c++17", "-DBROKEN_HEAD"]),
}


@pytest.fixture(scope="module")
def c_programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    return Builds(C_PROGRAMS, tmp_path_factory.mktemp("c-outsiders"), shared_cache(tmp_path_factory))


def bees(cli, program: str, *flags: str):
    return cli(
        "test", "bees", "--np", "4", *COLONY, "--regex", HIVE_REGEX, *flags, "--mpi", program, *COLONY_ARGS
    )


def town(cli, program: str, *flags: str, args: tuple[str, ...] = ()):
    return cli("test", "elves", "--np", "4", "--regex", TOWN_REGEX, *flags, "--mpi", program, *args)


def test_the_hive_keeper_passes(cli, built):
    ran = bees(cli, built["hive"], "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_cout_unsynced_from_stdio_is_read_in_order_with_the_messages(cli, built):
    # Before: std::cout's own buffer was never flushed (the rank never exits), no line came back,
    # and the correct colony was a deadlock "with no state reported".
    ran = bees(cli, built["hive-unsynced"], "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    broken = bees(cli, built["hive-unsynced-broken"], "--runs", "20")
    assert broken.returncode == 1 and "[capacity] flower (capacity 1)" in broken.stdout, broken.stdout


def test_a_bee_spinning_on_yield_waits_for_its_helper_thread(cli, built):
    # Before: std::this_thread::yield() was no poll, the helper thread never got its turn, and
    # the correct colony was [stalled] after --timeout.
    ran = bees(cli, built["hive-yield"], "--runs", "20", "--timeout", "2")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    broken = bees(cli, built["hive-yield-broken"], "--runs", "20", "--timeout", "2")
    assert broken.returncode == 1 and "[capacity] flower (capacity 1)" in broken.stdout, broken.stdout


def test_a_keeper_that_forgets_a_waiting_bee_is_a_deadlock(cli, built):
    ran = bees(cli, built["hive-forget"], "--runs", "20")
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr


def test_the_students_town_passes_and_its_pin_bug_is_found(cli, built):
    ran = town(cli, built["town"], "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    pins = town(cli, built["town-pins"], "-o", "pins=2", args=("2", "10", "6", "2"))
    assert pins.returncode == 1 and "[capacity] pins (capacity 2)" in pins.stdout, pins.stdout


def test_a_last_line_without_its_newline_still_counts(cli, built):
    # Before: "elf 1: going home" without "\n" stayed in the library's buffer for ever: no elf
    # ended ELF_DONE, and the correct town was a deadlock.
    ran = town(cli, built["town-last-words"], "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_rank_that_segfaults_is_a_crash(cli, built):
    ran = town(cli, built["town-crash"], "--runs", "20", "--no-shrink")
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "exited with status 139 (128 + 11: killed by SIGSEGV)" in ran.stdout, ran.stdout


@pytest.mark.parametrize("compiler", ("mpicc.openmpi", "mpicc.mpich"))
def test_a_program_built_with_another_mpicc_is_refused_naming_the_fix(cli, tmp_path, compiler):
    # Before: each rank ran as a singleton of the other MPI and printed its lines on the protocol:
    # a [garbage] finding, exit 1, the program never judged (and Open MPI's orted started per rank).
    if shutil.which(compiler) is None:
        missing(
            f"{compiler} is not installed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)"
        )
    program = tmp_path / "town-other"
    subprocess.run([compiler, "-O2", "-o", str(program), str(MPI / "town.c")], check=True)
    ran = town(cli, str(program), "--runs", "3")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "is linked with another MPI (libmpi" in ran.stderr and "'mutexlab mpicc'" in ran.stderr


@pytest.mark.parametrize("launcher", ("mpirun", "mpiexec", "mpirun.openmpi", "srun"))
def test_a_launcher_before_the_program_is_refused(cli, built, launcher):
    # Before: 'mpirun -np 4 ./town' ran mpirun as every rank: [crashed], exit 1.
    ran = town(cli, launcher, "--runs", "3", args=("-np", "4", built["town"]))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert f"--mpi takes the program itself, not '{launcher}'" in ran.stderr


def test_a_town_printing_on_standard_error_is_told_where_its_lines_went(cli, built):
    # Before: the finding asked only "does --regex read rank 0's lines?": the regex was right,
    # the lines were on standard error, which mutexlab does not read.
    ran = town(cli, built["town-stderr"], "--runs", "3", "--no-shrink")
    assert ran.returncode == 1 and "FINDING [no-progress-seen]" in ran.stdout, ran.stdout + ran.stderr
    assert "standard output (its standard error is not matched)" in ran.stdout, ran.stdout


def test_an_openmp_rank_is_directed(cli, tmp_path, tmp_path_factory):
    # Before: FINDING [stalled] (libgomp's own futex waits, unseen); and before that, "wrote
    # nothing at all within 1 s of its start … must flush it", wrong for a rank. Now a thread
    # that waits in libgomp is stopped as a poll (docs/mpi.md#threads): the run is directed.
    program = tmp_path / "omp-ra"
    made = mpicc(shared_cache(tmp_path_factory), "-fopenmp", "-O2", "-o", str(program), str(MPI / "omp_ra.c"))
    if made.returncode != 0 and "omp.h" in made.stderr:
        missing("gcc has no OpenMP (omp.h)")
    assert made.returncode == 0, made.stderr
    ran = cli(
        "test", "mutex", "--np", "2", "--regex", "(?P<enter>enters)|(?P<exit>leaves)", "--runs", "5",
        "--entries", "1", "--mpi", str(program),
    )  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_shrinking_below_the_ranks_a_program_needs_keeps_the_finding(cli, built):
    # Before: shrinking tried one rank, whose MPI_Send to rank 1 stopped the program, and the
    # whole test became "the program stopped: MPI_Send to rank 1: there are ranks 0 to 0", exit 2:
    # the violation found on two ranks was lost.
    ran = cli(
        "test",
        "mutex",
        "--np",
        "2",
        "--regex",
        "(?P<enter>enters)|(?P<exit>leaves)",
        "--mpi",
        built["greets"],
    )
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "on 2 nodes" in ran.stdout or "N=2" in ran.stdout


def colony(cli, program: str, *flags: str):
    return cli(
        "test", "bees", "--np", "4", *COLONY, "--regex", COLONY_REGEX, *flags, "--mpi", program, *COLONY_ARGS
    )


def test_a_resource_named_by_its_group_whatever_the_line_says(cli, c_programs):
    # Before: only the text a group 'resource' matched named the resource: a bee printing
    # "FLOWER+" could be read as entering 'FLOWER' ([unknown-resource], a violation) and the group
    # 'resource_flower' named nothing ("an enter without its group 'resource'", exit 2).
    ran = colony(cli, c_programs["colony"], "--runs", "15")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    stamp = colony(cli, c_programs["colony-stamp"], "--runs", "30", "--no-shrink")
    assert stamp.returncode == 1 and "[capacity] reed:" in stamp.stdout, stamp.stdout + stamp.stderr


def mutex(cli, program: str, *flags: str, np: str = "3", args: tuple[str, ...] = ()):
    return cli("test", "mutex", "--np", np, "--regex", CS, *flags, "--mpi", program, *args)


def test_a_colony_read_from_argv_unlike_the_options_is_named(cli, c_programs):
    # Before: the bees laid 2 eggs each as their arguments said while the options kept the
    # problem's 5: [deadlock] with [too-few-eggs], and no word of the options being another colony.
    ran = cli(
        "test", "bees", "--np", "3", "--runs", "1", "--no-shrink", "--regex", COLONY_REGEX,
        "--mpi", c_programs["colony"], *COLONY_ARGS,
    )  # fmt: skip
    assert ran.returncode == 1 and "FINDING" in ran.stdout, ran.stdout + ran.stderr
    assert "says eggs 2 where the test's options say eggs=5" in ran.stdout, ran.stdout
    assert "-o eggs=2" in ran.stdout


def test_ssend_completes_once_received_and_a_token_passed_early_is_found(cli, c_programs, tmp_path):
    # Before: MPI_Ssend, MPI_Issend, MPI_Waitsome, MPI_Testsome and MPI_Sendrecv_replace stopped
    # the test (exit 2) or failed to link.
    ran = mutex(cli, c_programs["token"], "--entries", "2", "--runs", "20", args=("2",))
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    scenario = tmp_path / "early.json"
    early = mutex(cli, c_programs["token-early"], "--counterexample", str(scenario))
    assert early.returncode == 1 and "FINDING [violation]" in early.stdout, early.stdout + early.stderr
    again = cli("replay", str(scenario), "--mpi", c_programs["token-early"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_two_ranks_ssending_to_each_other_wait_for_ever(cli, c_programs):
    # MPI_Ssend returns only once a receive has matched it: every rank sending its REQUEST first,
    # none receiving, is a deadlock here as under any MPI (a standard send would have passed).
    ran = mutex(cli, c_programs["ssend-ra"], "--entries", "1", "--no-shrink")
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr
    # Without --entries nothing entered, but the ranks never end: each waits in its MPI_Ssend.
    quiet = mutex(cli, c_programs["ssend-ra"], "--runs", "5", "--no-shrink")
    assert quiet.returncode == 1 and "FINDING [hang]" in quiet.stdout, quiet.stdout
    assert "waits in MPI_Ssend (a synchronous send to rank" in quiet.stdout, quiet.stdout
    fixed = mutex(cli, c_programs["issend-ra"], "--entries", "1", "--runs", "30")
    assert fixed.returncode == 0 and "PASS" in fixed.stdout, fixed.stdout + fixed.stderr
    exhaustive = mutex(cli, c_programs["issend-ra"], "--entries", "1", "--strategy", "systematic", np="2")
    assert exhaustive.returncode == 0 and "searched exhaustively" in exhaustive.stdout, exhaustive.stdout


def test_kmutex_with_a_listener_thread_fprintf_and_puts(cli, c_programs):
    regex = "(?P<enter>entering section)|(?P<exit>leaving section)"
    ran = cli(
        "test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "1", "--runs", "20", "--regex", regex,
        "--mpi", c_programs["kmutex"], "2", "1",
    )  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    broken = cli(
        "test", "kmutex", "-o", "k=2", "--np", "4", "--entries", "1", "--no-shrink", "--regex", regex,
        "--mpi", c_programs["kmutex-broken"], "2", "1",
    )  # fmt: skip
    assert broken.returncode == 1 and "[capacity] cs (capacity 2)" in broken.stdout, broken.stdout


def test_lamport_in_cpp17_with_a_predicate_wait_passes_and_its_head_bug_replays(cli, c_programs, tmp_path):
    regex = "(?P<enter>-> CS)|(?P<exit><- CS)"
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "30", "--regex", regex,
              "--mpi", c_programs["lamport"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    scenario = tmp_path / "head.json"
    head = cli("test", "mutex", "--np", "3", "--entries", "1", "--regex", regex, "--counterexample",
               str(scenario), "--mpi", c_programs["lamport-head"])  # fmt: skip
    assert head.returncode == 1 and "FINDING [violation]" in head.stdout, head.stdout + head.stderr
    again = cli("replay", str(scenario), "--mpi", c_programs["lamport-head"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
