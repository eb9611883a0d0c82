"""MPI programs written outside mutexlab, from docs/mpi.md alone, in their authors' own styles.

``tests/mpi/hivekeeper.cpp``: the bees in C++ — a keeper thread on rank 0 arbitrating reeds and
flowers, a helper thread per rank in ``MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG)``, ``MPI_Isend`` with
``MPI_Wait``, Lamport clocks by hand, ``MPI_Barrier`` at both ends, ``std::cout`` lines (with
``-DUNSYNCED``, after ``std::ios_base::sync_with_stdio(false)``). ``tests/mpi/town.c``: the
hamster killers as a student writes them — the mayor at rank 0 keeps pins and poison, ``printf``
without ``fflush``, ``stderr`` chatter, ``rand()``, ``usleep``.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
HIVE_REGEX = (MPI / "hivekeeper.regex").read_text().strip()
TOWN_REGEX = (MPI / "town.regex").read_text().strip()
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
    cache = out / "cache"
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


def test_an_openmp_rank_is_stalled_with_a_note_on_its_threads_not_on_buffering(cli, tmp_path):
    # Before: "wrote nothing at all within 1 s of its start … a program whose output is buffered
    # … must flush it", wrong for a rank (its library writes the protocol), and nothing more.
    program = tmp_path / "omp-ra"
    made = mpicc(tmp_path / "cache", "-fopenmp", "-O2", "-o", str(program), str(MPI / "omp_ra.c"))
    if made.returncode != 0 and "omp.h" in made.stderr:
        missing("gcc has no OpenMP (omp.h)")
    assert made.returncode == 0, made.stderr
    ran = cli(
        "test", "mutex", "--np", "2", "--regex", "(?P<enter>enters)|(?P<exit>leaves)", "--runs", "2",
        "--start-timeout", "1", "--timeout", "1", "--mpi", str(program),
    )  # fmt: skip
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, ran.stdout + ran.stderr
    assert "note: a rank answers once every thread of it waits in a call mutexlab's MPI knows" in ran.stdout
    assert "OpenMP is not supported" in ran.stdout


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
