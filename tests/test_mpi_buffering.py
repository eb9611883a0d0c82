"""What a verdict says of an MPI program that relies on MPI buffering its sends, or that finalizes
with a thread still in an MPI call (docs/mpi.md#buffering, docs/mpi.md#hangs).

``tests/mpi/hello_first.c``: every rank MPI_Sends a greeting to every other, then receives theirs
(the MPI standard's "unsafe" exchange), then a token passes in rank order. Two ranks exchanging
greetings of 4,041 bytes so hang under Open MPI 4.1 (4,040 end) and of 8,256 under MPICH 4.0
(8,255 end): before, mutexlab's standard sends never waited, and it said PASS of a program
``mpirun`` never ends. A standard send past 4,040 bytes now waits for its receive, as Open MPI's
does, and ``--sync-sends`` makes every one wait (MPI allows it): a hang naming the send.
``-DPOST_FIRST`` posts its receives first and ends under any MPI; ``-DSELF_TOO`` greets itself
too before its receive is posted.

``tests/mpi/hang_after_cs.c -DHELPER``: rank 1's helper thread is still in ``MPI_Recv`` when its
main thread calls ``MPI_Finalize`` — erroneous under MPI (MPICH ends it with a fatal error, Open
MPI lets it pass): the PASS says so, where before it said nothing.
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import missing
from test_mpi import ROOT, Builds, shared_cache

MPI = ROOT / "tests" / "mpi"
CS = "(?P<enter>enters)|(?P<exit>leaves)"
PROGRAMS = {
    "hello": ("hello_first.c", []),
    "post-first": ("hello_first.c", ["-DPOST_FIRST"]),
    "self-too": ("hello_first.c", ["-DSELF_TOO"]),
    "hang": ("hang_after_cs.c", []),
    "helper": ("hang_after_cs.c", ["-DHELPER"]),
    "joined": ("ra_text_barrier.c", []),
}
SYNC_TAIL = "under an MPI whose standard sends wait for their receive"


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None:
        missing("gcc is needed: mutexlab's MPI is built with it")
    out, cache = tmp_path_factory.mktemp("buffering"), shared_cache(tmp_path_factory)
    return Builds(PROGRAMS, out, cache, strict=True)


def test_small_greetings_sent_first_pass_as_under_open_mpi_and_mpich(cli, programs):
    for size in ("4", "4040"):
        ran = cli(
            "test", "mutex", "--np", "3", "--runs", "20", "--regex", CS, "--mpi", programs["hello"], size
        )
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("strategy", ("random", "pct", "systematic"))
def test_a_large_greeting_sent_first_is_a_hang_naming_the_send(cli, programs, strategy):
    # before: PASS, of a program that hangs under Open MPI at this size
    ran = cli("test", "mutex", "--np", "3", "--strategy", strategy, "--runs", "50", "--regex", CS,
              "--mpi", programs["hello"], "4041")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, ran.stdout + ran.stderr
    assert (
        "waits in MPI_Send (a standard send to rank 1, tag 1, synchronous past 4040 bytes, as under "
        "Open MPI, never received)" in ran.stdout
    ), ran.stdout
    assert SYNC_TAIL in ran.stdout and "under any MPI" not in ran.stdout, ran.stdout


def test_receives_posted_first_pass_at_any_size_and_with_sync_sends(cli, programs):
    for extra in ([], ["--sync-sends"]):
        ran = cli("test", "mutex", "--np", "3", "--runs", "20", *extra, "--regex", CS,
                  "--mpi", programs["post-first"], "20000")  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_sync_sends_shows_reliance_on_buffering_and_replays(cli, programs, tmp_path):
    ce = tmp_path / "hello.json"
    ran = cli("test", "mutex", "--np", "3", "--sync-sends", "--counterexample", str(ce), "--regex", CS,
              "--mpi", programs["hello"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, ran.stdout + ran.stderr
    assert "synchronous under --sync-sends" in ran.stdout and SYNC_TAIL in ran.stdout, ran.stdout
    # the counterexample keeps --sync-sends: replay needs no flag to show it again
    again = cli("replay", str(ce), "--mpi", programs["hello"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs["post-first"])
    assert fixed.returncode in (0, 3) and "did NOT reproduce" in fixed.stdout, fixed.stdout


def test_sync_sends_shows_a_send_to_itself_before_its_receive(cli, programs):
    ran = cli("test", "mutex", "--np", "2", "--sync-sends", "--regex", CS, "--mpi", programs["self-too"])
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "rank 0 waits in MPI_Send (a standard send to rank 0, tag 1, synchronous" in ran.stdout, ran.stdout
    plain = cli("test", "mutex", "--np", "2", "--runs", "10", "--regex", CS, "--mpi", programs["self-too"])
    assert plain.returncode == 0 and "PASS" in plain.stdout, plain.stdout + plain.stderr


@pytest.mark.parametrize("strategy", ("random", "systematic"))
def test_a_thread_still_receiving_at_finalize_is_said_on_the_pass(cli, programs, strategy):
    # before: a bare PASS of a program MPICH ends with a fatal error
    ran = cli("test", "mutex", "--np", "2", "--runs", "3", "--strategy", strategy, "--regex", CS,
              "--mpi", programs["helper"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    assert (
        "but erroneous under MPI, in " in ran.stdout
        and "rank 1 called MPI_Finalize while its thread 1 was still in MPI_Recv (source 0, tag 7)"
        in ran.stdout
    ), ran.stdout
    js = cli("test", "mutex", "--np", "2", "--runs", "3", "--json", "--strategy", strategy, "--regex", CS,
             "--mpi", programs["helper"])  # fmt: skip
    outcome = json.loads(js.stdout)
    assert outcome["verdict"] == "PASS" and outcome["finalize_pending_runs"] == outcome["runs"], outcome
    assert "thread 1 was still in MPI_Recv" in outcome["finalize_pending"], outcome


def test_a_listener_joined_before_finalize_is_a_bare_pass(cli, programs):
    ran = cli("test", "mutex", "--np", "3", "--runs", "20", "--regex", "(?P<enter>enters CS)|(?P<exit>exits CS)",
              "--mpi", programs["joined"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    assert "erroneous" not in ran.stdout, ran.stdout


def test_a_safe_replay_says_a_thread_was_still_receiving_at_finalize(cli, programs, tmp_path):
    # the hang of rank 1's main thread, replayed where a helper thread waits instead: SAFE, and
    # (before: nothing more) erroneous under MPI, said as a test's PASS says it
    ce = tmp_path / "hang.json"
    ran = cli(
        "test", "mutex", "--np", "2", "--regex", CS, "--counterexample", str(ce), "--mpi", programs["hang"]
    )
    assert ran.returncode == 1 and "FINDING [hang]" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", programs["helper"])
    assert "mutex: SAFE" in again.stdout, again.stdout
    assert (
        "but erroneous under MPI: rank 1 called MPI_Finalize while its thread 1 was still in MPI_Recv"
        in again.stdout
    ), again.stdout
