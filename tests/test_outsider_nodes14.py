"""``mutexlab test`` on node programs written elsewhere from the docs alone, in habits the other
outsider tests do not cover (tests/outsiders/, ``o14_*``):

* ``o14_ra_selectors.py`` — Ricart–Agrawala in Python without a line iterator: standard input
  non-blocking under ``selectors``, a byte buffer keeping the part of a line a read ends in,
  ``os.write`` looping over partial writes; ``--loose-tie`` lets an equal stamp through (both
  nodes asking at stamp 1 reply to each other: a violation);
* ``o14_kmutex_chunks.c`` — K-mutual exclusion in C, node 1 keeping the permits: ``read(2)``
  seven bytes at a time, each answer one ``writev(2)`` of an iovec array, no stdio on the
  protocol's streams, the JSON found by ``strstr``; ``-DBROKEN_LAST_PERMIT`` lets K + 1 in;
* ``o14_phil_forked_worker.pl`` — philosophers in Perl that print a banner on standard error and
  a blank line on standard output at start, then fork a worker fed through a pipe by the parent
  (the worker answers on the inherited output); forks lent by their homes, taken lower number
  first; ``--left-first`` takes the left one first (two philosophers: a deadlock);
* ``o14_raymond_callbacks.js`` — Raymond's tree mutex in Node.js: input from ``'data'`` events
  split into lines by hand, each answer's lines written one from the callback of the last, on a
  Promise chain; ``--no-reask`` hands the token on at a release without asking it back for the
  requests still queued (a deadlock on three nodes, its eight steps all needed);
* ``o14_central_agent_exits.py`` — a central server whose every node starts a "metrics agent"
  daemon at init (fork, ``setsid``, fork again) and whose clients exit by themselves, status 0,
  once they have made all their requests.

What they showed of mutexlab: a node that exits by itself after starting a daemon handed the
daemon to init (the node was its subreaper, and a subreaper's orphans go up when it ends): it
outlived the run, its end, Ctrl-C and a SIGKILLed mutexlab alike.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

from mutexlab.director import tree

ROOT = Path(__file__).resolve().parent.parent


def tool(name: str) -> str:
    if shutil.which(name) is None:
        missing(f"{name} is not installed")
    return name


def passes(cli, problem: str, node: str, *args: str, systematic: tuple[str, ...] = ("-N", "2")) -> None:
    for strategy in ("random", "pct"):
        ran = cli("test", problem, "--node", node, *args, "--strategy", strategy, "--runs", "30")
        assert ran.returncode == 0 and "PASS — no finding" in ran.stdout, said(ran)
    ran = cli("test", problem, "--node", node, *systematic, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively" in ran.stdout, said(ran)


def found(cli, tmp_path, problem: str, node: str, *args: str, rule: str, minimal: bool = False) -> list[str]:
    """The finding by every strategy, each shrunk (``minimal``: shrinking tried and found no
    smaller run) and its counterexample replayed."""
    scenario, outs = tmp_path / "ce.json", []
    for strategy in ("random", "pct", "systematic"):
        ran = cli(
            "test", problem, "--node", node, *args, "--strategy", strategy, "--seed", "1",
            "--counterexample", scenario,
        )  # fmt: skip
        assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout, said(ran)
        shrunk = "not shrunk: no smaller run showed" if minimal else "shrunk from"
        assert f"found by {strategy}: " in ran.stdout and shrunk in ran.stdout, said(ran)
        again = cli("replay", scenario, "--node", node)
        assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)
        outs.append(ran.stdout)
    return outs


def test_a_selectors_node_passes_and_a_loose_tie_break_is_a_violation(cli, tmp_path):
    node = f"{sys.executable} {OUTSIDERS / 'o14_ra_selectors.py'}"
    passes(cli, "mutex", node, "--requests", "2")
    for out in found(cli, tmp_path, "mutex", f"{node} --loose-tie", rule="violation"):
        # both ask at stamp 1, each request reaches the other, both reply: four deliveries
        assert "to 6 steps on 2 nodes" in out and "cs (capacity 1) held by" in out, out


@pytest.fixture(scope="module")
def chunks(tmp_path_factory) -> dict[str, str]:
    where, built = tmp_path_factory.mktemp("chunks"), {}
    for name, flags in (("ok", []), ("last", ["-DBROKEN_LAST_PERMIT"])):
        built[name] = str(where / name)
        source = str(OUTSIDERS / "o14_kmutex_chunks.c")
        subprocess.run(
            [tool("gcc"), "-O2", "-Wall", "-Werror", *flags, "-o", built[name], source], check=True
        )
    return built


def test_a_c_node_reading_7_bytes_and_writing_iovecs_passes_and_k_plus_1_is_found(cli, tmp_path, chunks):
    passes(cli, "kmutex", chunks["ok"], "-N", "4", "--requests", "2", systematic=("-N", "3"))
    for out in found(cli, tmp_path, "kmutex", chunks["last"], rule="violation"):
        # three of three inside with K = 2: no fewer nodes show it
        assert "cs (capacity 2) held by" in out and "to 7 steps on 3 nodes" in out, out
        assert "not shown on fewer nodes: 2 tried" in out, out


def test_a_perl_node_with_a_banner_and_a_forked_worker_passes_and_left_first_deadlocks(cli, tmp_path):
    node = f"{tool('perl')} {OUTSIDERS / 'o14_phil_forked_worker.pl'}"
    passes(cli, "philosophers", node, "-N", "4", "--requests", "2", systematic=("-N", "3"))
    for out in found(cli, tmp_path, "philosophers", f"{node} --left-first", rule="deadlock"):
        assert "to 4 steps on 2 nodes" in out, out
        assert "philosopher-1, philosopher-2 still wait for the resource" in out, out


def test_a_node_js_callback_chain_passes_and_a_token_not_asked_back_deadlocks(cli, tmp_path):
    node = f"{tool('node')} {OUTSIDERS / 'o14_raymond_callbacks.js'}"
    passes(cli, "mutex", node, "-N", "5", "--requests", "2", systematic=("-N", "3"))
    for out in found(cli, tmp_path, "mutex", f"{node} --no-reask", rule="deadlock", minimal=True):
        # node 1 inside, 3 and 2 queued behind it: the token goes to 3, and 2 is never asked for
        assert "node-2 still waits for the resource" in out, out
        assert "not shown on fewer nodes: 1 and 2 tried" in out, out


# --- a daemon of a node that exits by itself ends with it ---------------------------------------


def survivors(marker: str) -> list[int]:
    """Living processes whose command line holds ``marker`` (the nodes and their daemons)."""
    found = []
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            state = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(name))
    return found


def gone(marker: str, seconds: float = 10.0) -> list[int]:
    """The survivors left after waiting up to ``seconds`` (killed then, so no test leaves them)."""
    deadline = time.monotonic() + seconds
    while (left := survivors(marker)) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return left


def still_beating(heartbeat: Path, seconds: float = 0.5) -> bool:
    """Whether the heartbeat file grows over ``seconds`` (an agent writes every 50 ms)."""
    before = heartbeat.stat().st_size
    time.sleep(seconds)
    return heartbeat.stat().st_size != before


@pytest.fixture
def exiting(tmp_path) -> tuple[str, Path]:
    if not sys.platform.startswith("linux"):
        pytest.skip("a subreaper is Linux's")
    if tree.launcher() is None:
        missing("no C compiler: nodes start through setpriv, and a daemon leaves their reach")
    heartbeat = tmp_path / "agent-heartbeat"
    return f"python3 {OUTSIDERS / 'o14_central_agent_exits.py'} {heartbeat}", heartbeat


def test_the_daemon_of_a_node_that_exits_by_itself_is_gone_when_the_run_ends(cli, exiting):
    node, heartbeat = exiting
    ran = cli("test", "mutex", "--node", node, "--runs", "5", "--requests", "2")
    assert ran.returncode == 0 and "PASS — no finding" in ran.stdout, said(ran)
    assert heartbeat.stat().st_size > 0, "no agent ever started"
    # before: each client's agent, handed to init as its node exited, beat on after the run
    left = gone(str(heartbeat))  # at once when they are gone: the bound is for a loaded machine
    assert not left, f"agents of nodes that exited outlived the run: {left}"
    assert not still_beating(heartbeat)


@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
def test_the_daemon_of_a_node_that_exits_by_itself_is_gone_when_mutexlab_is_stopped(exiting, how):
    node, heartbeat = exiting
    command = [sys.executable, "-m", "mutexlab", "test", "mutex", "--node", node, "--time", "120"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (heartbeat.exists() and heartbeat.stat().st_size > 0):
            assert time.monotonic() < deadline, "no agent ever started"
            time.sleep(0.05)
        time.sleep(1.0)  # runs whose clients exited by themselves, their agents started
        proc.send_signal(getattr(signal, how))
        proc.communicate(timeout=30)
        assert proc.returncode == (130 if how == "SIGINT" else -signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    left = gone(str(heartbeat))
    assert not left, f"a node or its agent outlived mutexlab after {how}: {left}"
    assert not still_beating(heartbeat)


# --- the launcher between mutexlab and the program ----------------------------------------------


def launched(code: str) -> subprocess.Popen:
    """``python3 -c code`` started as a node is: through the launcher, pipes on its three streams."""
    if tree.launcher() is None:
        missing("no C compiler: nodes start through setpriv")
    return subprocess.Popen(
        tree.dying_with_parent([sys.executable, "-c", code]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def test_the_launcher_names_its_program_and_ends_as_it_does():
    proc = launched(
        "import os, sys; print(os.getpid(), flush=True); sys.stdin.read(); os.kill(os.getpid(), 11)"
    )
    try:
        assert proc.stdout is not None and proc.stdin is not None
        program = int(proc.stdout.readline())
        assert program != proc.pid and tree.program(proc.pid) == program  # /proc's diagnosis reads it
        assert tree.program(os.getpid()) == os.getpid()  # no launcher: the process itself
        proc.stdin.close()  # its end of input: it kills itself with SIGSEGV
        assert proc.wait(timeout=10) == -signal.SIGSEGV  # and so does the launcher
    finally:
        ended(proc)


def test_the_launcher_holds_no_pipe_and_passes_sigterm_on():
    proc = launched("import os, sys, time; os.close(1); sys.stdin.read(); time.sleep(60)")
    try:
        assert proc.stdout is not None
        # the program closed its output: its end is seen, the launcher holding no copy of it
        assert proc.stdout.read() == b""
        os.kill(proc.pid, signal.SIGTERM)  # to the launcher alone: the program gets it
        assert proc.wait(timeout=10) == -signal.SIGTERM
        assert proc.stderr is not None and proc.stderr.read() == b""
    finally:
        ended(proc)


def ended(proc: subprocess.Popen) -> None:
    proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
