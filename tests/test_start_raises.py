"""A solution whose ``start()`` raises is the ``error`` finding of every command, exit 1, naming
its line — not "an input was refused", and not a failure of mutexlab's.

examples/solutions/bees_reed_tokens.py, copied with bee 3's ``start`` raising ``IndexError``.
Before: ``check`` found the raise, then stopped on it again while writing the counterexample —
``mutexlab: protocol error: bee-3 cannot start: …``, JSON ``"verdict": "rejected-input"``, no
counterexample written — and ``check --swarm`` said ``TOOL ERROR — a worker failed``, exit 4.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "solutions"
SMALL = ["-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1"]
RAISES = "bee-3 raised IndexError: no reed for bee 3 at "


@pytest.fixture(scope="module")
def raising(tmp_path_factory) -> str:
    text = (EXAMPLES / "bees_reed_tokens.py").read_text()
    start = "    def start(self) -> list:\n"
    assert text.count(start) == 1
    text = text.replace(
        start, start + '        if self.pid == 3:\n            raise IndexError("no reed for bee 3")\n'
    )
    path = tmp_path_factory.mktemp("start-raises") / "bees_start_raises.py"
    path.write_text(text)
    return str(path)


def test_check_finds_the_raise_at_the_start_and_writes_a_scenario_that_replays(cli, raising, tmp_path):
    ce = tmp_path / "start.json"
    done = cli("check", "bees", "-a", raising, *SMALL, "--counterexample", str(ce), cwd=tmp_path)
    assert done.returncode == 1 and f"verdict:      VIOLATION — error: {RAISES}" in done.stdout, (
        done.stdout + done.stderr
    )
    assert "path (0 steps)" in done.stdout and "replay reproduces it: yes" in done.stdout, done.stdout
    assert json.loads(ce.read_text())["steps"] == []
    again = cli("replay", str(ce), "-a", raising, cwd=tmp_path)
    assert again.returncode == 1 and RAISES in again.stderr, again.stdout + again.stderr


def test_check_json_and_swarm_say_the_same(cli, raising, tmp_path):
    done = cli("check", "bees", "-a", raising, *SMALL, "--json", cwd=tmp_path)
    outcome = json.loads(done.stdout)
    assert done.returncode == 1 and outcome["verdict"] == "violation", done.stdout
    assert outcome["findings"][0]["kind"] == "error" and RAISES in outcome["findings"][0]["message"]
    swarm = cli(
        "check", "bees", "-a", raising, *SMALL, "--swarm", "--time", "5", "--workers", "1", cwd=tmp_path
    )
    assert swarm.returncode == 1 and "VIOLATION — error" in swarm.stdout, swarm.stdout + swarm.stderr
    assert "TOOL ERROR" not in swarm.stdout


def test_simulate_says_a_handler_raised(cli, raising, tmp_path):
    done = cli("simulate", "bees", "-a", raising, *SMALL, "--json", cwd=tmp_path)
    assert done.returncode == 1 and json.loads(done.stdout)["finding"] == "handler-raised", done.stdout
