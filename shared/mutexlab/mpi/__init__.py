"""mutexlab's own MPI: programs built against it run as ranks under the director (docs/mpi.md).

``include/mpi.h`` and ``src/`` are a small MPI (point-to-point, derived datatypes, communicators
copied from or split off the world, persistent requests, collectives made of messages) whose every message goes through ``mutexlab test``: each rank speaks the node protocol on the
standard input and output it was started with and keeps the program's own standard output for
itself (its lines come back as ``log`` lines, in order with the messages). The library is built
with the C compiler on first use into a cache directory named by its sources' digest, so an
edited source builds anew and two versions never mix.

``rank.py`` stands between the director and one rank: it starts the program, passes the
protocol through, and turns the program's printed lines into ``enter``/``exit`` by ``--regex``.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ..fastclock import build, build_dir, cache_dir  # the one build cache of compiled pieces

HERE = Path(__file__).resolve().parent
INCLUDE = HERE / "include"
SOURCES = tuple(sorted((HERE / "src").glob("*.c")))
HEADERS = tuple(sorted((HERE / "src").glob("*.h")))  # internal.h, busy.h: a change builds anew
RANK = HERE / "rank.py"
LIBRARY = "libmutexlabmpi.a"
NOT_LINKING = frozenset({"-c", "-E", "-S", "-M", "-MM"})


class BuildError(Exception):
    """The library could not be built (no C compiler, a compiler error)."""


def library(cc: str = "gcc") -> Path:
    """The directory holding the built library (built now if it is not there yet)."""
    digest = hashlib.blake2b(digest_size=8)
    for path in (*SOURCES, *HEADERS, INCLUDE / "mpi.h", INCLUDE / "mutexlab.h"):
        digest.update(path.read_bytes())
    target = cache_dir() / f"mpi-{digest.hexdigest()}"
    if (target / LIBRARY).exists():
        return target
    if shutil.which(cc) is None:
        raise BuildError(f"no C compiler {cc!r} on PATH: mutexlab's MPI is built with it")
    target.parent.mkdir(parents=True, exist_ok=True)
    with build_dir(target.parent) as work:  # removed even if this process is SIGKILLed
        objects = [str(Path(work) / f"{source.stem}.o") for source in SOURCES]
        for source, obj in zip(SOURCES, objects, strict=True):
            built = build(
                [cc, "-O2", "-g", "-fPIC", "-pthread", f"-I{INCLUDE}", "-c", str(source), "-o", obj], work
            )
            if built.returncode != 0:
                raise BuildError(f"building mutexlab's MPI failed:\n{built.stderr.strip()}")
        archived = build(["ar", "rcs", str(Path(work) / LIBRARY), *objects], work)
        if archived.returncode != 0:
            raise subprocess.CalledProcessError(
                archived.returncode, archived.args, archived.stdout, archived.stderr
            )
        for obj in objects:
            os.unlink(obj)
        try:
            os.rename(work, target)  # atomic: another build at once finds it whole or not at all
        except OSError:
            if not (target / LIBRARY).exists():
                raise
        Path(work).mkdir(exist_ok=True)  # the temporary directory's own cleanup expects it
    return target


def compile_argv(compiler: str, args: list[str]) -> list[str]:
    """The compiler's command line for ``args`` against mutexlab's MPI."""
    argv = [compiler, f"-I{INCLUDE}", *args]
    if NOT_LINKING & set(args):
        return argv
    lib = library()
    # The library defines pthread_create, pthread_cond_wait, sleep… itself (src/mpi.c): the
    # executable's definitions come before the C library's, for its shared libraries too.
    return [*argv, f"-L{lib}", "-lmutexlabmpi", "-pthread", "-ldl"]


def rank_argv(
    program: list[str], regex: str | None, resource: str, sync_sends: bool = False, stdin: str | None = None
) -> list[str]:
    """The node command of ``mutexlab test --mpi``: the adapter in front of the program;
    ``sync_sends``: its standard sends wait for their receive (``--sync-sends``); ``stdin``: the
    file rank 0 reads as its standard input (``--stdin``)."""
    argv = [sys.executable, "-I", str(RANK), "--resource", resource]
    if regex is not None:
        argv += ["--regex", regex]
    if sync_sends:
        argv.append("--sync-sends")
    if stdin is not None:
        argv += ["--stdin", stdin]
    return [*argv, "--", *program]


def stdin_of(argv: list[str]) -> str | None:
    """The ``--stdin`` file of a node command ``rank_argv`` made, or None."""
    if not program_of(argv)[0]:
        return None
    cut = argv.index("--")
    return argv[argv.index("--stdin") + 1] if "--stdin" in argv[:cut] else None


def sync_sends_of(argv: list[str]) -> bool:
    """Whether a node command ``rank_argv`` made has the ranks' standard sends synchronous."""
    return bool(program_of(argv)[0]) and "--sync-sends" in argv[: argv.index("--")]


def program_of(argv: list[str]) -> tuple[list[str], str | None]:
    """(the program, the regex) of a node command ``rank_argv`` made; ([], None) for another."""
    if len(argv) < 3 or argv[2] != str(RANK) or "--" not in argv:
        return [], None
    cut = argv.index("--")
    regex = argv[argv.index("--regex") + 1] if "--regex" in argv[:cut] else None
    return argv[cut + 1 :], regex


def resource_of(argv: list[str], otherwise: str) -> str:
    """The ``--resource`` of a node command ``rank_argv`` made ("" where the ranks name every
    resource they enter), else ``otherwise``."""
    if not program_of(argv)[0]:
        return otherwise
    cut = argv.index("--")
    return argv[argv.index("--resource") + 1] if "--resource" in argv[:cut] else otherwise
