"""mutexlab killed, or fed hostile programs and input, by a user who means harm or just has bad luck:
what it leaves behind and what it says (docs/faults.md, docs/test-any-program.md#findings)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _env(**extra: str) -> dict[str, str]:
    path = os.pathsep.join([str(ROOT / "shared"), str(ROOT)])
    return {**os.environ, "PYTHONPATH": path, **extra}


def _pids_naming(text: str) -> list[int]:
    """Live processes (no zombies) whose command line holds ``text``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text.encode() in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


# A first use builds a compiled piece into the cache: the audit's clocks, mutexlab's MPI library.
BUILDS = {
    "fastclock": "from mutexlab import fastclock; fastclock.compiled()",
    "mpi": "from mutexlab import mpi; mpi.library()",
}


@pytest.mark.parametrize("piece", sorted(BUILDS))
def test_a_build_cut_short_by_sigkill_leaves_nothing_in_the_cache(piece, tmp_path):
    cache = tmp_path / "cache"
    child = subprocess.Popen(
        [sys.executable, "-c", BUILDS[piece]],
        env=_env(MUTEXLAB_CACHE=str(cache)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        work: list[Path] = []
        while not work and child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
            work = [
                p for p in (cache / "mutexlab").glob("*") if not p.name.startswith(("fastclock-", "mpi-"))
            ]
        while work and not _pids_naming(str(work[0])) and time.monotonic() < deadline:
            time.sleep(0.002)  # until the compiler is at work in it
        assert work and work[0].exists(), "the build ended before it could be killed"
        child.send_signal(signal.SIGKILL)
        child.wait()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and (work[0].exists() or _pids_naming(str(work[0]))):
            time.sleep(0.05)
        assert not work[0].exists(), f"left behind: {sorted(p.name for p in work[0].iterdir())}"
        assert not _pids_naming(str(work[0])), "a compiler outlived the build"
    finally:
        child.kill()
        child.wait()
        for pid in _pids_naming(str(cache)):
            os.kill(pid, signal.SIGKILL)
