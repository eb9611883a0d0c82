"""Ctrl-C (SIGINT) while a command starts — mutexlab's modules still being imported, the arguments
parsed, the check set up — exits 130 with one line, ``interrupted``, never a traceback (the
entry point, ``mutexlab/__main__.py``, imports ``cli`` inside its guard); SIGTERM exits 143 with
the same line, as it does later in the command."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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


def interrupted_after(delay: float, argv: list[str], sig: int = signal.SIGINT) -> tuple[int, str]:
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
        child.send_signal(sig)
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


def test_sigterm_while_a_command_starts_is_one_line_and_143():
    # before: killed silently by the signal (exit -15, no word) until the director's handler
    for delay in (0.1, 0.25, 0.5, 1.0):  # from "go": past the few lines before the handler
        code, err = interrupted_after(delay, LONG, signal.SIGTERM)
        *before, last, end = err.split("\n")
        assert (code, last, end) == (143, "interrupted", ""), (delay, code, err[-1500:])
        assert all(line.startswith("warning: ") for line in before), (delay, err[-1500:])


@pytest.mark.parametrize(
    ("stop", "code"), [("raise KeyboardInterrupt", 130), ("os.kill(os.getpid(), signal.SIGTERM)", 143)]
)
def test_an_interrupt_in_the_middle_of_an_import_is_one_line(stop, code):
    """The same interrupt, placed: Ctrl-C or SIGTERM in the import of the algorithms' registry."""
    hook = (
        "import os, signal, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'mutexlab.protocols.registry':\n"
        f"            {stop}\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", hook + STARTER, *LONG], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (code, "go\ninterrupted\n"), done.stderr[-1500:]


def test_one_terminated_for_every_layer_and_a_forked_child_dies_by_the_signal():
    from mutexlab import interrupts
    from mutexlab.director import search
    from mutexlab.transport import service

    assert search.Terminated is service.Terminated is interrupts.Terminated
    assert issubclass(interrupts.Terminated, KeyboardInterrupt)
    previous = interrupts.raise_on_sigterm()
    try:
        pid = os.fork()
        if pid == 0:  # a check --swarm worker: no Terminated traceback, the default death
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_a_compiled_module_imports_is_still_an_interrupt(sig, code):
    """pydantic-core's compiled init imports ``datetime``; an interrupt raised inside it became the
    module's own failure: a Rust panic, exit 1 and a traceback (seen once in a loaded CI run)."""
    hook = (
        "import os, signal, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'datetime' and 'pydantic_core' in sys.modules:\n"
        f"            os.kill(os.getpid(), {int(sig)})\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", hook + STARTER, *LONG], env=ENV, capture_output=True, text=True, timeout=60
    )
    assert (done.returncode, done.stderr) == (code, "go\ninterrupted\n"), done.stderr[-1500:]
