"""A node program and everything it starts, daemons included, ended together.

A process that leaves its group (``setsid``, a daemon's double fork) escapes ``killpg``, and an
orphan is adopted by init: nothing mutexlab kills would reach it. So on Linux a node is started
through a launcher of a few lines of C (``LAUNCHER``, built on first use into the cache, as the
audit's clocks are) that makes the node a *child subreaper* (``PR_SET_CHILD_SUBREAPER``, kept
across ``execve``) before it runs the program: every orphan among its descendants is adopted by
the node itself, not by init, so while the node lives its whole tree hangs below it — the same
process, the same pid (``/proc`` reads it as before). ``kill_trees`` kills those trees: the
descendants first, found by their parents in ``/proc``, again until none is left (a process killed
hands its children to the node, still alive), then the node.

When the process that started it dies (SIGKILL included), the node is *stopped*, not killed (its
parent-death signal is ``SIGSTOP``): a dead node would hand its tree to init; a stopped one holds it
until the ``watcher``, which learns of its parent's end as the kernel closes the parent's pipe,
kills the tree (``WATCHER_KILL``, the same walk). Without a C compiler the launcher is util-linux's
``setpriv --pdeathsig KILL`` as before: the node and its group end, a daemon it starts does not.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterable
from functools import cache
from pathlib import Path

LAUNCHER = r"""
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>
int main(int argc, char **argv) {
    pid_t parent = getppid();
    if (argc < 2) return 127;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGSTOP, 0, 0, 0) != 0) {
        fprintf(stderr, "mutexlab-launch: prctl: %s\n", strerror(errno));
        return 126;
    }
    if (getppid() != parent) raise(SIGSTOP); /* the parent died before the signal was set */
    execvp(argv[1], argv + 1);
    fprintf(stderr, "mutexlab-launch: failed to execute %s: %s\n", argv[1], strerror(errno));
    return errno == ENOENT ? 127 : 126;
}
"""


SETPRIV = shutil.which("setpriv")


def dying_with_parent(argv: list[str]) -> list[str]:
    """``argv`` ended with all it starts when its parent dies (the launcher; else only the program
    and its group, by setpriv's parent-death SIGKILL, set in the child itself: no ``preexec_fn``
    runs in a threaded parent); ``argv`` as is when neither is here."""
    if (launch := launcher()) is not None:
        return [launch, *argv]
    return [SETPRIV, "--pdeathsig", "KILL", "--", *argv] if SETPRIV else argv


@cache
def launcher() -> str | None:
    """The launcher's path (built now if it is not yet), or None: no compiler, not Linux, or
    ``MUTEXLAB_NO_REAPER=1`` in the environment."""
    if not sys.platform.startswith("linux") or os.environ.get("MUTEXLAB_NO_REAPER") == "1":
        return None
    from ..fastclock import cache_dir, cached_build

    digest = hashlib.blake2b(LAUNCHER.encode(), digest_size=8).hexdigest()
    target = cache_dir() / f"launch-{digest}"
    built = target / "mutexlab-launch"
    if built.exists():
        return str(built)
    cc = os.environ.get("CC") or "cc"
    if shutil.which(cc) is None:
        return None

    def command(work: Path) -> list[str]:
        (work / "launch.c").write_text(LAUNCHER)
        return [cc, "-O2", "-o", str(work / built.name), str(work / "launch.c")]

    try:
        made = cached_build(target, built.name, command)
    except (OSError, subprocess.SubprocessError):  # a compiler past its time: setpriv, as without one
        return None
    if made is None:
        return None
    (target / "launch.c").unlink(missing_ok=True)  # the launcher alone is kept
    return str(made)


def parents(floor: int = 0) -> dict[int, list[int]]:
    """Every living process's children, by ``/proc/PID/stat`` (after the command's ``)``: its
    state, then its parent); a zombie, dead already, is left out, and so is every pid at most
    ``floor`` unless pids have wrapped since (``ns_last_pid`` below it): a process's descendants
    were started after it, so their pids are above its own."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as last:
            floor = floor if int(last.read()) >= floor else 0
    except (OSError, ValueError):
        floor = 0
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) <= floor:
            continue
        try:
            fd = os.open(f"/proc/{name}/stat", os.O_RDONLY)
        except OSError:
            continue
        try:
            state, ppid = os.read(fd, 512).rpartition(b")")[2].split()[:2]
        except (OSError, ValueError):
            continue
        finally:
            os.close(fd)
        if state != b"Z":
            children.setdefault(int(ppid), []).append(int(name))
    return children


def descendants(roots: Iterable[int]) -> set[int]:
    """The processes below ``roots`` (not the roots themselves)."""
    roots = list(roots)
    children, found = parents(min(roots, default=0)), set()
    todo = [child for root in roots for child in children.get(root, [])]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def kill_trees(roots: list[int], rounds: int = 50) -> None:
    """SIGKILL every descendant of ``roots`` (subreapers: a killed process's children come to the
    root), round after round until none is left, then the roots and their groups."""
    if not roots:
        return
    for _ in range(rounds):
        below = descendants(roots)
        if not below:
            break
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    for root in roots:
        with contextlib.suppress(OSError):
            os.killpg(root, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(root, signal.SIGKILL)
