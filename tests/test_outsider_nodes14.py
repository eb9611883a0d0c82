"""``mutexlab test`` on node programs written elsewhere from the docs alone, in habits the other
outsider tests do not cover (tests/outsiders/, ``o14_*``):

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
    left = gone(str(heartbeat), 2.0)
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
