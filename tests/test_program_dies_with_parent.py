"""A node program dies with the process that started it, even one SIGKILLed (docs/test-any-program.md)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from conftest import missing

# Answers its init, then ignores end of input: only its parent's death can end it.
STUBBORN = textwrap.dedent(
    """
    import signal, sys, time
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    sys.stdin.readline()
    print('{"type": "done"}', flush=True)
    time.sleep(120)
    """
)

# Starts the program as a participant does (a NodeProcess, answering an init: until then the
# parent-death signal may not be set), says its pid, and waits to be killed.
PARENT = textwrap.dedent(
    """
    import sys, time
    from mutexlab.director.process import NodeProcess
    node = NodeProcess([sys.executable, sys.argv[1]], 1, frozenset({2}), 30.0)
    node.ask({"type": "init", "id": 1})
    print(node.proc.pid, flush=True)
    time.sleep(120)
    """
)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, dead but not yet reaped by its new parent, does not)."""
    stat = Path(f"/proc/{pid}/stat")
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def test_a_sigkilled_parent_takes_its_program_with_it(tmp_path):
    if shutil.which("setpriv") is None:
        missing("setpriv (util-linux) is not installed: a killed parent cannot take its program with it")
    program = tmp_path / "stubborn.py"
    program.write_text(STUBBORN)
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(program)], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        child = int(parent.stdout.readline())
        assert alive(child)
        parent.kill()  # SIGKILL: no finally, no Pool.close
        parent.wait()
        deadline = time.monotonic() + 10
        while alive(child) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = alive(child)
        if left:
            os.killpg(child, 9)
        assert not left, f"program {child} outlived its SIGKILLed parent"
    finally:
        parent.kill()
        parent.wait()


def test_a_program_that_is_not_there_still_cannot_start(cli, tmp_path):
    ran = cli("test", "mutex", "--node", str(tmp_path / "nothing-here"))
    assert ran.returncode == 2 and "cannot start" in ran.stderr


# Starts a helper in its process group that ignores end of input and SIGTERM (as a shell's
# pipeline, or a program's worker process, may), says the helper's pid, then answers as STUBBORN.
FORKING = textwrap.dedent(
    """
    import os, signal, sys, time
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    helper = os.fork()
    if helper == 0:
        os.close(0)
        while True:
            time.sleep(1)
    sys.stdin.readline()
    print('{"type": "log", "helper": %d}' % helper)
    print('{"type": "done"}', flush=True)
    time.sleep(120)
    """
)

# As PARENT, printing the helper's pid (read from the log line's raw bytes) instead.
PARENT_OF_FORKING = textwrap.dedent(
    """
    import json, sys, time
    from mutexlab.director.process import NodeProcess
    node = NodeProcess([sys.executable, sys.argv[1]], 1, frozenset({2}), 30.0)
    node.tell({"type": "init", "id": 1})
    print(json.loads(node.readline(time.monotonic() + 30, {"type": "init"}))["helper"], flush=True)
    time.sleep(120)
    """
)


def test_a_sigkilled_parent_takes_what_its_program_started_with_it(tmp_path):
    program = tmp_path / "forking.py"
    program.write_text(FORKING)
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT_OF_FORKING, str(program)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert parent.stdout is not None
        helper = int(parent.stdout.readline())
        assert alive(helper)
        parent.kill()  # SIGKILL: no finally; the program's helper is no child of the parent
        parent.wait()
        deadline = time.monotonic() + 10
        while alive(helper) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = alive(helper)
        if left:
            os.killpg(os.getpgid(helper), 9)
        assert not left, f"helper {helper} of the program outlived the SIGKILLed parent"
    finally:
        parent.kill()
        parent.wait()
