"""The ``mutexlab`` command's entry point: ``python -m mutexlab`` and the console script.

SIGTERM is made an interrupt first (``interrupts.raise_on_sigterm``), and ``cli`` (and through it
most of mutexlab) is imported inside the guard: a Ctrl-C or a SIGTERM while the modules are still
being imported (a second or more on a loaded machine) exits 130 or 143 with the one line
``interrupted``, as one during the command does (``cli.main``) — never a traceback, never silence.
While ``cli`` is imported both signals are held (``interrupts.held``) and taken as soon as it is:
an exception raised inside a compiled module's own import (pydantic-core's Rust init importing
``datetime``) would become that module's failure, a panic and exit 1, not an interrupt.
Nothing exists yet to be left behind. A command with its own handlers (``explore``, ``run``,
``verify`` reading a pipe) installs them over this one."""

import signal
import sys

from .interrupts import Terminated, held, raise_on_sigterm

INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command Ctrl-C stopped


def main(argv: list[str] | None = None) -> int:
    previous = raise_on_sigterm()
    try:
        with held():  # a signal held meanwhile is raised at its end, inside the guard
            from .cli import main as run_command
        return run_command(argv)
    except KeyboardInterrupt as stop:  # start-up: cli.main answers any later one itself
        print("interrupted", file=sys.stderr)
        return stop.code if isinstance(stop, Terminated) else INTERRUPTED
    finally:
        signal.signal(signal.SIGTERM, previous)  # a caller in this process keeps its own


if __name__ == "__main__":
    sys.exit(main())
