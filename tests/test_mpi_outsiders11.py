"""MPI programs in styles not covered before, and what they needed of mutexlab's MPI.

``tests/mpi/ra_text_barrier.c``: Ricart–Agrawala in C, a listener thread sizing text messages by
``MPI_Probe`` and ``MPI_Get_count`` into ``malloc``'d buffers, Lamport-stamped ``printf`` lines,
the main thread and its listener meeting at a ``pthread_barrier_wait`` first (before: the C
library's futex wait, unseen: a false ``stalled`` finding after 30 s). ``tests/mpi/token_wait_for.cpp``:
a token ring in C++, a ``std::thread`` listener handing the token over by ``std::mutex`` and
``std::condition_variable``, the main thread waiting with ``wait_for(200 ms)`` and, built with
``-DBROKEN_REGENERATE``, taking a late token for lost (before: a timed-out wait said
``no_timeout``, as mutexlab's clock never reached its deadline, so the timeout branch never ran
and every strategy said PASS of a program with two tokens). ``MPI_Abort`` on one rank is the
``crashed`` finding naming its code. ``tests/mpi/promise_chain.cpp``: a baton in rank order in
C++20, handed from listener to main by ``std::promise``/``std::future``, with a ``std::latch`` and
``std::atomic::wait`` — libstdc++'s futexes (before: a false ``stalled`` finding).
``tests/mpi/shared_state.cpp``: a token in C++17, the main thread holding a ``std::unique_lock``
of a ``std::shared_mutex`` across a sleep in its section while its listener waits for a
``std::shared_lock`` (a ``pthread_rwlock``: before, the C library's futex, unseen, and a false
``stalled`` finding).
``tests/mpi/hello_first.c`` (sends relying on buffering) is ``tests/test_mpi_buffering.py``'s.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest
from conftest import missing
from test_mpi import ROOT, Builds, shared_cache

MPI = ROOT / "tests" / "mpi"
INCLUDE = ROOT / "shared" / "mutexlab" / "mpi" / "include"
CS = "(?P<enter>enters)|(?P<exit>leaves)"
RA = "(?P<enter>enters CS)|(?P<exit>exits CS)"
TOKEN = "(?P<enter>in CS)|(?P<exit>out of CS)"
PROGRAMS = {
    "barrier": ("ra_text_barrier.c", []),
    "barrier-ties": ("ra_text_barrier.c", ["-DBROKEN_TIES"]),
    "token": ("token_wait_for.cpp", []),
    "token-regenerate": ("token_wait_for.cpp", ["-DBROKEN_REGENERATE"]),
    "promise": ("promise_chain.cpp", ["-std=c++20"]),
    "promise-early": ("promise_chain.cpp", ["-std=c++20", "-DBROKEN_EARLY"]),
    "shared": ("shared_state.cpp", ["-std=c++17"]),
    "shared-early": ("shared_state.cpp", ["-std=c++17", "-DBROKEN_PASS_EARLY"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> Builds:
    if shutil.which("gcc") is None or shutil.which("g++") is None:
        missing("gcc and g++ are needed: mutexlab's MPI is built with them")
    out, cache = tmp_path_factory.mktemp("outsiders11"), shared_cache(tmp_path_factory)
    return Builds(PROGRAMS, out, cache, strict=True)


# -- a barrier between the main thread and its listener -----------------------------------------


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_threads_meeting_at_a_pthread_barrier_pass(cli, programs, strategy):
    # before: FINDING [stalled], node 1 wrote nothing within 30 s (a futex wait the library never saw)
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--strategy", strategy, "--runs", "40",
              "--regex", RA, "--mpi", programs["barrier"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    assert "erroneous" not in ran.stdout, ran.stdout  # its listener is joined before MPI_Finalize


@pytest.mark.parametrize("strategy", ("random", "pct", "systematic"))
def test_requests_tied_by_clock_answered_at_once_are_found_and_replay(cli, programs, strategy, tmp_path):
    ce = tmp_path / "ties.json"
    ran = cli("test", "mutex", "--np", "3", "--strategy", strategy, "--regex", RA, "--counterexample", str(ce),
              "--mpi", programs["barrier-ties"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", programs["barrier-ties"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", str(ce), "--mpi", programs["barrier"])
    assert fixed.returncode in (0, 3) and "did NOT reproduce" in fixed.stdout, fixed.stdout


# -- a condition variable's wait_for that times out ---------------------------------------------


def test_a_token_ring_waiting_with_wait_for_passes(cli, programs):
    for strategy in ("random", "systematic"):
        ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--strategy", strategy, "--runs", "40",
                  "--regex", TOKEN, "--mpi", programs["token"], "2")  # fmt: skip
        assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("strategy", ("random", "pct", "systematic"))
def test_a_late_token_taken_for_lost_is_two_tokens(cli, programs, strategy, tmp_path):
    # before: PASS by every strategy (systematic "searched exhaustively"): wait_for never timed out
    ce = tmp_path / "regenerate.json"
    ran = cli("test", "mutex", "--np", "3", "--strategy", strategy, "--regex", TOKEN, "--counterexample", str(ce),
              "--mpi", programs["token-regenerate"], "2")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "[capacity] cs (capacity 1) held by" in ran.stdout, ran.stdout
    again = cli("replay", str(ce), "--mpi", programs["token-regenerate"], "2")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


def test_mpi_abort_on_too_few_ranks_is_a_crash_naming_its_code(cli, programs):
    ran = cli("test", "mutex", "--np", "1", "--regex", TOKEN, "--mpi", programs["token"])
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout + ran.stderr
    assert "MPI_Abort with errorcode 2" in ran.stdout and "a ring needs 2 ranks" in ran.stdout, ran.stdout


# -- std::promise, std::future, std::latch, std::atomic::wait ------------------------------------


def test_a_baton_handed_over_by_a_promise_passes(cli, programs):
    # before: FINDING [stalled]: the main thread's future.get() was a futex wait the library never saw
    ran = cli("test", "mutex", "--np", "3", "--entries", "2", "--runs", "40", "--regex", CS,
              "--mpi", programs["promise"], "2")  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


@pytest.mark.parametrize("strategy", ("random", "pct", "systematic"))
def test_a_baton_taken_before_it_came_back_is_found(cli, programs, strategy, tmp_path):
    ce = tmp_path / "early.json"
    ran = cli("test", "mutex", "--np", "3", "--strategy", strategy, "--regex", CS, "--counterexample", str(ce),
              "--mpi", programs["promise-early"], "2")  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", programs["promise-early"], "2")
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


# -- a std::shared_mutex (pthread_rwlock) wanted while another thread holds it ---------------------


@pytest.mark.parametrize("strategy", ("random", "pct", "systematic"))
def test_a_listener_waiting_for_a_shared_lock_held_inside_passes(cli, programs, strategy):
    # before: FINDING [stalled], a rank did not answer: its listener waited in glibc's rwlock
    ran = cli("test", "mutex", "--np", "3", "--strategy", strategy, "--runs", "30", "--timeout", "10",
              "--regex", CS, "--mpi", programs["shared"])  # fmt: skip
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr


def test_a_token_sent_on_before_leaving_is_found_and_replays(cli, programs, tmp_path):
    ce = tmp_path / "early.json"
    ran = cli("test", "mutex", "--np", "3", "--regex", CS, "--counterexample", str(ce),
              "--mpi", programs["shared-early"])  # fmt: skip
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    again = cli("replay", str(ce), "--mpi", programs["shared-early"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


# -- the same sources under Open MPI and MPICH --------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("mpi", ("openmpi", "mpich"))
@pytest.mark.parametrize(
    "source",
    ("ra_text_barrier.c", "token_wait_for.cpp", "promise_chain.cpp", "hello_first.c", "shared_state.cpp"),
)
def test_the_sources_run_under_a_real_mpi(tmp_path, mpi, source):
    if shutil.which(f"mpicc.{mpi}") is None:
        missing(f"mpicc.{mpi} is needed (apt-get install openmpi-bin libopenmpi-dev mpich libmpich-dev)")
    exe = tmp_path / "program"
    cc = [f"mpicxx.{mpi}", "-std=c++20"] if source.endswith(".cpp") else [f"mpicc.{mpi}"]
    built = subprocess.run([*cc, "-O2", "-idirafter", str(INCLUDE), "-o", str(exe), str(MPI / source)],
                           capture_output=True, text=True)  # fmt: skip
    assert built.returncode == 0, built.stderr
    run = (
        ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe"] if mpi == "openmpi" else ["mpirun.mpich"]
    )
    proc = subprocess.Popen([*run, "-np", "3", str(exe), "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{source} did not end under mpirun.{mpi}")
    assert proc.returncode == 0, err
    entered = {"hello_first.c": 3, "shared_state.cpp": 3}.get(source, 6)
    assert out.count("enters") + out.count("in CS") == entered, out
