"""A user's own solution of the bees, by file path from outside the checkout
(examples/solutions/bees_reed_tokens.py, a token per reed, copied to a temporary directory):
every command of the ``bees`` problem takes it, with the problem's rules; its broken variant is
caught by ``check`` with a scenario ``replay`` plays again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "solutions"
STEMS = ("bees_reed_tokens", "bees_reed_tokens_broken")
SMALL = ["-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1"]


@pytest.fixture(scope="module")
def mine(tmp_path_factory) -> Path:
    """One copy per module: a process loads a file once, and refuses a second file declaring
    the same algorithm."""
    where = tmp_path_factory.mktemp("my-bees")
    for stem in STEMS:
        shutil.copy(EXAMPLES / f"{stem}.py", where / f"{stem}.py")
    return where


def said(done) -> str:
    return done.stdout + done.stderr


def test_the_solution_file_stays_short():
    lines = (EXAMPLES / "bees_reed_tokens.py").read_text().splitlines()
    assert len(lines) <= 400


def test_check_passes_it_with_the_cross_check_agreeing(mine, cli, tmp_path):
    path = str(mine / "bees_reed_tokens.py")
    done = cli("check", "bees", "-a", path, *SMALL, "--cross-check", "--json", cwd=tmp_path)
    assert done.returncode == 0, said(done)
    outcome = json.loads(done.stdout)
    assert outcome["verdict"] == "pass" and outcome["complete"] and not outcome["findings"]
    assert outcome["cross_check"]["agrees"] is True
    # the problem's rules are what it is checked by
    assert "reeds 1..T only" in " ".join(outcome["properties"])


def test_simulate_verify_and_report_take_it_by_path(mine, cli, tmp_path):
    path = str(mine / "bees_reed_tokens.py")
    done = cli(
        "simulate", "bees", "-a", path, "-P", "7", "-T", "2", "-K", "2", "--trace", "t.jsonl", cwd=tmp_path
    )
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])["algorithm"] == "bees-reed-tokens"
    done = cli("verify", "-a", path, "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("bees-reed-tokens: SAFE"), said(done)
    done = cli("report", "-a", path, "t.jsonl", "-o", "t.html", cwd=tmp_path)
    assert done.returncode == 0 and "algorithm-unknown" not in (tmp_path / "t.html").read_text(), said(done)


def test_check_finds_the_broken_variant_and_replay_plays_it_again(mine, cli, tmp_path):
    path = str(mine / "bees_reed_tokens_broken.py")
    done = cli("check", "bees", "-a", path, "-P", "2", "-T", "2", "--counterexample", "ce.json", cwd=tmp_path)
    assert done.returncode == 1 and "flower (capacity 1) held by bee-1×1, bee-2×1" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = cli("replay", str(tmp_path / "ce.json"), "--algorithm", path, cwd=elsewhere)
    assert done.returncode == 1 and "[capacity] flower" in done.stdout, said(done)
    # the correct solution passes the same configuration
    done = cli("check", "bees", "-a", str(mine / "bees_reed_tokens.py"), "-P", "2", "-T", "2", cwd=tmp_path)
    assert done.returncode == 0, said(done)


@pytest.mark.broker
@pytest.mark.slow
def test_run_over_rabbitmq_takes_it_by_path(mine, cli, tmp_path, amqp_url):
    path = str(mine / "bees_reed_tokens.py")
    argv = ["run", "bees", "-a", path, *SMALL, "--dwell", "0.01", "--trace", "run.jsonl"]
    done = cli(*argv, "--amqp-url", amqp_url, cwd=tmp_path)
    assert done.returncode == 0, said(done)
    done = cli("verify", "-a", path, "run.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("bees-reed-tokens: SAFE"), said(done)
    assert "retire 1" in done.stdout
