"""Starting a run's services (``supervisor.py``): forked from the command, which has imported
everything they need once (``Forked``), or, where a fork is unsafe (another thread, no ``fork``),
each a fresh interpreter running the same entry point as compose (``service_command``).

A service dies with the process that started it, SIGKILL included (``die_with_parent``): the
supervisor names itself in ``MUTEXLAB_PARENT_PID``; the service asks Linux for SIGKILL when its
parent ends (``prctl(PR_SET_PDEATHSIG)``) and, on any system, watches its parent's pid itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..protocols.registry import Solution, solution

SERVICES = Path(__file__).resolve().parents[3] / "services"
PARENT_ENV = "MUTEXLAB_PARENT_PID"  # the supervisor's pid, in each service's environment
PR_SET_PDEATHSIG = 1  # linux/prctl.h
PARENT_CHECK = 0.5  # seconds between a service's looks at whether its parent is still there


class Forked:
    """A service started by ``os.fork`` from this process (its modules already imported), with the
    part of ``subprocess.Popen``'s interface the supervisor uses: ``pid``, ``returncode``,
    ``poll``, ``wait``, ``send_signal``, ``kill``."""

    def __init__(self, role: str, env: dict, stdout, stderr) -> None:
        for stream in (sys.stdout, sys.stderr):  # nothing buffered here is written twice by the child
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        self.returncode: int | None = None
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns
            _forked_service(role, env, stdout, stderr)

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None and self.returncode is None:  # block until it ends (no polling delay)
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        deadline = None if timeout is None else time.monotonic() + timeout
        delay = 0.0005
        while self.poll() is None:
            if timeout is not None and deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(f"forked service {self.pid}", timeout)
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        assert self.returncode is not None  # poll() set it: the loop ends only then
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def _forked_service(role: str, env: dict, stdout, stderr) -> None:
    """In a forked child: the service's environment, standard streams and logging as a fresh
    interpreter would have them, then ``transport.service.serve(role)``; exits with its code."""
    code = 1
    try:
        import io
        import logging

        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)  # not the supervisor's handler (``Stop``)
        os.environ.clear()
        os.environ.update(env)
        for fd, target in ((1, stdout), (2, stderr)):
            if target is not None:
                os.dup2(target.fileno(), fd)
        sys.stdout = io.TextIOWrapper(
            io.FileIO(1, "w", closefd=False), line_buffering=True, write_through=True
        )
        sys.stderr = io.TextIOWrapper(
            io.FileIO(2, "w", closefd=False), line_buffering=True, write_through=True
        )
        root = logging.getLogger()
        for handler in list(root.handlers):  # the parent's logging (a test runner's) is not the service's
            root.removeHandler(handler)
        logging.getLogger("pika").setLevel(logging.NOTSET)
        from . import service

        code = service.serve(role)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported, then the child ends like a crashed interpreter
        import traceback

        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)


def die_with_parent(parent: int) -> None:
    """End this process as soon as ``parent`` (the pid of the process that started it) is gone:
    Linux sends it SIGKILL then (``PR_SET_PDEATHSIG``, asked here through ctypes); elsewhere, or
    should that fail, a daemon thread looks every ``PARENT_CHECK`` seconds whether this process's
    parent is still ``parent`` (an orphan is re-parented) and kills the process when not."""
    import threading

    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # gone already (before the request above could take effect)
        os.kill(os.getpid(), signal.SIGKILL)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def watch_parent_from_environment() -> None:
    """``die_with_parent`` for the parent ``MUTEXLAB_PARENT_PID`` names (``mutexlab run`` sets it;
    compose does not: its services outlive nothing)."""
    value = os.environ.get(PARENT_ENV, "")
    if value.isascii() and value.isdigit() and int(value) > 1:
        die_with_parent(int(value))


def preload(algorithm: str | Solution) -> None:
    """Import what the services will need (the participant, the monitor, the broker client, the
    settings, the algorithm's modules or file, ctypes for ``die_with_parent``), so that forked services
    start without importing (each would import ctypes anew: a few ms of CPU per process)."""
    from . import monitor, participant, service, settings  # noqa: F401

    if sys.platform.startswith("linux"):
        import ctypes  # noqa: F401

    solution(algorithm)


def can_fork() -> bool:
    """Fork the services from this process when that is safe: a POSIX system and one thread only
    (a fork copies only the calling thread; a lock another thread holds would stay held in the
    child). Otherwise each service is a fresh interpreter (``service_command``)."""
    import threading

    return (
        hasattr(os, "fork") and threading.active_count() == 1 and os.environ.get("MUTEXLAB_SPAWN") != "exec"
    )


def service_command(role: str) -> list[str]:
    """The command that runs ``role``: the repository's entry point, as compose runs it."""
    script = SERVICES / role / "main.py"
    if script.is_file():
        return [sys.executable, str(script)]
    return [sys.executable, "-m", "mutexlab.services", role]  # an installed (non-editable) package
