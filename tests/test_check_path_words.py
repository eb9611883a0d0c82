"""``check`` counts a counterexample's steps in English: "path (1 step)", never "(1 steps)"."""

from __future__ import annotations

from pathlib import Path

BROKEN = Path(__file__).resolve().parent.parent / "examples" / "solutions" / "chandy_misra_broken.py"


def test_a_one_step_path_says_one_step(cli):
    ran = cli("check", "philosophers", "--algorithm", BROKEN)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "path (1 step):" in ran.stdout and "(1 steps)" not in ran.stdout, ran.stdout
