"""What a newcomer meets in the first hour (the twelfth look): a counterexample's file named as one
types it and moved with it, a finding said once, values in the project's words (no Python repr),
a stall naming the resource and its holder, and the README's and the tour's commands as shown."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOLUTIONS = ROOT / "examples" / "solutions"


def _counterexample(cli, where: Path) -> Path:
    """``check`` of the broken k-mutex solution, copied to ``where``, writing ``where/cx.json``."""
    for name in ("kmutex_ricart_agrawala.py", "kmutex_ricart_agrawala_broken.py"):
        shutil.copy(SOLUTIONS / name, where / name)
    out = cli("check", "kmutex_ricart_agrawala_broken.py", "-N", "3", "--counterexample", "cx.json", cwd=where)
    assert out.returncode == 1, out.stdout + out.stderr
    return where / "cx.json"


def _fresh(cwd: Path, *argv: str) -> subprocess.CompletedProcess:
    """``mutexlab ARGV`` in a fresh process: this one may have loaded the file already."""
    command = [sys.executable, "-m", "mutexlab", *argv]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=120)


def test_replay_names_the_scenarios_file_as_one_types_it(cli, tmp_path):
    """The refusal named the file by its absolute path (``pass --algorithm /tmp/…/x.py``); now as
    one types it in the working directory, and the command it suggests runs."""
    _counterexample(cli, tmp_path)
    out = _fresh(tmp_path, "replay", "cx.json")
    assert out.returncode == 2, out.stdout + out.stderr
    assert str(tmp_path) not in out.stderr, out.stderr
    assert out.stderr.rstrip().endswith("pass --algorithm kmutex_ricart_agrawala_broken.py"), out.stderr
    again = cli("replay", "cx.json", "--algorithm", "kmutex_ricart_agrawala_broken.py", cwd=tmp_path)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "VIOLATION (1)" in again.stdout


def test_a_counterexample_moved_with_its_file_still_replays(cli, tmp_path):
    """The scenario names a file beside it relative to itself: moved together, the pair replays."""
    made = tmp_path / "made"
    made.mkdir()
    _counterexample(cli, made)
    assert json.loads((made / "cx.json").read_text())["algorithm"] == "kmutex_ricart_agrawala_broken.py"
    moved = tmp_path / "moved"
    made.rename(moved)
    out = _fresh(tmp_path, "replay", "moved/cx.json", "--algorithm", "moved/kmutex_ricart_agrawala_broken.py")
    assert out.returncode == 1, out.stdout + out.stderr
    assert "k-ricart-agrawala-broken: VIOLATION (1)" in out.stdout


def test_the_explorers_violation_headline_states_a_capacity_breach_once():
    """Three nodes in a capacity-2 section: the headline said the breach twice, once as the exact
    occupancy (``held by node-1×1, …``) and again as the audit's (``held by node-1 (1 unit, line 3),
    …``); the list below keeps both, each under its rule."""
    from mutexlab.explore.session import Config, Session

    broken = str(SOLUTIONS / "kmutex_ricart_agrawala_broken.py")
    session = Session(Config(broken, 3, {"requests": 1, "k": 2}))
    for pid in (1, 2, 3):
        session.step(f"request:{pid}")
    found = session.state()["findings"]
    assert found["summary"] == (
        "VIOLATION after 3 steps: cs (capacity 2) held by node-1×1, node-2×1, node-3×1 at once (step 3)"
    ), found["summary"]
    assert [v["rule"] for v in found["violations"]] == ["capacity-now", "capacity"]
