"""A watcher that kills the node programs' process groups, and removes a run's temporary
directory, once the process that started them is gone, however it went (SIGKILL included).

The parent-death signal (``setpriv --pdeathsig``) reaches the program alone; what the program
starts — a helper process, the commands of a shell's pipeline — stays in its process group, which
only a living parent kills (``NodeProcess.kill``). So every process that starts node programs
also starts one watcher: a small Python process in a session of its own (a Ctrl-C or a signal to
the parent's group does not reach it) reading a pipe only the parent holds. Each line names a
group (``+g PGID`` started, ``-g PGID`` already killed by the parent) or a directory or file
(``+d PATH`` to remove, ``-d PATH`` kept or removed by the parent). At the end of the pipe — the parent
ended, and the kernel closed its end — the watcher kills every group still named, removes every
directory still named, and exits. Invariant: a group is named from its start until its leader has been killed and reaped (a
reaped leader's id could be reused), so the watcher never kills a stranger's group.

Each group's tree is killed first, daemons too: its leader, a node's launcher (``director.tree``), is
their subreaper, stopped (not killed) when the parent died, so its tree still hangs below it.
Used by ``director.process`` (node programs), ``transport.supervisor`` (a run's log directory)
and ``fastclock.build`` (a compiled piece's build: its compiler and its directory in the cache).
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading

# The watcher's own code: reads the names until end of file, then kills what is left. It forks
# once and the first process exits: no child of the parent lingers (nor a zombie), and a parent
# that counts its children sees none of it.
WATCHER = """
import os, shutil, signal, sys, time
if os.fork():  # the watcher is the grandchild: no child of the parent, which it outlives
    os._exit(0)
signal.signal(signal.SIGINT, signal.SIG_IGN)
named = {"g": set(), "d": set()}
for line in sys.stdin:
    how, kind, what = line[:1], line[1:2], line[3:].rstrip("\\n")
    if kind in named:
        (named[kind].add if how == "+" else named[kind].discard)(what)
def below(roots):  # every living descendant of roots, by /proc (a zombie is dead already)
    children = {}
    for name in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/stat" % name, "rb") as stat:
                state, ppid = stat.read().rpartition(b")")[2].split()[:2]
        except (OSError, ValueError):
            continue
        if state != b"Z":
            children.setdefault(int(ppid), []).append(int(name))
    found, todo = set(), [c for r in roots for c in children.get(r, [])]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found
roots = [int(group) for group in named["g"]]
for _ in range(50):  # a group's leader (a launcher, director.tree) is its tree's subreaper: a process's
    try:  # children come to it when the process is killed
        found = below(roots)
    except OSError:  # no /proc: the groups alone
        break
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if not found:
        break
for group in named["g"]:
    try:
        os.killpg(int(group), signal.SIGKILL)
    except OSError:
        pass
# a killed compiler could still be writing into a directory about to be removed: its groups gone first
left = set(named["g"]) if named["d"] else set()
for _ in range(100):
    for group in list(left):
        try:
            os.killpg(int(group), 0)
        except OSError:
            left.discard(group)
    if not left:
        break
    time.sleep(0.01)
for path in named["d"]:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:  # a file (a partial output)
        try:
            os.unlink(path)
        except OSError:
            pass
"""

_lock = threading.Lock()
_watcher: subprocess.Popen | None = None


def _start() -> subprocess.Popen:
    """The watcher, started if it is not running (``_lock`` held)."""
    global _watcher
    if _watcher is None:
        _watcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", WATCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        _watcher.wait()  # the first process, gone once the watcher is forked
    return _watcher


def start() -> None:
    """Start the watcher now rather than with the first name (an interpreter's start-up: a caller
    can have it start while it does something else)."""
    with _lock:
        _start()


def _tell(line: str) -> None:
    global _watcher
    with _lock:
        for _ in range(2):  # a watcher that died (killed by someone) is started anew, once
            watcher = _start()
            assert watcher.stdin is not None
            try:
                watcher.stdin.write(line.encode("utf-8", "surrogateescape") + b"\n")
                watcher.stdin.flush()
                return
            except OSError:  # BrokenPipeError: the watcher is gone
                with contextlib.suppress(OSError):
                    watcher.stdin.close()
                _watcher = None


def watch(group: int) -> None:
    """Kill process group ``group`` if this process ends before calling ``unwatch``."""
    _tell(f"+g {group}")


def unwatch(group: int) -> None:
    """``group`` was killed and its leader reaped: no longer the watcher's."""
    if _watcher is not None:
        _tell(f"-g {group}")


def watch_dir(path: str) -> None:
    """Remove directory ``path`` (or file: ``watch_file``) if this process ends before calling
    ``unwatch_dir`` (a path holds no newline: a temporary directory's name, made here)."""
    _tell(f"+d {path}")


def unwatch_dir(path: str) -> None:
    """``path`` is kept (or was removed) by this process: no longer the watcher's."""
    if _watcher is not None:
        _tell(f"-d {path}")


# A temporary file (a partial output, renamed once whole) is named as a directory is.
watch_file, unwatch_file = watch_dir, unwatch_dir
