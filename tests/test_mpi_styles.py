"""MPI programs in styles the other MPI tests do not cover, and programs that are no mutexlab MPI.

``tests/mpi/ra_poll.c``: Ricart–Agrawala with no thread — ``MPI_Irecv`` kept posted and polled
by ``MPI_Testany`` between ``usleep``s, ``MPI_Pack``/``MPI_Unpack`` into ``MPI_PACKED``,
``MPI_Bsend`` from an attached buffer, ``MPI_Cancel`` of the receives left at the end.
``tests/mpi/dining.cpp``: Chandy–Misra's philosophers, a ``std::thread`` polling ``MPI_Iprobe``,
a packed struct as ``MPI_BYTE``, no ``MPI_Finalize``. ``tests/mpi/token_town.c``: the hamster
killers on a token ring, the town in an ``MPI_Type_contiguous`` token; ``tests/mpi/token_bees.c``:
the bees on a token ring, packed by ``MPI_Pack``, taken by ``MPI_Probe`` and ``MPI_Get_count``. And what a student may hand in that mutexlab's
MPI cannot run — Fortran, mpi4py, a program that never speaks the protocol — refused, exit 2.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc, shared_cache

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
CS = r"^P\d+ (?:(?P<enter>in)|(?P<exit>out of)) CS"
PHILOSOPHERS = str(ROOT / "examples" / "mpi" / "philosophers.regex")
ELVES = str(ROOT / "examples" / "mpi" / "elves.regex")
BEES = str(ROOT / "examples" / "mpi" / "bees_printf.regex")
COLONY = ["-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2"]
# Rank 0 sends three ints; the others receive two (a struct that grew on one side only).
TRUNCATES = """#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int me, size, msg[3] = {1, 2, 3}, got[2];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (me > 0) MPI_Recv(got, 2, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("P%d in CS\\nP%d out of CS\\n", me, me);
    if (me == 0)
        for (int p = 1; p < size; p++) MPI_Send(msg, 3, MPI_INT, p, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""

# Rank 1 gives rank 0 one second (by MPI_Wtime) to leave before it enters itself: a bug MPI shows
# whenever rank 0 is slower than that. -DPATIENT waits for rank 0's word however long it takes.
IMPATIENT = """#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int me, word = 0, flag = 0;
    MPI_Request r;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (me == 0) {
        printf("P0 in CS\\n");
        usleep(200000);
        printf("P0 out of CS\\n");
        MPI_Send(&word, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
    } else if (me == 1) {
        MPI_Irecv(&word, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &r);
        double t0 = MPI_Wtime();
#ifdef PATIENT
        while (!flag) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
#else
        while (!flag && MPI_Wtime() - t0 < 1.0) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
#endif
        printf("P1 in CS\\nP1 out of CS\\n");
        if (!flag) MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
"""

# A chain, not a ring: each rank enters after its left neighbour; the ends talk to MPI_PROC_NULL.
# -DBROKEN_SKIP: rank 1 does not wait for rank 0.
CHAIN = """#include <mpi.h>
#include <stdio.h>
int main(void) {
    int me, n, token = 0, flag = 0;
    MPI_Status st;
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int left = me == 0 ? MPI_PROC_NULL : me - 1, right = me == n - 1 ? MPI_PROC_NULL : me + 1;
    MPI_Iprobe(left, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
#ifdef BROKEN_SKIP
    if (me != 1)
#endif
    MPI_Recv(&token, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &st);
    printf("P%d in CS\\nP%d out of CS\\n", me, me);
    MPI_Send(&token, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out = tmp_path_factory.mktemp("styles")
    found = {}
    cache = shared_cache(tmp_path_factory)
    for name, source, flags, command in (
        ("ra", "ra_poll.c", [], "mpicc"),
        ("ra-tie", "ra_poll.c", ["-DBROKEN_TIE"], "mpicc"),
        ("ra-forget", "ra_poll.c", ["-DBROKEN_FORGET"], "mpicc"),
        ("dining", "dining.cpp", [], "mpicxx"),
        ("dining-lend", "dining.cpp", ["-DBROKEN_LEND"], "mpicxx"),
        ("dining-forget", "dining.cpp", ["-DBROKEN_FORGET"], "mpicxx"),
        ("dining-time", "dining.cpp", ["-DSEED_TIME"], "mpicxx"),
        ("bees", "token_bees.c", [], "mpicc"),
        ("bees-flower", "token_bees.c", ["-DBROKEN_FLOWER"], "mpicc"),
        ("bees-reed", "token_bees.c", ["-DBROKEN_REED"], "mpicc"),
        ("town", "token_town.c", [], "mpicc"),
        ("town-poison", "token_town.c", ["-DBROKEN_POISON"], "mpicc"),
        ("town-early", "token_town.c", ["-DBROKEN_EARLY"], "mpicc"),
    ):
        made = mpicc(cache, "-O2", "-Wall", *flags, "-o", str(out / name), str(MPI / source), command=command)
        assert made.returncode == 0, made.stderr
        found[name] = str(out / name)
    return found


def mutex(cli, program: str, *flags: str, args: tuple[str, ...] = ()):
    return cli("test", "mutex", "--np", "3", "--regex", CS, *flags, "--mpi", program, *args)


def dine(cli, program: str, *flags: str):
    return cli(
        "test",
        "philosophers",
        "--np",
        "3",
        "--entries",
        "2",
        "--regex-file",
        PHILOSOPHERS,
        *flags,
        "--mpi",
        program,
        "2",
    )


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_a_polling_ra_on_packed_buffered_messages_passes(cli, built, strategy):
    # Before: it did not build — MPI_PACKED, MPI_Pack, MPI_Testany, MPI_Buffer_attach undeclared,
    # gcc's own errors; MPI_Bsend and MPI_Cancel stopped the run as not supported.
    ran = mutex(cli, built["ra"], "--entries", "2", "--runs", "40", "--strategy", strategy, args=("2",))
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_polling_ra_is_searched_exhaustively_on_two_ranks(cli, built):
    ran = cli(
        "test",
        "mutex",
        "--np",
        "2",
        "--entries",
        "2",
        "--strategy",
        "systematic",
        "--regex",
        CS,
        "--mpi",
        built["ra"],
        "2",
    )
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr


def test_a_polling_ra_that_breaks_no_tie_is_caught_and_replays(cli, built, tmp_path):
    cx = tmp_path / "tie.json"
    ran = mutex(cli, built["ra-tie"], "--entries", "1", "--counterexample", str(cx))
    assert ran.returncode == 1 and "[capacity] cs (capacity 1)" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(cx), "--mpi", built["ra-tie"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(cx), "--mpi", built["ra"])
    # on the fix the schedule plays out (SAFE, 0) or reaches a delivery the fix never sends (3,
    # "proves nothing here"), as the schedule the search found and shrank happens to be
    assert "did NOT reproduce" in fixed.stdout, fixed.stdout
    assert fixed.returncode == 0 or (fixed.returncode == 3 and "proves nothing here" in fixed.stdout), (
        fixed.stdout
    )


def test_a_polling_ra_that_forgets_its_deferred_replies_is_a_deadlock(cli, built):
    ran = mutex(cli, built["ra-forget"], "--entries", "1")
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, ran.stdout + ran.stderr


def test_mpi_abort_on_a_bad_argument_is_a_crash_naming_its_code(cli, built):
    # Before: "node 1 exited with status 2 while handling init", and no word of MPI_Abort.
    ran = mutex(cli, built["ra"], "--entries", "1", "--runs", "3", args=("0",))
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout
    assert (
        "exited with status 2 while handling init (its last words: MPI_Abort with errorcode 2)" in ran.stdout
    )


def test_a_message_longer_than_its_receive_is_a_crash_as_under_mpirun(cli, tmp_path, tmp_path_factory):
    # Before: the first 8 of 12 bytes were taken silently and the program passed; Open MPI ends
    # it with MPI_ERR_TRUNCATE (its default handler, MPI_ERRORS_ARE_FATAL).
    source = tmp_path / "trunc.c"
    source.write_text(TRUNCATES)
    made = mpicc(shared_cache(tmp_path_factory), "-o", str(tmp_path / "trunc"), str(source))
    assert made.returncode == 0, made.stderr
    cx = tmp_path / "trunc.json"
    ran = cli(
        "test",
        "mutex",
        "--np",
        "2",
        "--regex",
        CS,
        "--counterexample",
        str(cx),
        "--mpi",
        str(tmp_path / "trunc"),
    )
    assert ran.returncode == 1 and "FINDING [crashed] (step 1): node 2 exited with status 14" in ran.stdout, (
        ran.stdout
    )
    assert (
        "its last words: MPI_ERR_TRUNCATE: a message of 12 bytes from rank 0 (tag 0) received into 8 bytes"
        in ran.stdout
    )
    again = cli("replay", str(cx), "--mpi", str(tmp_path / "trunc"))
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_chandy_misra_without_mpi_finalize_passes_and_its_bugs_are_caught(cli, built, tmp_path):
    ran = dine(cli, built["dining"], "--runs", "40")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    cx = tmp_path / "lend.json"
    lend = dine(cli, built["dining-lend"], "--counterexample", str(cx))
    assert (
        lend.returncode == 1 and "FINDING [violation]" in lend.stdout and "[capacity] fork:" in lend.stdout
    ), lend.stdout
    again = cli("replay", str(cx), "--mpi", built["dining-lend"], "2")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    forget = dine(cli, built["dining-forget"])
    assert forget.returncode == 1 and "FINDING [deadlock]" in forget.stdout, forget.stdout


def test_a_rank_seeded_by_the_time_is_nondeterministic_to_a_systematic_search(cli, built):
    # srand(time(NULL) ^ rank) picks the fork asked for first: the same schedule, other sends
    # once the second changes; never a PASS of a search that could not replay its own schedules.
    ran = dine(cli, built["dining-time"], "--strategy", "systematic", "--runs", "3000")
    assert ran.returncode == 1 and "FINDING [nondeterministic]" in ran.stdout, ran.stdout + ran.stderr
    assert "it reads the clock" in ran.stdout


def test_mpicc_refuses_fortran_and_names_the_mpi_names_it_lacks(tmp_path, tmp_path_factory):
    # Before: gfortran's "Cannot open module file 'mpi.mod'", exit 1; g++'s "'MPI_Alltoall' was
    # not declared in this scope", exit 1, naming nothing of mutexlab.
    source = tmp_path / "hello.f90"
    source.write_text(
        "program hello\n  use mpi\n  integer :: ierr\n  call MPI_Init(ierr)\nend program hello\n"
    )
    made = mpicc(shared_cache(tmp_path_factory), "-o", str(tmp_path / "hello"), str(source))
    assert (
        made.returncode == 2
        and "hello.f90 is Fortran: mutexlab's MPI has the C and C++ bindings only" in made.stderr
    )
    cxx = tmp_path / "all.cpp"
    cxx.write_text(
        "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v);\n"
        "  return MPI_Alltoallv(0, 0, 0, MPI_INT, 0, 0, 0, MPI_INT, MPI_COMM_WORLD); }\n"
    )
    made = mpicc(shared_cache(tmp_path_factory), "-o", str(tmp_path / "all"), str(cxx), command="mpicxx")
    assert made.returncode == 2, made.stderr
    assert "MPI_Alltoallv is not part of mutexlab's MPI" in made.stderr
    old_cxx = tmp_path / "old.cpp"  # MPI-2's C++ binding, as old textbooks teach it
    old_cxx.write_text("#include <mpi.h>\nint main(int c, char **v) { MPI::Init(c, v); MPI::Finalize(); }\n")
    made = mpicc(shared_cache(tmp_path_factory), "-o", str(tmp_path / "old"), str(old_cxx), command="mpicxx")
    assert made.returncode == 2 and "MPI::… is MPI-2's C++ binding, removed in MPI-3" in made.stderr, (
        made.stderr
    )


def test_a_fortran_program_of_another_mpi_is_refused_as_fortran(cli, tmp_path):
    # Before: the regex of other MPIs' libraries missed libmpi_mpifh.so (Open MPI's Fortran
    # binding): the ranks ran as singletons and printed on the protocol, a [garbage] finding.
    if shutil.which("gcc") is None:
        missing("gcc is needed to build a stand-in of a Fortran MPI program")
    lib = tmp_path / "libmpi_mpifh.so.40"
    subprocess.run(
        ["gcc", "-shared", "-fPIC", "-x", "c", "-", "-o", str(lib)],
        input="int mpi_init_;",
        text=True,
        check=True,
    )
    main = tmp_path / "main.c"
    main.write_text('#include <stdio.h>\nint main(void) { puts("P0 in CS"); return 0; }\n')
    program = tmp_path / "fortran-like"
    subprocess.run(["gcc", str(main), "-o", str(program), "-Wl,--no-as-needed", str(lib)], check=True)
    ran = mutex(cli, str(program), "--runs", "2")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "is a Fortran MPI program (libmpi_mpifh.so.40)" in ran.stderr


def test_an_mpi4py_script_is_refused_naming_what_to_do(cli, tmp_path):
    # Before: the script ran under python as each rank, a singleton of mpi4py's MPI printing on
    # the protocol: [garbage], exit 1 (or [crashed] where mpi4py is not installed).
    script = tmp_path / "ra.py"
    script.write_text("from mpi4py import MPI\nprint(f'P{MPI.COMM_WORLD.Get_rank()} in CS')\n")
    ran = mutex(cli, "python3", "--runs", "2", args=(str(script),))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "is a Python program on mpi4py" in ran.stderr and "--node" in ran.stderr


def test_a_program_that_prints_where_the_library_speaks_is_not_judged(cli, tmp_path):
    # Before: its line was taken for the protocol's, the [garbage] finding, exit 1: a verdict on
    # a program mutexlab never directed (a launcher script, a statically linked other MPI).
    script = tmp_path / "launch.sh"
    script.write_text("#!/bin/sh\necho 'P0 in CS'\n")
    script.chmod(0o755)
    ran = mutex(cli, str(script), "--runs", "2")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "does not run on mutexlab's MPI: it printed 'P0 in CS'" in ran.stderr
    # The same when it has stopped reading before its first input is written (the race that made
    # the one above a crash at times): what it printed is read before it is judged.
    closed = tmp_path / "closed.sh"
    closed.write_text("#!/bin/sh\necho 'P0 in CS'\nexec 0<&-\nsleep 0.3\n")
    closed.chmod(0o755)
    ran = mutex(cli, str(closed), "--runs", "2")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "does not run on mutexlab's MPI: it printed 'P0 in CS'" in ran.stderr


def test_a_timeout_read_on_mpi_wtime_fires_when_nothing_comes(cli, tmp_path, tmp_path_factory):
    # Before: the MPI_Test loop waited for the message as if it had no deadline, so rank 1
    # always heard rank 0 first and the race MPI shows (rank 0 slower than the second) passed.
    source = tmp_path / "impatient.c"
    source.write_text(IMPATIENT)
    for name, flags in (("impatient", []), ("patient", ["-DPATIENT"])):
        made = mpicc(shared_cache(tmp_path_factory), *flags, "-o", str(tmp_path / name), str(source))
        assert made.returncode == 0, made.stderr
    ran = cli("test", "mutex", "--np", "2", "--regex", CS, "--mpi", str(tmp_path / "impatient"))
    assert ran.returncode == 1 and "[capacity] cs (capacity 1)" in ran.stdout, ran.stdout + ran.stderr
    waits = cli(
        "test", "mutex", "--np", "2", "--entries", "1", "--regex", CS, "--mpi", str(tmp_path / "patient")
    )
    assert waits.returncode == 0 and "PASS" in waits.stdout, waits.stdout + waits.stderr


def test_a_search_whose_timeout_loop_jumped_the_clock_does_not_claim_it_covered_everything(
    cli, tmp_path, tmp_path_factory
):
    """Rank 1 gives rank 0's word a second (by MPI_Wtime), then waits for it anyway: correct either
    way, but mutexlab's clock jumps past the deadline within the step, so no run delivers the word
    before it. Before: "PASS — searched exhaustively", ``"exhaustive": true``, exit 0. Now
    INCOMPLETE (exit 3) saying what it did not cover. -DPATIENT (no deadline) is still a PASS,
    searched exhaustively."""
    source = tmp_path / "timed.c"
    source.write_text(
        IMPATIENT.replace(
            '        printf("P1 in CS\\nP1 out of CS\\n");\n        if (!flag) MPI_Wait(&r, MPI_STATUS_IGNORE);',
            '        if (!flag) MPI_Wait(&r, MPI_STATUS_IGNORE);\n        printf("P1 in CS\\nP1 out of CS\\n");',
        )
    )
    assert "if (!flag) MPI_Wait(&r, MPI_STATUS_IGNORE);\n        printf(" in source.read_text()
    for name, flags in (("timed", []), ("patient", ["-DPATIENT"])):
        made = mpicc(shared_cache(tmp_path_factory), *flags, "-o", str(tmp_path / name), str(source))
        assert made.returncode == 0, made.stderr
    test = ("test", "mutex", "--np", "2", "--entries", "1", "--regex", CS, "--strategy", "systematic")
    ran = cli(*test, "--mpi", str(tmp_path / "timed"))
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "INCOMPLETE — no finding in every schedule it could reach" in ran.stdout, ran.stdout
    assert "PASS" not in ran.stdout and "exhaustively" not in ran.stdout, ran.stdout
    assert "; not covered: a message arriving before an MPI_Wtime deadline passed" in ran.stdout, ran.stdout
    summary = json.loads(cli(*test, "--json", "--mpi", str(tmp_path / "timed")).stdout)
    assert summary["verdict"] == "INCOMPLETE" and summary["exhaustive"] is False, summary
    assert summary["clock_jumped_runs"] == summary["runs"] and "MPI_Wtime" in summary["not_covered"], summary
    waits = cli(*test, "--json", "--mpi", str(tmp_path / "patient"))
    summary = json.loads(waits.stdout)
    assert waits.returncode == 0 and summary["verdict"] == "PASS", waits.stdout
    assert summary["exhaustive"] is True and "not_covered" not in summary, summary


def test_mpi_proc_null_ends_a_chain_as_under_mpirun(cli, tmp_path, tmp_path_factory):
    # Before: the receive from MPI_PROC_NULL waited for ever (and a send to it stopped the test,
    # "to rank -2"): the correct chain was a deadlock.
    source = tmp_path / "chain.c"
    source.write_text(CHAIN)
    for name, flags in (("chain", []), ("chain-skip", ["-DBROKEN_SKIP"])):
        made = mpicc(shared_cache(tmp_path_factory), *flags, "-o", str(tmp_path / name), str(source))
        assert made.returncode == 0, made.stderr
    ran = cli("test", "mutex", "--np", "3", "--entries", "1", "--regex", CS, "--mpi", str(tmp_path / "chain"))
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    skip = cli(
        "test", "mutex", "--np", "3", "--entries", "1", "--regex", CS, "--mpi", str(tmp_path / "chain-skip")
    )
    assert skip.returncode == 1 and "[capacity] cs (capacity 1)" in skip.stdout, skip.stdout + skip.stderr


def test_the_token_ring_town_passes_and_its_bugs_are_caught(cli, built, tmp_path):
    def town(program: str, *flags: str, args: tuple[str, ...] = ()):
        return cli("test", "elves", "--np", "4", "--regex-file", ELVES, *flags, "--mpi", program, *args)

    ran = town(built["town"], "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    cx = tmp_path / "poison.json"
    poison = town(built["town-poison"], "--counterexample", str(cx))
    assert poison.returncode == 1 and "[capacity] poison (capacity 10)" in poison.stdout, poison.stdout
    again = cli("replay", str(cx), "--mpi", built["town-poison"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    early = town(built["town-early"])
    assert early.returncode == 1 and "[stop-before-done] mayor stopped round 1" in early.stdout, early.stdout
    searched = cli(
        "test", "elves", "--np", "3", "-o", "contracts=2", "-o", "rounds=1", "--strategy", "systematic",
        "--regex-file", ELVES, "--mpi", built["town"], "3", "10", "2", "1",
    )  # fmt: skip
    assert searched.returncode == 0 and "searched exhaustively" in searched.stdout, searched.stdout


def test_a_rank_stuck_reading_a_pipe_is_not_told_to_flush_its_output(cli, tmp_path, tmp_path_factory):
    # Before: "a program whose output is buffered (C stdio, …) must flush it after each done
    # line; one that reads all its input before answering …" — advice for a node that writes the
    # protocol itself, not for a rank, whose library does; the note below it said otherwise.
    # (It waited in sem_wait, which is now a wait the library knows: tests/test_mpi_outsiders7.py.)
    source = tmp_path / "sem.c"
    source.write_text(
        "#include <mpi.h>\n#include <stdio.h>\n#include <unistd.h>\n"
        "int main(int c, char **v) { int p[2]; char b; if (pipe(p)) return 1; MPI_Init(&c, &v);\n"
        '  puts("P0 in CS"); puts("P0 out of CS"); return (int)read(p[0], &b, 1); }\n'
    )
    made = mpicc(shared_cache(tmp_path_factory), "-pthread", "-o", str(tmp_path / "sem"), str(source))
    assert made.returncode == 0, made.stderr
    ran = cli(
        "test", "mutex", "--np", "2", "--runs", "1", "--timeout", "1", "--start-timeout", "1",
        "--regex", CS, "--mpi", str(tmp_path / "sem"),
    )  # fmt: skip
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, ran.stdout + ran.stderr
    assert (
        "(no done line for its first init): a thread of it waits where mutexlab's MPI cannot see"
        in ran.stdout
    )
    assert "must flush it" not in ran.stdout and "a pipe" in ran.stdout


def test_a_send_tagged_mpi_any_tag_is_a_crash_as_under_mpirun(cli, tmp_path, tmp_path_factory):
    # Before: the message went with tag -1, the receive of MPI_ANY_TAG took it, and the program
    # passed; Open MPI and MPICH end it in MPI_Send (MPI_ERR_TAG).
    source = tmp_path / "tag.c"
    source.write_text(
        "#include <mpi.h>\n#include <stdio.h>\nint main(int c, char **v) { int me, x = 0;\n"
        "  MPI_Init(&c, &v); MPI_Comm_rank(MPI_COMM_WORLD, &me);\n"
        '  if (me == 0) { puts("P0 in CS"); puts("P0 out of CS");\n'
        "    MPI_Send(&x, 1, MPI_INT, 1, MPI_ANY_TAG, MPI_COMM_WORLD); }\n"
        "  else { MPI_Recv(&x, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);\n"
        '    puts("P1 in CS"); puts("P1 out of CS"); }\n  MPI_Finalize(); return 0; }\n'
    )
    made = mpicc(shared_cache(tmp_path_factory), "-o", str(tmp_path / "tag"), str(source))
    assert made.returncode == 0, made.stderr
    ran = cli("test", "mutex", "--np", "2", "--regex", CS, "--mpi", str(tmp_path / "tag"))
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert (
        "exited with status 4 while handling init (its last words: MPI_ERR_TAG: a send with tag -1"
        in ran.stdout
    )


def test_the_token_ring_bees_pass_and_their_bugs_are_caught(cli, built, tmp_path):
    def colony(program: str, *flags: str, np: str = "5"):
        return cli(
            "test",
            "bees",
            "--np",
            np,
            *COLONY,
            "--regex-file",
            BEES,
            *flags,
            "--mpi",
            program,
            "2",
            "1",
            "1",
            "2",
        )

    ran = colony(built["bees"], "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    searched = colony(built["bees"], "--strategy", "systematic", np="3")
    assert searched.returncode == 0 and "searched exhaustively" in searched.stdout, searched.stdout
    cx = tmp_path / "flower.json"
    flower = colony(built["bees-flower"], "--counterexample", str(cx))
    assert flower.returncode == 1 and "[capacity] flower (capacity 1)" in flower.stdout, flower.stdout
    again = cli("replay", str(cx), "--mpi", built["bees-flower"], "2", "1", "1", "2")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    reed = colony(built["bees-reed"])
    assert reed.returncode == 1 and "[capacity] reed:1 (capacity 1)" in reed.stdout, reed.stdout


# Rank 0 sends a struct holding an address of its stack, as an uninitialised field or a struct's
# padding does (the stack's left-overs differ from run to run), and enters after sending the token
# (two in the critical section at once); rank 1 enters on the token.
STACK_BYTES = """#include <mpi.h>
#include <stdio.h>
typedef struct { int token; void *left_over; } token_t;
int main(int argc, char **argv) {
    int me; MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &me);
    token_t t;
    if (me == 0) {
        t.token = 1; t.left_over = &t;
        MPI_Send(&t, sizeof t, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        printf("P0 in CS\\nP0 out of CS\\n");
    } else {
        MPI_Recv(&t, sizeof t, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("P1 in CS\\nP1 out of CS\\n");
    }
    MPI_Finalize();
    return 0;
}
"""


def test_a_rank_sending_its_stack_left_overs_is_judged_by_what_it_does(cli, tmp_path, tmp_path_factory):
    # Before: each run of the one schedule sent other bytes, so shrinking and replay called the
    # program "[nondeterministic]" instead of showing its two ranks in the critical section.
    source = tmp_path / "stack.c"
    source.write_text(STACK_BYTES)
    made = mpicc(shared_cache(tmp_path_factory), "-o", str(tmp_path / "stack"), str(source))
    assert made.returncode == 0, made.stderr
    cx = tmp_path / "two.json"
    ran = cli(
        "test",
        "mutex",
        "--np",
        "2",
        "--counterexample",
        str(cx),
        "--regex",
        CS,
        "--mpi",
        str(tmp_path / "stack"),
    )
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(cx), "--mpi", str(tmp_path / "stack"))
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
