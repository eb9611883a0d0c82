"""``mutexlab test`` on node programs written elsewhere from the docs alone, in habits the other
outsider tests do not cover (tests/outsiders/, ``o13_*``):

* ``o13_ra_condvar.cpp`` — Ricart–Agrawala in C++: a reader ``std::thread`` feeding a deque under
  a mutex and a condition variable, ``std::cin`` untied, one ``std::flush`` per answer, keys found
  by brace depth; ``-DBROKEN_TIE`` compares timestamps alone (equal stamps: both defer, a deadlock);
* ``o13_kmutex_promises.js`` — K-mutual exclusion in Node.js, node 1 keeping the permits:
  readline's async iterator, each line's handler chained on a Promise queue, ``setImmediate``
  inside a handler; ``--greedy`` counts a permit its own holder gives back twice;
* ``O13WaiterPhilosopher.java`` — philosophers, philosopher 1 the waiter: a BufferedReader thread,
  a LinkedBlockingQueue, ``System.out.printf`` with ``%n``, regexes for JSON;
* ``o13_central_coproc.sh`` — a central server in bash parsing every line with a ``coproc jq``,
  polling its input with ``read -t 1``; ``--buffered`` forgets jq's ``--unbuffered``;
* ``o13_central_daemon.py`` — a central server that starts a "metrics agent" at every init the
  Unix way: fork, ``setsid``, fork again — a daemon nobody stops.

What they showed of mutexlab: the daemon outlived every run (the end, Ctrl-C, a SIGKILLed
mutexlab) — it left the node's process group, out of ``killpg``'s reach; the bash node waiting on
its buffered jq was told its own output may be buffered, or that it reads all its input, or starts
slowly; and a finding that no fewer nodes showed said "not shown on 1 or 2 nodes", which reads as
"some of the nodes did not show it".
"""

from __future__ import annotations

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

from mutexlab.commands.testtext import _limits
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


def found(cli, tmp_path, problem: str, node: str, *args: str, rule: str) -> str:
    """The finding by every strategy; the first one's shrunk counterexample replayed."""
    scenario = tmp_path / "ce.json"
    first = cli("test", problem, "--node", node, *args, "--seed", "1", "--counterexample", scenario)
    assert first.returncode == 1 and f"FINDING [{rule}]" in first.stdout, said(first)
    for strategy in ("pct", "systematic"):
        ran = cli("test", problem, "--node", node, *args, "--strategy", strategy)
        assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout, said(ran)
    again = cli("replay", scenario, "--node", node)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)
    return first.stdout


@pytest.fixture(scope="module")
def condvar(tmp_path_factory) -> dict[str, str]:
    where, built = tmp_path_factory.mktemp("cpp"), {}
    for name, flags in (("ok", []), ("tie", ["-DBROKEN_TIE"])):
        built[name] = str(where / name)
        source = str(OUTSIDERS / "o13_ra_condvar.cpp")
        subprocess.run([tool("g++"), "-O2", "-pthread", *flags, "-o", built[name], source], check=True)
    return built


def test_a_cpp_condvar_node_passes_and_a_missing_tie_break_deadlocks(cli, tmp_path, condvar):
    passes(cli, "mutex", condvar["ok"], "--requests", "2")
    out = found(cli, tmp_path, "mutex", condvar["tie"], rule="deadlock")
    # both asked with stamp 1 and each deferred the other: two requests and their two deliveries
    assert "shrunk from" in out and "to 4 steps on 2 nodes" in out, out


def test_a_js_promise_queue_passes_and_a_permit_counted_twice_is_found(cli, tmp_path):
    tool("node")
    node = f"node {OUTSIDERS / 'o13_kmutex_promises.js'}"
    passes(cli, "kmutex", node, "-N", "4", "--requests", "2", systematic=("-N", "3"))
    out = found(cli, tmp_path, "kmutex", f"{node} --greedy", "-N", "4", "--requests", "2", rule="violation")
    assert "cs (capacity 2) held by" in out, out


def test_java_waiter_philosophers_pass_every_strategy(cli, tmp_path):
    classes = tmp_path / "classes"
    subprocess.run(
        [tool("javac"), "-d", str(classes), str(OUTSIDERS / "O13WaiterPhilosopher.java")], check=True
    )
    node = f"{tool('java')} -cp {classes} O13WaiterPhilosopher"
    passes(cli, "philosophers", node, "-N", "4", "--requests", "2", systematic=("-N", "3"))


def test_a_bash_coproc_node_passes(cli):
    tool("jq")
    passes(cli, "mutex", f"bash {OUTSIDERS / 'o13_central_coproc.sh'}", "--requests", "2")


