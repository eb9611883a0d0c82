"""A watcher that kills the node programs' process groups once the process that started them is
gone, however it went (SIGKILL included).

The parent-death signal (``setpriv --pdeathsig``) reaches the program alone; what the program
starts — a helper process, the commands of a shell's pipeline — stays in its process group, which
only a living parent kills (``NodeProcess.kill``). So every process that starts node programs
also starts one watcher: a small Python process in a session of its own (a Ctrl-C or a signal to
the parent's group does not reach it) reading a pipe only the parent holds. Each line names a
group: ``+PGID`` started, ``-PGID`` already killed by the parent. At the end of the pipe — the
parent ended, and the kernel closed its end — the watcher kills every group still named, and
exits. Invariant: a group is named from its start until its leader has been killed and reaped (a
reaped leader's id could be reused), so the watcher never kills a stranger's group.

Out of reach: a process that leaves its group (``setsid``, a daemon) — docs/test-any-program.md.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

# The watcher's own code: reads the names until end of file, then kills what is left.
WATCHER = """
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    line = line.strip()
    if line[:1] == "+":
        groups.add(int(line[1:]))
    elif line[:1] == "-":
        groups.discard(int(line[1:]))
for group in groups:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_watcher: subprocess.Popen | None = None


def _tell(line: str) -> None:
    global _watcher
    with _lock:
        for _ in range(2):  # a watcher that died (killed by someone) is started anew, once
            if _watcher is None or _watcher.poll() is not None:
                _watcher = subprocess.Popen(
                    [sys.executable, "-I", "-S", "-c", WATCHER],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            assert _watcher.stdin is not None
            try:
                _watcher.stdin.write(line.encode() + b"\n")
                _watcher.stdin.flush()
                return
            except (BrokenPipeError, OSError):
                with contextlib.suppress(OSError):
                    _watcher.kill()
                _watcher = None


def watch(group: int) -> None:
    """Kill process group ``group`` if this process ends before calling ``unwatch``."""
    _tell(f"+{group}")


def unwatch(group: int) -> None:
    """``group`` was killed and its leader reaped: no longer the watcher's."""
    if _watcher is not None:
        _tell(f"-{group}")
