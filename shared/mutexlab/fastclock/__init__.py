"""The streamed audit's one compiled piece: a receive's merge of two local-event clocks in C.

``clock.LocalEventClock.merge`` is the plain statement of a receive: compare the sender's clock
with the receiver's (one numpy call) and, when it brings news, take the element-wise maximum (a
second). Both are compiled, but at 1–3 µs a call on a shared machine they were 85% of the audit's
time inside the run (bees P = 200: 367,100 receives; measured by stubbing the merge out). ``merge.c`` does the two in one pass, in one call:
``merge(mine, theirs, spare)`` writes the maximum into ``spare`` and returns True only when
``theirs`` knows an event ``mine`` does not — the same clocks, element for element
(``tests/test_fastclock.py`` runs both merges over the same runs and compares every enter's
clock, the verdicts and the findings; a broken merge is caught there).

It is built with the C compiler on first use into the cache directory (``cache_dir``), named
by the source's digest and the interpreter's ABI, so an edited source builds anew. Without a
compiler, when the build fails, or with ``MUTEXLAB_PLAIN_CLOCKS=1`` in the environment, ``merge``
is None and the clocks merge with numpy, exactly as before.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

SOURCE = Path(__file__).resolve().parent / "merge.c"
NAME = "_mutexlab_merge"

Merge = Callable[[Any, Any, Any], bool]


@cache
def merge() -> Merge | None:
    """The compiled merge (built now if it is not yet), or None: merge with numpy."""
    if os.environ.get("MUTEXLAB_PLAIN_CLOCKS") == "1":
        return None
    return load(SOURCE)


def load(source: Path) -> Merge | None:
    """The merge compiled from ``source`` (cached by its digest), or None when it cannot be built."""
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
    function: Merge = module.merge
    return function


def cache_dir() -> Path:
    """Where compiled pieces are kept (this merge, and ``mpi``'s library, which imports this)."""
    root = os.environ.get("MUTEXLAB_CACHE") or os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "mutexlab"


def _built(source: Path) -> Path | None:
    """The built extension's path: from the cache, or compiled now; None without a compiler."""
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    digest = hashlib.blake2b(source.read_bytes() + suffix.encode(), digest_size=8).hexdigest()
    target = cache_dir() / f"fastclock-{digest}"
    built = target / f"{NAME}{suffix}"
    if built.exists():
        return built
    cc = os.environ.get("CC") or "cc"
    include = sysconfig.get_paths().get("include")
    if shutil.which(cc) is None or not include or not (Path(include) / "Python.h").exists():
        return None
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as work:
        out = Path(work) / built.name
        command = [cc, "-O2", "-shared", "-fPIC", f"-I{include}", str(source), "-o", str(out)]
        if subprocess.run(command, capture_output=True, timeout=120).returncode != 0:
            return None
        try:
            os.rename(work, target)  # atomic: another build at once finds it whole or not at all
        except OSError:
            if not built.exists():
                raise
        Path(work).mkdir(exist_ok=True)  # the temporary directory's own cleanup expects it
    return built