def test_a_node_waiting_on_its_buffered_coproc_is_told_which_helper(cli):
    tool("jq")
    node = f"bash {OUTSIDERS / 'o13_central_coproc.sh'} --buffered"
    ran = cli("test", "mutex", "--node", node, "-N", "2", "--start-timeout", "2", "--timeout", "2")
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    # before: "a program whose output is buffered (C stdio …) must flush it …; one that reads all
    # its input before answering …; one slow to start needs a longer --start-timeout"
    assert "it waits reading from a process it started (jq, pid " in ran.stdout, said(ran)
    assert "jq needs --unbuffered" in ran.stdout, said(ran)


# --- a node's daemon ends with the run ---------------------------------------------------------


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
        with_pid = Path(f"/proc/{pid}/cmdline")
        if with_pid.exists():
            os.kill(pid, signal.SIGKILL)
    return left


@pytest.fixture
def daemonizing(tmp_path) -> tuple[str, Path]:
    if not sys.platform.startswith("linux"):
        pytest.skip("a subreaper is Linux's")
    if tree.launcher() is None:
        missing("no C compiler: nodes start through setpriv, and a daemon leaves their reach")
    heartbeat = tmp_path / "agent-heartbeat"
    return f"python3 {OUTSIDERS / 'o13_central_daemon.py'} {heartbeat}", heartbeat


def beating(heartbeat: Path, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not (heartbeat.exists() and heartbeat.stat().st_size > 0):
        if time.monotonic() > deadline:
            raise AssertionError("the node's agent never started")
        time.sleep(0.05)


def test_a_daemon_a_node_starts_is_gone_when_the_run_ends(cli, daemonizing):
    node, heartbeat = daemonizing
    ran = cli("test", "mutex", "--node", node, "--runs", "3")
    assert ran.returncode == 0, said(ran)
    beating(heartbeat, 0)
    assert not gone(str(heartbeat), 2.0), "a daemon of a node outlived the run"


@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
def test_a_daemon_a_node_starts_is_gone_when_mutexlab_is_interrupted_or_killed(daemonizing, how):
    node, heartbeat = daemonizing
    command = [sys.executable, "-m", "mutexlab", "test", "mutex", "--node", node, "--time", "120"]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        beating(heartbeat)
        proc.send_signal(getattr(signal, how))
        proc.communicate(timeout=30)
        assert proc.returncode == (130 if how == "SIGINT" else -signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait()
    assert not gone(str(heartbeat)), f"a node or its daemon outlived mutexlab after {how}"


# --- what the shrinking says of fewer nodes ----------------------------------------------------


def test_duplicate_2_says_fewer_nodes_were_tried_in_vain(cli, tmp_path):
    built = tmp_path / "ra-dup"
    source = ROOT / "examples" / "nodes" / "ricart_agrawala.c"
    subprocess.run([tool("gcc"), "-O2", "-DBROKEN_DUP", "-o", str(built), str(source)], check=True)
    ran = cli("test", "mutex", "--node", str(built), "--duplicate", "2", "--seed", "1")
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, said(ran)
    # before: "…on 3 nodes (185 test runs); not shown on 1 or 2 nodes" — as if 1 or 2 of the nodes
    # had not shown it, and as if each size had been searched in full
    assert "not shown on 1 or 2 nodes" not in ran.stdout, said(ran)
    assert "not shown on fewer nodes: 1 and 2 tried (" in ran.stdout, said(ran)
    assert "a sample, not every schedule)" in ran.stdout, said(ran)


def test_the_sizes_tried_in_vain_are_listed_as_a_list():
    assert _limits({"not_shown_on": [2]}).startswith("; not shown on fewer nodes: 2 tried (")
    assert "fewer nodes: 1, 2 and 3 tried" in _limits({"not_shown_on": [1, 2, 3]})
    assert _limits({}) == ""


def test_a_launcher_build_past_its_time_falls_back_and_leaves_nothing(tmp_path, monkeypatch):
    # before: the compiler's TimeoutExpired (a loaded machine, 120 s) escaped launcher(), and every
    # node start failed with a traceback instead of starting through setpriv
    from mutexlab import fastclock

    def late(command, work, timeout=None):
        raise subprocess.TimeoutExpired(command, timeout or 0)

    monkeypatch.setenv("MUTEXLAB_CACHE", str(tmp_path))
    monkeypatch.delenv("MUTEXLAB_NO_REAPER", raising=False)
    monkeypatch.setattr(fastclock, "build", late)
    monkeypatch.setattr(tree.shutil, "which", lambda name: "/usr/bin/" + name)
    tree.launcher.cache_clear()
    try:
        assert tree.launcher() is None
        assert tree.dying_with_parent(["prog"])[-1] == "prog"
    finally:
        tree.launcher.cache_clear()
    assert not list((tmp_path / "mutexlab").iterdir()), "a build directory was left in the cache"
