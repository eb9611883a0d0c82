"""The streamed audit's one compiled piece: local-event clocks in C (``merge.c``).

``clock.LocalEventClock`` is the plain statement of a local-event clock: a receive compares the
sender's clock with the receiver's (one numpy call) and, when it brings news, takes the element-wise
maximum (a second); a local event copies the array and adds one to its own entry. ``merge.c`` has
the same clock as a C type (``Clock``, with its ``Family`` giving out serials): a receive is one
call that checks the sender's serial, compares the two arrays in blocks of 16 (vector compares)
and, on news, makes the new array — no Python frame per receive. ``Clock.merge_unseen`` is the
same merge without the check of the sender's serial against the one last taken from it (a random
read into a P × P table: the merge's costliest load at P = 400); the simulator's fast loop uses it. At bees P = 200–400 the merge's
Python method and its P-entry comparison were what grew with P (see docs/scaling.md#fast-paths).
The same clocks, element for element, with the same serials: ``tests/test_fastclock.py`` runs
both over the same runs and compares every token the audit reads, the verdicts and the findings;
broken builds are caught there; both refuse a token whose serial is below 0 (ValueError).
``merge(mine, theirs, spare)`` is the comparison and maximum
alone, held to numpy's on every small pair of clocks. A compiled clock's token is one object
(``Token``: serial, sender and counts in one allocation, read as the plain clock's tuple
``(serial, counts, own)``, its counts a read-only view; merge.c: the compact token), and the clock
called is its ``merge_unseen`` (the fast loop binds the clock, not a bound method). Its counts
take a byte an entry until a process counts past 255, then 32 bits (merge.c: narrow counts): a
receive reads a quarter of the bytes, and the tokens messages in flight keep alive take a quarter
of the memory; ``tests/test_narrow_counts.py`` holds them to plain and to wide clocks across 255.
A change to a clock whose token nothing else holds is written into that token under the new
serial (merge.c: a receive without a copy; ``tests/test_fastclock_reuse.py``).

It is built with the C compiler on first use into the cache directory (``cache_dir``), named
by the source's digest, its flags and the interpreter's ABI, so an edited source builds anew. Without a
compiler, when the build fails, or with ``MUTEXLAB_PLAIN_CLOCKS=1`` in the environment,
``compiled`` is None and the clocks are numpy's, exactly as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

from .. import watcher

SOURCE = Path(__file__).resolve().parent / "merge.c"
NAME = "_mutexlab_merge"
# -O3: gcc vectorizes the maximum's loop; the comparison is written in vectors (merge.c: gcc 12 left
# its plain loop one entry at a time, seen in the disassembly).
FLAGS = ("-O3", "-shared", "-fPIC")

Merge = Callable[[Any, Any, Any], bool]


@cache
def compiled() -> ModuleType | None:
    """The compiled module (``merge``, ``Family``, ``Clock``; built now if it is not yet), or None:
    the clocks are numpy's."""
    if os.environ.get("MUTEXLAB_PLAIN_CLOCKS") == "1":
        return None
    return load(SOURCE)


def merge() -> Merge | None:
    """The compiled comparison and maximum of two arrays, or None."""
    module = compiled()
    return None if module is None else module.merge


def load(source: Path) -> ModuleType | None:
    """The module compiled from ``source`` (cached by its digest), or None when it cannot be built."""
    try:
        path = _built(source)
    except (OSError, subprocess.SubprocessError):
        return None
    if path is None:
        return None
    loader = importlib.machinery.ExtensionFileLoader(NAME, str(path))
    spec = importlib.util.spec_from_file_location(NAME, str(path), loader=loader)
    if spec is None:
        return None
    try:
        module = importlib.util.module_from_spec(spec)
        loader.exec_module(module)
    except ImportError:
        return None
    return module


def cache_dir() -> Path:
    """Where compiled pieces are kept (this merge, and ``mpi``'s library, which imports this)."""
    root = os.environ.get("MUTEXLAB_CACHE") or os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "mutexlab"


def _built(source: Path) -> Path | None:
    """The built extension's path: from the cache, or compiled now; None without a compiler."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    built_as = source.read_bytes() + suffix.encode() + " ".join(FLAGS).encode()
    digest = hashlib.blake2b(built_as, digest_size=8).hexdigest()
    target = cache_dir() / f"fastclock-{digest}"
    built = target / f"{NAME}{suffix}"
    if built.exists():
        return built
    cc = os.environ.get("CC") or "cc"
    include = sysconfig.get_paths().get("include")
    if shutil.which(cc) is None or not include or not (Path(include) / "Python.h").exists():
        return None
    return cached_build(
        target,
        built.name,
        lambda work: [cc, *FLAGS, f"-I{include}", str(source), "-o", str(work / built.name)],
    )


def cached_build(target: Path, name: str, command: Callable[[Path], Sequence[str]]) -> Path | None:
    """``target / name`` built by the compiler ``command(work)`` gives, in a directory of its own
    (``build_dir``) that then becomes ``target`` whole; None when the compiler fails."""
    built = target / name
    target.parent.mkdir(parents=True, exist_ok=True)
    with build_dir(target.parent) as work:
        if build(command(Path(work)), work, timeout=120).returncode != 0:
            return None
        try:
            os.rename(work, target)  # atomic: another build at once finds it whole or not at all
        except OSError:
            if not built.exists():
                raise
        Path(work).mkdir(exist_ok=True)  # the temporary directory's own cleanup expects it
    return built


@contextlib.contextmanager
def build_dir(parent: Path) -> Iterator[str]:
    """A temporary directory in ``parent`` for one build, removed at its end — and by the watcher
    if this process dies first (SIGKILL included): a killed build leaves nothing in the cache."""
    with tempfile.TemporaryDirectory(dir=parent, prefix=".build-") as work:
        watcher.watch_dir(work)
        try:
            yield work
        finally:
            watcher.unwatch_dir(work)


def build(
    command: Sequence[str], work: str, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """Run a compiler's ``command`` for a build in ``work`` (``build_dir``), its output captured:
    in a process group of its own that the watcher kills if this process dies first, its own
    temporary files (gcc's ``/tmp/cc*.s``) in ``work`` through ``TMPDIR``, so that a build cut
    short leaves neither a process nor a file behind."""
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "TMPDIR": work},
    )
    watcher.watch(proc.pid)
    try:
        out, err = proc.communicate(timeout=timeout)
    except BaseException:  # a timeout, an interrupt: the compiler and what it started end too
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, 9)
        proc.wait()
        raise
    finally:
        if proc.returncode is not None:  # reaped: its id may be reused, never to be killed again
            watcher.unwatch(proc.pid)
    return subprocess.CompletedProcess(list(command), proc.returncode, out, err)
