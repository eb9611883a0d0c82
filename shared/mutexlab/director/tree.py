"""A node program and everything it starts, daemons included, ended together.

A process that leaves its group (``setsid``, a daemon's double fork) escapes ``killpg``, and an
orphan is adopted by init: nothing mutexlab kills would reach it. So on Linux a node is started
through a launcher of a few lines of C (``LAUNCHER``, built on first use into the cache, as the
audit's clocks are): a *child subreaper* (``PR_SET_CHILD_SUBREAPER``) that forks, runs the program
in its child and stays its parent, so every orphan among the program's descendants is adopted by
the launcher, not by init. When the program ends by itself, the launcher kills what it left (its
children, found by their parents in ``/proc``, again until none is left: a killed process's
children come to it) and exits with the program's status — killed by the program's signal, when
it was (without a core dump: the program's was its own). A subreaper adopts the orphans of its
descendants alone, and outliving the program means being its ancestor: so the process mutexlab
starts (its ``Popen.pid``, the group's leader) is the launcher, not the program; ``program``
finds the program below it, which ``/proc``'s diagnosis of a silent node reads. The launcher
gives up its copies of the pipes (the program alone holds them: its end of input or output is
seen as before) and passes the usual signals on to the program (SIGTERM, SIGINT, SIGHUP, SIGQUIT,
SIGUSR1, SIGUSR2; one sent to the whole group reaches the program twice, but mutexlab sends
nothing but SIGKILL); the program is killed if the launcher is (its parent-death signal). ``kill_trees`` kills a live tree from
outside: the descendants first, again until none is left, then the launcher.

When the process that started it dies (SIGKILL included), the launcher is *stopped*, not killed
(its parent-death signal is ``SIGSTOP``): a dead launcher would hand the tree to init; a stopped
one holds it — the program and, if it ends meanwhile, all it left — until the ``watcher``, which
learns of its parent's end as the kernel closes the parent's pipe, kills the tree (``WATCHER``,
the same walk). Without a C compiler the launcher is util-linux's ``setpriv --pdeathsig KILL`` as
before: the node and its group end, a daemon it starts does not.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from functools import cache
from pathlib import Path

LAUNCHER = r"""
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static volatile pid_t program;
static void pass(int sig) { if (program > 0) kill(program, sig); }
static void kill_children(pid_t self) { /* SIGKILL every living child (orphans of the tree too) */
    DIR *proc = opendir("/proc");
    struct dirent *entry;
    char path[300], stat[512], state, *end;
    int fd, ppid;
    ssize_t n;
    while (proc != NULL && (entry = readdir(proc)) != NULL) {
        if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
        snprintf(path, sizeof path, "/proc/%s/stat", entry->d_name);
        if ((fd = open(path, O_RDONLY)) < 0) continue;
        n = read(fd, stat, sizeof stat - 1);
        close(fd);
        if (n <= 0) continue;
        stat[n] = 0;
        if ((end = strrchr(stat, ')')) != NULL && sscanf(end + 1, " %c %d", &state, &ppid) == 2
            && ppid == self && state != 'Z')
            kill(atoi(entry->d_name), SIGKILL);
    }
    if (proc != NULL) closedir(proc);
}
int main(int argc, char **argv) {
    pid_t parent = getppid(), self = getpid(), dead;
    int status = 0, fd, sig, passed[] = {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
    struct timespec moment = {0, 2000000};
    sigset_t one;
    if (argc < 2) return 127;
    if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0 || prctl(PR_SET_PDEATHSIG, SIGSTOP, 0, 0, 0) != 0) {
        fprintf(stderr, "mutexlab-launch: prctl: %s\n", strerror(errno));
        return 126;
    }
    if (getppid() != parent) raise(SIGSTOP); /* the parent died before the signal was set */
    if ((program = fork()) < 0) {
        fprintf(stderr, "mutexlab-launch: fork: %s\n", strerror(errno));
        return 126;
    }
    if (program == 0) { /* the program: killed if the launcher is, which no signal but SIGKILL ends */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != self) _exit(126);
        execvp(argv[1], argv + 1);
        fprintf(stderr, "mutexlab-launch: failed to execute %s: %s\n", argv[1], strerror(errno));
        _exit(errno == ENOENT ? 127 : 126);
    }
    for (size_t i = 0; i < sizeof passed / sizeof *passed; i++) signal(passed[i], pass);
    if ((fd = open("/dev/null", O_RDWR)) >= 0) { /* the pipes are the program's alone */
        dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
        if (fd > 2) close(fd);
    }
    while ((dead = wait(&status)) != program) /* orphans adopted meanwhile reaped as they end */
        if (dead < 0 && errno != EINTR) return 126;
    program = 0;
    for (;;) { /* what it left, killed: a child killed hands its own children to the launcher */
        while ((dead = waitpid(-1, NULL, WNOHANG)) > 0) continue;
        if (dead < 0) break; /* no child left, living or dead */
        kill_children(self);
        nanosleep(&moment, NULL);
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    sig = WTERMSIG(status); /* killed by a signal: so is the launcher, its core dump not wanted */
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    signal(sig, SIG_DFL);
    sigemptyset(&one);
    sigaddset(&one, sig);
    sigprocmask(SIG_UNBLOCK, &one, NULL);
    raise(sig);
    return 128 + sig;
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


def program(pid: int) -> int:
    """The node program's pid: the first child of the launcher ``pid`` (forked first, a child that
    lives is listed before the orphans adopted later), else ``pid`` (no launcher, or it has ended)."""
    try:
        with open(f"/proc/{pid}/comm", "rb") as comm:
            if comm.read().strip() != b"mutexlab-launch":
                return pid
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as children:
            first = [int(child) for child in children.read().split()[:1]]
    except FileNotFoundError:  # a kernel without the children file: by their parents, oldest first
        first = sorted(parents().get(pid, []))[:1]
    except (OSError, ValueError):
        return pid
    return first[0] if first else pid


PROC = "/proc"  # where the processes are read (a test points it at a made-up one)


def parents() -> dict[int, list[int]]:
    """Every living process's children, by ``/proc/PID/stat`` (after the command's ``)``: its
    state, then its parent); a zombie, dead already, is left out. Every pid is read: a descendant's
    pid may be below its ancestor's once pids have wrapped (pid_max is often 32,768, which a loaded
    machine goes round in a minute), so no pid can be skipped as too old to be one."""
    children: dict[int, list[int]] = {}
    for name in os.listdir(PROC):
        if not name.isdigit():
            continue
        try:
            fd = os.open(f"{PROC}/{name}/stat", os.O_RDONLY)
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
    children, found = parents(), set()
    todo = [child for root in roots for child in children.get(root, [])]
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def cpu_times(root: int) -> dict[int, int] | None:
    """The processor time (ns) each thread of ``root`` and its living descendants has used, by
    thread id, or None when ``/proc`` cannot say (not Linux, or ``root`` has ended). The scheduler's
    own count (``schedstat``, to the nanosecond), else the thread's clock ticks (``stat``'s utime
    and stime, 10 ms each): a thread the load lets run a few ms in a while has moved all the same."""
    times: dict[int, int] = {}
    tick = 1e9 / os.sysconf("SC_CLK_TCK")
    for pid in {root} | descendants([root]):
        try:
            tids = os.listdir(f"{PROC}/{pid}/task")
        except OSError:
            if pid == root:
                return None
            continue
        for tid in tids:
            try:
                with open(f"{PROC}/{pid}/task/{tid}/schedstat", "rb") as sched:
                    times[int(tid)] = int(sched.read().split()[0])
                continue
            except (OSError, ValueError, IndexError):
                pass
            try:
                with open(f"{PROC}/{pid}/task/{tid}/stat", "rb") as stat:
                    fields = stat.read().rpartition(b")")[2].split()
                times[int(tid)] = int((int(fields[11]) + int(fields[12])) * tick)  # utime, stime
            except (OSError, ValueError, IndexError):
                continue  # a thread that ended meanwhile
    return times


class Running:
    """Whether a process tree given ``allowance`` seconds of processor time (an MPI rank's stretch,
    which counts its threads' own time) still runs on within it: one of its threads used some since
    the last ask, and the tree less than the allowance in all. On a loaded machine such a tree may
    take many times its processor time on the clock: the clock alone would cut it short. Each
    thread is compared with itself (one that ends takes its time with it, which a total would read
    as the others standing still)."""

    def __init__(self, root: int, allowance: float) -> None:
        self.root, self.allowance = root, allowance
        self.seen = cpu_times(root)
        self.used = 0  # ns, since the ask

    def on(self) -> bool:
        now = cpu_times(self.root)
        if now is None or self.seen is None:
            return False
        moved = sum(max(ns - self.seen.get(tid, 0), 0) for tid, ns in now.items())
        self.seen, self.used = now, self.used + moved
        return moved > 0 and self.used < self.allowance * 1e9


def kill_trees(roots: list[int], rounds: int = 50) -> None:
    """SIGKILL every descendant of ``roots`` (subreapers: a killed process's children come to the
    root), round after round until none is left, then the roots and their groups."""
    if not roots:
        return
    empty = 0  # rounds in a row that found nothing: one alone may fall inside a daemon's double fork
    for _ in range(rounds):
        below = descendants(roots)
        empty = 0 if below else empty + 1
        if empty == 2:
            break
        for pid in below:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.005)  # the killed exit and their orphans come to the root before it goes
    for root in roots:
        with contextlib.suppress(OSError):
            os.killpg(root, signal.SIGKILL)
        with contextlib.suppress(OSError):
            os.kill(root, signal.SIGKILL)
