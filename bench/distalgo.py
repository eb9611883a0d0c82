"""DistAlgo 1.1's bundled mutual-exclusion examples, counted, as a yardstick without a broker.

DistAlgo runs only on Python <= 3.7. ``python37()`` finds such an interpreter (``$DISTALGO_PYTHON``,
``python3.7`` on PATH, or pyenv's ``~/.pyenv/versions/3.7*``); ``venv()`` creates a venv with it
(``$DISTALGO_VENV``, default ``~/.cache/mutexlab-bench/distalgo-py37``) and installs ``pyDistAlgo``
from PyPI into it once. ``example(name, n, rounds)`` runs the bundled ``da/examples/<name>/orig.da``
(``ramutex`` Ricart–Agrawala, ``lamutex`` Lamport, ``sktoken`` Suzuki–Kasami) through
``distalgo_driver.py``, which counts every process's protocol sends and critical-section entries.

Figures: ``entries_per_s`` = entries ÷ (last entry − first process start), the protocol phase;
``wall_s`` the whole command; messages per second over the protocol phase. DistAlgo's processes
talk over sockets on localhost: no broker, no persistence, nothing checked.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from .common import children_cpu

EXAMPLES = {"ricart-agrawala": "ramutex", "lamport": "lamutex", "suzuki-kasami": "sktoken"}
DRIVER = Path(__file__).resolve().parent / "distalgo_driver.py"


class Unavailable(RuntimeError):
    """No Python 3.7 (or no PyPI) on this machine: the DistAlgo columns are skipped with this reason."""


def _runs(python: str, code: str = "pass") -> bool:
    try:
        return subprocess.run([python, "-c", code], capture_output=True, timeout=60).returncode == 0
    except OSError:
        return False


def python37() -> str:
    found = [os.environ.get("DISTALGO_PYTHON"), shutil.which("python3.7")]
    found += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.7*/bin/python3.7")), reverse=True)
    for path in found:  # a pyenv shim on PATH may exist and still fail (no such version selected)
        if path and os.access(path, os.X_OK) and _runs(path):
            return path
    raise Unavailable(
        "DistAlgo 1.1 needs Python <= 3.7 and none was found "
        "(set DISTALGO_PYTHON, put python3.7 on PATH or install it with pyenv)"
    )


def venv() -> Path:
    """The venv with pyDistAlgo (created and filled on first use); its python."""
    home = Path(os.environ.get("DISTALGO_VENV") or Path.home() / ".cache/mutexlab-bench/distalgo-py37")
    python = home / "bin" / "python"
    if python.exists() and _runs(str(python), "import da"):
        return python
    subprocess.run([python37(), "-m", "venv", str(home)], check=True, capture_output=True, timeout=300)
    proc = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "pyDistAlgo"], capture_output=True, text=True, timeout=600
    )
    if proc.returncode != 0 or not _runs(str(python), "import da"):
        raise Unavailable(f"pip install pyDistAlgo failed in {home}: {proc.stderr.strip()[-400:]}")
    return python


def example_file(python: Path, name: str) -> Path:
    where = [str(python), "-c", "import da, os; print(os.path.dirname(da.__file__))"]
    out = subprocess.run(where, capture_output=True, text=True, check=True, timeout=60)
    path = Path(out.stdout.strip()) / "examples" / name / "orig.da"
    if not path.exists():
        raise Unavailable(f"DistAlgo's example {path} is missing")
    return path


def example(python: Path, name: str, n: int, rounds: int, workdir: Path) -> dict:
    """Run example ``name`` with ``n`` processes and ``rounds`` entries each; counted figures."""
    source = workdir / f"{name}.da"  # compiled next to itself: a copy, so the installed tree stays clean
    shutil.copyfile(example_file(python, name), source)
    began, cpu = time.perf_counter(), children_cpu()
    command = [str(python), str(DRIVER), str(source), str(n), str(rounds)]
    proc = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=600)
    wall, cpu = time.perf_counter() - began, children_cpu() - cpu
    rows = [
        json.loads(line.split(" ", 1)[1]) for line in proc.stderr.splitlines() if line.startswith("DA-COUNT ")
    ]
    if proc.returncode != 0 or len(rows) != n:
        raise RuntimeError(
            f"DistAlgo {name} {n} {rounds}: exit {proc.returncode}, {len(rows)} of {n} processes counted: "
            f"{proc.stderr[-600:]}"
        )
    entries = sum(r["entries"] for r in rows)
    sent = sum(r["sent"] for r in rows)
    span = max(r["last_entry"] for r in rows) - min(r["start"] for r in rows)
    return {
        "example": name,
        "n": n,
        "rounds": rounds,
        "entries": entries,
        "messages": sent,
        "protocol_s": round(span, 3),
        "entries_per_s": round(entries / span, 1) if span > 0 else None,
        "msgs_per_s": round(sent / span) if span > 0 else None,
        "wall_s": round(wall, 2),
        "python_cpu_us_per_msg": round(cpu / sent * 1e6) if sent else None,
    }
