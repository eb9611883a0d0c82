"""Ctrl-C (SIGINT) while a command starts — mutexlab's modules still being imported, the arguments
parsed, the check set up — exits 130 with one line, ``interrupted``, never a traceback (the
entry point, ``mutexlab/__main__.py``, imports ``cli`` inside its guard)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
# A check that runs for minutes: every interrupt below comes while it starts or runs.
LONG = ["check", "mutex", "-a", "lamport", "-N", "3", "--requests", "3"]
# The child says "go" once the interpreter's own start-up is over (site, runpy, the package's
# two-line ``__init__``: no code of mutexlab's commands yet, and a signal there is the
# interpreter's), then runs ``python -m mutexlab`` as runpy does.
STARTER = (
    "import runpy, sys, mutexlab\n"
    "sys.stderr.write('go\\n'); sys.stderr.flush()\n"
    "sys.argv = ['mutexlab', *sys.argv[1:]]\n"
    "runpy.run_module('mutexlab', run_name='__main__', alter_sys=True)\n"
)


def interrupted_after(delay: float, argv: list[str]) -> tuple[int, str]:
    child = subprocess.Popen(
        [sys.executable, "-c", STARTER, *argv],
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # as a terminal's job
    )
    try:
        assert child.stderr is not None
        assert child.stderr.readline() == "go\n"
        time.sleep(delay)
        child.send_signal(signal.SIGINT)
        err = child.stderr.read()
        return child.wait(timeout=60), err
    finally:
        if child.poll() is None:  # the test failed: leave nothing running
            child.kill()
            child.wait()


def test_ctrl_c_while_a_command_starts_is_one_line_and_130():
    # before: a KeyboardInterrupt traceback through the imports (cli → protocols → problems), exit -2
    for delay in (0.1, 0.25, 0.5, 1.0):  # from "go": past the few lines before the guard
        code, err = interrupted_after(delay, LONG)
        *before, last, end = err.split("\n")  # a command past its start may have warned first
        assert (code, last, end) == (130, "interrupted", ""), (delay, code, err[-1500:])
        assert all(line.startswith("warning: ") for line in before), (delay, err[-1500:])


def test_ctrl_c_in_the_middle_of_an_import_is_one_line_and_130():
    """The same interrupt, placed: raised by the import of the algorithms' registry."""
    hook = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'mutexlab.protocols.registry':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", hook + STARTER, *LONG], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (130, "go\ninterrupted\n"), done.stderr[-1500:]
