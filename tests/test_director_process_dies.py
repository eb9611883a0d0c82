"""The forked director of ``replay --over-rabbitmq`` dies with the command, even a SIGKILLed one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

# ``direct`` with a director and a run that never end: the director says its pid and waits.
COMMAND = textwrap.dedent(
    """
    import os, sys, time
    from types import SimpleNamespace
    from mutexlab.transport import directed

    class Forever:
        def __init__(self, *args):
            pass

        def run(self):
            open(sys.argv[1], "w").write(str(os.getpid()))
            time.sleep(120)

    directed.Director = Forever
    directed.execute = lambda plan, summary: time.sleep(120)
    directed.direct(SimpleNamespace(join_timeout=1.0), {}, [], SimpleNamespace(actions=[]), 60.0, {})
    """
)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def test_a_sigkilled_command_takes_its_director_with_it(tmp_path):
    said = tmp_path / "director.pid"
    command = subprocess.Popen([sys.executable, "-c", COMMAND, str(said)])
    try:
        deadline = time.monotonic() + 30
        while not (said.exists() and said.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        director = int(said.read_text())
        # (the director asked for its parent-death signal before it said its pid)
        command.kill()
        command.wait()
        deadline = time.monotonic() + 10
        while alive(director) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = alive(director)
        if left:
            subprocess.run(["kill", "-9", str(director)], check=False)
        assert not left, f"the director {director} outlived its SIGKILLed command"
    finally:
        command.kill()
        command.wait()
